// One architecture's seccomp filter, built with libseccomp from the IR's
// disjoint regions (README.md says what is emitted and why). Pure: the same
// rules give the same bytes on any build host.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/syscalls.h"
#include "language/diagnostics.h"

namespace ward::backend::seccomp {

struct Filter {
  std::string bpf;  // struct sock_filter[], as seccomp(SECCOMP_SET_MODE_FILTER) takes it
  std::string pfc;  // libseccomp's pseudo filter code: the readable dump
};

// The filter for `arch` (one of rules.arches): calls of every other
// architecture, the x32 ABI included, kill the process. False after B3002
// errors, reported at the rules concerned.
bool BuildFilter(const ir::SyscallRules& rules, Arch arch, Filter* out, DiagnosticSink& sink);

// What a policy grants that ward run's guard refuses otherwise.
struct GuardOptions {
  // `allow netlink route` (network section): NETLINK_ROUTE sockets and the
  // interface, route and ARP ioctls, which read this host's interfaces,
  // addresses and routes (the workload shares the host's network
  // namespace).
  bool netlink_route = false;
};

// ward run's own guard, stacked on every policy's filter for the machine's
// architecture, refusing whatever the policy allows: ioctl TIOCSTI and
// TIOCLINUX (they push input into the terminal the workload shares with the
// user's shell, which would run it after the sandbox is gone), clone3
// (ENOSYS: its flags, CLONE_INTO_CGROUP among them, are out of seccomp's
// reach), socket families the language never grants (EAFNOSUPPORT: all but
// unix, inet, inet6 and netlink; vsock reaches the hypervisor's host, and no
// network layer sees it), packet sockets and netfilter netlink sockets
// (EPERM), every other netlink protocol (EPROTONOSUPPORT, as from a kernel
// without it), NETLINK_ROUTE included unless `options.netlink_route`, the
// socket ioctls that read or change the host's interfaces, routes, ARP
// table and devices (0x8908-0x89ff but SIOCOUTQNSD, and the wireless
// extensions 0x8b00-0x8bff; EPERM) unless `options.netlink_route`, and
// setting a setuid or setgid bit (chmod, fchmod, fchmodat, fchmodat2).
// Other architectures kill the process, as in BuildFilter.
bool BuildTerminalGuard(const GuardOptions& options, std::string* bpf, std::string* error);

// The 32-bit (value, mask) pairs whose masked matches are exactly [lo, hi]:
// the fewest aligned power-of-two blocks, in order.
std::vector<std::pair<uint32_t, uint32_t>> AlignedBlocks(uint32_t lo, uint32_t hi);

// The kernel's AUDIT_ARCH_* value for `arch` (seccomp_data.arch).
uint32_t AuditArch(Arch arch);

// The SECCOMP_RET_* value a filter returns for `action`.
uint32_t RetValue(const ir::SysAction& action);

// BPF_MAXINSNS: the longest program the kernel loads.
inline constexpr size_t kMaxInstructions = 4096;

}  // namespace ward::backend::seccomp
