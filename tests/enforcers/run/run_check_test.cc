// [root] CheckRuns (enforcers/run/run_check.h) on real runs of the built
// `ward run`: a sleeping workload's filters match its record byte for byte;
// one that installs a filter of its own differs by exactly that filter; a
// workload that exited is reported so while its supervisor is alive, and
// the run is no longer listed once the supervisor is gone; records without
// filters (an older ward run) or without a workload; a reader under seccomp.
//
// The `ward` binary writes its records in /run/ward/runs, where other runs
// on this host have theirs too. CheckRuns stops each workload it reads for
// a moment, so the tests never point it there: each copies its own run's
// record, byte for byte, into a private state folder and checks that one.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "enforcers/linux/files.h"
#include "enforcers/linux/seccomp_readback.h"
#include "enforcers/run/run_check.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "run_check_test: needs root; skipped\n");
    std::exit(77);
  }
  return true;
}();

// The scratch folder (policies, scripts, state folders) goes with the
// program; forked children leave with _exit.
struct RemoveScratch {
  ~RemoveScratch() { fs::remove_all(ScratchDir()); }
} remove_scratch;

std::string Policy(const std::string& name) {
  return R"(ward 1
import "std/linux.ward"
policy )" +
         name + R"( extends linux-base {
  filesystem {
    allow read write ")" +
         ScratchDir() + R"("
  }
  limits {
    pids 16
  }
}
)";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Field 22 of /proc/PID/stat.
std::string StartTime(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
  }
  return f;
}

char State(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos ? 0 : stat[paren + 2];
}

// A private state folder (root's, 0700, as OpenStateDir wants it), removed
// with everything in it.
struct StateDir {
  std::string path = ScratchDir() + "/state-" + std::to_string(counter++);
  StateDir() {
    fs::create_directories(path);
    chmod(path.c_str(), 0700);
  }
  ~StateDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

// `ward run FILE -- ARGV...` in the background, stopped and reaped (with
// whatever it left) at the end of the test.
struct WardRun {
  pid_t pid = -1;
  // `under_seccomp`: ward run itself starts under a filter that allows
  // everything, which its workload inherits.
  WardRun(const std::string& file, const std::vector<std::string>& argv,
          bool under_seccomp = false) {
    pid = fork();
    if (pid == 0) {
      sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
      sock_fprog prog{1, &allow};
      if (under_seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) _exit(98);
      const std::string std_env = "WARD_STD=" WARD_SOURCE_DIR "/policies/std";
      putenv(const_cast<char*>(std_env.c_str()));
      std::vector<const char*> args = {WARD_BINARY, "run", file.c_str(), "--"};
      for (const std::string& a : argv) args.push_back(a.c_str());
      args.push_back(nullptr);
      execv(WARD_BINARY, const_cast<char* const*>(args.data()));
      _exit(99);
    }
  }
  ~WardRun() { Stop(); }
  // Ends the run (SIGTERM, forwarded to the workload) and returns ward's
  // exit status.
  int Stop() {
    if (pid <= 0) return -1;
    kill(pid, SIGTERM);
    kill(pid, SIGCONT);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  std::string Record() const { return "/run/ward/runs/run-" + std::to_string(pid); }
};

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 250; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Waits for the workload to be ready and its record complete, and copies
// the record into `state`.
void CopyRecord(const WardRun& run, const std::string& ready, const StateDir& state) {
  REQUIRE(WaitFor([&] { return fs::exists(ready); }));
  REQUIRE(WaitFor([&] { return Slurp(run.Record()).find("\nworkload ") != std::string::npos; }));
  fs::copy_file(run.Record(), state.path + "/run-" + std::to_string(run.pid));
}

// The workload ward run started: the supervisor's only child.
pid_t Workload(pid_t supervisor) {
  const std::string s = std::to_string(supervisor);
  std::istringstream children(Slurp("/proc/" + s + "/task/" + s + "/children"));
  pid_t child = 0;
  children >> child;
  return child;
}

}  // namespace

TEST_CASE("CheckRuns: a sleeping workload's filters match its record", "[root]") {
  const std::string file = WriteTemp("check-match.ward", Policy("rc-match"));
  const std::string ready = ScratchDir() + "/ready-match";
  fs::remove(ready);
  StateDir state;
  WardRun run(file, {"/usr/bin/sh", "-c", "touch " + ready + "; exec sleep 30"});
  CopyRecord(run, ready, state);
  const pid_t workload = Workload(run.pid);
  REQUIRE(workload > 0);
  CHECK(Slurp("/proc/" + std::to_string(workload) + "/cmdline") == std::string("sleep\0"
                                                                               "30\0",
                                                                               9));

  const std::vector<enforce::RunCheck> runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].supervisor == run.pid);
  CHECK(runs[0].policy == "rc-match");
  CHECK(runs[0].record == state.path + "/run-" + std::to_string(run.pid));
  CHECK(runs[0].workload_pid == workload);
  CHECK(runs[0].inherited_filters == 0);
  CHECK(runs[0].seccomp == "matches");
  // What was compared: ward run's guard and the policy's filter, both there.
  std::vector<enforce::CbpfProgram> live;
  std::string error;
  REQUIRE(enforce::ReadSeccompFilters(workload, &live, &error));
  CHECK(live.size() == 2);
  // The workload goes on after each read, untraced.
  CHECK(WaitFor([&] { return State(workload) == 'S'; }));
  CHECK(Slurp("/proc/" + std::to_string(workload) + "/status").find("\nTracerPid:\t0\n") !=
        std::string::npos);

  SECTION("a record that names another filter") {
    // The first recorded filter's first byte changed: index 0 differs.
    const std::string copy = state.path + "/run-" + std::to_string(run.pid);
    std::string text = Slurp(copy);
    const size_t at = text.find("\nseccomp ") + 9;
    text[at] = text[at] == '0' ? '1' : '0';
    REQUIRE(enforce::WriteStateFile(state.path, "run-" + std::to_string(run.pid), text, &error));
    const std::vector<enforce::RunCheck> changed = enforce::CheckRuns(state.path);
    REQUIRE(changed.size() == 1);
    const size_t n = live[0].size();
    CHECK(changed[0].seccomp ==
          "differs: index 0 (ward run's guard) is not the filter ward run installed (" +
              std::to_string(n) + " instructions, recorded " + std::to_string(n) +
              " instructions)");
  }
  SECTION("a reader under seccomp is refused") {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
      sock_fprog prog{1, &allow};
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        _exit(2);
      }
      const std::vector<enforce::RunCheck> r = enforce::CheckRuns(state.path);
      const std::string out = r.size() == 1 ? r[0].seccomp : "runs: " + std::to_string(r.size());
      (void)!write(fds[1], out.data(), out.size());
      _exit(0);
    }
    close(fds[1]);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(out ==
          "unreadable: this process runs under seccomp (mode 2): the kernel lets only an "
          "unfiltered reader see filters");
  }
  CHECK(run.Stop() != 0);
}

TEST_CASE("CheckRuns: a filter the workload installed itself differs", "[root]") {
  const std::string ready = ScratchDir() + "/ready-extra";
  fs::remove(ready);
  // One instruction, SECCOMP_RET_ALLOW, installed with prctl after
  // ward run's two.
  const std::string script = WriteTemp("extra-filter.py", R"(import ctypes, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
code = ctypes.create_string_buffer(struct.pack("=HBBI", 0x06, 0, 0, 0x7fff0000), 8)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(1, ctypes.addressof(code))
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
    sys.exit("prctl: errno %d" % ctypes.get_errno())
open(sys.argv[1], "w").close()
time.sleep(30)
)");
  const std::string file = WriteTemp("check-extra.ward", Policy("rc-extra"));
  StateDir state;
  WardRun run(file, {"/usr/bin/python3", script, ready});
  CopyRecord(run, ready, state);
  const std::vector<enforce::RunCheck> runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].policy == "rc-extra");
  CHECK(runs[0].workload_pid == Workload(run.pid));
  CHECK(runs[0].seccomp ==
        "differs: 1 filter more than ward run installed: index 2 (1 instruction)");
  CHECK(run.Stop() != 0);
}

TEST_CASE("CheckRuns: filters ward run itself runs under come first", "[root]") {
  const std::string file = WriteTemp("check-inherit.ward", Policy("rc-inherit"));
  const std::string ready = ScratchDir() + "/ready-inherit";
  fs::remove(ready);
  StateDir state;
  WardRun run(file, {"/usr/bin/sh", "-c", "touch " + ready + "; exec sleep 30"},
              /*under_seccomp=*/true);
  CopyRecord(run, ready, state);
  CHECK(Slurp("/proc/" + std::to_string(run.pid) + "/status").find("\nSeccomp_filters:\t1\n") !=
        std::string::npos);
  std::vector<enforce::CbpfProgram> live;
  std::string error;
  REQUIRE(enforce::ReadSeccompFilters(Workload(run.pid), &live, &error));
  CHECK(live.size() == 3);
  const std::vector<enforce::RunCheck> runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].inherited_filters == 1);
  CHECK(runs[0].seccomp == "matches");
  CHECK(run.Stop() != 0);
}

TEST_CASE("CheckRuns: a workload that exited, then its run gone", "[root]") {
  const std::string file = WriteTemp("check-exit.ward", Policy("rc-exit"));
  const std::string ready = ScratchDir() + "/ready-exit";
  fs::remove(ready);
  StateDir state;
  WardRun run(file, {"/usr/bin/sh", "-c", "touch " + ready + "; exec sleep 30"});
  CopyRecord(run, ready, state);
  const pid_t workload = Workload(run.pid);
  REQUIRE(workload > 0);
  // The supervisor stopped, the workload killed: a zombie nobody reaps yet.
  REQUIRE(kill(run.pid, SIGSTOP) == 0);
  REQUIRE(WaitFor([&] { return State(run.pid) == 'T'; }));
  REQUIRE(kill(workload, SIGKILL) == 0);
  REQUIRE(WaitFor([&] { return State(workload) == 'Z'; }));
  std::vector<enforce::RunCheck> runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].workload_pid == workload);
  CHECK(runs[0].seccomp ==
        "unreadable: the workload (pid " + std::to_string(workload) + ") exited");
  // The supervisor goes on, reaps it and cleans up: the run is not listed.
  REQUIRE(kill(run.pid, SIGCONT) == 0);
  int status = 0;
  REQUIRE(waitpid(run.pid, &status, 0) == run.pid);
  const pid_t supervisor = run.pid;
  run.pid = -1;
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGKILL);
  CHECK_FALSE(fs::exists("/run/ward/runs/run-" + std::to_string(supervisor)));
  CHECK(enforce::CheckRuns(state.path).empty());
}

TEST_CASE("CheckRuns: records without filters or without a workload", "[root]") {
  StateDir state;
  // A live process stands for the supervisor.
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    execl("/usr/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(99);
  }
  REQUIRE(
      WaitFor([&] { return Slurp("/proc/" + std::to_string(sleeper) + "/comm") == "sleep\n"; }));
  const std::string id = std::to_string(sleeper);
  const std::string head = "supervisor " + id + " " + StartTime(sleeper) + "\nebpf run-" + id +
                           "-rc-old\nv2 /sys/fs/cgroup/ward/run-" + id + "\n";
  std::string error;
  // As ward run wrote it before it recorded filters.
  REQUIRE(enforce::WriteStateFile(state.path, "run-" + id, head, &error));
  std::vector<enforce::RunCheck> runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].policy == "rc-old");
  CHECK(runs[0].workload_pid == 0);
  CHECK(runs[0].seccomp ==
        "unreadable: the run's record names no filters (written by an older ward run)");
  // Filters, but no workload yet.
  REQUIRE(enforce::WriteStateFile(state.path, "run-" + id, head + "seccomp 060000000000ff7f\n",
                                  &error));
  runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].seccomp == "unreadable: the workload is not recorded yet (0.1 s after its start)");
  // Not hex.
  REQUIRE(enforce::WriteStateFile(state.path, "run-" + id, head + "seccomp 06000000zz00ff7f\n",
                                  &error));
  runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].seccomp ==
        "unreadable: the run's record is malformed (" + state.path + "/run-" + id + ")");
  // A workload whose pid was reused: its start time is not the recorded one.
  REQUIRE(enforce::WriteStateFile(
      state.path, "run-" + id, head + "seccomp 060000000000ff7f\nworkload " + id + " 1\n", &error));
  runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].workload_pid == sleeper);
  CHECK(runs[0].seccomp == "unreadable: the workload (pid " + id + ") exited");
  // The sleeper as the workload itself, without filters: one fewer.
  REQUIRE(enforce::WriteStateFile(
      state.path, "run-" + id,
      head + "seccomp 060000000000ff7f\nworkload " + id + " " + StartTime(sleeper) + "\n", &error));
  runs = enforce::CheckRuns(state.path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].seccomp == "differs: 1 filter fewer than ward run installed: from index 0 on");
  kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  // The supervisor gone: not listed.
  CHECK(enforce::CheckRuns(state.path).empty());
}

}  // namespace ward::test
