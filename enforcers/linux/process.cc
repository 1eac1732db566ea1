#include "enforcers/linux/process.h"

#include <linux/capability.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "language/constants.h"

namespace ward::enforce {
namespace {

bool Fail(ProcessFailure* f, const char* step) {
  f->step = step;
  f->error = errno;
  return false;
}

bool EnvKept(const ir::ProcessRules& rules, const std::string& name) {
  for (const std::string& pattern : rules.env_allowed) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0) return true;
    } else if (name == pattern) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool PrepareProcess(const ir::Policy& policy, PreparedProcess* out, std::string* error) {
  *out = PreparedProcess{};
  // Always on: the kernel loads a seccomp filter or a Landlock domain for a
  // process without CAP_SYS_ADMIN only under no_new_privs, and a setuid
  // program cannot gain what the policy dropped (towards deny).
  out->no_new_privileges = true;
  std::ifstream last("/proc/sys/kernel/cap_last_cap");
  if (!(last >> out->last_cap) || out->last_cap < 0 || out->last_cap > 63) {
    *error = "process: cannot read /proc/sys/kernel/cap_last_cap";
    return false;
  }
  for (const std::string& name : policy.process.capabilities_kept) {
    const std::optional<int> cap = LookupCapability(name);
    if (!cap || *cap > out->last_cap) {
      *error = "process: capability " + name + " is not known to this kernel";
      return false;
    }
    out->keep_caps |= 1ULL << *cap;
  }
  if (policy.process.user) {
    out->set_user = true;
    out->uid = policy.process.user->first;
    out->gid = policy.process.user->second;
  }
  if (auto it = policy.limits.find("open_files"); it != policy.limits.end()) {
    PreparedProcess::Rlimit r;
    r.resource = RLIMIT_NOFILE;
    r.value.rlim_cur = r.value.rlim_max = it->second.value;
    out->rlimits.push_back(r);
  }
  return true;
}

bool ApplyProcess(const PreparedProcess& p, ProcessFailure* f) {
  for (const PreparedProcess::Rlimit& r : p.rlimits) {
    if (setrlimit(static_cast<__rlimit_resource>(r.resource), &r.value) != 0) {
      return Fail(f, "setrlimit");
    }
  }
  for (int cap = 0; cap <= p.last_cap; ++cap) {
    if ((p.keep_caps >> cap) & 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return Fail(f, "PR_CAPBSET_DROP");
    }
  }
  if (p.set_user) {
    // Keep the permitted set across the uid change, to cut it to the kept
    // capabilities just after.
    if (p.keep_caps != 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
      return Fail(f, "PR_SET_KEEPCAPS");
    }
    const gid_t groups[1] = {p.gid};
    // Raw system calls: this thread only, which is the whole child.
    if (syscall(SYS_setgroups, 1, groups) != 0) return Fail(f, "setgroups");
    if (syscall(SYS_setresgid, p.gid, p.gid, p.gid) != 0) return Fail(f, "setresgid");
    if (syscall(SYS_setresuid, p.uid, p.uid, p.uid) != 0) return Fail(f, "setresuid");
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  for (int i = 0; i < 2; ++i) {
    const uint32_t word = static_cast<uint32_t>(p.keep_caps >> (32 * i));
    data[i].effective = data[i].permitted = data[i].inheritable = word;
  }
  if (syscall(SYS_capset, &header, data) != 0) return Fail(f, "capset");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return Fail(f, "PR_CAP_AMBIENT_CLEAR_ALL");
  }
  // A non-root user keeps the kept capabilities across execve only as
  // ambient ones; root gets its bounding set, which is now `keep`.
  if (p.set_user && p.uid != 0) {
    for (int cap = 0; cap <= p.last_cap; ++cap) {
      if (((p.keep_caps >> cap) & 1) &&
          prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) {
        return Fail(f, "PR_CAP_AMBIENT_RAISE");
      }
    }
  }
  if (p.no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return Fail(f, "PR_SET_NO_NEW_PRIVS");
  }
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) return Fail(f, "close_range");
  return true;
}

std::vector<std::string> FilterEnvironment(const ir::ProcessRules& rules, char** environ_in) {
  std::vector<std::string> out;
  for (char** e = environ_in; e && *e; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    if (rules.env_allowed.empty() || EnvKept(rules, entry.substr(0, eq))) out.push_back(entry);
  }
  return out;
}

std::string DescribeProcess(const PreparedProcess& p) {
  std::string out = "no_new_privileges\n";
  std::string kept;
  for (int cap = 0; cap <= p.last_cap; ++cap) {
    if (!((p.keep_caps >> cap) & 1)) continue;
    for (const std::string& name : CapabilityNames()) {
      if (LookupCapability(name) == cap) kept += (kept.empty() ? "" : ", ") + name;
    }
  }
  out += "capabilities: every one dropped from every set" +
         (kept.empty() ? std::string() : " but " + kept) + "\n";
  out += p.set_user ? "user " + std::to_string(p.uid) + " group " + std::to_string(p.gid) + "\n"
                    : "user: unchanged (uid " + std::to_string(getuid()) + ")\n";
  for (const PreparedProcess::Rlimit& r : p.rlimits) {
    if (r.resource == RLIMIT_NOFILE) {
      out += "rlimit RLIMIT_NOFILE " + std::to_string(r.value.rlim_cur) + "\n";
    }
  }
  out += "descriptors: every one but 0, 1 and 2 closed at exec\n";
  return out;
}

std::string ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The name, in parentheses, may hold spaces and ')': the fields start
  // after the last ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 > stat.size()) return "";
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
    if (i == 22) return f;
  }
  return "";
}

}  // namespace ward::enforce
