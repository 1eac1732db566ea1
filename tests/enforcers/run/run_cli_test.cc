// [root] `ward run` as a user runs it: exit codes (the command's own, 128+N,
// and ward run's 124-127), what each layer leaves visible to the workload
// (cgroup namespace, no_new_privs, capabilities, seccomp, closed
// descriptors, environment), limits written into the run's cgroup, signal
// forwarding, --dry-run creating nothing, and clean-up: after the run, and
// on the next start after a supervisor that was killed.
#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "enforcers/linux/ebpf.h"
#include "enforcers/linux/enforcer.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "run_cli_test: needs root; skipped\n");
    std::exit(77);
  }
  return true;
}();

// A policy whose workload may run /usr/bin tools, read /proc (to look at
// itself) and write the scratch folder.
std::string Policy(const std::string& name, const std::string& extra_limits = "",
                   const std::string& process = "") {
  const std::string dir = ScratchDir();
  return R"(ward 1
import "std/linux.ward"
policy )" +
         name + R"( extends linux-base {
  filesystem {
    allow read "/proc"
    allow read write ")" +
         dir + R"("
  }
  network {
    allow tcp to 127.0.0.1 port 9
  }
  process {
    no_new_privileges
    capabilities drop all
    )" + process +
         R"(
  }
  limits {
    memory 256MiB
    pids 16
    open_files 128
    )" + extra_limits +
         R"(
  }
}
)";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What runs of policy `name` left: pins (run-<pid>-<name>), their
// cgroups, records. Each test case uses its own policy name, so runs of
// other programs on the host do not count.
std::vector<std::string> Leftovers(const std::string& name) {
  std::vector<std::string> out;
  std::error_code ec;
  std::string error;
  const std::string v2 = enforce::CgroupV2Mount(&error);
  const std::regex pin("run-([0-9]+)-" + name);
  std::smatch m;
  for (const auto& e : fs::directory_iterator("/sys/fs/bpf/ward", ec)) {
    const std::string n = e.path().filename().string();
    if (std::regex_match(n, m, pin)) out.push_back(e.path());
  }
  for (const auto& e : fs::directory_iterator("/run/ward/runs", ec)) {
    const std::string text = Slurp(e.path());
    if (std::regex_search(text, m, std::regex("\\nebpf run-([0-9]+)-" + name + "\\n"))) {
      out.push_back(e.path());
      if (fs::exists(v2 + "/ward/run-" + m[1].str())) out.push_back(v2 + "/ward/run-" + m[1].str());
    }
  }
  return out;
}

// Gone, or a zombie nobody reaped yet (an orphan's new parent may be slow).
bool Dead(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.compare(paren + 2, 1, "Z") == 0);
}

// Starts `ward run FILE -- sh -c SCRIPT` in the background and waits until
// the script has created `ready`; returns ward's pid, or -1 after 4 s.
pid_t StartWardRun(const std::string& file, const std::string& script, const std::string& ready) {
  fs::remove(ready);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string std_env = "WARD_STD=" WARD_SOURCE_DIR "/policies/std";
    putenv(const_cast<char*>(std_env.c_str()));
    execl(WARD_BINARY, WARD_BINARY, "run", file.c_str(), "--", "/usr/bin/sh", "-c", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(99);
  }
  for (int i = 0; pid > 0 && i < 200 && !fs::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid > 0 && !fs::exists(ready)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

}  // namespace

TEST_CASE("ward run: exit codes", "[root]") {
  const std::string file = WriteTemp("codes.ward", Policy("rt-codes"));
  CHECK(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  CHECK(Ward("run " + file + " -- /usr/bin/sh -c 'exit 3'", kStdEnv).status == 3);
  // Killed by SIGTERM: 128 + 15.
  CHECK(Ward("run " + file + " -- /usr/bin/sh -c 'kill -TERM $$'", kStdEnv).status == 143);
  Run r = Ward("run " + file + " -- /nonexistent", kStdEnv);
  CHECK(r.status == 127);
  CHECK(r.err == "ward run: /nonexistent: No such file or directory\n");
  r = Ward("run " + file + " -- /etc/passwd", kStdEnv);
  CHECK(r.status == 126);
  // Exists and is executable, but the policy grants no exec there: execve
  // is refused inside the sandbox.
  const std::string exe = ScratchDir() + "/true-copy";
  fs::copy_file("/usr/bin/true", exe, fs::copy_options::overwrite_existing);
  r = Ward("run " + file + " -- " + exe, kStdEnv);
  CHECK(r.status == 126);
  CHECK(r.err == "ward run: " + exe + ": Permission denied\n");
  // ward run's own failures: 125, and the command never ran.
  r = Ward("run " + file, kStdEnv);
  CHECK(r.status == 125);
  r = Ward("run " + file + " --no-such-flag -- /usr/bin/true", kStdEnv);
  CHECK(r.status == 125);
  const std::string marker = ScratchDir() + "/ran";
  const std::string disk = WriteTemp("disk.ward", Policy("rt-disk", "disk 1GiB"));
  r = Ward("run " + disk + " -- /usr/bin/touch " + marker, kStdEnv);
  CHECK(r.status == 125);
  CHECK(r.err.find("ward run: cgroup: disk: ward run has no scratch file system to bound") !=
        std::string::npos);
  CHECK(r.err.find("the command was not started") != std::string::npos);
  CHECK_FALSE(fs::exists(marker));
  CHECK(Leftovers("rt-codes").empty());
}

TEST_CASE("ward run: a policy without syscall rules is refused before the command starts",
          "[root]") {
  // Strictly meant, no syscalls section kills every syscall: the command
  // would die with SIGSYS (exit 159) and say nothing. ward run refuses.
  const std::string dir = ScratchDir();
  const std::string marker = dir + "/no-syscalls-ran";
  fs::remove(marker);
  const std::string bare = WriteTemp("bare.ward",
                                     "ward 1\npolicy rt-bare {\n  filesystem {\n"
                                     "    allow read exec \"/usr\", \"/lib\", "
                                     "\"/lib64\", \"/bin\"\n    allow read write \"" +
                                         dir + "\"\n  }\n}\n");
  Run r = Ward("run " + bare + " -- /usr/bin/touch " + marker, kStdEnv);
  CHECK(r.status == 125);
  CHECK(r.err ==
        "ward run: policy rt-bare has no syscalls section: every syscall would be killed; "
        "extend linux-base; the command was not started\n");
  CHECK_FALSE(fs::exists(marker));
  // --dry-run says the same, and starts nothing either.
  r = Ward("run " + bare + " --dry-run -- /usr/bin/touch " + marker, kStdEnv);
  CHECK(r.status == 125);
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(marker));
  // Positive control: the same rules on linux-base run the command.
  const std::string based = WriteTemp("based.ward",
                                      "ward 1\nimport \"std/linux.ward\"\npolicy rt-based extends "
                                      "linux-base {\n  filesystem {\n    allow read write \"" +
                                          dir + "\"\n  }\n}\n");
  r = Ward("run " + based + " -- /usr/bin/touch " + marker, kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(fs::exists(marker));
  CHECK(Leftovers("rt-bare").empty());
  CHECK(Leftovers("rt-based").empty());
}

TEST_CASE("ward run: what the workload sees of each layer", "[root]") {
  const std::string file =
      WriteTemp("layers.ward", Policy("rt-layers", "", "env allow [\"PATH\", \"LC_*\"]"));
  // A descriptor the caller leaves open without close-on-exec.
  const int fd = open("/dev/null", O_RDONLY);
  REQUIRE(fd >= 3);
  Run r =
      Ward("run " + file +
               " -- /usr/bin/sh -c 'cat /proc/self/cgroup; grep -E "
               "\"^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):\" /proc/self/status; "
               "ls /proc/self/fd; env | sort'",
           "LC_TEST=1 SECRET_TOKEN=x " + kStdEnv);
  close(fd);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // The cgroup namespace: the run's cgroup is the root.
  CHECK(r.out.find("0::/\n") != std::string::npos);
  CHECK(r.out.find("NoNewPrivs:\t1\n") != std::string::npos);
  CHECK(r.out.find("Seccomp:\t2\n") != std::string::npos);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    CHECK(r.out.find(std::string(set) + ":\t0000000000000000\n") != std::string::npos);
  }
  // Only 0-2 (and the one ls opens to list them) are open.
  CHECK(r.out.find("0\n1\n2\n3\n") != std::string::npos);
  CHECK(r.out.find("\n4\n") == std::string::npos);
  // env allow: PATH and LC_* only.
  CHECK(r.out.find("LC_TEST=1\n") != std::string::npos);
  CHECK(r.out.find("PATH=") != std::string::npos);
  CHECK(r.out.find("SECRET_TOKEN") == std::string::npos);
  CHECK(r.out.find("WARD_STD") == std::string::npos);
}

TEST_CASE("ward run: limits are written into the run's cgroup and hold", "[root]") {
  const std::string file = WriteTemp("limits.ward", Policy("rt-limits"));
  const std::string out = ScratchDir() + "/limits-out";
  // The pids limit: 16 processes; the 20 sleeps cannot all start.
  Run r = Ward(
      "run " + file + " -- /usr/bin/sh -c 'for i in $(seq 20); do /usr/bin/sleep 3 & done; wait'",
      kStdEnv);
  CHECK(r.err.find("Cannot fork") != std::string::npos);

  // While a run lives, its record names its cgroups; read the limits there.
  std::thread runner([&] { Ward("run " + file + " -- /usr/bin/sleep 3", kStdEnv); });
  std::string record;
  for (int i = 0; i < 100 && record.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/run/ward/runs", ec)) {
      const std::string text = Slurp(e.path());
      if (text.find("-rt-limits\n") != std::string::npos &&
          text.find("\nv2 ") != std::string::npos) {
        record = text;
      }
    }
  }
  REQUIRE_FALSE(record.empty());
  std::smatch m;
  REQUIRE(std::regex_search(record, m, std::regex("v2 (\\S+)")));
  // The command joins the cgroup once the programs are attached.
  std::string procs;
  for (int i = 0; i < 250 && procs.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    procs = Slurp(m[1].str() + "/cgroup.procs");
  }
  CHECK_FALSE(procs.empty());
  if (std::regex_search(record, m, std::regex("v1 memory (\\S+)"))) {
    CHECK(Slurp(m[1].str() + "/memory.limit_in_bytes") == "268435456\n");
  } else {
    REQUIRE(std::regex_search(record, m, std::regex("v2 (\\S+)")));
    CHECK(Slurp(m[1].str() + "/memory.max") == "268435456\n");
  }
  if (std::regex_search(record, m, std::regex("v1 pids (\\S+)"))) {
    CHECK(Slurp(m[1].str() + "/pids.max") == "16\n");
  }
  runner.join();
  CHECK(Leftovers("rt-limits").empty());
}

TEST_CASE("ward run: programs are loaded once per policy, or per run when names resolve",
          "[root]") {
  const std::string file = WriteTemp("cache.ward", Policy("rt-cache"));
  const auto caches = [] {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/sys/fs/bpf/ward", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("cache-", 0) != 0) continue;
      // The programs are pinned in the entry's object folder.
      for (const auto& o : fs::directory_iterator(e.path(), ec)) {
        if (fs::exists(o.path() / "prog_connect4")) out.push_back(name);
      }
    }
    return out;
  };
  // Entries idle for a while may be pruned by any run's start: compare
  // what this policy's runs add, not the whole listing.
  const auto added = [](const std::vector<std::string>& from, const std::vector<std::string>& to) {
    std::vector<std::string> out;
    for (const std::string& e : to) {
      if (std::find(from.begin(), from.end(), e) == from.end()) out.push_back(e);
    }
    return out;
  };
  const std::vector<std::string> start = caches();
  REQUIRE(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  const std::vector<std::string> before = caches();
  const std::vector<std::string> mine = added(start, before);
  CHECK(mine.size() == 1);
  REQUIRE(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  CHECK(added(before, caches()).empty());  // reused, not loaded again
  CHECK(added(caches(), mine).empty());    // and kept
  CHECK(Leftovers("rt-cache").empty());

  // A name to resolve: this run loads its own programs with the answers
  // (none here: the server refuses), and removes them at the end.
  const std::string named = WriteTemp(
      "named.ward",
      "import \"std/linux.ward\"\npolicy rt-named extends linux-base {\n  network {\n    allow tcp "
      "to \"example.invalid\" port 443\n  }\n}\n");
  Run r = Ward("run " + named + " --dns-server 127.0.0.1 -- /usr/bin/true", kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("warning[B3002]: \"example.invalid\" did not resolve") != std::string::npos);
  CHECK(added(before, caches()).empty());
  CHECK(Leftovers("rt-named").empty());
}

// The anchor links' (link id, cgroup id, attach type, program instructions)
// as the kernel reports them, by pin name; a missing pin is left out.
struct AnchorLink {
  uint32_t id = 0;
  uint64_t cgroup_id = 0;
  uint32_t attach_type = 0;
  std::vector<bpf_insn> insns;
};
std::map<std::string, AnchorLink> AnchorLinks() {
  std::map<std::string, AnchorLink> out;
  for (const auto& [name, type] : enforce::EbpfHookLinks()) {
    const int fd = bpf_obj_get((enforce::EbpfPinDir("anchor") + "/" + name).c_str());
    if (fd < 0) continue;
    bpf_link_info info{};
    uint32_t len = sizeof info;
    AnchorLink l;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == BPF_LINK_TYPE_CGROUP) {
      l.id = info.id;
      l.cgroup_id = info.cgroup.cgroup_id;
      l.attach_type = info.cgroup.attach_type;
      const int prog = bpf_prog_get_fd_by_id(info.prog_id);
      bpf_prog_info pinfo{};
      uint32_t plen = sizeof pinfo;
      if (prog >= 0 && bpf_obj_get_info_by_fd(prog, &pinfo, &plen) == 0) {
        l.insns.resize(pinfo.xlated_prog_len / sizeof(bpf_insn));
        bpf_prog_info again{};
        again.xlated_prog_len = pinfo.xlated_prog_len;
        again.xlated_prog_insns = reinterpret_cast<uint64_t>(l.insns.data());
        plen = sizeof again;
        if (bpf_obj_get_info_by_fd(prog, &again, &plen) != 0) l.insns.clear();
      }
      if (prog >= 0) close(prog);
    }
    close(fd);
    out[name] = l;
  }
  return out;
}

TEST_CASE("ward run: idle allow-all programs keep the kernel's hooks enabled between runs",
          "[root]") {
  std::string error;
  const std::string anchor_cgroup = enforce::CgroupV2Mount(&error) + "/ward/anchor";
  REQUIRE(error.empty());
  // From nothing: as on a host where ward run never ran.
  for (const auto& [name, type] : enforce::EbpfHookLinks()) {
    unlink((enforce::EbpfPinDir("anchor") + "/" + name).c_str());
  }
  rmdir(enforce::EbpfPinDir("anchor").c_str());
  rmdir(anchor_cgroup.c_str());
  REQUIRE(AnchorLinks().empty());

  const std::string file = WriteTemp("anchor.ward", Policy("rt-anchor"));
  Run r = Ward("run " + file + " -- /usr/bin/true", kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  struct stat st;
  REQUIRE(stat(anchor_cgroup.c_str(), &st) == 0);
  const std::map<std::string, AnchorLink> links = AnchorLinks();
  CHECK(links.size() == enforce::EbpfHookLinks().size());
  for (const auto& [name, type] : enforce::EbpfHookLinks()) {
    INFO(name);
    const auto it = links.find(name);
    REQUIRE(it != links.end());
    // On the empty cgroup, at its own hook, and deciding nothing: r0 = 1;
    // exit.
    CHECK(it->second.cgroup_id == st.st_ino);
    CHECK(it->second.attach_type == static_cast<uint32_t>(type));
    REQUIRE(it->second.insns.size() == 2);
    CHECK(it->second.insns[0].code == (BPF_ALU64 | BPF_MOV | BPF_K));
    CHECK(it->second.insns[0].dst_reg == BPF_REG_0);
    CHECK(it->second.insns[0].imm == 1);
    CHECK(it->second.insns[1].code == (BPF_JMP | BPF_EXIT));
  }
  CHECK(Slurp(anchor_cgroup + "/cgroup.procs").empty());
  // Made once: the next run finds them and leaves them as they are.
  REQUIRE(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  const std::map<std::string, AnchorLink> again = AnchorLinks();
  REQUIRE(again.size() == links.size());
  for (const auto& [name, l] : links) CHECK(again.at(name).id == l.id);
  CHECK(Leftovers("rt-anchor").empty());
}

TEST_CASE("ward run: WARD_RUN_TRACE prints each step, from the supervisor and the child",
          "[root]") {
  const std::string file = WriteTemp("trace.ward", Policy("rt-trace"));
  // Twice: the second run starts from the run cache, in the launcher.
  for (int round = 0; round < 2; ++round) {
    Run r = Ward("run " + file + " -- /usr/bin/echo hi", "WARD_RUN_TRACE=1 " + kStdEnv);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == "hi\n");
    std::set<std::string> pids;
    std::vector<std::string> steps;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      REQUIRE(std::regex_match(line, m, std::regex("trace ([0-9]+) [0-9]+\\.[0-9]{6} (.+)")));
      pids.insert(m[1]);
      steps.push_back(m[2]);
    }
    CHECK(pids.size() == 2);  // the supervisor and the child
    for (const char* step : {"cgroups created", "ebpf attached", "landlock prepared", "fork",
                             "child mounts", "child seccomp", "exec reported", "done"}) {
      CHECK(std::find(steps.begin(), steps.end(), step) != steps.end());
    }
    if (round == 1) CHECK(std::find(steps.begin(), steps.end(), "cache read") != steps.end());
  }
  CHECK(Leftovers("rt-trace").empty());
}

// Runs ARGV with a fresh pseudo-terminal as its controlling terminal and
// stdio; returns what it wrote there.
std::string OnTerminal(const std::vector<std::string>& argv) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return "no pty";
  const std::string slave = ptsname(master);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int fd = open(slave.c_str(), O_RDWR);  // the session's controlling terminal
    for (int i = 0; i < 3; ++i) dup2(fd, i);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::string std_env = "WARD_STD=" WARD_SOURCE_DIR "/policies/std";
    putenv(const_cast<char*>(std_env.c_str()));
    execv(args[0], args.data());
    _exit(99);
  }
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) out.append(buf, n);  // EIO at the end
  waitpid(pid, nullptr, 0);
  close(master);
  return out;
}

TEST_CASE("ward run: the workload cannot push input into the user's terminal", "[root]") {
  // TIOCSTI queues input on the terminal the workload shares with the
  // user's shell, which reads it once ward run has exited: outside the
  // sandbox. ward run refuses it whatever the policy allows.
  const std::string file = WriteTemp("tty.ward", Policy("rt-tty"));
  const std::string probe =
      "import errno, fcntl, termios\n"
      "try:\n"
      "    fcntl.ioctl(0, termios.TIOCSTI, b'#')\n"
      "    print('pushed')\n"
      "except OSError as e:\n"
      "    print('errno', errno.errorcode[e.errno])\n";
  // Positive control: the same process outside the sandbox pushes input.
  const std::string control = OnTerminal({"/usr/bin/python3", "-c", probe});
  REQUIRE(control.find("pushed") != std::string::npos);
  const std::string sandboxed =
      OnTerminal({WARD_BINARY, "run", file, "--", "/usr/bin/python3", "-c", probe});
  CHECK(sandboxed.find("errno EPERM") != std::string::npos);
  CHECK(sandboxed.find("pushed") == std::string::npos);
}

TEST_CASE("ward run: an existing path denied for writing in a writable tree is a read-only mount",
          "[root]") {
  // Landlock alone would leave `tree` partially granted: no new entry in it.
  const std::string tree = ScratchDir() + "/ro-tree";
  fs::remove_all(tree);
  fs::create_directories(tree + "/protected");
  std::ofstream(tree + "/config") << "original\n";
  const std::string file =
      WriteTemp("ro.ward",
                "ward 1\nimport \"std/linux.ward\"\npolicy rt-ro extends linux-base {\n"
                "  filesystem {\n    allow read write \"" +
                    tree +
                    "\"\n"
                    "    deny write \"" +
                    tree + "/protected\", \"" + tree + "/config\"\n  }\n}\n");
  const std::string script = "cd " + tree +
                             " && echo new > new-file && cat new-file"
                             "; echo x > protected/x"
                             "; echo x >> config"
                             "; mv protected p2"
                             "; rm config"
                             "; cat config";
  Run r = Ward("run " + file + " -- /usr/bin/sh -c '" + script + "'", kStdEnv);
  INFO(r.err);
  CHECK(r.out == "new\noriginal\n");
  CHECK(r.err.find("warning") == std::string::npos);  // exact: nothing lost
  CHECK(r.err.find("protected/x: Read-only file system") != std::string::npos);
  CHECK(r.err.find("cannot create config: Read-only file system") != std::string::npos);
  CHECK(r.err.find("mv: cannot move 'protected' to 'p2': Device or resource busy") !=
        std::string::npos);
  CHECK(r.err.find("rm: cannot remove 'config': Device or resource busy") != std::string::npos);
  CHECK(Slurp(tree + "/config") == "original\n");
  CHECK_FALSE(fs::exists(tree + "/protected/x"));
  // The mounts stayed in the run's namespace.
  CHECK(Slurp("/proc/self/mountinfo").find(tree) == std::string::npos);
  Run dry = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
  CHECK(dry.out.find("   read-only bind " + tree + "/config (exact deny write") !=
        std::string::npos);
  CHECK(dry.out.find("   grant " + tree + " read,write\n") != std::string::npos);
  // Positive control: the same script without the sandbox changes both.
  Run control = Shell("/usr/bin/sh -c '" + script + "'");
  CHECK(control.err.find("cat: config: No such file or directory") != std::string::npos);
  CHECK(fs::exists(tree + "/p2/x"));
  CHECK_FALSE(fs::exists(tree + "/config"));
}

TEST_CASE("ward run: user, kept capabilities and the cpu limits", "[root]") {
  // A non-root user keeps CAP_NET_BIND_SERVICE (bit 10) through execve as an
  // ambient capability, and nothing else.
  const std::string file = WriteTemp(
      "user.ward", Policy("rt-user", "cpus 0.5",
                          "user 65534:65534\n    capabilities keep [CAP_NET_BIND_SERVICE]"));
  Run r = Ward("run " + file +
                   " -- /usr/bin/sh -c 'id -u; id -g; id -G; grep -E "
                   "\"^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):\" /proc/self/status'",
               kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "65534\n65534\n65534\nCapInh:\t0000000000000400\nCapPrm:\t0000000000000400\n"
        "CapEff:\t0000000000000400\nCapBnd:\t0000000000000400\nCapAmb:\t0000000000000400\n");
  Run dry = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
  CHECK(dry.out.find("   limit cpus: cpu quota 50000 us per 100000 us\n") != std::string::npos);
  CHECK(dry.out.find("   capabilities: every one dropped from every set but "
                     "CAP_NET_BIND_SERVICE\n") != std::string::npos);
  CHECK(dry.out.find("   user 65534 group 65534\n") != std::string::npos);

  // cpu_time: the whole run's CPU, read from the cgroup, ends it with 124.
  const std::string busy = WriteTemp("busy.ward", Policy("rt-busy", "cpu_time 300ms"));
  const auto start = std::chrono::steady_clock::now();
  r = Ward("run " + busy + " -- /usr/bin/sh -c 'while :; do :; done'", kStdEnv);
  CHECK(r.status == 124);
  CHECK(r.err.find("ward run: cpu_time: 300 ms of CPU used; the workload was killed") !=
        std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(Leftovers("rt-busy").empty());
}

TEST_CASE("ward run: binds follow the ingress rules, ephemeral ones work", "[root]") {
  const std::string file =
      WriteTemp("bind.ward",
                "ward 1\nimport \"std/linux.ward\"\npolicy rt-bind extends linux-base {\n"
                "  filesystem {\n    allow read \"" +
                    ScratchDir() +
                    "\"\n  }\n"
                    "  network {\n    allow ingress tcp from 127.0.0.1 port 8080\n  }\n}\n");
  const std::string probe =
      "import errno, socket\n"
      "def bind(kind, port):\n"
      "    s = socket.socket(socket.AF_INET, kind)\n"
      "    try:\n"
      "        s.bind(('127.0.0.1', port))\n"
      "        return 'ok'\n"
      "    except OSError as e:\n"
      "        return errno.errorcode[e.errno]\n"
      "    finally:\n"
      "        s.close()\n"
      "print(bind(socket.SOCK_STREAM, 8080), bind(socket.SOCK_STREAM, 8081),\n"
      "      bind(socket.SOCK_DGRAM, 8080), bind(socket.SOCK_STREAM, 0), bind(socket.SOCK_DGRAM, "
      "0))\n";
  const std::string script = WriteTemp("bind.py", probe);
  // Positive control: every bind works outside the sandbox.
  CHECK(Shell("/usr/bin/python3 " + script).out == "ok ok ok ok ok\n");
  Run r = Ward("run " + file + " -- /usr/bin/python3 " + script, kStdEnv);
  INFO(r.err);
  // TCP 8080 is allowed from some address; 8081 and UDP 8080 from none.
  CHECK(r.out == "ok EPERM EPERM ok ok\n");
}

TEST_CASE("ward run: a direct conditional allow of socket leaves no group grant of it", "[root]") {
  // linux-base allows socket through @system-service; the child grants
  // AF_UNIX and AF_INET directly, so AF_INET6 goes to linux-base's default.
  auto policy = [&](const std::string& name, const std::string& syscalls) {
    return WriteTemp(name + ".ward",
                     "ward 1\nimport \"std/linux.ward\"\npolicy " + name +
                         " extends linux-base {\n  filesystem {\n    allow read \"" + ScratchDir() +
                         "\"\n  }\n" + syscalls + "}\n");
  };
  const std::string narrowed =
      policy("rt-rule1", "  syscalls {\n    allow socket if arg0 in [AF_UNIX, AF_INET]\n  }\n");
  const std::string base = policy("rt-rule1-base", "");
  const std::string script =
      WriteTemp("families.py",
                "import errno, socket\n"
                "def make(family):\n"
                "    try:\n"
                "        socket.socket(family, socket.SOCK_DGRAM).close()\n"
                "        return 'ok'\n"
                "    except OSError as e:\n"
                "        return errno.errorcode[e.errno]\n"
                "print(make(socket.AF_UNIX), make(socket.AF_INET), make(socket.AF_INET6))\n");
  CHECK(Shell("/usr/bin/python3 " + script).out == "ok ok ok\n");  // positive control
  Run b = Ward("run " + base + " -- /usr/bin/python3 " + script, kStdEnv);
  INFO(b.err);
  CHECK(b.out == "ok ok ok\n");
  Run r = Ward("run " + narrowed + " -- /usr/bin/python3 " + script, kStdEnv);
  INFO(r.err);
  CHECK(r.out == "ok ok EPERM\n");
}

TEST_CASE("ward run: timeout kills the run with 124", "[root]") {
  const std::string file = WriteTemp("timeout.ward", Policy("rt-timeout", "timeout 1s"));
  const auto start = std::chrono::steady_clock::now();
  Run r = Ward("run " + file + " -- /usr/bin/sleep 30", kStdEnv);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.status == 124);
  CHECK(r.err.find("ward run: timeout: 1000 ms elapsed; the workload was killed") !=
        std::string::npos);
  CHECK(took < std::chrono::seconds(10));
  CHECK(Leftovers("rt-timeout").empty());
}

TEST_CASE("ward run: signals sent to ward run reach the command", "[root]") {
  const std::string file = WriteTemp("signals.ward", Policy("rt-signals"));
  const std::string ready = ScratchDir() + "/trap-ready";
  const pid_t pid = StartWardRun(
      file, "trap 'exit 7' TERM; touch " + ready + "; while :; do sleep 0.1; done", ready);
  REQUIRE(pid > 0);
  // While it runs, `ward status` lists it.
  const std::string line = "ward run " + std::to_string(pid) + ": policy rt-signals, cgroup ";
  CHECK(Ward("status").out.find(line) != std::string::npos);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK(Leftovers("rt-signals").empty());
  CHECK(Ward("status").out.find(line) == std::string::npos);
}

TEST_CASE("ward run --dry-run prints every layer and creates nothing", "[root]") {
  const std::string file = WriteTemp("dry.ward", Policy("rt-dry"));
  Run r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  for (const char* line :
       {"1. cgroup ", "   limit memory: 268435456 bytes, no swap on top\n",
        "2. network (eBPF on the run's cgroup", "   egress allow tcp to 127.0.0.1 port 9\n",
        "3. filesystem: mount namespace, then landlock (ABI ",
        "   every mount read-only, but 1 writable grants bound read-write\n",
        "   hide /sys/fs/bpf (empty read-only tmpfs)\n", "   grant /proc read\n", "4. process\n",
        "   no_new_privileges\n", "   capabilities: every one dropped from every set\n",
        "5. seccomp: "}) {
    CHECK(r.out.find(line) != std::string::npos);
  }
  CHECK(r.out.find("   the host's network: netlink protocols but route refused (EPROTONOSUPPORT); "
                   "NETLINK_ROUTE (EPROTONOSUPPORT) and the interface ioctls (EPERM) too\n") !=
        std::string::npos);
  CHECK(Leftovers("rt-dry").empty());
  // With `allow netlink route`, the guard says so.
  const std::string granted = WriteTemp(
      "dry-nl.ward",
      "ward 1\nimport \"std/linux.ward\"\npolicy rt-dry-nl extends linux-base {\n  network {\n"
      "    allow netlink route\n  }\n}\n");
  Run g = Ward("run " + granted + " --dry-run -- /usr/bin/true", kStdEnv);
  INFO(g.err);
  CHECK(g.status == 0);
  CHECK(g.out.find("   the host's network: netlink protocols but route refused (EPROTONOSUPPORT); "
                   "NETLINK_ROUTE and the interface ioctls granted (allow netlink route)\n") !=
        std::string::npos);
}

// The line of a dry run that names where the front end's work came from.
std::string FrontEnd(const std::string& out) {
  const size_t at = out.find("front end: ");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

// The entry a dry run names ("" when the policy was compiled).
std::string CacheEntry(const std::string& out) {
  const std::string prefix = "front end: from the run cache ";
  const std::string line = FrontEnd(out);
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : "";
}

// A dry run's description without the lines that say where things came
// from, and without the run's id (ward run's pid).
std::string Layers(const std::string& out) {
  std::istringstream in(out);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("front end: ", 0) == 0 || line.rfind("5. seccomp: ", 0) == 0) continue;
    kept += std::regex_replace(line, std::regex("run-[0-9]+"), "run-ID") + "\n";
  }
  return kept;
}

TEST_CASE("ward run --partial: what Landlock cannot carve out of an allow is denied whole",
          "[root]") {
  // A deny with `**` inside an allow would need a walk of the whole tree.
  const std::string tree = ScratchDir() + "/partial-tree";
  fs::remove_all(tree);
  fs::create_directories(tree + "/sub");
  std::ofstream(tree + "/file") << "readable\n";
  std::ofstream(tree + "/sub/secret") << "secret\n";
  const std::string file =
      WriteTemp("partial.ward",
                "ward 1\nimport \"std/linux.ward\"\npolicy rt-partial extends linux-base {\n"
                "  filesystem {\n    allow read write \"" +
                    tree + "\"\n    deny read \"" + tree + "/**/secret\"\n  }\n}\n");
  const std::string cat = " -- /usr/bin/cat " + tree + "/file";
  // Positive control: readable without the sandbox.
  CHECK(Shell("/usr/bin/cat " + tree + "/file").out == "readable\n");
  // Without --partial: refused, nothing started (compiled, then again once
  // a --partial run has stored the policy in the run cache).
  auto refused = [&](const Run& r) {
    INFO(r.err);
    CHECK(r.status == 125);  // set-up failed
    CHECK(r.out.empty());
    CHECK(r.err.find("error[B3002]: deny read '" + tree + "/**/secret' inside allow '" + tree +
                     "'") != std::string::npos);
    CHECK(r.err.find("pass --partial to deny all of '" + tree + "'") != std::string::npos);
    CHECK(r.err.find("the command was not started") != std::string::npos);
  };
  refused(Ward("run " + file + cat, kStdEnv));
  // With it: the enclosing allow is not granted (towards deny), said as a
  // warning, and the run goes on. Compiled, then from the run cache.
  for (int i = 0; i < 2; ++i) {
    Run r = Ward("run " + file + " --partial" + cat, kStdEnv);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("warning[B3002]") != std::string::npos);
    CHECK(r.err.find("(--partial: '" + tree + "' is not granted)") != std::string::npos);
    CHECK(r.err.find(tree + "/file: Permission denied") != std::string::npos);
  }
  Run dry = Ward("run " + file + " --partial --dry-run" + cat, kStdEnv);
  CHECK(dry.status == 0);
  CHECK(FrontEnd(dry.out).rfind("front end: from the run cache ", 0) == 0);
  refused(Ward("run " + file + cat, kStdEnv));
  CHECK(Leftovers("rt-partial").empty());
}

TEST_CASE("ward run: the run cache serves only the policy it was made from", "[root]") {
  const std::string file = WriteTemp("runcache.ward", Policy("rt-runcache"));
  const std::string compiled_env = kStdEnv + " WARD_RUN_CACHE=0";
  // Nothing cached yet, or WARD_RUN_CACHE=0: compiled.
  Run r = Ward("run " + file + " --dry-run -- /usr/bin/true", compiled_env);
  REQUIRE(r.status == 0);
  CHECK(FrontEnd(r.out) == "front end: compiled now");
  const std::string layers = Layers(r.out);
  // A real run stores it; the next run, dry or not, reads it.
  REQUIRE(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  // (Any value but 0 keeps the cache; one variable, as above.)
  r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv + " WARD_RUN_CACHE=1");
  REQUIRE(r.status == 0);
  const std::string entry = CacheEntry(r.out);
  REQUIRE_FALSE(entry.empty());
  CHECK(r.out.find("5. seccomp: ") != std::string::npos);
  CHECK(r.out.find(", from the run cache\n") != std::string::npos);
  // Every layer exactly as compiled.
  CHECK(Layers(r.out) == layers);
  struct stat st;
  REQUIRE(stat(entry.c_str(), &st) == 0);
  CHECK(st.st_uid == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // The run from the cache enforces: the same denials as a compiled run.
  r = Ward("run " + file + " -- /usr/bin/cat /etc/shadow", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err.find("Permission denied") != std::string::npos);
  CHECK(Leftovers("rt-runcache").empty());

  SECTION("an edit of the policy is never missed") {
    std::string text = Policy("rt-runcache");
    text.replace(text.find("port 9"), 6, "port 10");
    std::ofstream(file, std::ios::trunc) << text;
    r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
    CHECK(FrontEnd(r.out) == "front end: compiled now");
    CHECK(r.out.find("egress allow tcp to 127.0.0.1 port 10\n") != std::string::npos);
  }
  SECTION("so is an edit of a file it imports") {
    const std::string dir = ScratchDir() + "/runcache-std";
    fs::remove_all(dir);
    fs::copy(WARD_SOURCE_DIR "/policies/std", dir, fs::copy_options::recursive);
    const std::string env = "WARD_STD=" + dir;
    REQUIRE(Ward("run " + file + " -- /usr/bin/true", env).status == 0);
    r = Ward("run " + file + " --dry-run -- /usr/bin/true", env);
    REQUIRE_FALSE(CacheEntry(r.out).empty());
    std::ofstream(dir + "/linux.ward", std::ios::app) << "\n// edited\n";
    r = Ward("run " + file + " --dry-run -- /usr/bin/true", env);
    CHECK(FrontEnd(r.out) == "front end: compiled now");
    fs::remove_all(dir);
  }
  SECTION("an entry others may write is ignored") {
    chmod(entry.c_str(), 0644);
    r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
    CHECK(FrontEnd(r.out) == "front end: compiled now");
  }
  SECTION("a damaged entry is ignored") {
    std::string bytes = Slurp(entry);
    REQUIRE(bytes.size() > 64);
    auto compiled = [&](const std::string& damaged) {
      std::ofstream(entry, std::ios::trunc | std::ios::binary) << damaged;
      chmod(entry.c_str(), 0600);
      // (As many variables as `layers`'s run had.)
      r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv + " WARD_RUN_CACHE=1");
      CHECK(r.status == 0);
      return FrontEnd(r.out) == "front end: compiled now" && Layers(r.out) == layers;
    };
    // Cut short, by a byte or to its first bytes, and bytes changed all over.
    CHECK(compiled(bytes.substr(0, bytes.size() - 1)));
    CHECK(compiled(bytes.substr(0, 40)));
    std::string garbage = bytes;
    for (size_t i = 16; i < garbage.size(); i += 7)
      garbage[i] = static_cast<char>(garbage[i] ^ 0x5a);
    CHECK(compiled(garbage));
  }
  SECTION("an entry under another entry's name is ignored") {
    // Another policy's entry planted where this one's belongs: its key
    // does not match.
    const std::string other = WriteTemp("runcache-other.ward", Policy("rt-runcache-other"));
    REQUIRE(Ward("run " + other + " -- /usr/bin/true", kStdEnv).status == 0);
    r = Ward("run " + other + " --dry-run -- /usr/bin/true", kStdEnv);
    const std::string other_entry = CacheEntry(r.out);
    REQUIRE_FALSE(other_entry.empty());
    fs::copy_file(other_entry, entry, fs::copy_options::overwrite_existing);
    r = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
    CHECK(FrontEnd(r.out) == "front end: compiled now");
    CHECK(r.out.find("ward run: policy rt-runcache,") != std::string::npos);
    fs::remove(other_entry);
  }
  SECTION("a policy with a warning is not stored, so its runs keep printing it") {
    const std::string warned = WriteTemp(
        "runcache-warned.ward",
        "import \"std/linux.ward\"\npolicy rt-runcache-warned extends linux-base {\n  network {\n"
        "    allow tcp to 127.0.0.1/8 port 9\n  }\n}\n");  // host bits set: a warning
    Run first = Ward("run " + warned + " -- /usr/bin/true", kStdEnv);
    REQUIRE(first.status == 0);
    REQUIRE(first.err.find("warning") != std::string::npos);
    r = Ward("run " + warned + " -- /usr/bin/true", kStdEnv);
    CHECK(r.err == first.err);
    r = Ward("run " + warned + " --dry-run -- /usr/bin/true", kStdEnv);
    CHECK(FrontEnd(r.out) == "front end: compiled now");
  }
  fs::remove(entry);
}

TEST_CASE("ward run: a killed supervisor's run is cleaned up by the next start", "[root]") {
  const std::string file = WriteTemp("stale.ward", Policy("rt-stale"));
  const std::string ready = ScratchDir() + "/stale-ready";
  // A grandchild that outlives the command (setsid: not in its group).
  const pid_t pid = StartWardRun(
      file, "/usr/bin/setsid /usr/bin/sleep 60 & touch " + ready + "; /usr/bin/sleep 60", ready);
  REQUIRE(pid > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  // The command died with its supervisor (PDEATHSIG); the grandchild is
  // still there, in the run's cgroup, still under the pinned programs.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::vector<std::string> left = Leftovers("rt-stale");
  CHECK_FALSE(left.empty());
  std::string error;
  const std::string cgroup = enforce::CgroupV2Mount(&error) + "/ward/run-" + std::to_string(pid);
  const std::string procs = Slurp(cgroup + "/cgroup.procs");
  CHECK_FALSE(procs.empty());
  // The next run cleans up.
  CHECK(Ward("run " + file + " -- /usr/bin/true", kStdEnv).status == 0);
  CHECK(Leftovers("rt-stale").empty());
  CHECK_FALSE(fs::exists(cgroup));
  const pid_t grandchild = std::atoi(procs.c_str());
  for (int i = 0; i < 100 && !Dead(grandchild); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(Dead(grandchild));
}

}  // namespace ward::test
