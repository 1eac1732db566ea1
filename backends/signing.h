// Ed25519 keys and the statements Ward signs (issue 21, "Signed bundles"):
// bundles and removal tombstones that `ward push` / `ward remove` sign and
// wardd checks, and the audit log's checkpoints. OpenSSL 3.0 only (one-shot
// EVP_DigestSign with a NULL digest); no files are touched except by
// LoadPrivateKey, LoadPublicKey and WritePrivateKey.
//
// Keys are PEM as `openssl genpkey -algorithm ed25519` (PKCS#8 private) and
// `openssl pkey -pubout` (SPKI public) write them. A key id is the first 16
// lower-case hex digits of the SHA-256 of the DER SPKI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ward::trust {

class PublicKey {
 public:
  // nullopt and *error (naming the file) when it cannot be read or is not
  // an Ed25519 public key (a private key is refused here: give the .pub).
  static std::optional<PublicKey> Load(const std::string& path, std::string* error);
  static std::optional<PublicKey> FromPem(const std::string& pem, std::string* error);
  const std::string& id() const { return id_; }
  // SPKI PEM, as `openssl pkey -pubout` writes it.
  std::string Pem() const;
  // True when `signature` (64 bytes) is this key's Ed25519 signature of
  // `message`.
  bool Verify(const std::string& message, const std::string& signature) const;

 private:
  std::shared_ptr<void> key_;  // EVP_PKEY
  std::string id_;
  friend class PrivateKey;
};

class PrivateKey {
 public:
  static std::optional<PrivateKey> Load(const std::string& path, std::string* error);
  static std::optional<PrivateKey> FromPem(const std::string& pem, std::string* error);
  static std::optional<PrivateKey> Generate(std::string* error);
  // PKCS#8 PEM.
  std::string Pem() const;
  // Writes Pem() to `path`, created 0600 (O_EXCL: an existing path is
  // refused, never replaced), fsynced.
  bool Write(const std::string& path, std::string* error) const;
  const PublicKey& public_key() const { return public_; }
  const std::string& id() const { return public_.id(); }
  // The 64-byte Ed25519 signature of `message` ("" only if OpenSSL fails).
  std::string Sign(const std::string& message) const;

 private:
  std::shared_ptr<void> key_;  // EVP_PKEY
  PublicKey public_;
};

// The scope as signed statements name it: "cgroup", "uid" or "interface",
// and its value (a uid in decimal).
struct SignedScope {
  std::string kind, value;
};

// What a bundle's or a tombstone's signature covers. The bytes signed are
// each field as an 8-byte little-endian length and its bytes, in this
// order: the domain ("ward-bundle-signature-v1" or
// "ward-remove-signature-v1"), policy, scope kind, scope value, sha256
// (the bundle's content hash; "" for a tombstone), sequence and not_after
// (decimal), key id.
struct Statement {
  enum Kind { kBundle, kRemove };
  Kind kind = kBundle;
  std::string policy;
  SignedScope scope;
  std::string sha256;
  uint64_t sequence = 0;
  int64_t not_after_ms = 0;  // Unix time in milliseconds
  std::string key_id;
};
std::string SigningBytes(const Statement& statement);

// The audit log's checkpoint: the bytes signed are "ward-audit-checkpoint-v1",
// size (decimal: the number of records before the checkpoint), head (the
// hash of the last of them), key id, length-prefixed as above.
std::string CheckpointBytes(uint64_t size, const std::string& head, const std::string& key_id);

// "7d", "12h", "30m", "90s", "1500ms", or a sum such as "1d12h": the
// duration in milliseconds; nullopt for anything else, zero or negative.
std::optional<int64_t> ParseDuration(const std::string& text);

// Lower-case hex, and back (nullopt for odd length or a non-hex digit).
std::string Hex(const std::string& bytes);
std::optional<std::string> Unhex(const std::string& hex);
// Standard base64 with padding, and back (nullopt for anything else).
std::string Base64(const std::string& bytes);
std::optional<std::string> Unbase64(const std::string& text);

}  // namespace ward::trust
