#include "backends/signing.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ward::trust {
namespace {

void FreeKey(void* k) { EVP_PKEY_free(static_cast<EVP_PKEY*>(k)); }

EVP_PKEY* Raw(const std::shared_ptr<void>& k) { return static_cast<EVP_PKEY*>(k.get()); }

bool ReadFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

std::string DigestHex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) return "";
  return Hex(std::string(reinterpret_cast<char*>(digest), len));
}

// The key id of an Ed25519 public key: SHA-256 of its DER SPKI, 16 hex.
std::string IdOf(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(key, &der);
  if (len <= 0) return "";
  std::string bytes(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return DigestHex(bytes).substr(0, 16);
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  return len > 0 ? std::string(data, static_cast<size_t>(len)) : std::string();
}

void Field(std::string* out, const std::string& bytes) {
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(bytes);
}

// An Ed25519 key read from PEM (SPKI public, or PKCS#8 private); nullptr
// and *error otherwise.
EVP_PKEY* ReadEd25519(const std::string& pem, bool private_key, std::string* error) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!bio) {
    *error = "out of memory";
    return nullptr;
  }
  EVP_PKEY* key = private_key ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr)
                              : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!key) {
    *error =
        private_key
            ? "not a PEM private key (PKCS#8, as `openssl genpkey -algorithm ed25519` writes it)"
            : "not a PEM public key (SPKI, as `openssl pkey -pubout` writes it)";
    return nullptr;
  }
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    *error = "not an Ed25519 key (make one with `openssl genpkey -algorithm ed25519`)";
    return nullptr;
  }
  return key;
}

}  // namespace

std::optional<PublicKey> PublicKey::FromPem(const std::string& pem, std::string* error) {
  EVP_PKEY* key = ReadEd25519(pem, false, error);
  if (!key) return std::nullopt;
  PublicKey out;
  out.key_ = std::shared_ptr<void>(key, FreeKey);
  out.id_ = IdOf(key);
  return out;
}

std::optional<PublicKey> PublicKey::Load(const std::string& path, std::string* error) {
  std::string pem;
  if (!ReadFile(path, &pem, error)) return std::nullopt;
  auto key = FromPem(pem, error);
  if (!key) *error = path + ": " + *error;
  return key;
}

std::string PublicKey::Pem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio) return "";
  std::string out;
  if (PEM_write_bio_PUBKEY(bio, Raw(key_)) == 1) out = BioText(bio);
  BIO_free(bio);
  return out;
}

bool PublicKey::Verify(const std::string& message, const std::string& signature) const {
  if (!key_ || signature.size() != 64) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) return false;
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, Raw(key_)) == 1 &&
            EVP_DigestVerify(
                ctx, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

std::optional<PrivateKey> PrivateKey::FromPem(const std::string& pem, std::string* error) {
  EVP_PKEY* key = ReadEd25519(pem, true, error);
  if (!key) return std::nullopt;
  PrivateKey out;
  out.key_ = std::shared_ptr<void>(key, FreeKey);
  out.public_.key_ = out.key_;  // an Ed25519 private key verifies as its public half
  out.public_.id_ = IdOf(key);
  return out;
}

std::optional<PrivateKey> PrivateKey::Load(const std::string& path, std::string* error) {
  std::string pem;
  if (!ReadFile(path, &pem, error)) return std::nullopt;
  auto key = FromPem(pem, error);
  if (!key) *error = path + ": " + *error;
  return key;
}

std::optional<PrivateKey> PrivateKey::Generate(std::string* error) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!key) {
    *error = "cannot generate an Ed25519 key";
    return std::nullopt;
  }
  PrivateKey out;
  out.key_ = std::shared_ptr<void>(key, FreeKey);
  out.public_.key_ = out.key_;
  out.public_.id_ = IdOf(key);
  return out;
}

std::string PrivateKey::Pem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio) return "";
  std::string out;
  if (PEM_write_bio_PrivateKey(bio, Raw(key_), nullptr, nullptr, 0, nullptr, nullptr) == 1) {
    out = BioText(bio);
  }
  BIO_free(bio);
  return out;
}

bool PrivateKey::Write(const std::string& path, std::string* error) const {
  const std::string pem = Pem();
  if (pem.empty()) {
    *error = "cannot encode the key";
    return false;
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < pem.size()) {
    ssize_t n = write(fd, pem.data() + done, pem.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = path + ": cannot write: " + std::strerror(errno);
      close(fd);
      unlink(path.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    *error = path + ": cannot write: " + std::strerror(errno);
    unlink(path.c_str());
    return false;
  }
  return true;
}

std::string PrivateKey::Sign(const std::string& message) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) return "";
  std::string sig(64, '\0');
  size_t len = sig.size();
  bool ok =
      EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, Raw(key_)) == 1 &&
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1 &&
      len == 64;
  EVP_MD_CTX_free(ctx);
  return ok ? sig : "";
}

std::string SigningBytes(const Statement& s) {
  std::string out;
  Field(&out,
        s.kind == Statement::kBundle ? "ward-bundle-signature-v1" : "ward-remove-signature-v1");
  Field(&out, s.policy);
  Field(&out, s.scope.kind);
  Field(&out, s.scope.value);
  Field(&out, s.kind == Statement::kBundle ? s.sha256 : "");
  Field(&out, std::to_string(s.sequence));
  Field(&out, std::to_string(s.not_after_ms));
  Field(&out, s.key_id);
  return out;
}

std::string CheckpointBytes(uint64_t size, const std::string& head, const std::string& key_id) {
  std::string out;
  Field(&out, "ward-audit-checkpoint-v1");
  Field(&out, std::to_string(size));
  Field(&out, head);
  Field(&out, key_id);
  return out;
}

std::optional<int64_t> ParseDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (n > (INT64_MAX / 10)) return std::nullopt;
      n = n * 10 + (text[i] - '0');
      ++i;
      if (i - start > 12) return std::nullopt;
    }
    if (i == start) return std::nullopt;
    int64_t unit = 0;
    if (text.compare(i, 2, "ms") == 0) {
      unit = 1;
      i += 2;
    } else if (i < text.size()) {
      switch (text[i]) {
        case 's':
          unit = 1000;
          break;
        case 'm':
          unit = 60 * 1000;
          break;
        case 'h':
          unit = 3600 * 1000;
          break;
        case 'd':
          unit = 24 * 3600 * 1000;
          break;
        default:
          return std::nullopt;
      }
      ++i;
    } else {
      return std::nullopt;  // a number needs its unit
    }
    if (n > (INT64_MAX - total) / unit) return std::nullopt;
    total += n * unit;
  }
  if (total <= 0) return std::nullopt;
  return total;
}

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::optional<std::string> Unhex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = value(hex[i]), lo = value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::optional<std::string> Unbase64(const std::string& text) {
  if (text.size() % 4) return std::nullopt;
  for (char c : text) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
          c == '/' || c == '=')) {
      return std::nullopt;
    }
  }
  if (text.empty()) return std::string();
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  if (text.size() >= 1 && text[text.size() - 1] == '=') ++pad;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  // Canonical only: re-encoding gives the same text.
  if (Base64(out) != text) return std::nullopt;
  return out;
}

}  // namespace ward::trust
