// bench_run: start-up of /bin/true under `ward run` with every layer and
// under its peers. For each runner, the wall-clock time from fork() to
// waitpid() returning, of COUNT timed runs after WARMUP runs that are not
// counted; prints the median, min and max and the exact command line.
// Prints figures; asserts nothing (conventions.md #20).
//
//   bench_run [--runners bare,floor,ward,bwrap,firejail,firejail-noprofile,srt]
//             [--count N] [--warmup W] [--sequential]
//             [--ward PATH] [--policy-file FILE] [--policy NAME]
//             [--srt-prefix DIR] [--workspace DIR]
//
// Runners:
// - bare:     fork + execve of /bin/true.
// - floor:    run_floor (run_floor.cc): the kernel work of ward run's layers
//             for run_bench.ward and nothing else, in a small static
//             program; what no implementation of every layer can go under
//             on this machine. Root, after one `ward run` (its programs).
// - ward:     `ward run POLICY_FILE -- /bin/true`, POLICY_FILE being
//             tests/bench/testdata/run_bench.ward (cgroup with limits, eBPF
//             egress by address, Landlock, capabilities, no_new_privs,
//             rlimits, seccomp). Root.
// - bwrap:    bubblewrap: the root bound read-only, the workspace read-write,
//             a fresh /dev and /proc, every namespace unshared, every
//             capability dropped, --die-with-parent.
// - firejail: firejail's default profile (caps.drop all, nonewprivs, seccomp,
//             protocol filter, the disable-*.inc blacklists), named with
//             --profile=default because as root firejail would otherwise pick
//             server.profile; --net=none (an empty network namespace);
//             --quiet.
// - firejail-noprofile: `firejail --quiet --noprofile --net=none`: firejail's
//             namespaces and an empty network namespace without a profile (no
//             seccomp, no capability drop, no blacklists), the cheapest
//             firejail; shown to separate the profile's cost.
// - srt:      @anthropic-ai/sandbox-runtime's CLI run with node, with a
//             settings file allowing nothing beyond its defaults (no network,
//             no writes); on every run it starts its proxy and socat bridges,
//             scans the working directory with rg, and runs bubblewrap, its
//             seccomp helper and the command through bash.
// tests/bench/setup_run_peers.sh installs bwrap, firejail and srt (with a
// Node.js 22) on Debian 12. A runner whose tool is missing is reported and
// skipped; a runner whose command fails is reported with its output and
// dropped from the table, and the exit code is then 1.
//
// Every child runs with the workspace (default /tmp/ward-bench-run, created
// if missing, granted read-write by the policy) as its working directory:
// srt scans the working directory for files it must protect, and an empty
// directory keeps that scan out of the figures. Stdin is /dev/null; stdout
// and stderr go to a temporary file, read only when a run fails.
//
// "1st run ms" is the first run of each runner (a warm-up run unless
// --warmup 0). It shows what the warm-up hides: `ward run` fills caches keyed
// by the policy's hash (the compiled seccomp filter under
// /var/cache/ward/seccomp) that outlive the benchmark, so only the first run
// on a machine, or after the policy or ward changes, starts cold.
//
// The runs are interleaved by default: each round runs every runner once,
// the order rotated each round, so a change in the load of a shared machine
// falls on every runner alike. --sequential runs each runner's warm-up and
// timed runs back to back instead.
//
// Goal (the `ward run` issue): `ward run` within 5 ms of bare exec, every
// layer applied.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Runner {
  std::string name;
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::string missing;            // why the runner cannot run; empty if it can
  std::string failure;            // set when a run failed: the runner is dropped
  std::vector<double> ms;         // timed runs
  double first_ms = -1;           // the first run (a warm-up run unless --warmup 0)
};

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=/.,:@%") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + ShellQuote(a);
  return line;
}

bool IsExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The absolute path of NAME on $PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

std::string Absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) != nullptr) return buf;
  return path;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

struct Outcome {
  double ms = 0;
  bool ok = false;
  std::string error;
};

// fork, exec ARGV with stdin /dev/null and stdout and stderr into OUT_FD,
// wait; the time is from just before fork() to waitpid() returning.
Outcome RunOnce(const Runner& r, int out_fd, int null_fd) {
  std::vector<char*> argv;
  for (const std::string& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (ftruncate(out_fd, 0) != 0 || lseek(out_fd, 0, SEEK_SET) != 0) {
    return {0, false, std::string("cannot reset the output file: ") + std::strerror(errno)};
  }
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    execve(argv[0], argv.data(), environ);
    dprintf(2, "execve %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  if (pid < 0) return {0, false, std::string("fork: ") + std::strerror(errno)};
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const auto end = std::chrono::steady_clock::now();
  o.ms = std::chrono::duration<double, std::milli>(end - start).count();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    o.ok = true;
    return o;
  }
  o.error = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                              : "killed by signal " + std::to_string(WTERMSIG(status));
  char buf[4096];
  const ssize_t n = pread(out_fd, buf, sizeof buf - 1, 0);
  if (n > 0) {
    std::string out(buf, static_cast<size_t>(n));
    while (!out.empty() && out.back() == '\n') out.pop_back();
    o.error += "; output:\n" + out;
  }
  return o;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void Usage() {
  std::fprintf(
      stderr,
      "usage: bench_run [--runners bare,floor,ward,bwrap,firejail,firejail-noprofile,srt]\n"
      "                 [--count N] [--warmup W] [--sequential]\n"
      "                 [--ward PATH] [--policy-file FILE] [--policy NAME]\n"
      "                 [--srt-prefix DIR] [--workspace DIR]\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string runners_flag = "bare,floor,ward,bwrap,firejail,firejail-noprofile,srt";
  int count = 20, warmup = 3;
  bool sequential = false;
  std::string ward = WARD_BENCH_WARD_BIN;
  std::string policy_file = WARD_BENCH_RUN_POLICY;
  std::string policy_name;
  std::string srt_prefix = "/opt/ward-bench/srt";
  std::string workspace = "/tmp/ward-bench-run";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--sequential") {
      sequential = true;
      continue;
    }
    if (flag == "--help" || flag == "-h") {
      Usage();
      return 0;
    }
    if (i + 1 >= argc) {
      Usage();
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--runners") {
      runners_flag = value;
    } else if (flag == "--count") {
      count = std::atoi(value.c_str());
    } else if (flag == "--warmup") {
      warmup = std::atoi(value.c_str());
    } else if (flag == "--ward") {
      ward = value;
    } else if (flag == "--policy-file") {
      policy_file = value;
    } else if (flag == "--policy") {
      policy_name = value;
    } else if (flag == "--srt-prefix") {
      srt_prefix = value;
    } else if (flag == "--workspace") {
      workspace = value;
    } else {
      Usage();
      return 2;
    }
  }
  if (count < 1 || warmup < 0) {
    Usage();
    return 2;
  }

  // Paths are made absolute before the chdir into the workspace.
  ward = Absolute(ward);
  policy_file = Absolute(policy_file);
  srt_prefix = Absolute(srt_prefix);
  if (mkdir(workspace.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "bench_run: cannot create %s: %s\n", workspace.c_str(),
                 std::strerror(errno));
    return 1;
  }
  workspace = Absolute(workspace);

  std::vector<Runner> runners;
  std::stringstream names(runners_flag);
  std::string name;
  const char* const kSetup = "tests/bench/setup_run_peers.sh";
  while (std::getline(names, name, ',')) {
    Runner r;
    r.name = name;
    if (name == "bare") {
      r.argv = {"/bin/true"};
    } else if (name == "floor") {
      const std::string floor = WARD_BENCH_RUN_FLOOR_BIN;
      r.argv = {floor, "--workspace", workspace, "--", "/bin/true"};
      if (!IsExecutable(floor)) r.missing = "not built (" + floor + "; ninja -C BUILD run_floor)";
    } else if (name == "ward") {
      r.argv = {ward, "run", policy_file};
      if (!policy_name.empty()) {
        r.argv.push_back("--policy");
        r.argv.push_back(policy_name);
      }
      r.argv.push_back("--");
      r.argv.push_back("/bin/true");
      if (!IsExecutable(ward)) {
        r.missing = "not built (" + ward + "; ninja -C BUILD ward, or --ward PATH)";
      } else {
        // `ward help run` answers 0 only when the subcommand exists.
        std::string probe = ShellQuote(ward) + " help run >/dev/null 2>&1";
        if (std::system(probe.c_str()) != 0) {
          r.missing = "`ward run` is not in " + ward + " (pending)";
        }
      }
    } else if (name == "bwrap") {
      const std::string bwrap = FindOnPath("bwrap");
      r.argv = {bwrap.empty() ? "bwrap" : bwrap,
                "--ro-bind",
                "/",
                "/",
                "--bind",
                workspace,
                workspace,
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-all",
                "--cap-drop",
                "ALL",
                "--die-with-parent",
                "/bin/true"};
      if (bwrap.empty()) {
        r.missing = std::string("not installed (apt-get install bubblewrap, or ") + kSetup + ")";
      }
    } else if (name == "firejail") {
      const std::string firejail = FindOnPath("firejail");
      r.argv = {firejail.empty() ? "firejail" : firejail, "--quiet", "--profile=default",
                "--net=none", "/bin/true"};
      if (firejail.empty()) {
        r.missing = std::string("not installed (apt-get install firejail, or ") + kSetup + ")";
      }
    } else if (name == "firejail-noprofile") {
      const std::string firejail = FindOnPath("firejail");
      r.argv = {firejail.empty() ? "firejail" : firejail, "--quiet", "--noprofile", "--net=none",
                "/bin/true"};
      if (firejail.empty()) {
        r.missing = std::string("not installed (apt-get install firejail, or ") + kSetup + ")";
      }
    } else if (name == "srt") {
      const std::string node = srt_prefix + "/bin/node";
      const std::string cli = srt_prefix + "/bin/srt";
      const std::string settings = srt_prefix + "/srt-settings.json";
      r.argv = {node, cli, "--settings", settings, "/bin/true"};
      if (!IsExecutable(node) || access(cli.c_str(), R_OK) != 0 ||
          access(settings.c_str(), R_OK) != 0) {
        r.missing = "not installed in " + srt_prefix + " (" + kSetup + " " + srt_prefix + ")";
      } else {
        // srt on Linux runs bwrap, socat and rg from $PATH.
        for (const char* tool : {"bwrap", "socat", "rg"}) {
          if (FindOnPath(tool).empty()) {
            r.missing = std::string("srt needs ") + tool + ", not installed (" + kSetup + ")";
          }
        }
      }
    } else {
      std::fprintf(stderr,
                   "bench_run: unknown runner '%s' (bare, floor, ward, bwrap, firejail, "
                   "firejail-noprofile, srt)\n",
                   name.c_str());
      return 2;
    }
    runners.push_back(std::move(r));
  }

  if (chdir(workspace.c_str()) != 0) {
    std::fprintf(stderr, "bench_run: chdir %s: %s\n", workspace.c_str(), std::strerror(errno));
    return 1;
  }
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  const int out_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (null_fd < 0 || out_fd < 0) {
    std::fprintf(stderr, "bench_run: cannot open /dev/null or a file in /tmp: %s\n",
                 std::strerror(errno));
    return 1;
  }

  std::printf("bench_run: /bin/true, %d timed runs per runner after %d warm-up runs, %s\n", count,
              warmup, sequential ? "sequential" : "interleaved (rotated order each round)");
  std::printf("working directory: %s; uid %d\n", workspace.c_str(), static_cast<int>(geteuid()));
  std::printf("load average before: %s\n", LoadAverage().c_str());
  std::fflush(stdout);

  auto run = [&](Runner& r, bool timed) {
    if (!r.missing.empty() || !r.failure.empty()) return;
    Outcome o = RunOnce(r, out_fd, null_fd);
    if (!o.ok) {
      r.failure = o.error;
      return;
    }
    if (r.first_ms < 0) r.first_ms = o.ms;
    if (timed) r.ms.push_back(o.ms);
  };
  // The floor links ward run's cached programs: ward's first run (its
  // "1st run" figure, a warm-up) goes before anything else.
  for (Runner& f : runners) {
    if (f.name != "floor") continue;
    for (Runner& w : runners) {
      if (w.name == "ward") run(w, false);
    }
  }
  const size_t n = runners.size();
  if (sequential) {
    for (Runner& r : runners) {
      for (int i = 0; i < warmup; ++i) run(r, false);
      for (int i = 0; i < count; ++i) run(r, true);
    }
  } else {
    for (int round = 0; round < warmup + count; ++round) {
      for (size_t k = 0; k < n; ++k) run(runners[(round + k) % n], round >= warmup);
    }
  }

  std::printf("load average after:  %s\n\n", LoadAverage().c_str());
  double bare = -1;
  for (const Runner& r : runners) {
    if (r.name == "bare" && r.failure.empty() && !r.ms.empty()) bare = Median(r.ms);
  }
  std::printf("%-18s %10s %10s %10s %10s %10s  %s\n", "runner", "median ms", "min ms", "max ms",
              "over bare", "1st run ms", "command");
  for (const Runner& r : runners) {
    if (!r.missing.empty()) {
      std::printf("%-18s %s\n", r.name.c_str(), r.missing.c_str());
      continue;
    }
    if (!r.failure.empty()) {
      std::printf("%-18s FAILED: %s\n%-18s command: %s\n", r.name.c_str(), r.failure.c_str(), "",
                  CommandLine(r.argv).c_str());
      continue;
    }
    const double median = Median(r.ms);
    char over[32] = "";
    if (bare >= 0) std::snprintf(over, sizeof over, "%+.2f", median - bare);
    std::printf("%-18s %10.2f %10.2f %10.2f %10s %10.2f  %s\n", r.name.c_str(), median,
                *std::min_element(r.ms.begin(), r.ms.end()),
                *std::max_element(r.ms.begin(), r.ms.end()), over, r.first_ms,
                CommandLine(r.argv).c_str());
  }
  for (const Runner& r : runners) {
    if (r.name != "ward" || !r.failure.empty() || r.ms.empty() || bare < 0) continue;
    const double over = Median(r.ms) - bare;
    std::printf("\ngoal: `ward run` within 5 ms of bare exec: %s (%+.2f ms)\n",
                over <= 5 ? "met" : "missed", over);
  }
  // A runner that is not installed is not an error; one that failed is.
  for (const Runner& r : runners) {
    if (!r.failure.empty()) return 1;
  }
  return 0;
}
