// The cgroup of one `ward run` (step 1 of the orchestrator): a cgroup v2
// directory for the eBPF programs and the cgroup namespace, plus the limits
// of the policy, each written through the v2 controller when the v2 root's
// `cgroup.controllers` lists it, else through the v1 hierarchy that has the
// controller mounted (this machine: cpu, memory and pids are v1), else
// refused. Two halves, as for Landlock: CreateRunCgroup allocates and runs
// in the supervisor; EnterRunCgroup only writes to descriptors opened
// beforehand and is safe in the forked child.
//
// Where the directories go:
//   v2: <v2 mount>/ward/run-<id>. A v2 cgroup that holds processes cannot
//       pass controllers to its children, so the run cannot nest under the
//       caller's own v2 cgroup in general; the root can.
//   v1: <v1 mount>/<the caller's own cgroup in that hierarchy>/ward-run-<id>,
//       so that limits set around the caller (a CI job's memory cap) still
//       hold for the workload.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::enforce {

struct CgroupDir {
  std::string path;        // absolute directory
  std::string controller;  // v1: "memory", ...; v2: ""
  int procs_fd = -1;       // v2 cgroup.procs, v1 tasks: open for writing (close-on-exec)
};

struct RunCgroup {
  CgroupDir v2;
  std::vector<CgroupDir> v1;   // one per v1 hierarchy a limit needed
  uint64_t v2_id = 0;          // the v2 directory's inode: the cgroup id
  std::string cpu_usage_file;  // for cpu_time: cpu.stat (v2) or cpuacct.usage (v1)
};

// What a run needs, found from /proc/mounts and /proc/self/cgroup, without
// creating anything; *error names the limit that cannot be applied and why
// ("memory: no cgroup v2 controller and no v1 hierarchy mounts it").
// Limits the cgroup does not hold (timeout, cpu_time: the supervisor's;
// open_files: an rlimit) are skipped; `disk` is refused (no scratch space).
bool PlanRunCgroup(const ir::Limits& limits, const std::string& run_id, RunCgroup* out,
                   std::string* error);

// Creates the planned directories and writes the limits. On failure removes
// what it created. `out` must come from PlanRunCgroup.
bool CreateRunCgroup(const ir::Limits& limits, RunCgroup* cgroup, std::string* error);

// In the child, before exec: moves the calling process into every directory
// of the run and unshares the cgroup namespace, so that the workload sees its
// cgroup as the root and cannot migrate itself out of it. Async-signal-safe;
// on failure returns false with *failed_step ("cgroup.procs",
// "unshare(CLONE_NEWCGROUP)") and errno set. `in_v2`: the process was
// created in the v2 directory already (clone3 CLONE_INTO_CGROUP).
bool EnterRunCgroup(const RunCgroup& cgroup, bool in_v2, const char** failed_step);

// Kills every process left in the run's cgroups (cgroup.kill where the
// kernel has it, else SIGKILL to each listed pid until none is left) and
// removes the directories, waiting up to about a second for them to empty.
bool RemoveRunCgroup(RunCgroup& cgroup, std::string* error);

// CPU time used by the run so far, in microseconds (cpu_time limit); -1 when
// unreadable.
int64_t RunCpuUsageUsec(const RunCgroup& cgroup);

// Writes the directories of a run to a text record (one per line) and reads
// it back, for cleaning up after a supervisor that was killed.
std::string RunCgroupRecord(const RunCgroup& cgroup);
RunCgroup ParseRunCgroupRecord(const std::string& text);

}  // namespace ward::enforce
