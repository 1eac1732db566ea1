// The kernel's audit records, read as a listener: a NETLINK_AUDIT socket
// bound to the read-only multicast group AUDIT_NLGRP_READLOG (root, or
// CAP_AUDIT_READ). Ward never registers as the audit daemon (it never sets
// the audit pid): it reads the copy the kernel multicasts to every
// listener, beside auditd or journald if the host has one.
//
// What arrives, measured on kernel 6.18 with audit off and no daemon
// (enforcers/README.md, "ward run --log"): seccomp's records (type 1326)
// always for a kill, for an errno action only when the filter was loaded
// with SECCOMP_FILTER_FLAG_LOG; Landlock's (1423 access denied, 1424 domain
// status) only while audit is enabled, with the syscall's own record (1300)
// and an end-of-event record (1320) beside them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ward::enforce {

inline constexpr int kAuditSeccomp = 1326;         // AUDIT_SECCOMP
inline constexpr int kAuditSyscall = 1300;         // AUDIT_SYSCALL
inline constexpr int kAuditEndOfEvent = 1320;      // AUDIT_EOE
inline constexpr int kAuditLandlockAccess = 1423;  // AUDIT_LANDLOCK_ACCESS
inline constexpr int kAuditLandlockDomain = 1424;  // AUDIT_LANDLOCK_DOMAIN

// One record: "audit(SEC.MS:SERIAL): key=value ...".
struct AuditRecord {
  int type = 0;
  uint64_t serial = 0;  // shared by the records of one event
  int64_t time_ms = 0;  // the kernel's time stamp, ms since the epoch
  // Values unquoted; a hex-encoded value (an unquoted even run of hex
  // digits where the kernel quotes plain text: exe, comm, path, name)
  // decoded.
  std::map<std::string, std::string> fields;
  std::string Get(const std::string& key) const;
};

// Parses one record's text (the netlink payload). False when it is not
// "audit(...): ...".
bool ParseAuditRecord(int type, const std::string& text, AuditRecord* out);

// The multicast listener.
class AuditListener {
 public:
  AuditListener() = default;
  ~AuditListener();
  AuditListener(const AuditListener&) = delete;
  AuditListener& operator=(const AuditListener&) = delete;
  // Opens and binds the socket (non-blocking, close-on-exec).
  bool Open(std::string* error);
  int fd() const { return fd_; }
  // Reads every record queued now. ENOBUFS (the socket's buffer
  // overflowed: records were dropped) is counted in dropped().
  void Drain(std::vector<AuditRecord>* out);
  uint64_t dropped() const { return dropped_; }

 private:
  int fd_ = -1;
  uint64_t dropped_ = 0;
};

// AUDIT_GET: whether audit is enabled (0 off, 1 on, 2 locked on) and the
// kernel's count of records it lost.
struct AuditStatus {
  uint32_t enabled = 0;
  uint32_t lost = 0;
  uint32_t pid = 0;  // the audit daemon's, 0 without one
};
bool AuditGetStatus(AuditStatus* out, std::string* error);

// Audit enabled for a run, host-wide, and back off after it when it was
// off (AUDIT_SET with only AUDIT_STATUS_ENABLED in the mask: the daemon's
// pid, the rate and the backlog are never touched). Concurrent runs share
// one count, `state_dir`/audit-users under a lock (flock) on
// `state_dir`/audit.lock: one line "restore 0" when the first user turned
// audit on, then "user PID START" per run (START: /proc/PID/stat field
// 22); users whose process is gone are dropped at each change, so a killed
// supervisor does not keep audit on past the next run's end.
// *turned_on: this call enabled it.
bool AuditAcquire(const std::string& state_dir, bool* turned_on, std::string* error);
// This process's run is done (or, from the clean-up of stale runs, none
// of ours was counted: then only the users gone are dropped): audit is
// turned back off when no live user is left and the first user had turned
// it on. *turned_off: this call disabled it.
bool AuditRelease(const std::string& state_dir, bool* turned_off, std::string* error);

}  // namespace ward::enforce
