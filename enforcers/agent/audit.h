// wardd's audit log (README.md, "Audit"): `audit.log` in the state folder,
// append-only JSON lines, one per Apply or Remove (and per intent rolled
// forward at start), each carrying the SHA-256 of the line before it:
//
//   {"time":"2026-12-02T06:00:00.000Z","who":"uid:0","action":"apply",
//    "policy":"web","sha256":"…","generation":3,"result":"ok",
//    "prev":"<sha-256 of the previous line, without its newline>"}
//
// The first line's `prev` is 64 zeros. `ward audit verify` (issue 21)
// recomputes the chain and names the first line that does not match.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace ward::agent {

inline constexpr const char* kAuditFile = "audit.log";
inline constexpr const char* kAuditGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

struct AuditEntry {
  std::string who;
  std::string action;  // "apply", "remove", "recover"
  std::string policy;
  std::string sha256;
  uint64_t generation = 0;
  std::string result;  // "ok", "unchanged", or the error
};

class AuditLog {
 public:
  AuditLog() = default;
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Opens (creating, 0600) `audit.log` in the state folder `dir_fd` for
  // appending and reads the hash of its last line. False and *error when it
  // cannot, or when its last line is not terminated (a torn write: the
  // chain stays as it is, and the next line starts on a line of its own).
  bool Open(int dir_fd, std::string* error);
  // Appends one line (with time and prev), fsynced. Thread-safe.
  bool Append(const AuditEntry& entry, std::string* error);
  // The SHA-256 of the last line written: the chain's head.
  std::string Head() const;

 private:
  mutable std::mutex mu_;
  int fd_ = -1;
  std::string head_ = kAuditGenesis;
};

// The line Append writes for `entry` at `time` after `prev` (no newline).
std::string AuditLine(const AuditEntry& entry, const std::string& time, const std::string& prev);

}  // namespace ward::agent
