#include "enforcers/run/run_log.h"

#include <sys/socket.h>

#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/explain.h"
#include "enforcers/linux/ebpf.h"

namespace ward::enforce {
namespace {

std::string TimeText(int64_t ms) {
  const time_t s = static_cast<time_t>(ms / 1000);
  tm t;
  gmtime_r(&s, &t);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

int64_t NowMs() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

std::string ErrnoName(int e) {
  const char* n = strerrorname_np(e);
  return n ? n : std::to_string(e);
}

// seccomp's action (the record's `code`) as the language names it.
std::string ActionName(uint32_t code, ir::SysAction* as_ir) {
  const uint32_t action = code & 0xffff0000U, data = code & 0xffffU;
  switch (action) {
    case 0x80000000U:  // SECCOMP_RET_KILL_PROCESS
      *as_ir = {ir::SysAction::Kind::kKill, 0};
      return "kill";
    case 0x00000000U:  // SECCOMP_RET_KILL_THREAD
      *as_ir = {ir::SysAction::Kind::kKillThread, 0};
      return "kill-thread";
    case 0x00030000U:  // SECCOMP_RET_TRAP
      *as_ir = {ir::SysAction::Kind::kTrap, 0};
      return "trap";
    case 0x00050000U:  // SECCOMP_RET_ERRNO: the record has no errno value (Attribute adds it)
      *as_ir = {ir::SysAction::Kind::kErrno, static_cast<int>(data)};
      return "errno";
    case 0x7fc00000U:  // SECCOMP_RET_USER_NOTIF
      *as_ir = {ir::SysAction::Kind::kNotify, 0};
      return "notify";
    case 0x7ffc0000U:  // SECCOMP_RET_LOG
      *as_ir = {ir::SysAction::Kind::kLog, 0};
      return "log";
    case 0x7fff0000U:  // SECCOMP_RET_ALLOW
      *as_ir = {ir::SysAction::Kind::kAllow, 0};
      return "allow";
    default:
      *as_ir = {ir::SysAction::Kind::kKill, 0};
      return "action " + std::to_string(action >> 16);
  }
}

// What ward run's guard (backends/seccomp/filter.h) refuses, by syscall.
std::string GuardText(const std::string& name) {
  if (name == "socket" || name == "socketpair") {
    return "ward run's guard: socket families and netlink protocols no rule grants";
  }
  if (name == "ioctl")
    return "ward run's guard: TIOCSTI, TIOCLINUX and the host's interface ioctls";
  if (name == "clone3") return "ward run's guard: clone3 (ENOSYS, glibc falls back to clone)";
  if (name.find("chmod") != std::string::npos) return "ward run's guard: setuid and setgid bits";
  return "ward run's guard: another architecture's calls";
}

std::string FamilyName(int family) {
  switch (family) {
    case AF_UNIX:
      return "AF_UNIX";
    case AF_INET:
      return "AF_INET";
    case AF_INET6:
      return "AF_INET6";
    case AF_NETLINK:
      return "AF_NETLINK";
    case AF_PACKET:
      return "AF_PACKET";
    default:
      return std::to_string(family);
  }
}

// Landlock's blocker names (security/landlock/audit.c) as the language's
// rights.
std::string AccessOf(const std::string& blocker) {
  if (blocker == "fs.execute") return "exec";
  if (blocker == "fs.read_file" || blocker == "fs.read_dir") return "read";
  return "write";  // write_file, truncate, make_*, remove_*, refer, ioctl_dev
}

}  // namespace

std::string DenialJson(const Denial& d) {
  nlohmann::ordered_json j;
  j["version"] = kRunLogVersion;
  j["time"] = TimeText(d.time_ms);
  j["pid"] = d.pid;
  j["exe"] = d.exe;
  j["layer"] = d.layer;
  j["what"] = d.what;
  if (!d.syscall.empty() || d.syscall_nr >= 0) {
    j["syscall"] = d.syscall;
    j["nr"] = d.syscall_nr;
    j["arch"] = d.arch;
  }
  if (!d.action.empty()) j["action"] = d.action;
  if (!d.path.empty()) j["path"] = d.path;
  if (!d.access.empty()) j["access"] = d.access;
  if (!d.protocol.empty()) j["protocol"] = d.protocol;
  if (!d.address.empty()) j["address"] = d.address;
  if (d.port >= 0) j["port"] = d.port;
  if (d.local_port >= 0) j["local_port"] = d.local_port;
  if (!d.unix_path.empty()) j["unix"] = d.unix_path;
  if (!d.family.empty()) j["family"] = d.family;
  j["rule"] = d.rule;
  j["rule_text"] = d.rule_text;
  if (!d.default_at.empty()) j["default_at"] = d.default_at;
  // Paths and names are the kernel's bytes: replaced, never refused.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string DenialText(const Denial& d) {
  std::string tried;
  if (d.what == "syscall") {
    tried = "syscall " + (d.syscall.empty() ? std::to_string(d.syscall_nr) : d.syscall);
  } else if (d.what == "file") {
    tried = d.access + " " + d.path;
  } else if (!d.unix_path.empty()) {
    tried = d.what + " unix " + d.unix_path;
  } else if (d.what == "socket") {
    tried = "socket " + d.family;
  } else if (d.what == "bind") {
    tried = "bind " + d.protocol + " port " + std::to_string(d.local_port);
  } else {
    std::string addr = d.address.find(':') != std::string::npos ? "[" + d.address + "]" : d.address;
    tried =
        d.what + " " + d.protocol + " " + addr + (d.port >= 0 ? ":" + std::to_string(d.port) : "");
  }
  std::string exe = d.exe;
  if (const size_t slash = exe.rfind('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
  std::string out = "ward run: denied " + tried + " (" + d.layer;
  if (!d.action.empty() && d.action != "deny") out += ", " + d.action;
  out += ") pid " + std::to_string(d.pid) + (exe.empty() ? "" : " " + exe) + ": ";
  if (d.rule == "default") {
    out += "by default";
  } else if (d.rule == "guard") {
    out += d.rule_text;
    return out;
  } else {
    out += d.rule;
  }
  if (!d.rule_text.empty()) out += " (" + d.rule_text + ")";
  return out;
}

std::string SyscallName(Arch arch, int nr) {
  static std::mutex mu;
  static std::map<Arch, std::map<int, std::string>> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto& table = tables[arch];
  if (table.empty()) {
    for (const std::string& name : AllSyscallNames()) {
      if (auto n = SyscallNumber(arch, name)) table.emplace(*n, name);
    }
  }
  const auto it = table.find(nr);
  return it == table.end() ? "" : it->second;
}

std::optional<Arch> ArchOfAudit(const std::string& hex) {
  static const std::pair<const char*, Arch> kArches[] = {
      {"c000003e", Arch::kX86_64}, {"40000003", Arch::kX86},     {"c00000b7", Arch::kAarch64},
      {"40000028", Arch::kArm},    {"c00000f3", Arch::kRiscv64}, {"c0000015", Arch::kPpc64le},
      {"80000016", Arch::kS390x}};
  for (const auto& [h, a] : kArches) {
    if (hex == h) return a;
  }
  return std::nullopt;
}

bool RunLogCollector::Ours(int pid) {
  if (pid <= 0) return false;
  if (pid == c_.child || ours_.count(pid)) return true;
  if (others_.count(pid)) return false;
  // /proc/PID/cgroup: "0::/ward/run-N" (v2), relative to the reader's
  // cgroup namespace root, which for the supervisor is the host's.
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  const size_t ward = c_.cgroup.rfind("/ward/");
  const std::string relative = ward == std::string::npos ? c_.cgroup : c_.cgroup.substr(ward);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string path = line.substr(3);
    if (path == relative || path.rfind(relative + "/", 0) == 0) {
      ours_.insert(pid);
      return true;
    }
    others_.insert(pid);
    return false;
  }
  return false;  // gone before we looked, and never seen in the cgroup
}

void RunLogCollector::ScanCgroup() {
  std::ifstream in(c_.cgroup + "/cgroup.procs");
  for (int pid; in >> pid;) ours_.insert(pid);
  // Pids are reused: one seen elsewhere may be ours now.
  others_.clear();
}

void RunLogCollector::Attribute(Denial* d) {
  const ir::Policy& p = *c_.policy;
  auto cite = [&](const std::vector<Span>& rules, Span fallback) {
    for (Span s : rules) {
      if (!s.valid()) continue;
      d->rule = c_.where(s);
      d->rule_text = c_.text(s);
      return;
    }
    d->rule = "default";
    d->rule_text = fallback.valid() ? c_.text(fallback) : "";
    d->default_at = fallback.valid() ? c_.where(fallback) : "";
  };
  std::string error;
  if (d->what == "syscall") {
    ir::SyscallQuery q{d->syscall, d->arch, {}};
    std::optional<ir::Explanation> e = ir::ExplainSyscall(p, q, &error);
    if (!e) {
      d->rule = "default";
      return;
    }
    // The kernel's action differs from the policy's answer: the guard
    // decided (it is stacked first; the stricter action wins).
    if (e->decision != d->action || e->decision == "allow") {
      d->layer = "guard";
      d->rule = "guard";
      d->rule_text = GuardText(d->syscall);
      return;
    }
    // seccomp's record names the action, not its errno: the policy's.
    if (e->decision == "errno") d->action = "errno " + ErrnoName(e->errno_value);
    cite(e->rules, e->default_rule);
  } else if (d->what == "file") {
    const ir::FsRight right = d->access == "exec"    ? ir::FsRight::kExec
                              : d->access == "write" ? ir::FsRight::kWrite
                                                     : ir::FsRight::kRead;
    std::optional<ir::Explanation> e = ir::ExplainPath(p, d->path, right, c_.home, &error);
    if (!e) {
      d->rule = "default";
      return;
    }
    cite(e->rules, Span{});
  } else if (!d->address.empty() && (d->what == "connect" || d->what == "send")) {
    ir::FlowQuery q;
    q.direction = ir::Direction::kEgress;
    q.protocol = d->protocol == "udp" ? ir::Protocol::kUdp : ir::Protocol::kTcp;
    q.host = d->address;
    q.port = static_cast<uint16_t>(std::max(d->port, 0));
    std::optional<ir::Explanation> e = ir::ExplainFlow(p, q, &error);
    if (!e) {
      d->rule = "default";
      return;
    }
    cite(e->rules, Span{});
  } else {
    d->rule = "default";
  }
}

std::optional<Denial> RunLogCollector::Seccomp(const AuditRecord& r) {
  int pid = 0;
  try {
    pid = std::stoi(r.Get("pid"));
  } catch (...) {
    return std::nullopt;
  }
  if (c_.session >= 0 && r.Get("ses") != std::to_string(c_.session)) return std::nullopt;
  if (c_.session < 0 && !Ours(pid)) return std::nullopt;
  Denial d;
  d.time_ms = r.time_ms;
  d.pid = pid;
  d.exe = r.Get("exe");
  d.layer = "seccomp";
  d.what = "syscall";
  const std::optional<Arch> arch = ArchOfAudit(r.Get("arch"));
  try {
    d.syscall_nr = std::stoi(r.Get("syscall"));
  } catch (...) {
  }
  d.arch = arch ? std::string(ArchName(*arch)) : "audit " + r.Get("arch");
  if (arch) d.syscall = SyscallName(*arch, d.syscall_nr);
  uint32_t code = 0;
  try {
    code = static_cast<uint32_t>(std::stoul(r.Get("code"), nullptr, 16));
  } catch (...) {
  }
  ir::SysAction as_ir;
  d.action = ActionName(code, &as_ir);
  if (d.action == "allow" || d.action == "log") return std::nullopt;  // not denials
  if (!arch || d.syscall.empty()) {
    d.layer = "guard";
    d.rule = "guard";
    d.rule_text = GuardText("");
    return d;
  }
  Attribute(&d);
  return d;
}

void RunLogCollector::Landlock(const std::vector<AuditRecord>& event, std::vector<Denial>* out) {
  const AuditRecord* access = nullptr;
  const AuditRecord* syscall = nullptr;
  for (const AuditRecord& r : event) {
    if (r.type == kAuditLandlockDomain && r.Get("status") == "allocated") {
      int pid = 0;
      try {
        pid = std::stoi(r.Get("pid"));
      } catch (...) {
      }
      // The domain the workload was born in: created by the child itself.
      if (pid == c_.child) domains_.insert(r.Get("domain"));
    }
    if (r.type == kAuditLandlockAccess) access = &r;
    if (r.type == kAuditSyscall) syscall = &r;
  }
  if (!access || !domains_.count(access->Get("domain"))) return;
  Denial d;
  d.time_ms = access->time_ms;
  d.layer = "landlock";
  if (syscall) {
    try {
      d.pid = std::stoi(syscall->Get("pid"));
    } catch (...) {
    }
    d.exe = syscall->Get("exe");
    const std::optional<Arch> arch = ArchOfAudit(syscall->Get("arch"));
    try {
      d.syscall_nr = std::stoi(syscall->Get("syscall"));
    } catch (...) {
    }
    if (arch) {
      d.arch = std::string(ArchName(*arch));
      d.syscall = SyscallName(*arch, d.syscall_nr);
    }
  }
  d.action = "deny";
  const std::string blockers = access->Get("blockers");
  const std::string first = blockers.substr(0, blockers.find(','));
  if (first.rfind("fs.", 0) == 0) {
    d.what = "file";
    d.path = access->Get("path");
    d.access = AccessOf(first);
  } else if (first == "net.connect_tcp" || first == "net.bind_tcp") {
    d.what = first == "net.bind_tcp" ? "bind" : "connect";
    d.protocol = "tcp";
    d.address = access->Get("daddr");
    try {
      if (d.what == "bind") {
        d.local_port = std::stoi(access->Get("src"));
      } else {
        d.port = std::stoi(access->Get("dest"));
      }
    } catch (...) {
    }
  } else if (first == "scope.signal") {
    d.what = "signal";
  } else {
    d.what = "abstract-unix";
    d.unix_path = "@" + access->Get("path");
  }
  Attribute(&d);
  out->push_back(std::move(d));
}

void RunLogCollector::AddAudit(const std::vector<AuditRecord>& records, std::vector<Denial>* out) {
  for (const AuditRecord& r : records) {
    if (r.type == kAuditSeccomp) {
      if (std::optional<Denial> d = Seccomp(r)) {
        if (d->action.rfind("kill", 0) == 0) {
          kills_[d->pid] = *d;
          last_kill_ = *d;
        }
        out->push_back(std::move(*d));
      }
      continue;
    }
    if (r.type != kAuditLandlockAccess && r.type != kAuditLandlockDomain &&
        r.type != kAuditSyscall && r.type != kAuditEndOfEvent) {
      continue;
    }
    // A domain's deallocation stands alone (no end-of-event record).
    if (r.type == kAuditLandlockDomain && r.Get("status") == "deallocated") continue;
    if (r.type == kAuditEndOfEvent) {
      auto it = pending_.find(r.serial);
      if (it != pending_.end()) {
        Landlock(it->second, out);
        pending_.erase(it);
      }
      continue;
    }
    // A syscall record alone is some other event's: only kept beside a
    // Landlock record of the same serial.
    if (r.type == kAuditSyscall && !pending_.count(r.serial)) continue;
    pending_[r.serial].push_back(r);
  }
  // Events never ended (a record lost): at most a few kept.
  while (pending_.size() > 64) pending_.erase(pending_.begin());
}

void RunLogCollector::Flush(std::vector<Denial>* out) {
  for (auto& [serial, event] : pending_) Landlock(event, out);
  pending_.clear();
}

void RunLogCollector::AddEbpf(const std::vector<EbpfDenial>& events, std::vector<Denial>* out) {
  // Only the run's own programs' events come here, attached to its cgroup
  // alone: every one is the run's.
  for (const EbpfDenial& e : events) {
    Denial d;
    d.time_ms = NowMs();
    d.pid = static_cast<int>(e.pid);
    char exe[4096];
    const ssize_t n =
        readlink(("/proc/" + std::to_string(e.pid) + "/exe").c_str(), exe, sizeof exe - 1);
    if (n > 0) d.exe.assign(exe, static_cast<size_t>(n));
    d.layer = "network";
    d.what = e.op;
    d.action = "deny";
    d.protocol = e.protocol;
    d.address = e.address;
    d.port = e.port;
    d.local_port = e.local_port;
    d.unix_path = e.unix_name;
    if (e.op == "socket") d.family = FamilyName(e.family);
    const ir::NetRules& net = c_.policy->network;
    if (e.rule == 0) {
      d.rule = "default";
    } else if (e.rule <= net.rules.size()) {
      const Span s = net.rules[e.rule - 1].span;
      d.rule = s.valid() ? c_.where(s) : "implicit";
      d.rule_text = s.valid() ? c_.text(s) : net.rules[e.rule - 1].implicit;
    } else if (e.rule - net.rules.size() - 1 < net.unix_rules.size()) {
      const Span s = net.unix_rules[e.rule - net.rules.size() - 1].span;
      d.rule = s.valid() ? c_.where(s) : "implicit";
      d.rule_text = s.valid() ? c_.text(s) : "";
    } else {
      d.rule = "default";
    }
    if ((e.op == "connect" || e.op == "send") && e.port == 53 && !dns_refused_) {
      dns_refused_ = e.address;
    }
    out->push_back(std::move(d));
  }
}

std::optional<Denial> RunLogCollector::KillOf(int pid) const {
  const auto it = kills_.find(pid);
  if (it == kills_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ward::enforce
