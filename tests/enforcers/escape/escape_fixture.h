// [root] The environment of the escape tests (escape_test.cc): a temporary
// tree with a workspace, a secret and a planting ground; the policies of
// testdata/escape.ward.in filled in with its paths; a fresh network
// namespace with the servers the probes talk to; a cgroup to escape into;
// and the runs of escape_probe alone (the positive control) and under
// `ward run`, each reduced to one comparable line. Everything is removed
// at exit, ward run's caches of this run's policies included.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace ward::test {

inline constexpr uint16_t kTcpGranted = 7401;
inline constexpr uint16_t kTcpOther = 7402;
inline constexpr uint16_t kUdpGranted = 7403;
inline constexpr uint16_t kUdpOther = 7404;

// Where ward run caches compiled filters and loaded programs.
inline const char* const kSeccompCache = "/var/cache/ward/seccomp";
inline const char* const kBpfPins = "/sys/fs/bpf/ward";

std::string Slurp(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
// The entries of a directory, by path; empty when it cannot be read.
std::set<std::string> Listing(const std::string& dir);

struct Run {
  std::string command;
  int code = -1;   // exit status, when it exited
  int signal = 0;  // the signal that killed it
  bool timed_out = false;
  std::string out, err;
};

struct SpawnOptions {
  // Written to the probe's stdin once it printed `ready` (see escape_probe).
  std::function<std::string()> answer;
  int leak_fd = -1;  // handed to the child as fd 5, without O_CLOEXEC
  // The child's stdin: a new pseudo-terminal, its controlling terminal.
  bool terminal = false;
  std::string cwd;
};

// Runs argv[0] with argv, stdout and stderr captured apart; killed after 30 s.
Run Spawn(const std::vector<std::string>& argv, const SpawnOptions& o = {});

// The outcome in one comparable line: the probe's own line (`-` when it
// printed none; a `ready` prompt is left out) and how the process ended:
// "errno EACCES, exit 1", "-, exit 159", "ok, signal SYS".
std::string Outcome(const Run& r);

inline const std::string kOk = "ok, exit 0";
inline std::string Errno(const std::string& name) { return "errno " + name + ", exit 1"; }
// A seccomp kill under ward run: 128+SIGSYS.
inline const std::string kSigsysWard = "-, exit " + std::to_string(128 + SIGSYS);

#define CHECK_OUTCOME(run, expected)                           \
  do {                                                         \
    const Run& r_ = (run);                                     \
    INFO("command: " << r_.command << "\nstderr: " << r_.err); \
    CHECK(Outcome(r_) == (expected));                          \
  } while (false)

// The seccomp filter ward run caches for a policy of `file`, from
// --dry-run ("" when none is cached).
std::string CachedFilter(const std::string& file, const std::string& policy);

// The run cache's entry for a policy of `file`, from --dry-run ("" when the
// policy is compiled on each run).
std::string RunCacheEntry(const std::string& file, const std::string& policy);

// Runs `run`, then removes what it left in ward run's caches (the files and
// pins new since it started): for runs whose cache names no dry run shows.
template <typename F>
Run ForgettingCaches(F run) {
  const std::set<std::string> seccomp = Listing(kSeccompCache), pins = Listing(kBpfPins);
  Run r = run();
  std::error_code ec;
  for (const std::string& f : Listing(kSeccompCache)) {
    if (!seccomp.count(f)) std::filesystem::remove(f, ec);
  }
  for (const std::string& p : Listing(kBpfPins)) {
    if (!pins.count(p) && std::filesystem::path(p).filename().string().rfind("cache-", 0) == 0) {
      std::filesystem::remove_all(p, ec);
    }
  }
  return r;
}

// One temporary tree, one network namespace with its servers, one cgroup
// to escape into; removed at exit.
class Env {
 public:
  Env();  // creates everything; REQUIREs each step
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The files the cases read and write, as the test created them.
  void Reset() const;

  std::string Path(const std::string& rel) const { return root_ + rel; }
  std::string secret() const { return Path("/home/.ssh/id_ed25519"); }
  const std::string& policy() const { return policy_; }
  const std::string& cgroup() const { return cgroup_; }
  const std::string& netns() const { return netns_; }
  std::string Abstract(const std::string& name) const { return abstract_prefix_ + name; }

  // The probe alone (the positive control), in the namespace, in the
  // workspace (open_by_handle_at's mount).
  Run Alone(const std::vector<std::string>& args, const SpawnOptions& o = {}) const;
  // The probe under `ward run --policy NAME`, likewise.
  Run Warded(const std::string& policy, const std::vector<std::string>& args,
             const SpawnOptions& o = {}) const;

 private:
  Run InWorkspace(std::vector<std::string> argv, const std::vector<std::string>& args,
                  SpawnOptions o) const;

  std::string root_, probe_, policy_, abstract_prefix_, netns_name_, netns_, cgroup_;
  pid_t server_ = -1;
};

// The one environment of the test program, made on first use.
Env& E();

}  // namespace ward::test
