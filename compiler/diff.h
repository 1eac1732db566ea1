// `ward diff`: the semantic difference between two policies' IRs, section by
// section: permissions gained (widened), permissions lost (narrowed), and
// values that changed without being either (a description). A library over
// two IRs, so that the agent can diff a host's live state against a policy
// with the same engine.
//
// Lines (Change::line), one per change, in a stable order: section (network,
// filesystem, syscalls, process, limits, targets, metadata), then address,
// path or name order. `+` means the thing named was added, `-` removed, `~`
// changed; Change::kind says whether that widens or narrows.
//
// network, per direction (`egress`, `ingress`) and protocol; PORTS is
// omitted when it is every port and never given for icmp. Exact: every flow
// whose decision differs is covered by a line of its sign, and every flow a
// line names (each address of its CIDRs, each name of its classes, each
// port listed) changed that way.
//   + egress tcp 10.1.99.128/25 ports 5432,6379
//       Flows to (ingress: from) an address. The CIDRs are the fewest that
//       cover one contiguous range, joined by `,`; the NAT64 and
//       IPv4-compatible forms of that range join it when they changed alike
//       (an IPv4 deny covers them).
//   - egress tcp "*.example.com" ports 443
//       Flows to a name whose address is not known. A name's class is its
//       most specific domain pattern over both policies: an exact name is its
//       own class, `*.s` stands for the names under s no other pattern claims.
//   + egress tcp "*.example.com","example.com" at 10.0.0.0/8 ports 443
//       Flows to a name of these classes that resolved into these CIDRs,
//       where neither an address line nor a name line already says so (an
//       address deny lifted under a domain grant, a name deny lifted where
//       the address is allowed).
//   + unix /run/app.sock, - unix @name
// filesystem, per right:
//   + write /data/frozen
//   - read /*/d (e.g. /b/d)
//     PATTERN is, over both IRs' patterns for that right (a rule that
//     decides nothing leaves none), the most specific one matching the
//     paths concerned; the example (given when it is not PATTERN itself) is
//     a path whose decision changed this way. Exact: every path whose
//     decision differs is under a line's PATTERN with no more specific
//     pattern of either IR matching it, and every
//     line has such a path (Change::example). How, and the one limit (globs
//     inside a component, `lib*.so`): diff_filesystem.cc.
// syscalls, per architecture and syscall; kinds by restrictiveness (kill >
// kill-thread > trap > errno > notify > log > allow): narrowed when NEW's
// action is more restrictive, widened when less, changed when it is another
// errno. Change::example is a call whose action changed as the line says,
// `x86_64 clone(arg0=0x10000000)` (arguments not listed are 0).
//   + arch aarch64, - arch x86
//       An architecture compiled for in one policy only: the other kills
//       every call there. Given only when some call there is not killed.
//   ~ syscalls default: kill -> errno EPERM
//       Every call, on an architecture both compile for, that both policies
//       leave to their default: a syscall neither lists there, or arguments
//       no rule of either reaches (a region with no rules and the default).
//   ~ syscall x86_64 clone if arg0 & 0x10000000 == 0x10000000: allow -> errno EPERM
//   ~ syscall x86_64,aarch64 getpid,getppid: allow -> kill
//       Every other change: the calls of those syscalls, on those
//       architectures, for which the condition holds (no condition: every
//       call), went from the first action to the second. Architectures, then
//       syscalls, that give the same line share it. Conditions read each
//       parameter as the kernel does (an `int` on its low 32 bits, compared
//       signed when signed) and join by ` and `: `argN == V`,
//       `argN & M == V`, `argN in [V, ...]`, `argN < V`, `argN >= V`,
//       `argN != V`, `argN & M != V`, `argN not in [V, ...]`. A mask and the
//       value under it are hexadecimal; other numbers are decimal below
//       65536 (a bound of a signed parameter may be negative), hexadecimal
//       from there. Exact: every call a line names changed that way, and
//       every call whose action differs is named by an arch line, the
//       default line or a syscall line. A change takes as few lines as
//       diff_syscall_conditions.cc finds; lines of one syscall overlap only
//       where they give the same change.
// process: `- no_new_privileges` (widened), `+ capability CAP_X` (widened),
//   `+ env NAME` (widened), `~ user 1000:1000 -> 0:0` (changed).
// limits: `~ limits memory 4GiB -> 8GiB` (raised: widened; lowered:
//   narrowed), `+ limits pids 512` (narrowed), `- limits pids 512` (widened).
// targets: `~ target kubernetes namespace agents -> batch` (changed).
// metadata: `~ description "a" -> "b"`, `+ label team "x"`,
//   `~ label tier "a" -> "b"` (changed).
#pragma once

#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::ir {

enum class DiffSection { kNetwork, kFilesystem, kSyscalls, kProcess, kLimits, kTargets, kMetadata };
enum class ChangeKind { kWidened, kNarrowed, kChanged };

struct Change {
  DiffSection section = DiffSection::kNetwork;
  ChangeKind kind = ChangeKind::kChanged;
  std::string line;
  // Provenance. A gain (or a changed value): the NEW rules that grant it,
  // and the OLD denies that no longer refuse it. A loss: the OLD rules that
  // granted it, and the NEW denies that now refuse it. Spans of old_rules
  // belong to OLD's sources, of new_rules to NEW's. Empty where the IR keeps
  // no provenance (process, description, labels, syscall architectures).
  // syscalls: the rules that give the action before (old_rules) and after
  // (new_rules) in the line's calls, or the `default` that does.
  std::vector<Span> old_rules;
  std::vector<Span> new_rules;
  // A witness of the line. filesystem: an absolute path (with `~` for the
  // home directory) whose decision changed as the line says; syscalls: a
  // call (see above). Empty for other sections.
  std::string example;
};

struct DiffOptions {
  // What `~` stands for in filesystem patterns. The default is a directory
  // no absolute rule names, where `/home/*` rules apply as to a real home.
  std::string home = "/home/~";
};

struct DiffResult {
  std::vector<Change> changes;
};

// The difference from `old_policy` to `new_policy`. Deterministic: the same
// two IRs give the same changes in the same order; equal IRs give none.
DiffResult Diff(const Policy& old_policy, const Policy& new_policy,
                const DiffOptions& options = {});

const char* SectionName(DiffSection section);  // "network", "filesystem", ...
const char* KindName(ChangeKind kind);         // "widened", "narrowed", "changed"

}  // namespace ward::ir
