// The IR of the syscalls section (architecture.md § The IR is the heart): per
// architecture and syscall, pairwise-disjoint argument regions that together
// cover every input, each with one action. Ward resolves the precedence of
// language.md § syscalls here; the seccomp backend hands the regions to
// libseccomp as they are (one rule of SCMP_CMP_MASKED_EQ comparisons each)
// and never resolves precedence itself.
//
// Precedence, per architecture and syscall: rules are pooled from the
// policy and its bases. (1) A direct grant (allow, log; conditional or not)
// removes every grant that reaches the syscall through a group. Otherwise,
// where a rule that names the syscall directly matches, rules that reach it
// only through a group do not apply; a group rule decides only the calls no
// direct rule matches (so `allow @system-service` plus `errno EPERM clone if
// arg0 & CLONE_NEWUSER == CLONE_NEWUSER` still allows the other clones,
// while `allow @network-io` plus `allow socket if arg0 == AF_INET` leaves
// the other families to the default). (2) Of the rules that
// apply, the most restrictive action wins; where none applies, the last
// explicit `default` in extends order (kill when there is none). (3) The
// bypass classes below are closed by default.
//
// Canonical form: per (architecture, syscall) the lowering builds the
// reduced ordered decision diagram of the syscall's action over the bits of
// its arguments (arg0 from its most significant bit down to bit 0, then
// arg1, ...; a parameter has only the bits the kernel reads: 32 for an
// `int`, the architecture's width for a `long`), and the regions are its
// paths to the leaves, 0-branch first. Equal meanings therefore give equal
// regions, whatever the rule order, list splitting, redundant rules, or
// whether rules come from bases.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "language/loader.h"
#include "language/syscall_facts.h"

namespace ward::ir {

struct SysAction {
  // From least to most restrictive (language.md, precedence rule 2).
  enum class Kind { kAllow, kLog, kNotify, kErrno, kTrap, kKillThread, kKill };
  Kind kind = Kind::kKill;
  int errno_value = 0;  // kErrno only; 0 for every other kind
  bool operator==(const SysAction&) const = default;
};

// "allow", "log", "notify", "errno", "trap", "kill-thread", "kill".
std::string_view KindName(SysAction::Kind kind);
// KindName, with the errno number for kErrno: "errno 1".
std::string ToString(const SysAction& action);

// Holds when (args[arg] & mask) == value. mask has bits only within the
// parameter's width on the region's architecture, and value only within mask.
struct ArgTest {
  int arg = 0;  // 0..5
  uint64_t mask = 0;
  uint64_t value = 0;
  bool operator==(const ArgTest&) const = default;
};

struct Region {
  std::vector<ArgTest> tests;  // all must hold; sorted by arg, one per arg; empty: every call
  SysAction action;
  // Provenance, not compared: the rules that apply and give this action
  // somewhere in the region, in pool order; empty when only the default
  // decides it.
  std::vector<Span> rules;
  // Provenance per call, when the rules behind calls differ within the
  // region: pieces that partition it (tests beyond the region's own), each
  // with the rules that give the action there (none: the default decides);
  // empty when every call of the region has the same rules, or when they
  // would take more than kMaxCited pieces (`cited_capped`: `rules` is then
  // all explain can cite).
  struct Cited {
    std::vector<ArgTest> tests;
    std::vector<Span> rules;
  };
  std::vector<Cited> cited = {};
  bool cited_capped = false;

  bool Matches(const std::array<uint64_t, 6>& args) const;
  // The rules behind one call of the region: the matching piece's, else
  // `rules`.
  const std::vector<Span>& RulesFor(const std::array<uint64_t, 6>& args) const;
  bool operator==(const Region& o) const { return tests == o.tests && action == o.action; }
};

// Bypass classes (language.md § syscalls, "explicitly allowed"): syscalls
// through which a call the rules filter could be made unfiltered. Where a
// class is closed, a rule that reaches its syscalls only through a group and
// would let the call run (allow, log) does not apply to them, and where no
// other rule applies they get the closure's fallback (so only a rule naming
// them directly opens them):
//  - io_uring (io_uring_setup, io_uring_enter, io_uring_register): always
//    closed, since the operations it submits are not syscalls;
//  - clone3: closed on an architecture where clone's flags are filtered
//    (clone has more than one region), since clone3's flags sit behind a
//    pointer; the fallback is errno ENOSYS whatever the default, so that
//    libc falls back to clone;
//  - socketcall, ipc: the multiplexers of the socket and SysV IPC calls,
//    whose arguments sit behind a pointer; closed on an architecture that
//    has them unless the multiplexer and every call it reaches (socket,
//    connect, ... / semop, shmat, ...), whether or not that call has its own
//    number there, are each decided unconditionally with the same action.
// The io_uring, socketcall and ipc fallback is the default, or errno ENOSYS
// when the default lets the call run (allow, log).
enum class Bypass { kIoUring, kClone3, kSocketcall, kIpc };
std::string_view BypassName(Bypass bypass);  // "io_uring", "clone3", "socketcall", "ipc"
// The calls socketcall or ipc reaches, by name (empty for the other classes).
const std::vector<std::string>& MultiplexedCalls(Bypass bypass);

struct Closure {
  Bypass bypass = Bypass::kIoUring;
  SysAction fallback;  // where no rule naming the syscall matches
  // Provenance: the rules naming the syscall that let some of its calls
  // run (allow, log), in region order, each once: they re-open the class.
  std::vector<Span> reopened;
};

inline constexpr int kEnosys = 38;  // ENOSYS on every architecture Ward compiles for

struct SyscallRules {
  std::vector<Arch> arches;  // the effective `arch` list, in AllArches() order
  SysAction default_action;
  Span default_span;  // provenance: the deciding `default`; invalid when implicit
  // Per architecture and syscall name, the regions in canonical order. A
  // syscall that is absent, or that does not exist on the architecture, has
  // the default action for every argument.
  std::map<Arch, std::map<std::string, std::vector<Region>>> syscalls;
  // Per architecture and syscall, the bypass-prone syscalls closed there.
  // Derived from the rules as the regions are (which already hold their
  // effect), so not compared.
  std::map<Arch, std::map<std::string, Closure>> closed;

  // Canonical equality: provenance is ignored.
  bool operator==(const SyscallRules& o) const;

  // The region deciding a call (args as raw register values: the bits above
  // a parameter's width are ignored), or nullptr when the syscall has no
  // regions there (the default decides) or the architecture is not compiled
  // for.
  const Region* Find(Arch arch, const std::string& name, const std::array<uint64_t, 6>& args) const;
  // The action for a call; kill on an architecture not in `arches`
  // (language.md: every other architecture kills the process).
  SysAction Decide(Arch arch, const std::string& name, const std::array<uint64_t, 6>& args) const;
};

// An error found while lowering, naming two rules (`a` before `b` in the
// pool): a precedence rule 3 conflict, or a syscall whose conditions need
// more than kMaxRegions regions on one architecture (a and b are then its
// first and last conditional rules; they may be the same rule). The
// lowering still returns a deterministic IR: of two overlapping errno
// values the larger number wins, and a syscall with too many regions is
// killed unconditionally.
struct Conflict {
  Span a;
  Span b;
  std::string message;
};

// Regions compose multiplicatively across arguments (`arg0 != 1 and arg1 !=
// 2` needs 64 x 64 of them on 64-bit parameters); past this many for one
// syscall no BPF filter (4096 instructions at most) could hold them.
inline constexpr size_t kMaxRegions = 4096;
inline constexpr size_t kMaxCited = 64;

// Lowers the syscalls sections of `sources` (ExtendsOrder: bases first,
// the policy last) of a program the checker accepted without errors. Appends
// errors (at most kMaxConflicts) to `conflicts`: two direct unconditional
// rules of one policy for the same syscall with different actions; rules
// with different errno values whose regions overlap on a syscall; a syscall
// with too many regions. They are checked only for syscalls that exist on
// an effective architecture; each pair of rules is reported once.
inline constexpr size_t kMaxConflicts = 100;
SyscallRules LowerSyscalls(const Program& program, const std::vector<const ast::Policy*>& sources,
                           std::vector<Conflict>* conflicts);

// True when the rules kill every syscall on every architecture: the default
// is kill and no rule gives a syscall another action. That is what a policy
// without a syscalls section (in it and in its bases) means, and no workload
// survives it: `ward compile` warns (B3004), `ward run` refuses, `ward lint`
// warns. Read from the IR alone, so a run from the cache decides the same.
bool KillsEverySyscall(const SyscallRules& rules);

}  // namespace ward::ir
