#include "backends/oci/seccomp_profile.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace ward::backend::oci {
namespace {

using ir::SysAction;
using nlohmann::ordered_json;

// One profile entry's identity: what the entry does and when.
struct EntryKey {
  SysAction::Kind kind;
  int errno_value;
  std::vector<std::tuple<int, uint64_t, uint64_t>> tests;  // (arg, mask, value)
  bool operator<(const EntryKey& o) const {
    return std::tie(kind, errno_value, tests) < std::tie(o.kind, o.errno_value, o.tests);
  }
};

// The regions of `name` on `arch` whose action is not the default; those
// that are fall to defaultAction (libseccomp refuses a rule equal to it).
std::vector<const ir::Region*> NonDefault(const ir::SyscallRules& rules, Arch arch,
                                          const std::string& name) {
  std::vector<const ir::Region*> out;
  auto per_arch = rules.syscalls.find(arch);
  if (per_arch == rules.syscalls.end()) return out;
  auto regions = per_arch->second.find(name);
  if (regions == per_arch->second.end()) return out;
  for (const ir::Region& r : regions->second) {
    if (!(r.action == rules.default_action)) out.push_back(&r);
  }
  return out;
}

bool SameRegions(const std::vector<const ir::Region*>& a, const std::vector<const ir::Region*>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(*a[i] == *b[i])) return false;
  }
  return true;
}

// The span that best explains a syscall's regions: its first rule, else
// the default.
Span SpanOf(const std::vector<const ir::Region*>& regions, const ir::SyscallRules& rules) {
  for (const ir::Region* r : regions) {
    if (!r->rules.empty()) return r->rules.front();
  }
  return rules.default_span;
}

// How hard an action refuses. A rule a runtime leaves out gives its
// syscall the default, which widens the policy when the rule refused
// harder than the default does.
int Strictness(SysAction::Kind kind) {
  switch (kind) {
    case SysAction::Kind::kAllow:
      return 0;
    case SysAction::Kind::kLog:
      return 1;
    case SysAction::Kind::kNotify:
      return 2;
    case SysAction::Kind::kErrno:
    case SysAction::Kind::kTrap:
      return 3;
    case SysAction::Kind::kKillThread:
      return 4;
    case SysAction::Kind::kKill:
      return 5;
  }
  return 5;
}

ordered_json Action(const SysAction& action) {
  ordered_json j;
  j["action"] = OciActionName(action.kind);
  if (action.kind == SysAction::Kind::kErrno) j["errnoRet"] = action.errno_value;
  return j;
}

class ProfileBuilder {
 public:
  ProfileBuilder(const ir::SyscallRules& rules, DiagnosticSink& sink)
      : rules_(rules), sink_(sink) {}

  bool Build(ordered_json* out) {
    if (rules_.default_action.kind == SysAction::Kind::kNotify) {
      sink_.Error(Code::kCannotExpress, rules_.default_span,
                  "an OCI profile cannot have notify as its default action",
                  "runc refuses SCMP_ACT_NOTIFY as defaultAction; notify only named syscalls");
      return false;
    }
    std::set<std::string> names;
    for (const auto& [arch, per_arch] : rules_.syscalls) {
      for (const auto& [name, regions] : per_arch) names.insert(name);
    }
    bool ok = true;
    for (const std::string& name : names) ok &= AddSyscall(name);
    if (!ok) return false;
    *out = Assemble();
    return true;
  }

 private:
  // Files the syscall's regions under their entries; false after an error.
  bool AddSyscall(const std::string& name) {
    std::vector<const ir::Region*> first;
    std::optional<Arch> first_arch;
    for (Arch arch : rules_.arches) {
      if (!SyscallNumber(arch, name)) continue;  // the name has no effect there
      std::vector<const ir::Region*> regions = NonDefault(rules_, arch, name);
      if (!first_arch) {
        first = std::move(regions);
        first_arch = arch;
      } else if (!SameRegions(first, regions)) {
        sink_.Error(Code::kCannotExpress, SpanOf(regions.empty() ? first : regions, rules_),
                    "'" + name + "' has different argument rules on " +
                        std::string(ArchName(*first_arch)) + " and " + std::string(ArchName(arch)) +
                        ", but an OCI seccomp profile applies its rules to every architecture",
                    "compile a policy per architecture, or filter only parameters of the same "
                    "width on every architecture");
        return false;
      }
    }
    WarnIfRuntimeSkips(name, first);
    for (const ir::Region* r : first) {
      if (!CheckNotify(name, *r)) return false;
      EntryKey key{r->action.kind, r->action.errno_value, {}};
      for (const ir::ArgTest& t : r->tests) key.tests.emplace_back(t.arg, t.mask, t.value);
      entries_[key].insert(name);
    }
    return true;
  }

  // runc and crun resolve names with the libseccomp they were built with
  // and skip, with no error, a name it does not know. A syscall newer than
  // this host's libseccomp (mseal, listmount, ...) then falls to the
  // default in their filter: harmless for a rule narrower than the default,
  // a widening for one that refuses harder. The profile has no way to give
  // a number instead, so this is a warning, not a refusal: the profile is
  // right for a runtime whose libseccomp knows the name.
  void WarnIfRuntimeSkips(const std::string& name, const std::vector<const ir::Region*>& regions) {
    bool unknown = false;
    for (Arch arch : rules_.arches) {
      if (SyscallNumber(arch, name) && !LibseccompKnows(arch, name)) unknown = true;
    }
    if (!unknown) return;
    const int floor = Strictness(rules_.default_action.kind);
    for (const ir::Region* r : regions) {
      if (Strictness(r->action.kind) <= floor) continue;
      sink_.Warning(Code::kCannotExpress, r->rules.empty() ? rules_.default_span : r->rules.front(),
                    "'" + name + "' is newer than this host's libseccomp (" +
                        std::string(LibseccompVersion()) +
                        "): an OCI runtime linked with it (runc, crun) skips the name without "
                        "an error, and the call gets the default action '" +
                        std::string(OciActionName(rules_.default_action.kind)) + "'",
                    "run the profile with a runtime whose libseccomp knows '" + name +
                        "', or use `ward run` / -t seccomp, which filter it by number");
      return;
    }
  }

  bool CheckNotify(const std::string& name, const ir::Region& r) {
    if (r.action.kind != SysAction::Kind::kNotify) return true;
    Span where = r.rules.empty() ? rules_.default_span : r.rules.front();
    if (name == "write") {
      sink_.Error(Code::kCannotExpress, where, "an OCI profile cannot notify on 'write'",
                  "runc writes the notification fd to its parent with write(2) after loading "
                  "the filter, and refuses SCMP_ACT_NOTIFY for it");
      return false;
    }
    if (!notify_warned_) {
      notify_warned_ = true;
      sink_.Warning(Code::kCannotExpress, where,
                    "SCMP_ACT_NOTIFY needs a seccomp agent: set linux.seccomp.listenerPath for "
                    "runc or crun; Docker cannot load this profile");
    }
    return true;
  }

  ordered_json Assemble() const {
    ordered_json profile;
    profile["defaultAction"] = OciActionName(rules_.default_action.kind);
    if (rules_.default_action.kind == SysAction::Kind::kErrno) {
      profile["defaultErrnoRet"] = rules_.default_action.errno_value;
    }
    ordered_json arches = ordered_json::array();
    for (Arch a : rules_.arches) arches.push_back(OciArchName(a));
    profile["architectures"] = std::move(arches);
    ordered_json syscalls = ordered_json::array();
    for (const auto& [key, names] : entries_) {
      ordered_json entry;
      entry["names"] = names;
      ordered_json action = Action({key.kind, key.errno_value});
      for (auto& [k, v] : action.items()) entry[k] = v;
      if (!key.tests.empty()) {
        ordered_json args = ordered_json::array();
        for (const auto& [arg, mask, value] : key.tests) {
          ordered_json a;
          a["index"] = arg;
          a["value"] = mask;
          a["valueTwo"] = value;
          a["op"] = "SCMP_CMP_MASKED_EQ";
          args.push_back(std::move(a));
        }
        entry["args"] = std::move(args);
      }
      syscalls.push_back(std::move(entry));
    }
    profile["syscalls"] = std::move(syscalls);
    return profile;
  }

  const ir::SyscallRules& rules_;
  DiagnosticSink& sink_;
  std::map<EntryKey, std::set<std::string>> entries_;
  bool notify_warned_ = false;
};

}  // namespace

std::string_view OciArchName(Arch arch) {
  switch (arch) {
    case Arch::kX86_64:
      return "SCMP_ARCH_X86_64";
    case Arch::kX86:
      return "SCMP_ARCH_X86";
    case Arch::kAarch64:
      return "SCMP_ARCH_AARCH64";
    case Arch::kArm:
      return "SCMP_ARCH_ARM";
    case Arch::kRiscv64:
      return "SCMP_ARCH_RISCV64";
    case Arch::kPpc64le:
      return "SCMP_ARCH_PPC64LE";
    case Arch::kS390x:
      return "SCMP_ARCH_S390X";
  }
  return "";
}

std::string_view OciActionName(SysAction::Kind kind) {
  switch (kind) {
    case SysAction::Kind::kAllow:
      return "SCMP_ACT_ALLOW";
    case SysAction::Kind::kLog:
      return "SCMP_ACT_LOG";
    case SysAction::Kind::kNotify:
      return "SCMP_ACT_NOTIFY";
    case SysAction::Kind::kErrno:
      return "SCMP_ACT_ERRNO";
    case SysAction::Kind::kTrap:
      return "SCMP_ACT_TRAP";
    case SysAction::Kind::kKillThread:
      return "SCMP_ACT_KILL_THREAD";
    case SysAction::Kind::kKill:
      return "SCMP_ACT_KILL_PROCESS";
  }
  return "";
}

bool SeccompProfile(const ir::SyscallRules& rules, DiagnosticSink& sink, ordered_json* out) {
  return ProfileBuilder(rules, sink).Build(out);
}

}  // namespace ward::backend::oci
