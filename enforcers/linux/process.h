// The process step of `ward run` (step 4): rlimits, user and group, every
// capability dropped from every set but those the policy keeps,
// no_new_privileges, and every descriptor but 0-2 closed at exec. The
// process backend's README says what each field means. Two halves:
// PrepareProcess allocates (supervisor), ApplyProcess only makes system
// calls on prepared data (forked child, right before seccomp and exec).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::enforce {

struct PreparedProcess {
  bool no_new_privileges = true;
  uint64_t keep_caps = 0;  // bit N: capability N
  bool set_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  struct Rlimit {
    int resource = 0;
    rlimit value{};
  };
  std::vector<Rlimit> rlimits;
  int last_cap = 0;  // /proc/sys/kernel/cap_last_cap
};

// Reads the policy's process and limits sections; false with *error for a
// capability this kernel does not know or a limit that has no rlimit.
bool PrepareProcess(const ir::Policy& policy, PreparedProcess* out, std::string* error);

struct ProcessFailure {
  const char* step = nullptr;  // "setrlimit", "capset", ... (static strings)
  int error = 0;
};

// Async-signal-safe. Order: rlimits (raising needs CAP_SYS_RESOURCE, so
// before the drop), the bounding set, groups/gid/uid (keeping the permitted
// set across setuid only for the kept capabilities), effective/permitted/
// inheritable = kept, ambient = kept for a non-root user and cleared
// otherwise, no_new_privileges, then close_range(3, ~0, CLOSE_RANGE_CLOEXEC)
// so every inherited descriptor is gone at exec. Returns false and says
// which step failed; nothing after it ran.
bool ApplyProcess(const PreparedProcess& prepared, ProcessFailure* failure);

// The environment the workload gets: `env allow` names and prefixes ("LC_*")
// kept, every other variable removed; no `env allow`: unchanged.
std::vector<std::string> FilterEnvironment(const ir::ProcessRules& rules, char** environ_in);

// One line per setting, for `ward run --dry-run`.
std::string DescribeProcess(const PreparedProcess& prepared);

// The start time of a process (field 22 of /proc/PID/stat, clock ticks
// since boot), empty when it is gone: with the pid it names one process,
// whatever reuses the pid later.
std::string ProcessStartTime(pid_t pid);

}  // namespace ward::enforce
