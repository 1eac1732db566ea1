// `ward run --log`: every denial of one run, whatever layer refused it, with
// the policy rule that decided it (enforcers/README.md, "ward run --log",
// has the JSON shape and what the kernel reports). The sources:
//
//   seccomp, guard  the audit records of type 1326 (linux/kernel_audit.h),
//                   by pid in the run's cgroup
//   landlock        1423 records of the run's Landlock domain (its id from
//                   the 1424 record of the domain the workload was born in)
//   network         the run's eBPF ring buffer (linux/ebpf.h)
//
// Each is attributed by asking the IR the question again, as `ward explain`
// does (compiler/explain.h): a syscall and its architecture, a path and the
// access, a flow. Arguments of syscalls are not reported: seccomp's records
// carry none (no sys_enter program is attached).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "enforcers/linux/kernel_audit.h"
#include "language/source.h"

namespace ward::enforce {

struct EbpfDenial;

inline constexpr int kRunLogVersion = 1;

// One denial.
struct Denial {
  int64_t time_ms = 0;  // the kernel's time stamp (audit), or when read (eBPF)
  int pid = 0;
  std::string exe;
  std::string layer;  // "seccomp", "guard", "landlock", "network"
  // What was tried: "syscall", "file", "connect", "send", "bind",
  // "accept", "receive", "packet", "socket", "signal", "abstract-unix".
  std::string what;
  std::string syscall;  // its name ("" when unknown)
  int syscall_nr = -1;
  std::string arch;                // libseccomp's spelling
  std::string action;              // seccomp: "kill", "errno EPERM", "trap", ...; others: "deny"
  std::string path, access;        // file: the path; "read", "write", "exec"
  std::string protocol, address;   // network
  int port = -1, local_port = -1;  // network
  std::string unix_path;           // unix sockets: "/path" or "@name"
  std::string family;              // socket: "AF_PACKET", ...
  std::string rule;                // FILE:LINE:COL, "default", or "guard"
  std::string rule_text;           // the rule's source text, or what the guard refuses
  std::string default_at;          // rule "default": FILE:LINE:COL of an explicit `default`
};

// The JSON line (no newline): {"version":1,"time":...,...}, keys in a fixed
// order, only those the denial has.
std::string DenialJson(const Denial& d);
// The short human line (no newline), for stderr.
std::string DenialText(const Denial& d);

// Name of a syscall number on `arch` from the kernel's tables; "" unknown.
std::string SyscallName(Arch arch, int nr);
// The Arch of an AUDIT_ARCH_* value (hex, as audit prints it).
std::optional<Arch> ArchOfAudit(const std::string& hex);

// What the supervisor hands the collector.
struct RunLogContext {
  const ir::Policy* policy = nullptr;  // as enforced (the agent guard's rules included)
  std::optional<std::string> home;     // `~`
  // FILE:LINE:COL of a span, and its source text ("" without sources).
  std::function<std::string(Span)> where;
  std::function<std::string(Span)> text;
  std::string cgroup;  // the run's v2 cgroup, a full path
  int child = 0;       // the pid the workload was born as
  // The run's own audit session (`ses=` in its records), -1 when it has
  // none: then records are kept by the cgroup of their pid.
  int session = -1;
};

// Gathers a run's denials from the audit records and eBPF events it is
// given, keeps the run's own, attributes them.
class RunLogCollector {
 public:
  explicit RunLogCollector(RunLogContext context) : c_(std::move(context)) {}
  // Records as read; seccomp's are decided at once, Landlock's kept until
  // their event is whole (the end-of-event record) or Flush.
  void AddAudit(const std::vector<AuditRecord>& records, std::vector<Denial>* out);
  // Events of the run's own eBPF programs (attached to its cgroup only).
  void AddEbpf(const std::vector<EbpfDenial>& events, std::vector<Denial>* out);
  // Events still waiting for their end (the run is over).
  void Flush(std::vector<Denial>* out);
  // Whether pid is (or was seen) in the run's cgroup.
  bool Ours(int pid);
  // Pids found in the cgroup now: called at each tick, so that a process
  // gone before its records were read is still known.
  void ScanCgroup();

  // The last kill seccomp reported for this pid, if any (the SIGSYS
  // explanation).
  std::optional<Denial> KillOf(int pid) const;
  // The last kill of any process of the run.
  std::optional<Denial> LastKill() const { return last_kill_; }
  // A denied flow to port 53 (udp or tcp) was seen: the address.
  const std::optional<std::string>& dns_refused() const { return dns_refused_; }

 private:
  std::optional<Denial> Seccomp(const AuditRecord& r);
  void Landlock(const std::vector<AuditRecord>& event, std::vector<Denial>* out);
  void Attribute(Denial* d);

  RunLogContext c_;
  std::set<int> ours_, others_;
  std::set<std::string> domains_;                         // our Landlock domains (hex ids)
  std::map<uint64_t, std::vector<AuditRecord>> pending_;  // by serial
  std::map<int, Denial> kills_;
  std::optional<Denial> last_kill_;
  std::optional<std::string> dns_refused_;
};

}  // namespace ward::enforce
