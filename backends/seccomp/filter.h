// One architecture's seccomp filter, built with libseccomp from the IR's
// disjoint regions (README.md says what is emitted and why). Pure: the same
// rules give the same bytes on any build host.
#pragma once

#include <cstdint>
#include <string>

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

// ward run's own guard, stacked on every policy's filter for the machine's
// architecture, refusing whatever the policy allows: ioctl TIOCSTI and
// TIOCLINUX (they push input into the terminal the workload shares with the
// user's shell, which would run it after the sandbox is gone), clone3
// (ENOSYS: its flags, CLONE_INTO_CGROUP among them, are out of seccomp's
// reach), socket families the language never grants (EAFNOSUPPORT: all but
// unix, inet, inet6 and netlink; vsock reaches the hypervisor's host, and no
// network layer sees it), packet sockets and netfilter netlink sockets
// (EPERM), and setting a setuid or setgid bit (chmod, fchmod, fchmodat,
// fchmodat2). Other
// architectures kill the process, as in BuildFilter.
bool BuildTerminalGuard(std::string* bpf, std::string* error);

// The kernel's AUDIT_ARCH_* value for `arch` (seccomp_data.arch).
uint32_t AuditArch(Arch arch);

// The SECCOMP_RET_* value a filter returns for `action`.
uint32_t RetValue(const ir::SysAction& action);

// BPF_MAXINSNS: the longest program the kernel loads.
inline constexpr size_t kMaxInstructions = 4096;

}  // namespace ward::backend::seccomp
