#include "enforcers/run/run.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "backends/ebpf/maps.h"
#include "backends/landlock/ruleset.h"
#include "backends/seccomp/filter.h"
#include "compiler/explain.h"
#include "enforcers/linux/cgroup.h"
#include "enforcers/linux/ebpf.h"
#include "enforcers/linux/enforcer.h"
#include "enforcers/linux/files.h"
#include "enforcers/linux/hardlinks.h"
#include "enforcers/linux/kernel_audit.h"
#include "enforcers/linux/landlock.h"
#include "enforcers/linux/mounts.h"
#include "enforcers/linux/process.h"
#include "enforcers/linux/seccomp.h"
#include "language/constants.h"

extern char** environ;

namespace ward::enforce {

void RunTrace(const char* what) {
  static const bool on = std::getenv("WARD_RUN_TRACE") != nullptr;
  if (!on) return;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  char line[128];
  const int n = snprintf(line, sizeof line, "trace %d %ld.%06ld %s\n", getpid(),
                         static_cast<long>(t.tv_sec), t.tv_nsec / 1000, what);
  if (n > 0) (void)!write(2, line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
}

struct RunPlan {
  RunOptions options;
  bool dry_run = false;
  ir::Policy policy;
  std::string run_id;
  std::string net_policy;  // the eBPF pin name: "run-<id>-<policy>"
  // Step 1.
  RunCgroup cgroup;
  bool cgroup_created = false;
  // Step 2.
  std::vector<backend::ResolvedAddress> resolved;
  bool ebpf_applied = false;
  // Step 3.
  backend::landlock::Ruleset ruleset;
  MountPlan mounts;  // mounts.h
  PreparedLandlock landlock;
  LandlockOptions landlock_options;
  std::string home;
  // Step 4.
  PreparedProcess process;
  std::vector<std::string> env;
  // Step 5.
  std::string guard;   // seccomp::BuildTerminalGuard, stacked first
  std::string filter;  // struct sock_filter[] for this machine
  std::string filter_source;
  // The command.
  std::string path;    // resolved executable
  int exec_error = 0;  // why it cannot be run (ENOENT, EACCES), found ahead
  std::vector<std::string> argv;
  std::string record_path;
  std::string record;  // its text, which ExecuteRun completes with the workload
  // --log and what the run saw (run_log.h).
  bool log = false;
  bool own_programs = false;  // the eBPF programs (and ring buffer) are this run's alone
  RunOutcome outcome;
};

void RunPlanDeleter::operator()(RunPlan* plan) const {
  if (!plan) return;
  RunTrace("teardown");
  ReleaseLandlock(plan->landlock);
  std::string ignored;
  const bool cgroup_removed = plan->cgroup_created && RemoveRunCgroup(plan->cgroup, &ignored);
  if (plan->cgroup_created && !cgroup_removed) {
    // A process of the run is still in its cgroup: the programs stay
    // attached (detaching them would free it) and so does the record, for
    // the next start's clean-up of stale runs.
    delete plan;
    return;
  }
  // Nothing of the run left: its programs go. (Merely unpinning the links,
  // so that a kernel worker detaches them, measured no faster here.)
  RunTrace("cgroups removed");
  if (plan->ebpf_applied) {
    bool removed = false;
    EbpfRemove(plan->net_policy, &removed, &ignored);
  }
  if (!plan->record_path.empty()) unlink(plan->record_path.c_str());
  delete plan;
  RunTrace("done");
}

namespace {

Arch MachineArch() {
#if defined(__x86_64__)
  return Arch::kX86_64;
#elif defined(__aarch64__)
  return Arch::kAarch64;
#elif defined(__i386__)
  return Arch::kX86;
#elif defined(__arm__)
  return Arch::kArm;
#elif defined(__riscv) && __riscv_xlen == 64
  return Arch::kRiscv64;
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return Arch::kPpc64le;
#elif defined(__s390x__)
  return Arch::kS390x;
#else
#error "ward run: unknown machine architecture"
#endif
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The executable execve will run: argv[0] itself when it has a slash, else
// the first executable match on the workload's PATH (as execvp would look).
std::string FindExecutable(const std::string& name, const std::vector<std::string>& env, int* err) {
  *err = ENOENT;
  if (name.find('/') != std::string::npos) {
    *err = access(name.c_str(), X_OK) == 0 ? 0 : errno;
    return name;
  }
  std::string path_var = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : env) {
    if (e.rfind("PATH=", 0) == 0) path_var = e.substr(5);
  }
  std::istringstream dirs(path_var);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(candidate.c_str(), X_OK) == 0) {
        *err = 0;
        return candidate;
      }
      *err = EACCES;
    }
  }
  return name;
}

// A record line of one installed filter: "seccomp HEX" (run_check.h).
std::string FilterRecord(const std::string& program) {
  static const char kHex[] = "0123456789abcdef";
  std::string line = "seccomp ";
  line.reserve(line.size() + program.size() * 2 + 1);
  for (unsigned char c : program) {
    line += kHex[c >> 4];
    line += kHex[c & 15];
  }
  return line + "\n";
}

// Completes the run's record with the workload, whose filters are
// installed (run.h).
void RecordWorkload(const RunPlan& plan, pid_t child) {
  if (plan.record_path.empty()) return;
  std::string e;
  const std::string line =
      "workload " + std::to_string(child) + " " + ProcessStartTime(child) + "\n";
  if (!WriteStateFile(plan.options.state_dir, "run-" + plan.run_id, plan.record + line, &e) &&
      plan.options.report) {
    plan.options.report("state: cannot write " + e);
  }
  RunTrace("workload recorded");
}

// Step 5's filter, from the cache when a trustworthy copy is there. The
// cache is used only when the workload cannot write to it (a policy that
// grants write on it would let one run choose the next run's filter) and
// when the file is root's and not writable by others.
// What the policy grants that the guard refuses otherwise.
backend::seccomp::GuardOptions GuardOptionsFor(const ir::Policy& policy) {
  backend::seccomp::GuardOptions options;
  options.netlink_route = policy.network.netlink.count("route") > 0;
  return options;
}

bool LoadOrBuildFilter(RunPlan& plan, DiagnosticSink& sink, std::string* error) {
  const Arch arch = MachineArch();
  bool has_arch = false;
  for (Arch a : plan.policy.syscalls.arches) has_arch |= a == arch;
  if (!has_arch) {
    *error =
        std::string("seccomp: the policy's syscalls section is for other architectures; add `") +
        std::string(ArchName(arch)) + "` to its arch list";
    return false;
  }
  if (plan.options.filter) {
    plan.filter = *plan.options.filter;
    plan.filter_source = "from the run cache";
    if (plan.filter.empty() || plan.filter.size() % 8 != 0) {
      *error = "seccomp: the filter given is not a BPF program";
      return false;
    }
    return true;
  }
  const std::string& dir = plan.options.cache_dir;
  bool use_cache = !plan.options.policy_hash.empty() && !dir.empty() && geteuid() == 0;
  if (use_cache) {
    const ir::FsDecision d =
        plan.policy.filesystem.Decide(dir + "/x", ir::FsRight::kWrite, plan.home);
    use_cache = !d.allow;
  }
  const std::string file =
      dir + "/" + plan.options.policy_hash + "." + std::string(ArchName(arch)) + ".bpf";
  if (use_cache) {
    struct stat st;
    const int fd = open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && !(st.st_mode & 022) &&
        S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size % 8 == 0) {
      plan.filter.resize(st.st_size);
      if (pread(fd, plan.filter.data(), plan.filter.size(), 0) == st.st_size) {
        close(fd);
        plan.filter_source = "cached " + file;
        return true;
      }
    }
    if (fd >= 0) close(fd);
  }
  backend::seccomp::Filter filter;
  if (!backend::seccomp::BuildFilter(plan.policy.syscalls, arch, &filter, sink)) {
    *error = "seccomp: the filter could not be built (see the diagnostics)";
    return false;
  }
  plan.filter = std::move(filter.bpf);
  plan.filter_source = "compiled now";
  std::string ignored;
  if (use_cache && !plan.dry_run &&
      WriteStateFile(dir, file.substr(dir.size() + 1), plan.filter, &ignored)) {
    plan.filter_source = "compiled now, cached in " + file;
  }
  return true;
}

// Resolves the domain grants concurrently: a run starts after the slowest
// name, not after the sum of them.
std::vector<backend::ResolvedAddress> ResolveConcurrently(const ir::Policy& policy,
                                                          const DnsOptions& dns,
                                                          DiagnosticSink& sink) {
  std::vector<std::future<std::pair<std::vector<backend::ResolvedAddress>, DiagnosticSink>>> jobs;
  for (const auto& [d, pattern] : NamesToResolve(policy)) {
    // A policy holding this one grant, so ResolveDomainGrants resolves it
    // alone and still finds its rule for a warning.
    const bool egress = d == ir::Direction::kEgress;
    ir::Policy one;
    one.network.rules = policy.network.rules;
    (egress ? one.network.egress_domains : one.network.ingress_domains)[pattern] =
        (egress ? policy.network.egress_domains : policy.network.ingress_domains).at(pattern);
    jobs.push_back(std::async(std::launch::async, [one = std::move(one), dns] {
      DiagnosticSink s;
      auto answers = ResolveDomainGrants(one, dns, s);
      return std::make_pair(std::move(answers), std::move(s));
    }));
  }
  std::vector<backend::ResolvedAddress> out;
  for (auto& job : jobs) {
    auto [answers, s] = job.get();
    out.insert(out.end(), answers.begin(), answers.end());
    for (const Diagnostic& diag : s.diagnostics()) sink.Report(diag);
  }
  return out;
}

std::string HomeOf(const RunPlan& plan) {
  if (plan.options.home) return *plan.options.home;
  const uid_t uid = plan.process.set_user ? plan.process.uid : getuid();
  if (const passwd* pw = getpwuid(uid); pw && pw->pw_dir) return pw->pw_dir;
  return "";
}

struct ChildReport {
  char step[64];
  int error;
};

// In the child: reports the failing step to the supervisor and exits.
[[noreturn]] void ChildFail(int fd, const char* step, int err, int code) {
  ChildReport r{};
  strncpy(r.step, step, sizeof(r.step) - 1);
  r.error = err;
  (void)!write(fd, &r, sizeof(r));
  _exit(code);
}

// The eBPF programs kept loaded for policies without names (ebpf_shared.cc):
// the most recently used ones, and any used within ten minutes.
constexpr size_t kKeptPrograms = 8;
constexpr int64_t kProgramIdleSeconds = 600;

const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

// The nameservers of /etc/resolv.conf (the workload reads the same file);
// glibc asks 127.0.0.1 when there is none.
std::vector<std::string> Resolvers() {
  std::ifstream in("/etc/resolv.conf");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key, value;
    if (words >> key >> value && key == "nameserver")
      out.push_back(value.substr(0, value.find('%')));
  }
  if (out.empty()) out.push_back("127.0.0.1");
  return out;
}

// The resolvers, comma-separated, when the policy reaches none of them on
// udp port 53; "" when it reaches one (names can resolve).
std::string UnreachableResolvers(const ir::Policy& policy) {
  std::string list;
  for (const std::string& server : Resolvers()) {
    ir::FlowQuery q;
    q.protocol = ir::Protocol::kUdp;
    q.host = server;
    q.port = 53;
    std::string error;
    std::optional<ir::Explanation> e = ir::ExplainFlow(policy, q, &error);
    if (!e) continue;  // not an address we can judge
    if (e->decision == "allow") return "";
    list += (list.empty() ? "" : ", ") + server;
  }
  return list;
}

// Waits until every audit record the kernel queued before now has reached
// `listener`: a throwaway child makes one record of its own (a
// SECCOMP_RET_LOG action, which is always logged) and the records before
// it are read, as the kernel's audit queue is first in, first out. At most
// `timeout_ms`. False when the child's record never came: records do not
// reach this listener at all (the kernel multicasts them only to sockets of
// the initial network namespace).
bool AuditBarrier(AuditListener& listener, int timeout_ms, std::vector<AuditRecord>* out) {
  const pid_t helper = fork();
  if (helper == 0) {
    sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{4, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0) {
      syscall(SYS_getppid);
    }
    _exit(0);
  }
  if (helper < 0) return true;  // cannot tell
  waitpid(helper, nullptr, 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string pid = std::to_string(helper);
  for (;;) {
    const size_t before = out->size();
    listener.Drain(out);
    for (size_t i = before; i < out->size(); ++i) {
      if ((*out)[i].type == kAuditSeccomp && (*out)[i].Get("pid") == pid) return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{listener.fd(), POLLIN, 0};
    poll(&p, 1, static_cast<int>(left));
  }
}

}  // namespace

RunPlanPtr PrepareRun(const ir::Policy& policy, const std::vector<std::string>& argv,
                      const RunOptions& options, bool dry_run, DiagnosticSink& sink,
                      std::string* error) {
  // Before anything holds a secret or a kernel object: no ptrace, no
  // /proc/PID/mem, no core dump of the supervisor.
  if (!dry_run && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    *error = std::string("supervisor: PR_SET_DUMPABLE: ") + strerror(errno);
    return nullptr;
  }
  RunPlanPtr plan(new RunPlan);
  plan->options = options;
  plan->dry_run = dry_run;
  plan->policy = policy;
  plan->argv = argv;
  plan->run_id = std::to_string(getpid());
  plan->log = static_cast<bool>(options.on_denial);
  // bpffs refuses names with dots.
  plan->net_policy = "run-" + plan->run_id + "-" + policy.name;
  if (argv.empty()) {
    *error = "command: nothing to run";
    return nullptr;
  }
  if (!dry_run && geteuid() != 0) {
    *error = "privileges: ward run needs root (cgroups, BPF programs, capabilities)";
    return nullptr;
  }
  if (!dry_run) {
    std::string e;
    RunTrace("prepare");
    CleanStaleRuns(options.state_dir, &e);
    RunTrace("cleaned");
    const int state_fd = OpenStateDir(options.state_dir, &e);
    if (state_fd < 0) {
      *error = "state: " + e;
      return nullptr;
    }
    close(state_fd);
    plan->record_path = options.state_dir + "/run-" + plan->run_id;
  }

  // Steps 4 and 3 first read the policy; nothing on the host changes yet.
  if (!PrepareProcess(policy, &plan->process, error)) return nullptr;
  RunTrace("process prepared");
  plan->env = FilterEnvironment(policy.process, environ);
  plan->home = HomeOf(*plan);
  // Existing paths denied for writing inside writable trees become
  // read-only bind mounts, so the Landlock ruleset is built without their
  // denies and grants those trees whole.
  ir::Policy landlock_policy = policy;
  plan->mounts.read_only = PlanDenyMounts(
      landlock_policy.filesystem, plan->home.empty() ? std::nullopt : std::optional(plan->home));
  // A bind covers one path: a second name of a file under it would be
  // written through the writable mount it lies in (hardlinks.h).
  OtherNamesCheck other_names;
  for (const std::string& path : plan->mounts.read_only) {
    const int fd = open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // gone: the bind fails later, with its step named
    const bool single = CheckOtherNames(fd, path, backend::landlock::RightBit(ir::FsRight::kWrite),
                                        &other_names, error);
    close(fd);
    if (!single) {
      *error = "filesystem: " + *error;
      return nullptr;
    }
  }
  RunTrace("hardlinks checked");
  if (!backend::landlock::BuildRuleset(landlock_policy, options.partial, &plan->ruleset, sink,
                                       /*address_layer=*/true)) {
    *error = "";
    return nullptr;
  }
  RunTrace("ruleset built");
  if (!LoadOrBuildFilter(*plan, sink, error)) return nullptr;
  RunTrace("filter");
  if (options.guard && !options.guard->empty() && options.guard->size() % 8 == 0) {
    plan->guard = *options.guard;
  } else if (!backend::seccomp::BuildTerminalGuard(GuardOptionsFor(policy), &plan->guard, error)) {
    *error = "seccomp: the guard filter: " + *error;
    return nullptr;
  }
  RunTrace("guard");
  int exec_err = 0;
  plan->path = FindExecutable(argv[0], plan->env, &exec_err);

  // 1. cgroup.
  if (!PlanRunCgroup(policy.limits, plan->run_id, &plan->cgroup, error)) {
    *error = "cgroup: " + *error;
    return nullptr;
  }
  if (!dry_run) {
    // Written before anything it names exists, so a supervisor killed from
    // here on leaves a record the next run cleans up.
    // The filters the child installs, in that order, for wardd's Check.
    plan->record = "supervisor " + std::to_string(getpid()) + " " + ProcessStartTime(getpid()) +
                   "\n" + "ebpf " + plan->net_policy + "\n" + RunCgroupRecord(plan->cgroup) +
                   FilterRecord(plan->guard) + FilterRecord(plan->filter);
    std::string e;
    if (!WriteStateFile(options.state_dir, "run-" + plan->run_id, plan->record, &e)) {
      *error = "state: cannot write " + e;
      return nullptr;
    }
    RunTrace("record");
    if (!CreateRunCgroup(policy.limits, &plan->cgroup, error)) {
      *error = "cgroup: " + *error;
      return nullptr;
    }
    plan->cgroup_created = true;
  }

  RunTrace("cgroups created");
  // 2. network.
  plan->resolved = ResolveConcurrently(policy, options.dns, sink);
  if (!dry_run) {
    ir::Policy net = policy;
    net.name = plan->net_policy;
    Cgroup cg;
    cg.mount = plan->cgroup.v2.path.substr(0, plan->cgroup.v2.path.rfind("/ward/"));
    cg.relative = "ward/run-" + plan->run_id;
    cg.level = 2;
    cg.id = plan->cgroup.v2_id;
    EbpfApplyResult result;
    DiagnosticSink net_sink;
    // Abstract unix sockets: Landlock's scope gives the exact semantics
    // (sockets the workload created itself stay reachable) when the policy
    // grants none; the programs decide them otherwise, and paths always.
    EbpfApplyOptions ebpf_options;
    ebpf_options.abstract_unix_by_landlock = true;
    // Idle programs keep the kernel's hooks enabled between runs (ebpf.h):
    // a speed-up only, so a failure is not the run's.
    std::string anchor_error;
    EbpfAnchorHooks(cg.mount, options.state_dir, &anchor_error);
    // A policy without names to resolve has the same maps in every run:
    // its programs are loaded once and only linked to each run's cgroup.
    bool ok;
    // With --log the run reads its ring buffer: programs of its own, since
    // runs of one policy share the cached programs' ring buffer, and each
    // event is read by one reader only.
    if (NamesToResolve(policy).empty() && !options.policy_hash.empty() && !plan->log) {
      bool hit = false;
      ok = EbpfAttachShared(policy, options.policy_hash.substr(0, 16), cg, ebpf_options,
                            plan->net_policy, options.state_dir, net_sink, &hit, error);
    } else {
      ok = EbpfApply(net, cg, plan->resolved, ebpf_options, net_sink, &result, error);
      plan->own_programs = ok;
    }
    for (const Diagnostic& d : net_sink.diagnostics()) sink.Report(d);
    if (!ok) {
      *error = "network: " +
               (error->empty() ? std::string("the eBPF layer refused the policy") : *error);
      return nullptr;
    }
    plan->ebpf_applied = true;
  }

  RunTrace("ebpf attached");
  // 3. landlock.
  plan->landlock_options.home = plan->home.empty() ? std::nullopt : std::optional(plan->home);
  plan->landlock_options.egress_checked_by_address = true;
  if (plan->log && !dry_run) {
    // Landlock reports to audit only on ABI 7 (restrict_self's log flags),
    // and only while audit is enabled (ExecuteRun enables it).
    std::string why;
    const int abi = LandlockAbi(&why);
    if (abi >= backend::landlock::kLogFlagsAbi) {
      plan->landlock_options.log_new_exec = true;
    } else {
      plan->outcome.files_unlogged =
          abi == 0 ? "Landlock is not available: " + why
                   : "Landlock ABI " + std::to_string(abi) + " has no audit logging (ABI " +
                         std::to_string(backend::landlock::kLogFlagsAbi) + " has)";
    }
  }
  if (!PrepareLandlock(plan->ruleset, plan->landlock_options, &plan->landlock, error)) {
    return nullptr;  // "landlock: STEP: why" already
  }
  RunTrace("landlock prepared");
  for (backend::landlock::Loss& l : other_names.unchecked) {
    plan->landlock.losses.push_back(std::move(l));
  }
  // The run's mount namespace: Ward's own state hidden, every mount
  // read-only but the writable grants, exact denies and unix grants fixed.
  std::vector<std::string> writable;
  for (const backend::landlock::Grant& g : plan->landlock.grants) {
    if (g.rights & backend::landlock::RightBit(ir::FsRight::kWrite)) writable.push_back(g.path);
  }
  const std::string bpffs = EbpfPinDir("");
  const std::vector<std::string> hide = {options.state_dir, options.cache_dir,
                                         options.run_cache_dir,
                                         bpffs.substr(0, bpffs.rfind("/ward"))};
  if (!PlanMounts(policy.filesystem, plan->landlock_options.home, policy.network.unix_rules,
                  writable, hide, &plan->mounts, error)) {
    *error = "filesystem: " + *error;
    return nullptr;
  }
  plan->exec_error = exec_err;
  if (!dry_run) plan->outcome.resolver_unreachable = UnreachableResolvers(policy);
  RunTrace("mounts planned");
  return plan;
}

const std::string& PlannedFilter(const RunPlan& plan) { return plan.filter; }

const RunOutcome& Outcome(const RunPlan& plan) { return plan.outcome; }

std::string SigsysMessage(const RunOutcome& outcome, bool syscalls_unknown) {
  std::string out = "ward run: the command was killed by seccomp (SIGSYS)";
  if (!outcome.kill) {
    return out +
           "; its record did not arrive (the audit socket is unreadable here): `ward run "
           "--log` names the syscall";
  }
  const Denial& d = *outcome.kill;
  const std::string name =
      d.syscall.empty() ? "syscall " + std::to_string(d.syscall_nr) : d.syscall;
  out += " at " + name + " (" + std::to_string(d.syscall_nr) + " on " + d.arch + ")";
  if (d.layer == "guard") {
    return out + ", refused by " + d.rule_text + "; add `" + d.arch +
           "` to the policy's syscalls `arch` list if the command is built for it";
  }
  if (syscalls_unknown) {
    return out + "; `ward explain FILE --syscall " + name +
           "` names the rule that decided; to allow it, add `allow " + name +
           "` to the policy's syscalls section, or `extends linux-base`";
  }
  if (d.rule == "default") {
    // A rule elsewhere cannot be loosened by an `allow` (the most
    // restrictive action wins); the default can.
    return out + ": no rule names it, the policy's default decided" +
           (d.default_at.empty() ? std::string() : " (" + d.default_at + ": " + d.rule_text + ")") +
           "; to allow it, add `allow " + name +
           "` to the policy's syscalls section, or `extends linux-base`";
  }
  return out + ": " + d.rule + " (" + d.rule_text + "); to allow it, change that rule to `allow " +
         name + "`";
}

std::string DnsHint(const RunOutcome& outcome, const std::string& policy) {
  if (outcome.resolver_unreachable.empty()) return "";
  const std::string first =
      outcome.resolver_unreachable.substr(0, outcome.resolver_unreachable.find(','));
  return "names cannot resolve in this run: policy " + policy + " reaches no resolver of " +
         "/etc/resolv.conf (" + outcome.resolver_unreachable + ") on port 53; add `allow to " +
         first + " port 53` to its network section";
}

const std::string& PlannedGuard(const RunPlan& plan) { return plan.guard; }

std::string DescribeRun(const RunPlan& plan) {
  std::ostringstream out;
  out << "ward run: policy " << plan.policy.name << ", command " << plan.path << "\n";
  out << "1. cgroup " << plan.cgroup.v2.path << " (cgroup namespace)\n";
  for (const CgroupDir& d : plan.cgroup.v1) {
    out << "   v1 " << d.controller << ": " << d.path << "\n";
  }
  for (const auto& [name, v] : plan.policy.limits) {
    std::string how;
    if (name == "timeout")
      how = "the supervisor kills the run after " + std::to_string(v.value) + " ms";
    else if (name == "cpu_time")
      how = "the supervisor kills the run after " + std::to_string(v.value) + " ms of CPU";
    else if (name == "open_files")
      how = "RLIMIT_NOFILE " + std::to_string(v.value) + " (step 4)";
    else if (name == "cpus")
      how = "cpu quota " + std::to_string(v.value * 100) + " us per 100000 us";
    else if (name == "memory")
      how = std::to_string(v.value) + " bytes, no swap on top";
    else if (name == "pids")
      how = std::to_string(v.value) + " processes";
    out << "   limit " << name << ": " << how << "\n";
  }
  out << "2. network (eBPF on the run's cgroup, pinned as " << plan.net_policy << ")\n";
  for (const ir::FlatRule& r : plan.policy.network.rules) {
    out << "   " << (r.direction == ir::Direction::kEgress ? "egress " : "ingress ")
        << backend::ebpf::RuleText(r) << "\n";
  }
  if (plan.policy.network.rules.empty()) out << "   egress: nothing (every connection refused)\n";
  for (const backend::ResolvedAddress& a : plan.resolved) {
    out << "   " << a.pattern << " -> " << FormatPrefix(a.address) << " for " << a.ttl << " s\n";
  }
  for (const ir::UnixRule& u : plan.policy.network.unix_rules) {
    out << "   " << (u.allow ? "allow" : "deny") << " unix " << (u.abstract ? "@" : "") << u.name
        << "\n";
  }
  out << "   unix sockets: none granted but those above\n";
  out << "3. filesystem: mount namespace, then landlock (ABI " << plan.landlock.abi
      << ", ~ = " << (plan.home.empty() ? "unset" : plan.home) << ")\n";
  std::istringstream mount_lines(DescribeMounts(plan.mounts));
  for (std::string line; std::getline(mount_lines, line);) out << "   " << line << "\n";
  std::istringstream lines(DescribeLandlock(plan.landlock));
  for (std::string line; std::getline(lines, line);) out << "   " << line << "\n";
  out << "4. process\n";
  std::istringstream plines(DescribeProcess(plan.process));
  for (std::string line; std::getline(plines, line);) out << "   " << line << "\n";
  out << "   environment: " << plan.env.size() << " variables"
      << (plan.policy.process.env_allowed.empty() ? " (unchanged)" : " (env allow)") << "\n";
  out << "5. seccomp: " << plan.filter.size() / 8 << " instructions for " << ArchName(MachineArch())
      << ", " << plan.filter_source << "\n"
      << "   and ward run's guard: ioctl TIOCSTI and TIOCLINUX, packet and netfilter sockets, "
         "setuid and setgid bits refused (EPERM); socket families but unix, inet, inet6 and "
         "netlink (EAFNOSUPPORT); clone3 (ENOSYS)\n"
      << "   the host's network: netlink protocols but route refused (EPROTONOSUPPORT); "
      << (plan.policy.network.netlink.count("route")
              ? "NETLINK_ROUTE and the interface ioctls granted (allow netlink route)\n"
              : "NETLINK_ROUTE (EPROTONOSUPPORT) and the interface ioctls (EPERM) too\n");
  return out.str();
}

int ExecuteRun(RunPlan& plan, std::string* error) {
  if (plan.exec_error != 0) {
    *error = plan.argv[0] + ": " + strerror(plan.exec_error);
    return plan.exec_error == ENOENT ? kRunNotFound : kRunCannotExecute;
  }
  std::vector<char*> argv, envp;
  for (std::string& a : plan.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : plan.env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *error = std::string("supervisor: pipe: ") + strerror(errno);
    return kRunSetupFailed;
  }
  // The run's audit records (run_log.h): seccomp's kills always (the
  // SIGSYS explanation: one socket, read only when something arrives);
  // every denial with --log.
  AuditListener audit;
  std::string audit_error;
  const bool audit_open = audit.Open(&audit_error);
  RunOutcome& outcome = plan.outcome;
  if (plan.log && !audit_open && plan.options.report) {
    plan.options.report("log: seccomp and Landlock denials are not logged: " + audit_error);
  }
  AuditStatus status_before;
  const bool lost_readable = plan.log && AuditGetStatus(&status_before, &audit_error);
  // Landlock's records need audit enabled host-wide: on for the run (and
  // back off after it, when no other run needs it).
  struct AuditUse {
    std::string state_dir;
    bool held = false;
    ~AuditUse() {
      bool off = false;
      std::string ignored;
      if (held) AuditRelease(state_dir, &off, &ignored);
    }
  } audit_use{plan.options.state_dir};
  if (plan.log && audit_open && plan.landlock_options.log_new_exec) {
    bool turned_on = false;
    std::string e;
    audit_use.held = AuditAcquire(plan.options.state_dir, &turned_on, &e);
    if (!audit_use.held) outcome.files_unlogged = "audit could not be enabled: " + e;
  }
  std::unique_ptr<EbpfEventReader> ring;
  if (plan.own_programs) {
    std::string e;
    ring = EbpfEventReader::Open(plan.net_policy, &e);
    outcome.events_read = ring != nullptr;
    if (!ring && plan.log && plan.options.report) {
      plan.options.report("log: network denials are not logged: " + e);
    }
  }
  sigset_t forwarded, old;
  sigemptyset(&forwarded);
  for (int s : kForwarded) sigaddset(&forwarded, s);
  sigaddset(&forwarded, SIGCHLD);
  sigprocmask(SIG_BLOCK, &forwarded, &old);
  const pid_t supervisor = getpid();
  // Born in the run's v2 cgroup (clone3 CLONE_INTO_CGROUP): writing
  // cgroup.procs afterwards costs a migration (an RCU grace period, ~5 ms).
  // A plain fork and that write when the kernel lacks clone3.
  RunTrace("fork");
  bool born_in_cgroup = false;
  pid_t child = -1;
  const int cg_fd = open(plan.cgroup.v2.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd >= 0) {
    clone_args args{};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<uint64_t>(cg_fd);
    child = static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof(args)));
    born_in_cgroup = child >= 0;
  }
  if (child < 0) child = fork();
  if (child != 0 && cg_fd >= 0) close(cg_fd);
  if (child < 0) {
    *error = std::string("supervisor: fork: ") + strerror(errno);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return kRunSetupFailed;
  }
  if (child == 0) {
    close(report[0]);
    const int fd = report[1];
    // Killed with the supervisor; the record and the next run's clean-up
    // take care of what it started.
    RunTrace("child");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(fd, "pdeathsig", errno, 125);
    if (getppid() != supervisor) _exit(kRunSetupFailed);
    for (int s : kForwarded) signal(s, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    const char* step = nullptr;
    if (cg_fd >= 0) close(cg_fd);
    if (!EnterRunCgroup(plan.cgroup, born_in_cgroup, &step)) {
      ChildFail(fd, step, errno, kRunSetupFailed);
    }
    RunTrace("child cgroup entered");
    if (plan.log) {
      // An audit session of the run's own: every record of the workload
      // and its descendants then names it (`ses=`), even once the process
      // is gone (run_log.h). Writing the login uid starts one; a host
      // that made login uids immutable refuses, and the cgroup decides.
      const int fd_uid = open("/proc/self/loginuid", O_WRONLY | O_CLOEXEC);
      char uid[16];
      const int n = snprintf(uid, sizeof uid, "%u", static_cast<unsigned>(getuid()));
      if (fd_uid >= 0 && write(fd_uid, uid, static_cast<size_t>(n)) == n) {
        char ses[16] = {};
        const int fd_ses = open("/proc/self/sessionid", O_RDONLY | O_CLOEXEC);
        if (fd_ses >= 0 && read(fd_ses, ses, sizeof ses - 1) > 0) {
          ChildReport session{};
          strncpy(session.step, "session", sizeof(session.step) - 1);
          session.error = atoi(ses);
          (void)!write(fd, &session, sizeof(session));
        }
        if (fd_ses >= 0) close(fd_ses);
      }
      if (fd_uid >= 0) close(fd_uid);
    }
    MountFailure mf;
    if (!ApplyMounts(plan.mounts, &mf)) ChildFail(fd, mf.step, mf.error, kRunSetupFailed);
    RunTrace("child mounts");
    LandlockFailure lf;
    if (!ApplyLandlock(plan.landlock, plan.landlock_options, &lf)) {
      ChildFail(fd, lf.step, lf.error, kRunSetupFailed);
    }
    RunTrace("child landlock");
    ProcessFailure pf;
    if (!ApplyProcess(plan.process, &pf)) ChildFail(fd, pf.step, pf.error, kRunSetupFailed);
    RunTrace("child process");
    std::string seccomp_error;
    SeccompLoad load;
    load.log = plan.log;  // errno actions reach the audit records too
    if (!LoadSeccompFilter(plan.guard, load, nullptr, &seccomp_error) ||
        !LoadSeccompFilter(plan.filter, load, nullptr, &seccomp_error)) {
      ChildFail(fd, "seccomp", errno, kRunSetupFailed);
    }
    RunTrace("child seccomp");
    execve(plan.path.c_str(), argv.data(), envp.data());
    const int err = errno;
    ChildFail(fd, "exec", err, err == ENOENT ? kRunNotFound : kRunCannotExecute);
  }
  close(report[1]);
  ReleaseLandlock(plan.landlock);  // the child has it; the supervisor never uses it

  ChildReport r{};
  ssize_t got;
  int session = -1;
  for (;;) {
    do {
      got = read(report[0], &r, sizeof(r));
    } while (got < 0 && errno == EINTR);
    // The run's audit session (--log), before any failure or the exec.
    if (got != static_cast<ssize_t>(sizeof(r)) || std::string_view(r.step) != "session") break;
    session = r.error;
  }
  close(report[0]);
  RunTrace("exec reported");
  int status = 0;
  if (got == static_cast<ssize_t>(sizeof(r))) {
    waitpid(child, &status, 0);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    r.step[sizeof(r.step) - 1] = 0;
    const std::string step = r.step;
    if (step == "exec") {
      *error = plan.argv[0] + ": " + strerror(r.error);
      return WIFEXITED(status) ? WEXITSTATUS(status) : kRunCannotExecute;
    }
    std::string layer = "process";
    if (step == "seccomp") {
      layer = "seccomp";
    } else if (step.rfind("cgroup", 0) == 0 || step == "tasks (v1)" ||
               step == "unshare(CLONE_NEWCGROUP)") {
      layer = "cgroup";
    } else if (step == "no_new_privs" || step == "restrict_self" || step == "statvfs" ||
               step.rfind("mount", 0) == 0 || step == "unshare(CLONE_NEWNS)") {
      layer = "filesystem";
    }
    *error = layer + ": " + step + ": " + strerror(r.error);
    return kRunSetupFailed;
  }

  // The command runs. Supervise it.
  RunLogContext log_context;
  log_context.policy = &plan.policy;
  log_context.home = plan.landlock_options.home;
  log_context.where = plan.options.where ? plan.options.where : [](Span) { return std::string(); };
  log_context.text = plan.options.text ? plan.options.text : [](Span) { return std::string(); };
  log_context.cgroup = plan.cgroup.v2.path;
  log_context.child = child;
  log_context.session = session;
  RunLogCollector collector(std::move(log_context));
  auto emit = [&](std::vector<Denial>& found) {
    for (const Denial& d : found) {
      if (!plan.log) continue;
      ++outcome.denials;
      plan.options.on_denial(d);
    }
    found.clear();
    if (collector.dns_refused() && !outcome.dns_refused) {
      outcome.dns_refused = collector.dns_refused();
      const std::string hint = DnsHint(outcome, plan.policy.name);
      if (!hint.empty() && plan.options.report) plan.options.report(hint);
    }
  };
  auto gather = [&] {
    std::vector<Denial> found;
    if (audit_open) {
      std::vector<AuditRecord> records;
      audit.Drain(&records);
      collector.AddAudit(records, &found);
    }
    if (ring) {
      std::vector<EbpfDenial> events;
      std::string e;
      ring->Poll(0, &events, &e);
      collector.AddEbpf(events, &found);
    }
    emit(found);
  };
  const int sfd = signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK);
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  const auto start = std::chrono::steady_clock::now();
  const auto timeout_it = plan.policy.limits.find("timeout");
  const auto cpu_it = plan.policy.limits.find("cpu_time");
  const bool refresh = !plan.resolved.empty();
  auto next_refresh =
      start + std::chrono::seconds(refresh ? RefreshSeconds(plan.resolved, plan.options.dns) : 0);
  if (tfd >= 0) {
    itimerspec every{};
    every.it_interval.tv_nsec = every.it_value.tv_nsec = 100 * 1000 * 1000;
    timerfd_settime(tfd, 0, &every, nullptr);
  }
  int exit_code = -1;
  bool limit_hit = false;
  // At the first tick (0.1 s), not at once: a short command ends before it,
  // and the write (with its fsyncs) stays off ward run's own time.
  bool workload_recorded = false;
  if (tfd < 0) RecordWorkload(plan, child);
  while (exit_code < 0) {
    pollfd fds[4] = {{sfd, POLLIN, 0},
                     {tfd, POLLIN, 0},
                     {audit_open ? audit.fd() : -1, POLLIN, 0},
                     {ring ? ring->fd() : -1, POLLIN, 0}};
    if (poll(fds, 4, -1) < 0 && errno != EINTR) break;
    // Before reaping: a process's records name it by pid, looked up in the
    // run's cgroup while it is still there (a zombie keeps its cgroup).
    if ((fds[2].revents | fds[3].revents) & POLLIN) gather();
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGCHLD) continue;
        // A terminal's signals (SI_KERNEL) reach the whole foreground group,
        // the command included; only signals sent to ward run itself are
        // passed on.
        if (si.ssi_code != SI_KERNEL) kill(child, static_cast<int>(si.ssi_signo));
      }
    }
    if (fds[1].revents & POLLIN) {
      uint64_t ticks;
      (void)!read(tfd, &ticks, sizeof(ticks));
      if (!workload_recorded) {
        workload_recorded = true;
        RecordWorkload(plan, child);
      }
      if (plan.log) collector.ScanCgroup();
      const auto now = std::chrono::steady_clock::now();
      const auto elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count();
      std::string why;
      if (timeout_it != plan.policy.limits.end() &&
          static_cast<uint64_t>(elapsed) >= timeout_it->second.value) {
        why = "timeout: " + std::to_string(timeout_it->second.value) + " ms elapsed";
      } else if (cpu_it != plan.policy.limits.end()) {
        const int64_t used = RunCpuUsageUsec(plan.cgroup);
        if (used >= 0 && static_cast<uint64_t>(used) / 1000 >= cpu_it->second.value) {
          why = "cpu_time: " + std::to_string(cpu_it->second.value) + " ms of CPU used";
        }
      }
      if (!why.empty() && !limit_hit) {
        limit_hit = true;
        if (plan.options.report) plan.options.report(why + "; the workload was killed");
        std::string ignored;
        RemoveRunCgroup(plan.cgroup, &ignored);
        plan.cgroup_created = false;
      }
      if (refresh && now >= next_refresh) {
        DiagnosticSink s;
        ApplyOptions o;
        o.dns = plan.options.dns;
        uint32_t next = 0;
        std::string e;
        ir::Policy net = plan.policy;
        net.name = plan.net_policy;
        if (!EbpfEnforcer().RefreshDomains(net, o, s, &next, &e)) {
          if (plan.options.report) plan.options.report("network: refresh: " + e);
          next = 30;
        }
        for (const Diagnostic& d : s.diagnostics()) {
          if (plan.options.report) plan.options.report("network: " + d.message);
        }
        next_refresh = now + std::chrono::seconds(std::max<uint32_t>(next, 1));
      }
    }
    pid_t w;
    while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
      if (w == child) {
        exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
  }
  RunTrace("child exited");
  gather();
  outcome.sigsys = exit_code == 128 + SIGSYS;
  // The last records may still be in the kernel's queue: wait for them
  // with --log, and for the kill record of a SIGSYS.
  if (audit_open && (plan.log || (outcome.sigsys && !collector.KillOf(child)))) {
    std::vector<AuditRecord> records;
    if (!AuditBarrier(audit, 1000, &records) && plan.log) {
      outcome.audit_unreachable =
          "no audit record reached ward run (the kernel sends them only to the initial network "
          "namespace: run ward run there)";
    }
    std::vector<Denial> found;
    collector.AddAudit(records, &found);
    if (ring) {
      std::vector<EbpfDenial> events;
      std::string e;
      ring->Poll(0, &events, &e);
      collector.AddEbpf(events, &found);
    }
    collector.Flush(&found);
    emit(found);
  }
  if (outcome.sigsys) outcome.kill = collector.KillOf(child);
  if (outcome.sigsys && !outcome.kill) outcome.kill = collector.LastKill();
  outcome.lost = audit.dropped();
  AuditStatus status_after;
  std::string lost_error;
  if (lost_readable && AuditGetStatus(&status_after, &lost_error) &&
      status_after.lost > status_before.lost) {
    outcome.lost += status_after.lost - status_before.lost;
  }
  if (sfd >= 0) close(sfd);
  if (tfd >= 0) close(tfd);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  return limit_hit ? kRunLimitReached : exit_code;
}

namespace {

// One run's record (PrepareRun writes it): its supervisor, whether that
// supervisor still runs, its eBPF name and its cgroups.
struct Record {
  std::string path;
  pid_t supervisor = 0;
  bool alive = false;
  std::string net_policy;  // run-<id>-<policy>
  RunCgroup cgroup;
};

// The records of our runs in `state_dir`; anything else there is skipped.
std::vector<Record> ReadRecords(const std::string& state_dir) {
  std::vector<Record> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(state_dir, ec)) {
    if (entry.path().filename().string().rfind("run-", 0) != 0) continue;
    const std::string text = ReadFile(entry.path().string());
    std::istringstream in(text);
    std::string word, pid_text, start, line;
    Record r;
    r.path = entry.path().string();
    in >> word >> pid_text >> start;
    if (word != "supervisor") continue;
    try {
      r.supervisor = static_cast<pid_t>(std::stol(pid_text));
    } catch (...) {
      continue;
    }
    std::getline(in, line);
    in >> word >> r.net_policy;
    if (word != "ebpf" || r.net_policy.rfind("run-", 0) != 0) continue;
    r.alive = r.supervisor > 0 && !start.empty() && ProcessStartTime(r.supervisor) == start;
    r.cgroup = ParseRunCgroupRecord(text);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<LiveRun> ListRuns(const std::string& state_dir) {
  std::vector<LiveRun> out;
  for (const Record& r : ReadRecords(state_dir)) {
    if (!r.alive) continue;
    LiveRun run;
    run.supervisor = r.supervisor;
    const size_t dash = r.net_policy.find('-', 4);  // run-<id>-<policy>
    run.policy = dash == std::string::npos ? r.net_policy : r.net_policy.substr(dash + 1);
    run.pins = EbpfPinDir(r.net_policy);
    run.record = r.path;
    run.cgroup = r.cgroup.v2.path;
    for (const CgroupDir& d : r.cgroup.v1) run.v1.push_back(d.controller + ": " + d.path);
    out.push_back(std::move(run));
  }
  std::sort(out.begin(), out.end(),
            [](const LiveRun& a, const LiveRun& b) { return a.supervisor < b.supervisor; });
  return out;
}

int CleanStaleRuns(const std::string& state_dir, std::string* error) {
  int cleaned = 0;
  // Audit turned on for a `--log` run whose supervisor was killed.
  bool turned_off = false;
  std::string audit_error;
  AuditRelease(state_dir, &turned_off, &audit_error);
  // Programs cached by other builds of ward, and those no run used lately.
  EbpfPruneCache(kKeptPrograms, kProgramIdleSeconds);
  for (Record& r : ReadRecords(state_dir)) {
    if (r.alive) continue;
    // Only what a run creates: never a path the record did not get from us.
    bool sane = r.cgroup.v2.path.find("/ward/run-") != std::string::npos;
    for (const CgroupDir& d : r.cgroup.v1) sane &= d.path.find("/ward-run-") != std::string::npos;
    if (!sane) continue;
    std::string e;
    if (!RemoveRunCgroup(r.cgroup, &e)) {
      // A process of that run is still there: its programs stay attached,
      // and its record, for the next try.
      *error = e;
      continue;
    }
    bool removed = false;
    EbpfRemove(r.net_policy, &removed, &e);
    if (!e.empty()) *error = e;
    unlink(r.path.c_str());
    ++cleaned;
  }
  return cleaned;
}

// DescribeRunJson, layer by layer (kept apart from DescribeRun: its lines
// are for people, these fields for programs).
namespace {

using Json = nlohmann::ordered_json;
using Where = std::function<Json(Span)>;

// "read,exec" as ["read", "exec"].
Json RightList(uint8_t rights) {
  Json list = Json::array();
  std::istringstream names(backend::landlock::RightNames(rights));
  for (std::string name; std::getline(names, name, ',');) list.push_back(name);
  return list;
}

Json CgroupLayer(const RunPlan& plan, const Where& where) {
  Json v1 = Json::array();
  for (const CgroupDir& d : plan.cgroup.v1)
    v1.push_back({{"controller", d.controller}, {"path", d.path}});
  Json limits = Json::array();
  for (const auto& [name, v] : plan.policy.limits) {
    // Who holds it: the supervisor's clock, an rlimit (step 4) or the cgroup.
    const char* by = name == "timeout" || name == "cpu_time" ? "supervisor"
                     : name == "open_files"                  ? "rlimit"
                                                             : "cgroup";
    limits.push_back({{"name", name}, {"value", v.value}, {"by", by}, {"at", where(v.span)}});
  }
  return {{"step", 1},         {"layer", "cgroup"},   {"cgroup", plan.cgroup.v2.path},
          {"namespace", true}, {"v1", std::move(v1)}, {"limits", std::move(limits)}};
}

Json NetworkLayer(const RunPlan& plan, const Where& where) {
  Json rules = Json::array();
  for (const ir::FlatRule& r : plan.policy.network.rules) {
    Json j = {{"direction", r.direction == ir::Direction::kEgress ? "egress" : "ingress"},
              {"allow", r.allow},
              {"rule", backend::ebpf::RuleText(r)},
              {"at", where(r.span)}};
    if (!r.implicit.empty()) j["implicit"] = r.implicit;
    rules.push_back(std::move(j));
  }
  Json resolved = Json::array();
  for (const backend::ResolvedAddress& a : plan.resolved) {
    resolved.push_back({{"direction", a.direction == ir::Direction::kEgress ? "egress" : "ingress"},
                        {"name", a.pattern},
                        {"address", FormatPrefix(a.address)},
                        {"ttl", a.ttl}});
  }
  Json unix_rules = Json::array();
  for (const ir::UnixRule& u : plan.policy.network.unix_rules) {
    Json j = {
        {"allow", u.allow}, {"abstract", u.abstract}, {"name", u.name}, {"at", where(u.span)}};
    if (!u.implicit.empty()) j["implicit"] = u.implicit;
    unix_rules.push_back(std::move(j));
  }
  return {{"step", 2},
          {"layer", "network"},
          {"enforcer", "ebpf"},
          {"pinned_as", plan.net_policy},
          {"rules", std::move(rules)},
          {"resolved", std::move(resolved)},
          {"unix", std::move(unix_rules)}};
}

Json FilesystemLayer(const RunPlan& plan) {
  Json grants = Json::array();
  for (const backend::landlock::Grant& g : plan.landlock.grants) {
    grants.push_back({{"path", g.path}, {"rights", RightList(g.rights)}});
  }
  Json losses = Json::array();
  for (const backend::landlock::Loss& l : plan.landlock.losses) {
    losses.push_back({{"path", l.path}, {"rights", RightList(l.rights)}, {"why", l.why}});
  }
  const MountPlan& m = plan.mounts;
  return {{"step", 3},
          {"layer", "filesystem"},
          {"landlock_abi", plan.landlock.abi},
          {"home", plan.home.empty() ? Json(nullptr) : Json(plan.home)},
          {"mounts",
           {{"hidden", m.hidden},
            {"read_only_root", m.read_only_root},
            {"writable", m.writable},
            {"read_only", m.read_only},
            {"pinned", m.pinned}}},
          {"grants", std::move(grants)},
          {"losses", std::move(losses)}};
}

Json ProcessLayer(const RunPlan& plan) {
  const PreparedProcess& p = plan.process;
  Json kept = Json::array();
  for (int cap = 0; cap <= p.last_cap; ++cap) {
    if (!((p.keep_caps >> cap) & 1)) continue;
    for (const std::string& name : CapabilityNames()) {
      if (LookupCapability(name) == cap) kept.push_back(name);
    }
  }
  Json rlimits = Json::array();
  for (const PreparedProcess::Rlimit& r : p.rlimits) {
    if (r.resource == RLIMIT_NOFILE) {
      rlimits.push_back({{"resource", "RLIMIT_NOFILE"}, {"value", r.value.rlim_cur}});
    }
  }
  return {
      {"step", 4},
      {"layer", "process"},
      {"no_new_privileges", p.no_new_privileges},
      {"capabilities_kept", std::move(kept)},
      {"user", p.set_user ? Json{{"uid", p.uid}, {"gid", p.gid}} : Json(nullptr)},
      {"rlimits", std::move(rlimits)},
      {"descriptors_closed", true},
      {"environment",
       {{"variables", plan.env.size()}, {"filtered", !plan.policy.process.env_allowed.empty()}}}};
}

Json SeccompLayer(const RunPlan& plan) {
  return {{"step", 5},
          {"layer", "seccomp"},
          {"arch", std::string(ArchName(MachineArch()))},
          {"instructions", plan.filter.size() / 8},
          {"filter", plan.filter_source},
          {"guard",
           {{"instructions", plan.guard.size() / 8},
            {"netlink_route", plan.policy.network.netlink.count("route") > 0}}}};
}

}  // namespace

Json DescribeRunJson(const RunPlan& plan, const Where& where) {
  return {{"policy", plan.policy.name},
          {"command", {{"path", plan.path}, {"argv", plan.argv}}},
          {"layers",
           {CgroupLayer(plan, where), NetworkLayer(plan, where), FilesystemLayer(plan),
            ProcessLayer(plan), SeccompLayer(plan)}}};
}

}  // namespace ward::enforce
