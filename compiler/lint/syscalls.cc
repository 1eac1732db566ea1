// Syscall rules (L21xx), on the IR's regions; L2107 on the AST.
#include <map>
#include <set>

#include "compiler/lint/context.h"

namespace ward::lint {
namespace {

using Kind = ir::SysAction::Kind;

bool Permissive(const ir::SysAction& a) { return a.kind == Kind::kAllow || a.kind == Kind::kLog; }

const std::vector<ir::Region>* RegionsOf(const ir::SyscallRules& s, Arch arch,
                                         const std::string& name) {
  auto a = s.syscalls.find(arch);
  if (a == s.syscalls.end()) return nullptr;
  auto it = a->second.find(name);
  return it == a->second.end() ? nullptr : &it->second;
}

// Where a call of `name` may run (allow or log) on some effective
// architecture: the architecture and the rule that lets it run (the
// deciding `default` when no rule does).
struct Reach {
  Arch arch;
  Span span;
};

std::optional<Reach> Reachable(const ir::SyscallRules& s, const std::string& name) {
  for (Arch arch : s.arches) {
    if (!SyscallNumber(arch, name)) continue;
    const std::vector<ir::Region>* regions = RegionsOf(s, arch, name);
    if (!regions) {
      if (Permissive(s.default_action)) return Reach{arch, s.default_span};
      continue;
    }
    for (const ir::Region& r : *regions) {
      if (Permissive(r.action))
        return Reach{arch, r.rules.empty() ? s.default_span : r.rules.back()};
    }
  }
  return std::nullopt;
}

std::string On(Arch arch) { return " (on " + std::string(ArchName(arch)) + ")"; }

// L2101: the effective default lets calls run.
void DefaultAllow(const PolicyContext& ctx, Findings& out) {
  const ir::SyscallRules& s = ctx.ir.syscalls;
  if (!Permissive(s.default_action) || !s.default_span.valid()) return;
  Finding& f = out.Add("L2101", s.default_span,
                       "the default action is " + std::string(ir::KindName(s.default_action.kind)) +
                           ": every syscall no rule names runs, including ones added later");
  f.fix = Fix{"refuse what no rule allows", s.default_span, "default errno EPERM"};
}

// L2102: no source pins the architectures.
void ArchNotPinned(const PolicyContext& ctx, Findings& out) {
  for (const ast::Policy* p : ctx.order) {
    if (p->syscalls && !p->syscalls->arches.empty()) return;
  }
  const Span span = ctx.policy.syscalls ? ctx.policy.syscalls->span : ctx.policy.name.span;
  out.Add("L2102", span,
          "policy '" + ctx.policy.name.text +
              "' does not pin its architectures: the filter is x86_64 only and kills everything "
              "on any other architecture");
}

// L2109: no syscall rules, so the strict reading kills every syscall. A
// warning, not an error: `ward apply` of a network-only policy installs no
// syscall filter.
void NoSyscallRules(const PolicyContext& ctx, Findings& out) {
  if (!ir::KillsEverySyscall(ctx.ir.syscalls)) return;
  const std::string& name = ctx.policy.name.text;
  Finding& f = out.Add("L2109", ctx.policy.name.span,
                       "policy '" + name +
                           "' has no syscalls section: every syscall would be killed; extend "
                           "linux-base");
  f.hint = "`import \"std/linux.ward\"` and `policy " + name +
           " extends linux-base`; a policy only for `ward apply` installs no syscall filter";
}

// L2103: io_uring can be set up or entered.
void IoUringReachable(const PolicyContext& ctx, Findings& out) {
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"}) {
    if (auto r = Reachable(ctx.ir.syscalls, name)) {
      out.Add("L2103", r->span,
              std::string(name) + " is allowed" + On(r->arch) +
                  ": io_uring runs file and network operations that no syscall filter sees");
    }
  }
}

// L2104: clone3 runs where clone's flags are filtered.
void Clone3Unfiltered(const PolicyContext& ctx, Findings& out) {
  const ir::SyscallRules& s = ctx.ir.syscalls;
  for (Arch arch : s.arches) {
    const std::vector<ir::Region>* clone = RegionsOf(s, arch, "clone");
    if (!clone || clone->size() < 2 || !SyscallNumber(arch, "clone3")) continue;
    const std::vector<ir::Region>* clone3 = RegionsOf(s, arch, "clone3");
    Span allowing;
    if (!clone3) {
      if (Permissive(s.default_action)) allowing = s.default_span;
    } else {
      for (const ir::Region& r : *clone3) {
        if (Permissive(r.action) && !allowing.valid()) {
          allowing = r.rules.empty() ? s.default_span : r.rules.back();
        }
      }
    }
    if (!allowing.valid()) continue;
    Finding& f = out.Add("L2104", allowing,
                         "clone3 is allowed while clone's flags are filtered" + On(arch) +
                             ": clone3 creates what the clone filter refuses");
    for (const ir::Region& r : *clone) {
      if (!Permissive(r.action) && !r.rules.empty()) {
        AddRelated(f, r.rules.back(), "clone's flags are filtered here");
        break;
      }
    }
    return;
  }
}

// Whether every call `calls` names is decided unconditionally with one
// permissive action on `arch` (then the multiplexer hides nothing).
bool AllOpen(const ir::SyscallRules& s, Arch arch, const std::vector<std::string>& calls) {
  for (const std::string& c : calls) {
    const std::vector<ir::Region>* regions = RegionsOf(s, arch, c);
    if (!regions) {
      if (!Permissive(s.default_action)) return false;
      continue;
    }
    if (regions->size() != 1 || !Permissive(regions->front().action)) return false;
  }
  return true;
}

// L2105: socketcall or ipc runs while the calls it reaches are filtered.
void MultiplexerUnfiltered(const PolicyContext& ctx, Findings& out) {
  const ir::SyscallRules& s = ctx.ir.syscalls;
  for (ir::Bypass b : {ir::Bypass::kSocketcall, ir::Bypass::kIpc}) {
    const std::string name(ir::BypassName(b));
    for (Arch arch : s.arches) {
      if (!SyscallNumber(arch, name)) continue;
      const std::vector<ir::Region>* regions = RegionsOf(s, arch, name);
      Span allowing;
      if (!regions && Permissive(s.default_action)) allowing = s.default_span;
      for (const ir::Region& r : regions ? *regions : std::vector<ir::Region>{}) {
        if (Permissive(r.action) && !allowing.valid()) {
          allowing = r.rules.empty() ? s.default_span : r.rules.back();
        }
      }
      if (!allowing.valid() || AllOpen(s, arch, ir::MultiplexedCalls(b))) continue;
      out.Add("L2105", allowing,
              name + " is allowed" + On(arch) +
                  " while calls it reaches are filtered: through it they run unfiltered");
      break;
    }
  }
}

// L2106: syscalls that break out of or see through the sandbox.
void DangerousSyscalls(const PolicyContext& ctx, Findings& out) {
  static const char* const kDangerous[] = {"ptrace",
                                           "process_vm_readv",
                                           "process_vm_writev",
                                           "kexec_load",
                                           "kexec_file_load",
                                           "bpf",
                                           "userfaultfd",
                                           "perf_event_open",
                                           "keyctl",
                                           "add_key",
                                           "request_key",
                                           "mount",
                                           "umount2",
                                           "pivot_root",
                                           "fsopen",
                                           "fsmount",
                                           "fspick",
                                           "fsconfig",
                                           "move_mount",
                                           "open_tree",
                                           "mount_setattr",
                                           "unshare",
                                           "setns",
                                           "init_module",
                                           "finit_module",
                                           "delete_module",
                                           "open_by_handle_at"};
  // Rule span -> the dangerous syscalls it lets run, so a `default allow`
  // gives one finding, not thirty.
  std::map<std::tuple<FileId, uint32_t, uint32_t>, std::pair<Span, std::vector<std::string>>> by;
  auto note = [&](Span span, const std::string& name) {
    auto& e = by[{span.file, span.begin, span.end}];
    e.first = span;
    e.second.push_back(name);
  };
  const ir::SyscallRules& s = ctx.ir.syscalls;
  for (const char* name : kDangerous) {
    if (auto r = Reachable(s, name)) note(r->span, name);
  }
  // personality: only the query values (0xffffffff) and PER_LINUX are safe.
  for (Arch arch : s.arches) {
    bool found = false;
    for (uint64_t persona :
         {0x0400000ull /*READ_IMPLIES_EXEC*/, 0x0040000ull /*ADDR_NO_RANDOMIZE*/}) {
      if (!Permissive(s.Decide(arch, "personality", {persona, 0, 0, 0, 0, 0}))) continue;
      const ir::Region* r = s.Find(arch, "personality", {persona, 0, 0, 0, 0, 0});
      note(r && !r->rules.empty() ? r->rules.back() : s.default_span,
           "personality (beyond PER_LINUX and queries)");
      found = true;
      break;
    }
    if (found) break;
  }
  for (auto& [key, entry] : by) {
    std::string names;
    for (const std::string& n : entry.second) names += (names.empty() ? "" : ", ") + n;
    out.Add("L2106", entry.first,
            names +
                (entry.second.size() == 1 ? " is allowed: it breaks" : " are allowed: they break") +
                " out of, or see through, the sandbox");
  }
}

// L2107: `allow X if ...` where `allow X` holds unconditionally anyway.
void ShadowedConditionalAllow(const PolicyContext& ctx, Findings& out) {
  std::map<std::string, Span> unconditional;
  for (const ast::Policy* p : ctx.order) {
    if (!p->syscalls) continue;
    for (const ast::SysRule& r : p->syscalls->rules) {
      if (r.action.kind != ast::ActionKind::kAllow || !r.conditions.empty()) continue;
      for (const ast::SysTarget& t : r.targets) {
        if (!t.is_group) unconditional.emplace(t.name, r.span);
      }
    }
  }
  for (const ast::Policy* p : ctx.order) {
    if (!p->syscalls) continue;
    for (const ast::SysRule& r : p->syscalls->rules) {
      if (r.action.kind != ast::ActionKind::kAllow || r.conditions.empty()) continue;
      for (const ast::SysTarget& t : r.targets) {
        auto it = unconditional.find(t.name);
        if (it == unconditional.end()) continue;
        Finding& f = out.Add("L2107", r.conditions.front().span,
                             "the condition on allow " + t.name +
                                 " limits nothing: an unconditional allow of " + t.name +
                                 " admits every call");
        f.anchor = r.span;
        AddRelated(f, it->second, "the unconditional allow");
      }
    }
  }
}

// L2108: a direct rule that no region of any architecture names.
void RuleNeverDecides(const PolicyContext& ctx, Findings& out) {
  const ir::SyscallRules& s = ctx.ir.syscalls;
  std::set<std::pair<FileId, uint32_t>> deciding;
  for (const auto& [arch, calls] : s.syscalls) {
    for (const auto& [name, regions] : calls) {
      for (const ir::Region& r : regions) {
        for (Span span : r.rules) deciding.insert({span.file, span.begin});
      }
    }
  }
  for (const ast::Policy* p : ctx.order) {
    if (!p->syscalls) continue;
    for (const ast::SysRule& r : p->syscalls->rules) {
      if (deciding.count({r.span.file, r.span.begin})) continue;
      // Only rules whose every syscall has regions somewhere: a syscall with
      // none is decided by the default, which such a rule may just repeat.
      bool judged = !r.targets.empty();
      for (const ast::SysTarget& t : r.targets) {
        bool has_regions = false;
        for (Arch arch : s.arches) has_regions |= RegionsOf(s, arch, t.name) != nullptr;
        if (t.is_group || !has_regions) judged = false;
      }
      if (!judged) continue;
      out.Add("L2108", r.span,
              "this rule decides no call on any architecture: other rules take every call it "
              "names");
    }
  }
}

}  // namespace

void LintSyscalls(const PolicyContext& ctx, Findings& out) {
  DefaultAllow(ctx, out);
  ArchNotPinned(ctx, out);
  NoSyscallRules(ctx, out);
  IoUringReachable(ctx, out);
  Clone3Unfiltered(ctx, out);
  MultiplexerUnfiltered(ctx, out);
  DangerousSyscalls(ctx, out);
  ShadowedConditionalAllow(ctx, out);
  RuleNeverDecides(ctx, out);
}

}  // namespace ward::lint
