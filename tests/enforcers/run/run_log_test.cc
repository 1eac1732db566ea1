// [root] `ward run --log`, the SIGSYS explanation, the DNS hint and `ward
// status --follow` for runs, on the real kernel through the built `ward`:
// each denial's JSON line parsed and checked field by field, next to a
// positive control (the same command allowed: no line). Network cases run
// ward inside a fresh network namespace (`ip netns exec`), against a server
// the test starts there on loopback.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "enforcers/linux/enforcer.h"
#include "enforcers/linux/kernel_audit.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

// C locale: the workload then reads no locale files (linux-base grants
// none, and each read would be a denial of its own).
const std::string kEnv = "LC_ALL=C " + kStdEnv;

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "run_log_test: needs root; skipped\n");
    std::exit(77);
  }
  return true;
}();

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The JSON lines of a log file.
std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(Slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// FILE:LINE:COL of the first occurrence of `needle` in `text` (the policy's
// source), as explain cites it.
std::string At(const std::string& file, const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  const size_t line_start = text.rfind('\n', at) + 1;
  const size_t line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1;
  return file + ":" + std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// The note ward run --log prints when no audit record reaches it: in a
// network namespace other than the initial one when pid 1's cannot be
// entered (the kernel multicasts audit records only there). Whether it can
// depends on the machine, so tests in a namespace take the note out.
std::string WithoutAuditNote(const std::string& err) {
  const std::string note = "ward run: log: seccomp and file denials are missing: ";
  std::string out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(note, 0) != 0) out += line + "\n";
  }
  return out;
}

uint32_t AuditEnabled() {
  enforce::AuditStatus s;
  std::string error;
  REQUIRE(enforce::AuditGetStatus(&s, &error));
  return s.enabled;
}

// What runs of policy `name` left: pins, records, cgroups.
std::vector<std::string> Leftovers(const std::string& name) {
  std::vector<std::string> out;
  std::error_code ec;
  std::string error;
  const std::string v2 = enforce::CgroupV2Mount(&error);
  const std::regex pin("run-([0-9]+)-" + name);
  for (const auto& e : fs::directory_iterator("/sys/fs/bpf/ward", ec)) {
    if (std::regex_match(e.path().filename().string(), pin)) out.push_back(e.path());
  }
  std::smatch m;
  for (const auto& e : fs::directory_iterator("/run/ward/runs", ec)) {
    const std::string text = Slurp(e.path());
    if (std::regex_search(text, m, std::regex("\\nebpf run-([0-9]+)-" + name + "\\n"))) {
      out.push_back(e.path());
      if (fs::exists(v2 + "/ward/run-" + m[1].str())) out.push_back(v2 + "/ward/run-" + m[1].str());
    }
  }
  return out;
}

// A fresh network namespace with loopback up and a TCP server on
// 127.0.0.1:8080 in it; deleted (and the server killed) at the end.
struct NetNs {
  std::string name = "ward-log-" + std::to_string(getpid());
  pid_t server = -1;
  NetNs() {
    REQUIRE(Shell("ip netns add " + name).status == 0);
    REQUIRE(Shell("ip netns exec " + name + " ip link set lo up").status == 0);
    server = fork();
    if (server == 0) {
      const std::string net = "--net=/run/netns/" + name;
      execl("/usr/bin/nsenter", "nsenter", net.c_str(), "/usr/bin/python3", "-c",
            "import socket\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', 8080))\n"
            "s.listen(16)\n"
            "while True:\n"
            "    c, _ = s.accept()\n"
            "    c.close()\n",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 50; ++i) {
      if (Shell(Exec() + "ss -ltn | grep -q 127.0.0.1:8080").status == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL("the test server did not start");
  }
  ~NetNs() {
    if (server > 0) {
      kill(server, SIGKILL);
      waitpid(server, nullptr, 0);
    }
    Shell("ip netns pids " + name + " | xargs -r kill -9");
    Shell("ip netns del " + name);
  }
  // nsenter, not `ip netns exec`, which remounts /sys (and loses the
  // cgroup2 mount ward run needs).
  std::string Exec() const { return "nsenter --net=/run/netns/" + name + " env " + kEnv + " "; }
};

// A connect to the test's server; the process stays 0.5 s after a refusal,
// so that its executable can still be read when its event is (a process
// gone by then is reported with an empty "exe").
const char* kConnect =
    "/usr/bin/python3 -c 'import socket,sys,time\n"
    "s = socket.socket()\n"
    "try:\n"
    "    s.connect((\"127.0.0.1\", 8080)); print(\"connected\")\n"
    "except OSError as e:\n"
    "    print(e.strerror); time.sleep(0.5); sys.exit(1)'";

TEST_CASE("ward run --log: a syscall refused with an errno, and the positive control", "[root]") {
  const std::string dir = ScratchDir();
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-errno extends linux-base {
  syscalls {
    errno EACCES uname
  }
}
)";
  const std::string file = WriteTemp("rl-errno.ward", text);
  const std::string log = dir + "/errno.log";
  Run r = Ward("run --log " + log + " " + file + " -- /usr/bin/uname", kEnv);
  CHECK(r.status == 1);
  CHECK(r.err ==
        "/usr/bin/uname: cannot get system name: Permission denied\nward run: log: 1 denial\n");
  const std::vector<nlohmann::json> lines = Lines(log);
  REQUIRE(lines.size() == 1);
  const nlohmann::json& d = lines[0];
  CHECK(d["version"] == 1);
  CHECK(std::regex_match(d["time"].get<std::string>(),
                         std::regex("20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z")));
  CHECK(d["pid"].get<int>() > 0);
  CHECK(d["exe"] == "/usr/bin/uname");
  CHECK(d["layer"] == "seccomp");
  CHECK(d["what"] == "syscall");
  CHECK(d["syscall"] == "uname");
  CHECK(d["nr"] == 63);
  CHECK(d["arch"] == "x86_64");
  CHECK(d["action"] == "errno EACCES");
  CHECK(d["rule"] == At(file, text, "errno EACCES uname"));
  CHECK(d["rule_text"] == "errno EACCES uname");
  // Same command, nothing refused: no line, and the count says so.
  const std::string quiet = dir + "/control.log";
  r = Ward("run --log " + quiet + " " + file + " -- /usr/bin/true", kEnv);
  CHECK(r.status == 0);
  CHECK(r.err == "ward run: log: 0 denials\n");
  CHECK(Slurp(quiet).empty());
  // On a terminal, a short line per denial (--quiet: none): ward's stderr
  // on a pseudo-terminal, read to the end.
  const std::string pty = WriteTemp("pty.py", R"(import os, subprocess, sys
master, slave = os.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=slave)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
p.wait()
sys.stdout.write(out.decode())
)");
  r = Shell("env " + kEnv + " /usr/bin/python3 " + pty + " " + WARD_BINARY + " run --log " + quiet +
            " " + file + " -- /usr/bin/uname");
  // The command's line and ward run's come as they happen, in either
  // order, and the command writes its line in pieces (its name, then the
  // message: ward run's line can land between them, as it did in CI); the
  // command's own (written by a process the pseudo-terminal may outlive
  // the reading of) is not what is checked here.
  std::string seen = std::regex_replace(r.out, std::regex("pid [0-9]+"), "pid N");
  const std::string own = "/usr/bin/uname: cannot get system name: Permission denied\r\n";
  INFO(r.out);
  if (seen.find(own) != std::string::npos) {
    seen.erase(seen.find(own), own.size());
  } else {
    for (const std::string piece :
         {"/usr/bin/uname: ", "cannot get system name: Permission denied\r\n"}) {
      if (seen.find(piece) != std::string::npos) seen.erase(seen.find(piece), piece.size());
    }
  }
  CHECK(seen == "ward run: denied syscall uname (seccomp, errno EACCES) pid N uname: " +
                    At(file, text, "errno EACCES uname") +
                    " (errno EACCES uname)\r\nward run: log: 1 denial\r\n");
  r = Shell("env " + kEnv + " /usr/bin/python3 " + pty + " " + WARD_BINARY + " run --quiet --log " +
            quiet + " " + file + " -- /usr/bin/uname");
  CHECK((r.out.empty() || r.out == own));
  // `-`: standard output, the command's output beside it.
  r = Ward("run --quiet --log - " + file + " -- /usr/bin/uname", kEnv);
  CHECK(r.status == 1);
  CHECK(r.err == "/usr/bin/uname: cannot get system name: Permission denied\n");
  REQUIRE(r.out.find("\"syscall\":\"uname\"") != std::string::npos);
  CHECK(nlohmann::json::parse(r.out)["rule"] == At(file, text, "errno EACCES uname"));
  CHECK(Leftovers("rl-errno").empty());
}

TEST_CASE("ward run: a command killed by seccomp is told which syscall and rule", "[root]") {
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-kill extends linux-base {
  syscalls {
    kill uname
  }
}
)";
  const std::string file = WriteTemp("rl-kill.ward", text);
  const std::string said =
      "ward run: the command was killed by seccomp (SIGSYS) at uname (63 on "
      "x86_64): " +
      At(file, text, "kill uname") +
      " (kill uname); to allow it, change that rule to `allow uname`\n";
  Run r = Ward("run " + file + " -- /usr/bin/uname", kEnv);
  CHECK(r.status == 159);
  CHECK(r.err == said);
  // The second run comes from the run cache (no syscall rules in its IR):
  // the same words.
  r = Ward("run " + file + " -- /usr/bin/uname", kEnv + " WARD_RUN_TRACE=1");
  CHECK(r.status == 159);
  CHECK(r.err.find("trace ") != std::string::npos);
  CHECK(r.err.find(" key\n") != std::string::npos);  // the cache's path
  const size_t at = r.err.find("ward run:");
  REQUIRE(at != std::string::npos);
  CHECK(r.err.substr(at, r.err.find('\n', at) + 1 - at) == said);
  // The default decided: an explicit `default kill`.
  const std::string strict_text = R"(ward 1
policy rl-kill-default {
  filesystem {
    allow read exec "/usr", "/lib", "/lib64", "/etc/ld.so.cache"
  }
  syscalls {
    default kill
    allow @system-service
  }
}
)";
  const std::string strict = WriteTemp("rl-kill-default.ward", strict_text);
  r = Ward("run " + strict +
               " -- /usr/bin/python3 -c 'import ctypes; "
               "ctypes.CDLL(None).syscall(170, b\"x\", 1)'",
           kEnv);
  CHECK(r.status == 159);
  CHECK(r.err ==
        "ward run: the command was killed by seccomp (SIGSYS) at sethostname (170 on x86_64): no "
        "rule names it, the policy's default decided (" +
            At(strict, strict_text, "default kill") +
            ": default kill); to allow it, add `allow sethostname` to the policy's syscalls "
            "section, or `extends linux-base`\n");
  // Positive control: the same command allowed exits 0 and says nothing.
  r = Ward("run " + strict + " -- /usr/bin/python3 -c 'pass'", kEnv);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(Leftovers("rl-kill").empty());
  CHECK(Leftovers("rl-kill-default").empty());
}

TEST_CASE("ward run --log: a file Landlock refuses, with audit back as it was", "[root]") {
  const uint32_t before = AuditEnabled();
  const std::string dir = ScratchDir();
  const std::string secret = dir + "/secret";
  const std::string open_file = dir + "/open";
  std::ofstream(secret) << "s\n";
  std::ofstream(open_file) << "o\n";
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-file extends linux-base {
  filesystem {
    allow read ")" + open_file +
                           R"("
  }
}
)";
  const std::string file = WriteTemp("rl-file.ward", text);
  const std::string log = dir + "/file.log";
  Run r = Ward("run --log " + log + " " + file + " -- /usr/bin/cat " + secret, kEnv);
  CHECK(r.status == 1);
  CHECK(r.err == "/usr/bin/cat: " + secret + ": Permission denied\nward run: log: 1 denial\n");
  const std::vector<nlohmann::json> lines = Lines(log);
  REQUIRE(lines.size() == 1);
  const nlohmann::json& d = lines[0];
  CHECK(d["version"] == 1);
  CHECK(d["exe"] == "/usr/bin/cat");
  CHECK(d["layer"] == "landlock");
  CHECK(d["what"] == "file");
  CHECK(d["syscall"] == "openat");
  CHECK(d["nr"] == 257);
  CHECK(d["action"] == "deny");
  CHECK(d["path"] == secret);
  CHECK(d["access"] == "read");
  CHECK(d["rule"] == "default");
  CHECK(AuditEnabled() == before);
  // Positive control: the granted file reads, no line.
  r = Ward("run --log " + log + " " + file + " -- /usr/bin/cat " + open_file, kEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "o\n");
  CHECK(r.err == "ward run: log: 0 denials\n");
  CHECK(Slurp(log).empty());
  CHECK(AuditEnabled() == before);
  CHECK(Leftovers("rl-file").empty());
}

TEST_CASE("ward run --log: a connection the eBPF layer refuses, by rule and by default", "[root]") {
  NetNs ns;
  const std::string dir = ScratchDir();
  // Port 8080 is granted to some address, so Landlock lets the connect
  // through to the eBPF layer, which decides by address.
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-net extends linux-base {
  network {
    allow tcp to 10.9.9.9, 127.0.0.1 port 8080
    deny tcp to 127.0.0.1 port 8080
  }
}
)";
  const std::string file = WriteTemp("rl-net.ward", text);
  const std::string log = dir + "/net.log";
  Run r = Ward("run --log " + log + " " + file + " -- " + kConnect, ns.Exec());
  CHECK(r.status == 1);
  CHECK(r.out == "Operation not permitted\n");
  std::vector<nlohmann::json> lines = Lines(log);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["layer"] == "network");
  CHECK(lines[0]["what"] == "connect");
  CHECK(lines[0]["exe"] == "/usr/bin/python3.11");
  CHECK(lines[0]["protocol"] == "tcp");
  CHECK(lines[0]["address"] == "127.0.0.1");
  CHECK(lines[0]["port"] == 8080);
  CHECK(lines[0]["action"] == "deny");
  CHECK(lines[0]["rule"] == At(file, text, "deny tcp to 127.0.0.1 port 8080"));
  CHECK(lines[0]["rule_text"] == "deny tcp to 127.0.0.1 port 8080");

  const std::string by_default_text = R"(ward 1
import "std/linux.ward"
policy rl-net-default extends linux-base {
  network {
    allow tcp to 10.9.9.9 port 8080
  }
}
)";
  const std::string by_default = WriteTemp("rl-net-default.ward", by_default_text);
  r = Ward("run --log " + log + " " + by_default + " -- " + kConnect, ns.Exec());
  CHECK(r.status == 1);
  CHECK(r.out == "Operation not permitted\n");
  lines = Lines(log);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["layer"] == "network");
  CHECK(lines[0]["address"] == "127.0.0.1");
  CHECK(lines[0]["port"] == 8080);
  CHECK(lines[0]["rule"] == "default");

  // Positive control: allowed, connected, no line.
  const std::string open_text = R"(ward 1
import "std/linux.ward"
policy rl-net-open extends linux-base {
  network {
    allow tcp to 127.0.0.1 port 8080
  }
}
)";
  const std::string open = WriteTemp("rl-net-open.ward", open_text);
  r = Ward("run --log " + log + " " + open + " -- " + kConnect, ns.Exec());
  CHECK(r.status == 0);
  CHECK(r.out == "connected\n");
  CHECK(Slurp(log).empty());
  CHECK(Leftovers("rl-net").empty());
  CHECK(Leftovers("rl-net-default").empty());
  CHECK(Leftovers("rl-net-open").empty());
}

TEST_CASE("ward status --follow shows the denials of a run in progress", "[root]") {
  NetNs ns;
  const std::string dir = ScratchDir();
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-follow extends linux-base {
  network {
    allow tcp to 10.9.9.9, 127.0.0.1 port 8080
    deny tcp to 127.0.0.1 port 8080
  }
}
)";
  const std::string file = WriteTemp("rl-follow.ward", text);
  const std::string follow_out = dir + "/follow.out";
  // The run first (status lists runs in progress when it starts), its
  // command connecting every 0.2 s for 6 s.
  const std::string loop =
      "/usr/bin/python3 -c 'import socket,time\n"
      "for i in range(30):\n"
      "    try: socket.create_connection((\"127.0.0.1\", 8080))\n"
      "    except OSError: pass\n"
      "    time.sleep(0.2)'";
  const pid_t run = fork();
  if (run == 0) {
    execl("/bin/sh", "sh", "-c",
          (ns.Exec() + " " + WARD_BINARY + " run " + file + " -- " + loop).c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until the run's links are pinned (its programs loaded and attached).
  auto pinned = [] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/sys/fs/bpf/ward", ec)) {
      const std::string n = e.path().filename().string();
      if (std::regex_match(n, std::regex("run-[0-9]+-rl-follow")) && !fs::is_empty(e.path())) {
        return true;
      }
    }
    return false;
  };
  for (int i = 0; i < 100 && !pinned(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const pid_t follow = fork();
  if (follow == 0) {
    const int fd = open(follow_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    execl(WARD_BINARY, "ward", "status", "--follow", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(run, &status, 0);
  kill(follow, SIGINT);
  waitpid(follow, nullptr, 0);
  const std::string out = Slurp(follow_out);
  const std::regex line(
      "ward run [0-9]+ \\(policy rl-follow\\): connect to 127\\.0\\.0\\.1:8080 denied \\(rule 3: "
      "deny tcp to 127\\.0\\.0\\.1 port 8080\\)\\n");
  INFO(out);
  CHECK(std::regex_search(out, line));
  CHECK(Leftovers("rl-follow").empty());
}

TEST_CASE("ward run: names that cannot resolve are explained once", "[root]") {
  NetNs ns;
  // A resolver of the test's own, reached by nothing: a resolv.conf bound
  // over /etc/resolv.conf in a private mount namespace.
  const std::string resolv = ScratchDir() + "/resolv.conf";
  std::ofstream(resolv) << "nameserver 10.9.9.53\n";
  auto in_ns = [&](const std::string& args) {
    return Shell("nsenter --net=/run/netns/" + ns.name + " unshare -m sh -c 'mount --bind " +
                 resolv + " /etc/resolv.conf && exec env " + kEnv + " " + WARD_BINARY + " " + args +
                 "'");
  };
  const std::string text = R"(ward 1
import "std/linux.ward"
policy rl-dns extends linux-base {
  network {
    allow tcp to 127.0.0.1 port 8080
  }
}
)";
  const std::string file = WriteTemp("rl-dns.ward", text);
  const std::string hint =
      "ward run: names cannot resolve in this run: policy rl-dns reaches no resolver of "
      "/etc/resolv.conf (10.9.9.53) on port 53; add `allow to 10.9.9.53 port 53` to its network "
      "section\n";
  // Without --log the programs are shared by the runs of the policy and
  // their events are not read: nothing is said (documented).
  Run r = in_ns("run " + file + " -- /usr/bin/getent hosts ward.example");
  CHECK(r.status == 2);
  CHECK(r.err.empty());
  // With --log: at the refused flow to port 53, once.
  const std::string log = ScratchDir() + "/dns.log";
  r = in_ns("run --quiet --log " + log + " " + file + " -- /usr/bin/getent hosts ward.example");
  CHECK(r.status == 2);
  CHECK(WithoutAuditNote(r.err) == hint);
  // glibc tries nscd's socket first (refused too: a unix connect), then
  // the resolver.
  const std::vector<nlohmann::json> lines = Lines(log);
  auto udp = std::find_if(lines.begin(), lines.end(),
                          [](const nlohmann::json& j) { return j.contains("address"); });
  REQUIRE(udp != lines.end());
  CHECK((*udp)["layer"] == "network");
  CHECK((*udp)["what"] == "connect");
  CHECK((*udp)["address"] == "10.9.9.53");
  CHECK((*udp)["port"] == 53);
  CHECK((*udp)["protocol"] == "udp");
  CHECK((*udp)["rule"] == "default");
  CHECK(lines.front()["unix"] == "/var/run/nscd/socket");
  // Positive control: the resolver granted, no hint (the name still does
  // not resolve: nothing answers there).
  const std::string granted_text = R"(ward 1
import "std/linux.ward"
policy rl-dns-ok extends linux-base {
  network {
    allow to 10.9.9.53 port 53
  }
}
)";
  const std::string granted = WriteTemp("rl-dns-ok.ward", granted_text);
  r = in_ns("run --quiet --log " + log + " " + granted + " -- /usr/bin/getent hosts ward.example");
  CHECK(r.status == 2);
  CHECK(WithoutAuditNote(r.err).empty());
  CHECK(Leftovers("rl-dns").empty());
  CHECK(Leftovers("rl-dns-ok").empty());
}

}  // namespace
}  // namespace ward::test
