// [root] `ward learn` end to end, on real programs: python3 with a script
// that reads a file, writes one and connects to a TCP server by a name a
// DNS stub resolves; `git clone` of a repository the test makes; `make` of
// a tiny C program. For each: the draft's exact text, that it checks, that
// the same command runs under `ward run` with it (exit 0), and that what
// the command did not do is refused with the exact errno (another file:
// EACCES; another port: EACCES, Landlock's; a syscall it never made:
// EPERM, linux-base's default), each next
// to its positive control. Then --merge (the merged file and its diff) and
// the drop warning (a one-page ring buffer).
//
// The whole program runs in a network and mount namespace of its own: its
// only interface lo, its /etc/resolv.conf the test's (nameserver
// 127.0.0.1), a dnsmasq and two TCP servers the test starts on that
// loopback. Nothing reaches any other address; everything dies with the
// test's processes.
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>
#include <vector>

#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

const std::string kRootDir = std::string(LEARN_TEST_DIR) + "-" + std::to_string(getpid());

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Put(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

pid_t Spawn(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// The namespaces, the DNS stub and the servers, for the whole program.
struct World {
  std::vector<pid_t> children;
  World() {
    if (geteuid() != 0) {
      std::fprintf(stderr, "learn_cli_test: needs root; skipped\n");
      std::exit(77);
    }
    // What the programs read depends on the locale (glibc reads
    // /etc/locale.alias for C.UTF-8, not for C or POSIX): one for every host,
    // CI's (which sets none) included.
    for (const char* var : {"LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LANGUAGE"}) unsetenv(var);
    setenv("LANG", "C.UTF-8", 1);
    fs::remove_all(kRootDir);
    fs::create_directories(kRootDir);
    Put(kRootDir + "/resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:2\n");
    Put(kRootDir + "/dns.hosts", "127.0.0.1 svc.learn.test\n");
    Put(kRootDir + "/server.py", R"(import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(16)
while True:
    c, _ = srv.accept()
    c.sendall(b"pong:" + c.recv(16))
    c.close()
)");
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount((kRootDir + "/resolv.conf").c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) !=
            0 ||
        std::system("/usr/sbin/ip link set lo up") != 0) {
      std::fprintf(stderr, "learn_cli_test: cannot make the test's namespaces\n");
      std::exit(1);
    }
    children.push_back(Spawn(
        {"/usr/sbin/dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
         "--no-hosts", "--addn-hosts=" + kRootDir + "/dns.hosts", "--local=/learn.test/",
         "--listen-address=127.0.0.1", "--bind-interfaces", "--port=53", "--user=root",
         "--group=root", "--log-facility=/dev/null", "--pid-file=" + kRootDir + "/dnsmasq.pid"}));
    for (const char* port : {"8081", "8082"}) {
      children.push_back(Spawn({"/usr/bin/python3", kRootDir + "/server.py", port}));
    }
    // Ready when the name resolves and the servers answer.
    for (int i = 0; i < 50; ++i) {
      if (Shell("/usr/bin/python3 -c 'import socket; [socket.create_connection((\"svc.learn."
                "test\", p)).close() for p in (8081, 8082)]'")
              .status == 0) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::fprintf(stderr, "learn_cli_test: the DNS stub or the servers did not answer\n");
    std::exit(1);
  }
  ~World() {
    for (pid_t pid : children) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    fs::remove_all(kRootDir);
  }
};

World& TheWorld() {
  static World world;
  return world;
}

// `ward ARGS` in `dir`, with the source tree's std and HOME outside it.
Run WardIn(const std::string& dir, const std::string& args, const std::string& env = "") {
  return Ward(args, "cd " + dir + " && HOME=" + kRootDir + "/home " + kStdEnv + " " + env);
}

// What a python3 probe sees: each operation's outcome, "ok" or the errno's
// name.
const std::string kProbe = R"(
import ctypes, errno, mmap, socket, sys
def outcome(f):
    try:
        f()
        return "ok"
    except socket.gaierror as e:
        return "gaierror %d" % e.errno
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def read(path):
    return lambda: open(path).read()
def connect(port):
    return lambda: socket.create_connection(("127.0.0.1", port)).close()
def mincore():
    libc = ctypes.CDLL(None, use_errno=True)
    m = mmap.mmap(-1, 4096)
    vec = (ctypes.c_ubyte * 1)()
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(4096), vec) != 0:
        raise OSError(ctypes.get_errno(), "mincore")
print(" ".join("%s=%s" % (k, outcome(f)) for k, f in [
    ("mine", read(sys.argv[1])), ("other", read(sys.argv[2])),
    ("port8081", connect(8081)), ("port8082", connect(8082)), ("mincore", mincore)]))
)";

// The probe in `dir` (where the learned policies let it be read), under
// `policy` (or none).
std::string Probe(const std::string& dir, const std::string& policy, const std::string& mine) {
  Put(dir + "/probe.py", kProbe);
  const std::string cmd =
      "/usr/bin/python3 probe.py " + mine + " " + kRootDir + "/other/secret.txt";
  const Run r = policy.empty() ? Shell("cd " + dir + " && " + cmd)
                               : WardIn(dir, "run " + policy + " -- " + cmd);
  INFO(r.err);
  return r.out;
}

const std::string kStart =
    "ward learn: enforced while learning: a cgroup of its own, no_new_privs, every capability "
    "dropped, ward run's guard filter, Ward's state hidden\n"
    "ward learn: warning: nothing else is enforced: the workload runs unconfined (files, "
    "network, syscalls) while it is learned; learn only what you trust\n";

// ward learn's stderr with its figures (counts vary by host) cut to their
// frame.
std::string Framed(const std::string& err) {
  return std::regex_replace(err, std::regex("recorded [0-9]+ events: [^;]*; ([0-9]+) dropped"),
                            "recorded N events: ...; $1 dropped");
}

// The comment `ward learn` puts above a write grant of the working
// directory `work`.
std::string PersistentWrite(const std::string& work) {
  return "    // lint L2301 (persistent-write): write access to '" + work +
         "/.claude' (the agent's own settings) persists beyond the sandbox and runs later "
         "outside it (and 4 more of this rule here). The trial run wrote there; narrow it to the "
         "files it must write\n";
}

// Filesystem grants as `ward learn` writes them: in path order (where the
// scratch directory sorts depends on where the build tree is).
std::string InPathOrder(std::vector<std::pair<std::string, std::string>> rules) {
  std::sort(rules.begin(), rules.end());
  std::string out;
  for (const auto& [path, text] : rules) out += text;
  return out;
}

// The write grant of the working directory `work`, with its comment.
std::string WorkGrant(const std::string& work) {
  return PersistentWrite(work) + "    allow read write \"" + work + "\"\n";
}

// A control policy: `base` (imported from `file`) plus one grant.
std::string Control(const std::string& file, const std::string& base, const std::string& grant) {
  const std::string path = kRootDir + "/control-" + base + ".ward";
  Put(path, "ward 1\nimport \"" + file + "\"\npolicy control extends " + base + " {\n  " + grant +
                "\n}\n");
  return path;
}

TEST_CASE("ward learn: python3 reads, writes and connects by a name the stub resolves", "[root]") {
  TheWorld();
  const std::string work = kRootDir + "/py/work";
  Put(work + "/in.txt", "hello\n");
  Put(kRootDir + "/other/secret.txt", "secret\n");
  Put(work + "/s.py", R"(import socket
data = open("in.txt").read()
open("out.txt", "w").write(data.upper())
s = socket.create_connection(("svc.learn.test", 8081))
s.sendall(b"ping")
print(s.recv(16).decode())
s.close()
)");
  const std::string draft = kRootDir + "/py/py.ward";
  Run learned = WardIn(work, "learn -o " + draft + " -- /usr/bin/python3 s.py");
  INFO(learned.err);
  REQUIRE(learned.status == 0);
  CHECK(learned.out == "pong:ping\n");
  CHECK(Framed(learned.err) ==
        "ward learn: recording `/usr/bin/python3 s.py`\n" + kStart +
            "ward learn: the command exited 0; recorded N events: ...; 0 dropped\n"
            "ward learn: wrote " +
            draft +
            " (policy python3-learned, 2 filesystem, 2 network rules, 0 syscalls beyond the base, "
            "1 lines with lint findings explained)\n");
  const std::string text = Slurp(draft);
  CHECK(text ==
        "ward 1\n\n"
        "// Drafted by `ward learn` from one run of: /usr/bin/python3 s.py\n"
        "// in " +
            work +
            ". Review it: it grants what that run did, no more.\n\n"
            "import \"std/linux.ward\"\n\n"
            "policy python3-learned extends linux-base {\n"
            "  // not granted: unix socket /var/run/nscd/socket (the workload tried it; it "
            "does not exist)\n"
            "  filesystem {\n" +
            InPathOrder({{"/etc/locale.alias", "    allow read \"/etc/locale.alias\"\n"},
                         {work, WorkGrant(work)}}) +
            "  }\n"
            "  network {\n"
            "    allow tcp to \"svc.learn.test\" port 8081\n"
            "    allow udp to 127.0.0.1 port 53\n"
            "  }\n"
            "  syscalls {\n"
            "    arch x86_64\n"
            "  }\n"
            "}\n");
  // The same records give the same bytes.
  const std::string again = kRootDir + "/py/again.ward";
  REQUIRE(WardIn(work, "learn -o " + again + " -- /usr/bin/python3 s.py").status == 0);
  CHECK(Slurp(again) == text);

  const Run check = WardIn(work, "check " + draft);
  CHECK(check.status == 0);
  CHECK(check.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  CHECK(WardIn(work, "lint " + draft).status == 0);

  fs::remove(work + "/out.txt");
  const Run run = WardIn(work, "run " + draft + " -- /usr/bin/python3 s.py");
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(run.out == "pong:ping\n");
  CHECK(Slurp(work + "/out.txt") == "HELLO\n");

  // What the script did not do is refused; each next to its control.
  CHECK(Probe(work, "", work + "/in.txt") ==
        "mine=ok other=ok port8081=ok port8082=ok mincore=ok\n");
  CHECK(Probe(work, draft, work + "/in.txt") ==
        "mine=ok other=EACCES port8081=ok port8082=EACCES mincore=EPERM\n");
  CHECK(Probe(work, Control(draft, "python3-learned", "syscalls {\n    allow mincore\n  }"),
              work + "/in.txt") == "mine=ok other=EACCES port8081=ok port8082=EACCES mincore=ok\n");
}

TEST_CASE("ward learn: git clone of a local repository", "[root]") {
  TheWorld();
  const std::string work = kRootDir + "/git/work";
  fs::create_directories(work);
  fs::create_directories(kRootDir + "/home");
  REQUIRE(Shell("cd " + work +
                " && git init -q src && echo one > src/a.txt && git -C src add "
                "a.txt && git -C src -c user.email=t@ward.test -c user.name=t commit -qm one")
              .status == 0);
  const std::string draft = kRootDir + "/git/git.ward";
  const Run learned = WardIn(work, "learn -o " + draft + " -- /usr/bin/git clone -q src dst");
  INFO(learned.err);
  REQUIRE(learned.status == 0);
  const std::string text = Slurp(draft);
  CHECK(text ==
        "ward 1\n\n"
        "// Drafted by `ward learn` from one run of: /usr/bin/git clone -q src dst\n"
        "// in " +
            work +
            ". Review it: it grants what that run did, no more.\n\n"
            "import \"std/linux.ward\"\n\n"
            "policy git-learned extends linux-base {\n"
            "  // not granted: unix socket /var/run/nscd/socket (the workload tried it; it "
            "does not exist)\n"
            "  filesystem {\n" +
            InPathOrder({{"/etc/gitconfig", "    allow read \"/etc/gitconfig\"\n"},
                         {"/etc/locale.alias", "    allow read \"/etc/locale.alias\"\n"},
                         {work, WorkGrant(work)}}) +
            "  }\n"
            "  syscalls {\n"
            "    arch x86_64\n"
            "  }\n"
            "}\n");
  CHECK(WardIn(work, "check " + draft).status == 0);
  fs::remove_all(work + "/dst");
  const Run run = WardIn(work, "run " + draft + " -- /usr/bin/git clone -q src dst");
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(Slurp(work + "/dst/a.txt") == "one\n");
  CHECK(Probe(work, draft, work + "/src/a.txt") ==
        "mine=ok other=EACCES port8081=EACCES port8082=EACCES mincore=EPERM\n");
}

TEST_CASE("ward learn: make builds a tiny C program", "[root]") {
  TheWorld();
  const std::string work = kRootDir + "/make/work";
  Put(work + "/Makefile", "hello: hello.c\n\tcc -o hello hello.c\n");
  Put(work + "/hello.c", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n");
  const std::string draft = kRootDir + "/make/make.ward";
  const Run learned = WardIn(work, "learn -o " + draft + " -- /usr/bin/make -s");
  INFO(learned.err);
  REQUIRE(learned.status == 0);
  CHECK(Slurp(draft) ==
        "ward 1\n\n"
        "// Drafted by `ward learn` from one run of: /usr/bin/make -s\n"
        "// in " +
            work +
            ". Review it: it grants what that run did, no more.\n\n"
            "import \"std/linux.ward\"\n\n"
            "policy make-learned extends linux-base {\n"
            "  filesystem {\n" +
            InPathOrder({{"/etc/locale.alias", "    allow read \"/etc/locale.alias\"\n"},
                         {"/tmp", "    allow read write \"/tmp\"\n"},
                         {work, WorkGrant(work)}}) +
            "  }\n"
            "  syscalls {\n"
            "    arch x86_64\n"
            "  }\n"
            "}\n");
  CHECK(WardIn(work, "check " + draft).status == 0);
  fs::remove(work + "/hello");
  const Run run = WardIn(work, "run " + draft + " -- /usr/bin/make -s");
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(Shell(work + "/hello").out == "hi\n");
  CHECK(Probe(work, draft, work + "/Makefile") ==
        "mine=ok other=EACCES port8081=EACCES port8082=EACCES mincore=EPERM\n");
}

TEST_CASE("ward learn: syscalls beyond the base, and what linux-base refuses whatever is added",
          "[root]") {
  TheWorld();
  const std::string work = kRootDir + "/sys/work";
  Put(work + "/s.py", R"(import ctypes, errno, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
m = mmap.mmap(-1, 4096)
vec = (ctypes.c_ubyte * 1)()
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print("mincore", libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(4096), vec), ctypes.get_errno())
CLONE_NEWUSER = 0x10000000
if libc.unshare(CLONE_NEWUSER) == 0:
    print("unshare ok")
else:
    print("unshare", errno.errorcode[ctypes.get_errno()])
)");
  const std::string draft = kRootDir + "/sys/sys.ward";
  const Run learned = WardIn(work, "learn -o " + draft + " -- /usr/bin/python3 s.py");
  INFO(learned.err);
  REQUIRE(learned.status == 0);
  CHECK(learned.out == "mincore 0 0\nunshare ok\n");
  const std::string text = Slurp(draft);
  CHECK(text.find("  // refused under this policy, as the workload tried it: unshare: errno 1 (a "
                  "rule of the base that an allow cannot lift)\n") != std::string::npos);
  CHECK(text.find("  syscalls {\n    arch x86_64\n    allow mincore\n  }\n") != std::string::npos);
  CHECK(WardIn(work, "check " + draft).status == 0);
  const Run run = WardIn(work, "run " + draft + " -- /usr/bin/python3 s.py");
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(run.out == "mincore 0 0\nunshare EPERM\n");
}

TEST_CASE("ward learn --merge adds what a new run needed and prints the diff", "[root]") {
  TheWorld();
  const std::string dir = kRootDir + "/merge";
  Put(dir + "/a/x.txt", "x\n");
  Put(dir + "/b/y.txt", "y\n");
  fs::create_directories(dir + "/run");
  const std::string existing = dir + "/tool.ward";
  Put(existing,
      "ward 1\n\nimport \"std/linux.ward\"\n\npolicy tool extends linux-base {\n"
      "  filesystem {\n    allow read \"" +
          dir + "/a\"\n  }\n}\n");
  const std::string merged = dir + "/merged.ward";
  const std::string cmd = "/usr/bin/python3 -c 'open(\"" + dir + "/a/x.txt\").read(); open(\"" +
                          dir + "/b/y.txt\").read()'";
  const Run r = WardIn(dir + "/run", "learn --merge " + existing + " -o " + merged + " -- " + cmd);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // The added grants in path order, numbered from line 10.
  const std::string etc = "/etc/locale.alias", mine = dir + "/b/y.txt";
  const bool etc_first = etc < mine;
  const std::string first = etc_first ? etc : mine, second = etc_first ? mine : etc;
  CHECK(Slurp(merged) ==
        "ward 1\n\nimport \"std/linux.ward\"\n\npolicy tool extends linux-base {\n"
        "  filesystem {\n    allow read \"" +
            dir +
            "/a\"\n\n"
            "    // added by ward learn --merge\n"
            "    allow read \"" +
            first + "\"\n    allow read \"" + second + "\"\n  }\n}\n");
  // ward diff lists them in path order too.
  CHECK(r.out == "+ read " + first + "\n  " + merged + ":10:5: allow read \"" + first +
                     "\"\n+ read " + second + "\n  " + merged + ":11:5: allow read \"" + second +
                     "\"\n");
  CHECK(r.err.find("ward learn: ward diff " + existing + " " + merged + ":\n") !=
        std::string::npos);
  // The merged policy runs the command; the one before refuses its second read.
  CHECK(WardIn(dir + "/run", "run " + merged + " -- " + cmd).status == 0);
  const Run before = WardIn(dir + "/run", "run " + existing + " -- " + cmd);
  CHECK(before.status == 1);
  CHECK(before.err.find("PermissionError: [Errno 13] Permission denied: '" + dir + "/b/y.txt'") !=
        std::string::npos);
}

TEST_CASE("ward learn says when the ring buffer dropped events", "[root]") {
  TheWorld();
  const std::string dir = kRootDir + "/drops";
  fs::create_directories(dir);
  const std::string cmd =
      "/usr/bin/python3 -c 'import os\nfor i in range(300): os.close(os.open(\"/etc/passwd\", "
      "os.O_RDONLY))'";
  // One page holds one event: a burst of 300 opens overflows it.
  const Run small =
      WardIn(dir, "learn -o " + dir + "/small.ward -- " + cmd, "WARD_LEARN_RING_BYTES=4096");
  INFO(small.err);
  REQUIRE(small.status == 0);
  const std::smatch none;
  std::smatch m;
  REQUIRE(std::regex_search(small.err, m, std::regex("; ([0-9]+) dropped\n")));
  CHECK(std::stoul(m[1]) > 0);
  CHECK(small.err.find("ward learn: warning: " + m[1].str() +
                       " events were dropped (the recorder's ring buffer was full): the policy "
                       "may be incomplete; run the command again with --merge\n") !=
        std::string::npos);
  // The control: the default ring holds the burst.
  const Run full = WardIn(dir, "learn -o " + dir + "/full.ward -- " + cmd);
  INFO(full.err);
  REQUIRE(full.status == 0);
  CHECK(full.err.find("; 0 dropped\n") != std::string::npos);
  CHECK(full.err.find("were dropped") == std::string::npos);
}

TEST_CASE("ward learn without a command is a usage error", "[root]") {
  TheWorld();
  const Run r = WardIn(kRootDir, "learn");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward learn: no command; usage: ward learn [--merge FILE] [-o OUT] -- CMD ARGS...\n");
}

}  // namespace
}  // namespace ward::test
