// The runs of `ward run` on this host, each with its workload's seccomp
// filters read back from the kernel (linux/seccomp_readback.h) and compared
// byte for byte with the ones ward run installed, from its run record
// (run.h), for wardd's Check.
#pragma once

#include <string>
#include <vector>

#include "enforcers/run/run.h"

namespace ward::enforce {

struct RunCheck : LiveRun {
  // The command ward run started, in ward run's pid namespace (the same
  // process across its execs); 0 when the record names none.
  int workload_pid = 0;
  // Filters the workload inherited from ward run itself (a ward run started
  // under seccomp): the oldest ones, not compared.
  int inherited_filters = 0;
  // "matches": the workload's filters, after the inherited ones, are the
  // ones ward run installed, byte for byte and in order, and no others.
  // "differs: HOW": a filter more or fewer, or which index differs (index 0
  // is the first filter installed, as the kernel counts), e.g. "differs: 1
  // filter more than ward run installed: index 2 (4 instructions)".
  // "unreadable: WHY": the workload exited ("the workload (pid N) exited"),
  // is not recorded yet (in its first 0.1 s), the record names no filters
  // (an older ward run), or the kernel refused (the caller runs under
  // seccomp, no privilege).
  std::string seccomp;
};

// The runs whose supervisor is alive (ListRuns), by supervisor pid, each
// checked. A run whose supervisor has gone is not listed; one whose
// workload has exited while its supervisor cleans up is listed as
// "unreadable: the workload (pid N) exited". Each workload is stopped for
// the time of the read (PTRACE_SEIZE, PTRACE_INTERRUPT) and then goes on.
// Needs CAP_SYS_ADMIN and CAP_SYS_PTRACE (the workload may be another
// user's), and must not run under seccomp.
std::vector<RunCheck> CheckRuns(const std::string& state_dir);

}  // namespace ward::enforce
