// `ward run`: one command under a whole policy (architecture.md § Enforcers).
// One ordered orchestrator over the facilities of enforcers/linux/, each
// step prepared in the supervisor and only applied in the child, each
// failure naming its step:
//
//   1. cgroup     a cgroup for the run (limits), entered through a cgroup
//                 namespace (linux/cgroup.h)
//   2. network    the eBPF enforcer on that cgroup, pinned for the run's
//                 lifetime: egress by address and resolved name, unix
//                 sockets (linux/ebpf.h)
//   3. landlock   filesystem grants, TCP ports, abstract-unix and signal
//                 scopes, `~` resolved for the run's user (linux/landlock.h)
//   4. process    user, capabilities, no_new_privs, rlimits, descriptors
//                 (linux/process.h)
//   5. seccomp    the compiled filter for this machine's architecture,
//                 cached by policy hash (linux/seccomp.h); then execve.
//
// The supervisor (the caller of Execute) stays outside the sandbox: it is
// made non-dumpable before anything else, so the workload can neither
// ptrace it nor open its /proc/PID/mem (Landlock's domain also refuses
// ptrace and signals from inside to outside). It forwards signals, enforces
// the timeout and cpu_time limits, refreshes resolved names, and removes the
// cgroup, programs and pins when the command ends. A record under
// `state_dir` lets the next run clean up after a supervisor that was killed.
// It also reads the kernel's audit records of the run (run_log.h): every
// denial with `--log` (RunOptions::on_denial), and the syscall a SIGSYS
// killed (RunOutcome).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "enforcers/linux/dns.h"
#include "enforcers/run/run_log.h"
#include "language/diagnostics.h"

namespace ward::enforce {

// Exit codes of `ward run` that are its own (the command's status passes
// through otherwise; a command killed by signal N gives 128+N), as env(1),
// chroot(1) and timeout(1) use them.
inline constexpr int kRunLimitReached = 124;   // timeout or cpu_time: the run was killed
inline constexpr int kRunSetupFailed = 125;    // a step failed: the command never started
inline constexpr int kRunCannotExecute = 126;  // found, but execve refused it
inline constexpr int kRunNotFound = 127;       // not found

struct RunOptions {
  // What `~` is in filesystem patterns; default: the home directory of the
  // run's user (the policy's `user`, else the caller).
  std::optional<std::string> home;
  DnsOptions dns;
  // The records of live runs (root only).
  std::string state_dir = "/run/ward/runs";
  // Compiled seccomp filters by policy hash. Not used when the policy lets
  // the workload write there.
  std::string cache_dir = "/var/cache/ward/seccomp";
  // The CLI's cache of policies' IR (run_cache.h); hidden from the
  // workload like the other two.
  std::string run_cache_dir = "/var/cache/ward/run";
  // A key for the filter cache: a hash of the policy's IR (and Ward's
  // version); empty: no cache.
  std::string policy_hash;
  // The seccomp filter for this machine, compiled earlier from this very
  // policy (the run cache): used as is, and the policy's syscall rules are
  // not read (the run cache leaves them out). Only its architectures are.
  std::optional<std::string> filter;
  // The guard filter (seccomp::BuildTerminalGuard) for this machine and
  // this policy (its `allow netlink route`), built by this build of Ward
  // earlier (the run cache): used as is, instead of building it again with
  // libseccomp (0.15 ms).
  std::optional<std::string> guard;
  // A deny nested in an allow that Landlock cannot carve out (a `**` in
  // it, backends/landlock/README.md): with `partial` the enclosing allow is
  // not granted at all (towards deny, a warning that says so); without, the
  // run is refused. As `ward compile --partial`.
  bool partial = false;
  // Messages while the run goes on (a name that no longer resolves, a limit
  // reached); the CLI prints them.
  std::function<void(const std::string&)> report;
  // `ward run --log` (run_log.h): called with each denial of the run as it
  // is read. When set, both seccomp filters are loaded with
  // SECCOMP_FILTER_FLAG_LOG (errno actions reach the audit records too),
  // the run's eBPF programs are its own (their ring buffer read by this run
  // only), and, on Landlock ABI 7, audit is enabled for the run
  // (AuditAcquire: Landlock reports nothing otherwise) and the domain logs
  // after exec.
  std::function<void(const Denial&)> on_denial;
  // FILE:LINE:COL of a span, and its source text: how denials cite rules.
  std::function<std::string(Span)> where;
  std::function<std::string(Span)> text;
  // The policy's syscall rules are not in `policy` (the run cache): a
  // SIGSYS is explained without its rule.
  bool syscalls_unknown = false;
};

// What the run saw besides its exit status (Outcome, after ExecuteRun).
struct RunOutcome {
  size_t denials = 0;  // reported through on_denial
  // Records the kernel dropped during the run: ENOBUFS on the audit
  // socket, and the growth of audit's `lost` counter (host-wide).
  uint64_t lost = 0;
  // Why file denials were not logged ("" when they were).
  std::string files_unlogged;
  // With --log: why no audit record (seccomp, Landlock) reached the run,
  // "" when they did (the end-of-run barrier's own record arrived).
  std::string audit_unreachable;
  // The workload died of SIGSYS (or exited 159): what seccomp killed, when
  // its record arrived.
  bool sigsys = false;
  std::optional<Denial> kill;
  // Names cannot resolve in this run: the resolvers of /etc/resolv.conf
  // the policy does not reach on port 53 (all of them), "" otherwise.
  std::string resolver_unreachable;
  // A flow to port 53 was refused (the eBPF layer's event): its address.
  std::optional<std::string> dns_refused;
  // The run read its eBPF programs' events (its programs are its own).
  bool events_read = false;
};

// With WARD_RUN_TRACE set in ward run's environment (to anything): one line
// per step of the run on stderr, `trace PID SECONDS STEP` on the monotonic
// clock, from the supervisor and from the child until its execve (its last
// line, "child seccomp", is written under the policy's filter: one that
// refuses write(2) loses the line, one that kills on it ends the traced run
// there) (tests/bench/README.md, bench_run: where the time goes). Nothing
// without.
void RunTrace(const char* what);

struct RunPlan;  // everything prepared; opaque

// Deleter so that callers can hold a plan without its definition.
struct RunPlanDeleter {
  void operator()(RunPlan* plan) const;
};
using RunPlanPtr = std::unique_ptr<RunPlan, RunPlanDeleter>;

// Prepares every step without starting anything: with `dry_run`, nothing is
// created on the host either (no cgroup, no programs, no Landlock ruleset).
// Policy problems go to `sink` (false, *error empty); a step that cannot be
// prepared sets *error to "STEP: why" and undoes what earlier steps made.
RunPlanPtr PrepareRun(const ir::Policy& policy, const std::vector<std::string>& argv,
                      const RunOptions& options, bool dry_run, DiagnosticSink& sink,
                      std::string* error);

// The seccomp filter the plan loads (struct sock_filter[] for this machine).
const std::string& PlannedFilter(const RunPlan& plan);
// ward run's guard filter the plan stacks under it (one of two for one
// build of Ward on one architecture: with or without `allow netlink
// route`).
const std::string& PlannedGuard(const RunPlan& plan);

// Each layer and what it will enforce, for `ward run --dry-run`.
std::string DescribeRun(const RunPlan& plan);
// The same, as data, for `ward run --dry-run --format json` (the shape is
// documented in cli/README.md): {"policy", "command", "layers": [one object
// per step, in order]}. `where` names a rule's source ("file:line:col", or
// null for an implicit one).
nlohmann::ordered_json DescribeRunJson(const RunPlan& plan,
                                       const std::function<nlohmann::ordered_json(Span)>& where);

// Starts the command under the plan and supervises it to the end; returns
// the exit code `ward run` exits with. On a failure of ward run's own
// (kRunSetupFailed) *error says "STEP: why". Everything the plan created is
// removed before it returns.
int ExecuteRun(RunPlan& plan, std::string* error);
const RunOutcome& Outcome(const RunPlan& plan);

// The line `ward run` prints when the command died of SIGSYS (no newline),
// e.g. "ward run: the command was killed by seccomp (SIGSYS) at syscall
// mount (165 on x86_64): p.ward:9:5 (kill mount); to allow it, add `allow
// mount` to the policy's syscalls section, or `extends linux-base`".
std::string SigsysMessage(const RunOutcome& outcome, bool syscalls_unknown);
// The DNS hint (no newline), "" when there is nothing to say.
std::string DnsHint(const RunOutcome& outcome, const std::string& policy);

// Removes what runs whose supervisor is gone left behind (processes,
// cgroups, pins), from their records. Returns the number cleaned.
int CleanStaleRuns(const std::string& state_dir, std::string* error);

// A run's record, `state_dir`/run-<supervisor pid>, one item a line:
//   supervisor PID START      START: field 22 of /proc/PID/stat
//   ebpf run-<id>-<policy>
//   v2 PATH, v1 CONTROLLER PATH   (linux/cgroup.h, RunCgroupRecord)
//   seccomp HEX               each filter the workload installs (struct
//                             sock_filter[], lowercase hex), in install
//                             order: ward run's guard, then the policy's
//   workload PID START        added 0.1 s after the command started, its
//                             filters installed (the pid stays across its
//                             execs); a shorter command is never named
// Written in full each time through WriteStateFile (linux/files.h).

// A run in progress, from its record (`ward status`).
struct LiveRun {
  int supervisor = 0;           // ward run's pid
  std::string policy;           // the policy's name
  std::string pins;             // its eBPF links: EbpfPinDir of "run-<id>-<policy>"
  std::string cgroup;           // the run's v2 cgroup
  std::vector<std::string> v1;  // "controller: path" of its v1 cgroups
  std::string record;           // its record's path
};

// The runs whose supervisor is alive, by pid.
std::vector<LiveRun> ListRuns(const std::string& state_dir);

}  // namespace ward::enforce
