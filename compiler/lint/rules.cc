// The lint rule catalogue: one explicit table, sorted by id. The rules
// themselves live in one file per family; compiler/lint/README.md documents
// every row.
#include <algorithm>

#include "compiler/lint/lint.h"

namespace ward::lint {
namespace {

constexpr Family kSys = Family::kSyscalls;
constexpr Family kNet = Family::kNetwork;
constexpr Family kFs = Family::kFilesystem;
constexpr Family kProc = Family::kProcess;
constexpr Family kHyg = Family::kHygiene;
constexpr Level kE = Level::kError;
constexpr Level kW = Level::kWarning;
constexpr Level kN = Level::kNote;

}  // namespace

const std::vector<RuleInfo>& AllRules() {
  static const std::vector<RuleInfo> kRules = {
      {"L2101", "default-allow", kSys, kW,
       "a syscall deny-list admits every syscall added to the kernel later",
       "use `default errno EPERM` (or `kill`) and allow what the workload needs"},
      {"L2102", "arch-not-pinned", kSys, kN,
       "without `arch` the filter is built for x86_64 only; every other architecture is killed",
       "list the architectures the workload runs on: `arch x86_64, aarch64`"},
      {"L2103", "io-uring-reachable", kSys, kE,
       "io_uring submits file and network operations that no syscall filter sees",
       "kill or refuse io_uring_setup, io_uring_enter and io_uring_register"},
      {"L2104", "clone3-unfiltered", kSys, kE,
       "clone3's flags sit behind a pointer: it creates what the clone filter refuses",
       "refuse clone3 with `errno ENOSYS clone3` so libc falls back to the filtered clone"},
      {"L2105", "multiplexer-unfiltered", kSys, kE,
       "socketcall and ipc reach the socket and SysV IPC calls with their arguments behind a "
       "pointer, past their filters",
       "refuse socketcall/ipc, or give them and every call they reach the same action"},
      {"L2106", "dangerous-syscall", kSys, kW,
       "the syscall breaks out of, or sees through, the sandbox (debugging, kernel code, "
       "namespaces, mounts, keys)",
       "kill or refuse it by name: a direct rule beats the group that allows it"},
      {"L2107", "shadowed-conditional-allow", kSys, kW,
       "an unconditional allow of the same syscall already admits every call the condition "
       "limits",
       "drop the unconditional allow, or the condition if every call is meant"},
      {"L2108", "rule-never-decides", kSys, kW,
       "the rule decides no call on any architecture: more restrictive rules or direct rules "
       "take every call it names",
       "remove it, or fix the rule that takes its calls"},
      {"L2109", "no-syscall-rules", kSys, kW,
       "without a syscalls section every syscall is killed: under ward run, seccomp, oci or "
       "kubernetes the workload dies at its first syscall",
       "extend linux-base (`import \"std/linux.ward\"`, `policy NAME extends linux-base`); a "
       "policy only for `ward apply` (network, filesystem) may ignore this"},
      {"L2201", "domains-without-dns", kNet, kW,
       "domain rules never imply DNS: without DNS egress no name resolves",
       "allow the resolver: `allow udp to loopback port 53` (a local stub) or its address"},
      {"L2202", "open-dns-resolver", kNet, kW,
       "DNS to public addresses lets the workload query any name through any resolver, which "
       "carries data out",
       "allow DNS only to the local or internal resolver"},
      {"L2203", "domain-not-normalised", kNet, kN,
       "names are matched lower-cased without a trailing dot; the rule reads as another name",
       "write the name as it is matched"},
      {"L2204", "wildcard-excludes-apex", kNet, kN,
       "`*.example.com` matches strict subdomains only, never example.com itself",
       "add the apex if it is meant, or write the subdomains"},
      {"L2205", "broad-destination", kNet, kW,
       "egress to `any` or a very large block reaches every host, and any exfiltration sink",
       "list the hosts or networks the workload talks to"},
      {"L2206", "shared-tenant-domain", kNet, kW,
       "anyone can publish under a shared-tenant or user-content domain: it is an "
       "exfiltration and payload channel",
       "name the exact host (and path-level controls elsewhere), or accept it with a reason"},
      {"L2207", "metadata-reachable", kNet, kE,
       "the cloud metadata service hands out the host's credentials",
       "deny it explicitly: `deny to 169.254.169.254, fd00:ec2::254`"},
      {"L2208", "link-local-reachable", kNet, kW,
       "link-local addresses reach host-local services (metadata, neighbours) past routing",
       "deny link-local: `deny to 169.254.0.0/16, fe80::/10`"},
      {"L2209", "raw-sockets-possible", kNet, kW,
       "raw and packet sockets bypass every port and address rule",
       "drop CAP_NET_RAW/CAP_NET_ADMIN or refuse AF_PACKET and SOCK_RAW in syscalls"},
      {"L2210", "host-daemon-socket", kNet, kE,
       "the socket of a host daemon (container runtime, D-Bus, SSH agent, X11, tmux) is a way "
       "out of the sandbox",
       "remove the grant; proxy the few operations the workload needs"},
      {"L2211", "deny-by-domain", kNet, kW,
       "address-based enforcers (eBPF, nftables, Kubernetes) cannot deny a name: its other "
       "addresses get through",
       "deny the addresses too, or enforce with a name-aware target (cilium)"},
      {"L2212", "non-ip-socket-family", kNet, kW,
       "socket families outside IP and unix (vsock to the VM's host, TIPC, CAN, Bluetooth) "
       "reach peers that no network rule decides and no address-based layer sees",
       "refuse them: `errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]` "
       "(as std linux-base; ward run's guard also does)"},
      {"L2213", "proc-net-readable", kNet, kW,
       "/proc/net shows the host's sockets, interfaces and routes to a workload that shares the "
       "host's network namespace (ward run), past ward run's netlink guard",
       "grant the /proc files the workload reads (/proc/cpuinfo, /proc/meminfo), not /proc or "
       "a process's whole directory"},
      {"L2214", "netlink-socket-refused", kNet, kN,
       "`allow netlink route` grants what ward run's guard refuses, not what the policy's own "
       "syscall filter refuses: with netlink sockets refused it opens the interface ioctls only",
       "let socket() create AF_NETLINK sockets in a policy that does not extend one refusing "
       "them (std linux-base does), or drop the grant"},
      {"L2301", "persistent-write", kFs, kW,
       "writes to executable or configuration locations outlive the sandbox and run later "
       "outside it",
       "deny write on that location"},
      {"L2302", "credential-read", kFs, kW,
       "a broad grant covers a credential store the workload does not need",
       "deny read on it, or grant the narrower paths the workload needs"},
      {"L2303", "allow-carves-base-deny", kFs, kW,
       "a deeper allow in a child wins over the base's deny (most specific wins)",
       "check the base's deny was meant to be opened; narrow the allow otherwise"},
      {"L2304", "deny-approximated", kFs, kN,
       "Landlock cannot grant a tree minus a subtree: it grants the entries beside the denied path "
       "as they exist when applied, not what is created there later (B3002)",
       "grant the tree's other children instead, or accept the narrower Landlock ruleset"},
      {"L2401", "root-capability", kProc, kE,
       "the capability amounts to root on the host or in its namespace",
       "drop it; grant the one operation needed another way"},
      {"L2402", "no-new-privileges-missing", kProc, kW,
       "without no_new_privileges a setuid binary regains what the sandbox dropped",
       "add `no_new_privileges` to the process section"},
      {"L2403", "limit-widened", kProc, kW,
       "a child raises a limit its base set: the base's bound no longer holds",
       "keep the base's value or lower it"},
      {"L2404", "decimal-size-unit", kProc, kW,
       "`4G` is 10^9 bytes (as in Kubernetes); Docker reads it as 4GiB",
       "write the binary unit (GiB) if 2^30 was meant, or `4000MB` to keep 10^9"},
      {"L2501", "unused-let", kHyg, kW, "a `let` nothing refers to", "remove it"},
      {"L2502", "unused-group", kHyg, kW, "a syscall group no rule or group refers to",
       "remove it"},
      {"L2503", "redundant-rule", kHyg, kW,
       "the rule changes no decision: another rule of the policy already decides the same",
       "remove it"},
      {"L2504", "duplicate-across-bases", kHyg, kN,
       "the rule repeats one of a base the policy extends",
       "remove the copy; the base's rule applies"},
      {"L2505", "suppression-without-reason", kHyg, kW,
       "a suppression must say why the finding is accepted",
       "write the reason after the codes: `// ward:allow L2206 releases come from GitHub`"},
      {"L2506", "suppression-unknown-rule", kHyg, kW, "the suppression names no lint rule",
       "name an L2xxx rule from `compiler/lint/README.md`"},
  };
  return kRules;
}

const RuleInfo* FindRule(std::string_view id) {
  const auto& rules = AllRules();
  auto it = std::lower_bound(rules.begin(), rules.end(), id,
                             [](const RuleInfo& r, std::string_view v) { return r.id < v; });
  return it != rules.end() && it->id == id ? &*it : nullptr;
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kOff:
      return "off";
    case Level::kNote:
      return "note";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "error";
}

std::optional<Level> ParseLevel(std::string_view text) {
  for (Level l : {Level::kOff, Level::kNote, Level::kWarning, Level::kError}) {
    if (LevelName(l) == text) return l;
  }
  return std::nullopt;
}

}  // namespace ward::lint
