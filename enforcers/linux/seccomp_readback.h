// The seccomp filters a running process holds, read back from the kernel
// with PTRACE_SECCOMP_GET_FILTER, so that wardd's Check can compare a
// `ward run` workload's filters with its policy's byte for byte.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace ward::enforce {

// One classic BPF program, as installed.
using CbpfProgram = std::vector<sock_filter>;

// Reads every seccomp filter of `pid` (filters are per thread: a process id
// names its main thread, which `ward run`'s workload starts as): attaches
// with PTRACE_SEIZE, stops it with PTRACE_INTERRUPT, reads index 0, 1, ...
// until ENOENT, detaches. (*filters)[0] is the first filter installed (the
// kernel counts from the oldest, whatever ptrace(2) says), the last the
// most recent. Needs CAP_SYS_ADMIN; refuses to run when the caller itself
// is under seccomp (the kernel would answer EACCES). A process without
// filters gives an empty list. False and *error when it cannot be read (no
// such process, already traced, no privilege, a filter not installed as
// classic BPF).
bool ReadSeccompFilters(pid_t pid, std::vector<CbpfProgram>* filters, std::string* error);

}  // namespace ward::enforce
