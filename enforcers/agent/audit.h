// wardd's audit log (README.md, "Audit"): append-only JSON lines in the
// layout of audit_record.h, one per call that changes state or is refused
// (and per intent rolled forward at start, per repair), each chained to
// the one before by `prev` and fdatasynced; checkpoints signed with the
// host's Ed25519 key every `checkpoint_every` records or
// `checkpoint_interval` after the first record none covers, and at Close.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backends/signing.h"
#include "enforcers/agent/audit_record.h"

namespace ward::agent {

inline constexpr const char* kAuditFile = "audit.log";
inline constexpr const char* kAuditKeyFile = "audit.key";
inline constexpr const char* kAuditPubFile = "audit.pub";
inline constexpr const char* kAuditGenesis = audit::kGenesis;

struct AuditEntry {
  std::string who;
  std::string method;  // "apply", "remove", "recover", "repair"
  std::string policy;
  std::string sha256;
  uint64_t generation = 0;
  std::string result;  // "ok", "unchanged", "refused: …", "failed: …", …
};

struct AuditConfig {
  std::string state_dir;  // the folder of audit.key, audit.pub, audit.log
  std::string log_path;   // empty: STATE/audit.log
  std::string key_path;   // empty: STATE/audit.key, generated when absent
  uint64_t checkpoint_every = 1000;
  std::chrono::milliseconds checkpoint_interval{std::chrono::minutes(5)};
  // Told of a checkpoint the timer could not write (nothing else reports it).
  std::function<void(const std::string&)> on_error;
};

class AuditLog {
 public:
  AuditLog() = default;
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Loads the host key (generated 0600 when absent; one given by path must
  // be a regular file no group or other may read) and writes its public
  // half to STATE/audit.pub; opens the log (created 0600) for appending
  // and reads its last record from the end of the file. A log in the
  // format before issue 21 (first line `{"time":…`) is renamed to
  // `LOG.v0` (never over an existing file) and a new one started. A torn
  // last line (a crash during its write) is ended with a newline and left
  // for `ward audit verify` to name; the next record chains onto the one
  // before it. False and *error when any of this fails, when the last
  // whole line is not a record or does not match its own hash (the log
  // was changed: fail closed), or when the file is not an audit log.
  // `dir_fd`: the state folder's descriptor.
  bool Open(int dir_fd, const AuditConfig& config, std::string* error);
  // Appends one record, fdatasynced, and a checkpoint after it when
  // `checkpoint_every` records are uncovered. Thread-safe.
  bool Append(const AuditEntry& entry, std::string* error);
  // A checkpoint now, if any record is not covered by one.
  bool Checkpoint(std::string* error);
  // "SEQ:HASH" of the last record ("0:" and 64 zeros for an empty log).
  std::string Head() const;
  const std::string& key_id() const { return key_ ? key_->id() : empty_; }
  // What Open did that the operator should know ("moved aside …"), or "".
  const std::string& notice() const { return notice_; }
  // Stops the timer and writes a last checkpoint when one is due.
  void Close();

 private:
  bool OpenKey(int dir_fd, const AuditConfig& config, std::string* error);
  bool OpenFile(const AuditConfig& config, int dir_fd, std::string* error);
  bool ReadLast(std::string* error);
  bool WriteLocked(audit::Record record, std::string* error);
  bool CheckpointLocked(std::string* error);
  void Timer();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  int fd_ = -1;
  std::string name_;  // the log's path, for messages
  off_t size_ = 0;
  uint64_t seq_ = 0;
  std::string hash_ = audit::kGenesis;
  std::string time_;  // of the last record: times never go backwards
  uint64_t uncovered_ = 0;
  std::chrono::steady_clock::time_point due_{};
  uint64_t checkpoint_every_ = 1000;
  std::chrono::milliseconds checkpoint_interval_{std::chrono::minutes(5)};
  std::function<void(const std::string&)> on_error_;
  std::optional<trust::PrivateKey> key_;
  std::string notice_, empty_;
  bool stop_ = false;
  std::thread timer_;
};

}  // namespace ward::agent
