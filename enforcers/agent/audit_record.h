// The audit log's record (README.md, "Audit"): one JSON line, its keys in a
// fixed order, compact, ASCII only (nlohmann's dump with ensure_ascii):
//
//   {"seq":N,"time":"2026-12-02T06:00:00.000Z","prev":"<64 hex>",
//    "who":"uid:0","what":{"method":"apply","policy":"web","sha256":"…",
//    "generation":3},"result":"ok","hash":"<64 hex>"}
//
// A checkpoint is a record whose `what` is {"method":"checkpoint"}, with
// `"checkpoint":{"size":N,"head":"<64 hex>","key_id":"<16 hex>","sig":"…"}`
// after `result`. `hash` is the SHA-256 of the record's canonical bytes: the
// line with its last 75 bytes, `,"hash":"<64 hex>"}`, replaced by `}`.
//
// Shared by wardd's writer (audit.h) and `ward audit verify` (cli/audit.cc),
// which reads the fixed fields where the layout puts them, without a JSON
// parse. No files here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ward::audit {

inline constexpr const char* kGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";
// `,"hash":"` + 64 hex + `"}`.
inline constexpr size_t kHashSuffixSize = 75;

// What a record says, for the writer.
struct Record {
  uint64_t seq = 0;
  std::string time;  // RFC 3339 UTC with milliseconds, 24 characters
  std::string prev;  // the previous record's hash; kGenesis for seq 1
  std::string who;
  // "apply", "remove", "recover", "repair" or "checkpoint" (which has
  // none of policy, sha256, generation in `what`).
  std::string method;
  std::string policy, sha256;
  uint64_t generation = 0;
  std::string result;
  // Checkpoints only: the records before it, the hash of the last of them,
  // the host key's id and the base64 Ed25519 signature of
  // trust::CheckpointBytes(size, head, key_id).
  uint64_t size = 0;
  std::string head, key_id, sig;
};

// The line of `record` (no newline) and its hash.
std::string RecordLine(const Record& record, std::string* hash);

// The fixed fields of a line, pointing into it.
struct RecordView {
  uint64_t seq = 0;
  std::string_view time, prev, hash;
  bool checkpoint = false;
  uint64_t size = 0;
  std::string_view head, key_id, sig;
};

enum class ParseResult {
  kOk,
  kTorn,       // the line ends before its hash (a write cut short)
  kMalformed,  // not laid out as a record
};

// Locates the fixed fields of `line` (without its newline); *error says
// what is wrong when the result is not kOk. The hash is not checked here.
ParseResult ParseRecord(std::string_view line, RecordView* out, std::string* error);

// SHA-256 of lines' canonical bytes, with one OpenSSL context reused (the
// verifier hashes every line of a log).
class LineHasher {
 public:
  LineHasher();
  ~LineHasher();
  LineHasher(const LineHasher&) = delete;
  LineHasher& operator=(const LineHasher&) = delete;
  // The lower-case hex hash of the record `line` (a whole record line:
  // at least kHashSuffixSize + 1 bytes), "" when OpenSSL fails.
  std::string Hash(std::string_view line);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ward::audit
