// The Landlock enforcer against the kernel: each case forks a child that
// prepares and applies a ruleset compiled from a policy, then tries one
// operation and reports its errno; every deny has a positive control in
// the same environment. Landlock needs no root (no_new_privs); without
// Landlock ABI 6 the program exits 77 (skipped).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "backends/landlock/landlock_backend.h"
#include "enforcers/linux/landlock.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

namespace ll = backend::landlock;

struct AbiGuard : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(const Catch::TestRunInfo&) override {
    std::string why;
    const int abi = enforce::LandlockAbi(&why);
    if (abi >= 6) return;
    std::cout << "skipped: the Landlock enforcement tests need Landlock ABI 6 (have " << abi
              << (why.empty() ? "" : ": " + why) << ")\n"
              << std::flush;
    std::_Exit(77);
  }
};
CATCH_REGISTER_LISTENER(AbiGuard)

constexpr int kPrepareFailed = 200;
constexpr int kApplyFailed = 201;

struct Sandbox {
  std::string root;  // a fresh temporary directory
  std::string home;
  Sandbox() {
    char tmpl[] = "/tmp/ward-landlock-XXXXXX";
    root = mkdtemp(tmpl);
    home = root + "/home";
    for (const char* d : {"/home", "/home/.ssh", "/home/docs", "/work", "/ro", "/bin"}) {
      mkdir((root + d).c_str(), 0755);
    }
    Write("/home/.ssh/id", "secret");
    Write("/home/docs/a.txt", "doc");
    Write("/home/notes.txt", "notes");
    Write("/ro/file", "read-only");
    std::filesystem::copy_file("/usr/bin/true", root + "/bin/true");
    chmod((root + "/bin/true").c_str(), 0755);
  }
  ~Sandbox() { std::filesystem::remove_all(root); }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(root + rel) << text;
  }
  std::string operator()(const std::string& rel) const { return root + rel; }
};

ll::Ruleset Compile(const std::string& source) {
  auto c = CompileWith(backend::LandlockBackend(), source);
  INFO(c->Diagnostics());
  REQUIRE(c->result.ok);
  ll::Ruleset r;
  std::string error;
  REQUIRE(ll::FromJson(c->result.artifacts[0].bytes, &r, &error));
  return r;
}

// The child's exit status: the body's result (an errno, 0 for success), or
// kPrepareFailed / kApplyFailed.
int RunConfined(const ll::Ruleset& ruleset, const enforce::LandlockOptions& options,
                const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    enforce::PreparedLandlock prepared;
    std::string error;
    if (!enforce::PrepareLandlock(ruleset, options, &prepared, &error)) _exit(kPrepareFailed);
    enforce::LandlockFailure failure;
    if (!enforce::ApplyLandlock(prepared, options, &failure)) _exit(kApplyFailed);
    _exit(body());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

int Errno(long result) { return result < 0 ? errno : 0; }
int OpenErrno(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

// `extra` goes after the filesystem section, `fs_extra` inside it.
std::string FsPolicy(const Sandbox& s, const std::string& extra = "",
                     const std::string& fs_extra = "") {
  return "policy t {\n filesystem {\n"
         "  allow read exec \"/usr\", \"/lib\", \"/lib64\"\n"
         "  allow read \"~\"\n"
         "  deny read \"~/.ssh\"\n"
         "  allow read write \"" +
         s("/work") +
         "\"\n"
         "  allow read \"" +
         s("/ro") + "\", \"" + s("/bin") + "\"\n" + fs_extra + " }\n" + extra + "}\n";
}

enforce::LandlockOptions Home(const Sandbox& s) {
  enforce::LandlockOptions o;
  o.home = s.home;
  return o;
}

TEST_CASE("landlock enforce: a secret under a denied subtree of an allowed home") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  const auto o = Home(s);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/home/.ssh/id"), O_RDONLY); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/home/notes.txt"), O_RDONLY); }) == 0);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/home/docs/a.txt"), O_RDONLY); }) == 0);
  // Lost (towards deny, reported): listing the partially granted home.
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/home"), O_RDONLY | O_DIRECTORY); }) == EACCES);
  // Through /proc/self/root: the object is the same, so is the decision.
  CHECK(RunConfined(r, o, [&] {
          return OpenErrno("/proc/self/root" + s("/home/.ssh/id"), O_RDONLY);
        }) == EACCES);
  CHECK(RunConfined(r, o, [&] {
          return OpenErrno("/proc/self/root" + s("/home/notes.txt"), O_RDONLY);
        }) == 0);
}

TEST_CASE("landlock enforce: links planted in a writable directory") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  const auto o = Home(s);
  // A symlink planted before the run, and one the workload plants itself.
  REQUIRE(symlink(s("/home/.ssh/id").c_str(), s("/work/planted").c_str()) == 0);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/work/planted"), O_RDONLY); }) == EACCES);
  CHECK(RunConfined(r, o, [&] {
          if (symlink(s("/home/.ssh/id").c_str(), s("/work/mine").c_str()) != 0) return 100;
          return OpenErrno(s("/work/mine"), O_RDONLY);
        }) == EACCES);
  // Positive control: a symlink to an allowed file reads.
  REQUIRE(symlink(s("/home/notes.txt").c_str(), s("/work/ok").c_str()) == 0);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/work/ok"), O_RDONLY); }) == 0);
  // The workload cannot make a hard link to the secret (a reparenting the
  // source directory does not grant), but can to a file it may read.
  CHECK(RunConfined(r, o, [&] {
          return Errno(link(s("/home/.ssh/id").c_str(), s("/work/hard").c_str()));
        }) == EXDEV);
  CHECK(RunConfined(r, o, [&] {
          return Errno(link(s("/work/ok").c_str(), s("/work/hard-ok").c_str()));
        }) == 0);
}

// Landlock decides by the path walked to the object, so a hard link that
// someone outside the sandbox made inside a granted tree before the run
// would reach the file (README.md § Symlinks and links). The enforcer does
// not rely on Landlock for this: a file in a carved subtree (a deny nested
// in an allow) with a second name stops PrepareLandlock, naming the file.
TEST_CASE("landlock enforce: a denied file with a second name stops the preparation") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  // Control: one name, the ruleset is built and the secret refused.
  CHECK(RunConfined(r, Home(s), [&] { return OpenErrno(s("/home/.ssh/id"), O_RDONLY); }) == EACCES);
  REQUIRE(link(s("/home/.ssh/id").c_str(), s("/work/pre-planted").c_str()) == 0);
  enforce::PreparedLandlock prepared;
  std::string error;
  CHECK_FALSE(enforce::PrepareLandlock(r, Home(s), &prepared, &error));
  CHECK(prepared.ruleset_fd == -1);
  CHECK(error.rfind("landlock: resolve: hard links: " + s("/home/.ssh/id") +
                        " has 2 names and the policy denies it read",
                    0) == 0);
  CHECK(RunConfined(r, Home(s), [&] { return OpenErrno(s("/work/pre-planted"), O_RDONLY); }) ==
        kPrepareFailed);
  // The second name gone, the same ruleset is built again.
  REQUIRE(unlink(s("/work/pre-planted").c_str()) == 0);
  CHECK(RunConfined(r, Home(s), [&] { return OpenErrno(s("/home/notes.txt"), O_RDONLY); }) == 0);
}

TEST_CASE("landlock enforce: a symlink the policy names is never followed") {
  Sandbox s;
  // Planted before the run where the policy names a path: the link itself,
  // and a link on the way to a deeper path.
  REQUIRE(symlink(s("/home/.ssh/id").c_str(), s("/lnk").c_str()) == 0);
  REQUIRE(symlink(s("/home/.ssh").c_str(), s("/lnkdir").c_str()) == 0);
  const ll::Ruleset r =
      Compile(FsPolicy(s, "", "  allow read \"" + s("/lnk") + "\", \"" + s("/lnkdir/id") + "\"\n"));
  const auto o = Home(s);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/lnk"), O_RDONLY); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/lnkdir/id"), O_RDONLY); }) == EACCES);
  // Positive control: the target itself, named by its real path, reads.
  const ll::Ruleset real =
      Compile(FsPolicy(s, "", "  allow read \"" + s("/home/.ssh/id") + "\"\n"));
  CHECK(RunConfined(real, o, [&] { return OpenErrno(s("/home/.ssh/id"), O_RDONLY); }) == 0);
  enforce::PreparedLandlock prepared;
  std::string error;
  REQUIRE(enforce::PrepareLandlock(r, o, &prepared, &error));
  const std::string report = enforce::DescribeLandlock(prepared);
  enforce::ReleaseLandlock(prepared);
  CHECK(report.find("lost " + s("/lnk") + " read: a symbolic link: not followed") !=
        std::string::npos);
  CHECK(report.find("lost " + s("/lnkdir") +
                    " read: a symbolic link on the way to deeper patterns: not followed") !=
        std::string::npos);
}

TEST_CASE("landlock enforce: write and truncate outside the grants, also through a symlink") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  const auto o = Home(s);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/ro/file"), O_WRONLY); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return Errno(truncate(s("/ro/file").c_str(), 0)); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/ro/new"), O_WRONLY | O_CREAT); }) == EACCES);
  REQUIRE(symlink(s("/ro/file").c_str(), s("/work/to-ro").c_str()) == 0);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/work/to-ro"), O_WRONLY); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/work/to-ro"), O_RDONLY); }) == 0);
  // Positive controls: the writable tree.
  CHECK(RunConfined(r, o, [&] { return OpenErrno(s("/work/new"), O_WRONLY | O_CREAT); }) == 0);
  s.Write("/work/old", "x");
  CHECK(RunConfined(r, o, [&] { return Errno(truncate(s("/work/old").c_str(), 0)); }) == 0);
  CHECK(RunConfined(r, o, [&] { return Errno(unlink(s("/work/old").c_str())); }) == 0);
}

TEST_CASE("landlock enforce: exec outside the exec grants") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  const auto o = Home(s);
  auto exec = [](const std::string& path) {
    return [path] {
      char* const argv[] = {const_cast<char*>(path.c_str()), nullptr};
      char* const envp[] = {nullptr};
      execve(path.c_str(), argv, envp);
      return errno;
    };
  };
  CHECK(RunConfined(r, o, exec(s("/bin/true"))) == EACCES);
  CHECK(RunConfined(r, o, exec("/usr/bin/true")) == 0);
}

// A listening TCP socket on 127.0.0.1; port() is its port.
struct Listener {
  int fd = -1;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(fd, 8) == 0);
  }
  ~Listener() { close(fd); }
  int port() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
};

int ConnectErrno(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int e = Errno(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a));
  close(fd);
  return e;
}

TEST_CASE("landlock enforce: TCP connect by port") {
  Sandbox s;
  Listener granted, other, loopback_only;
  const ll::Ruleset r = Compile(FsPolicy(
      s, " network {\n  allow tcp to any port " + std::to_string(granted.port()) +
             "\n  allow tcp to loopback port " + std::to_string(loopback_only.port()) + "\n }\n"));
  auto o = Home(s);
  CHECK(RunConfined(r, o, [&] { return ConnectErrno(other.port()); }) == EACCES);
  CHECK(RunConfined(r, o, [&] { return ConnectErrno(granted.port()); }) == 0);
  // A loopback-only grant is not a port rule: denied by Landlock alone...
  CHECK(RunConfined(r, o, [&] { return ConnectErrno(loopback_only.port()); }) == EACCES);
  // ...granted when an address-aware egress layer holds the address part.
  o.egress_checked_by_address = true;
  CHECK(RunConfined(r, o, [&] { return ConnectErrno(loopback_only.port()); }) == 0);
  CHECK(RunConfined(r, o, [&] { return ConnectErrno(other.port()); }) == EACCES);
}

int ConnectAbstract(const std::string& name) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const int e = Errno(connect(fd, reinterpret_cast<sockaddr*>(&a), len));
  close(fd);
  return e;
}

TEST_CASE("landlock enforce: abstract unix sockets outside the domain") {
  Sandbox s;
  const std::string name = "ward-landlock-test-" + std::to_string(getpid());
  const int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  REQUIRE(bind(server, reinterpret_cast<sockaddr*>(&a), len) == 0);
  REQUIRE(listen(server, 8) == 0);
  const auto o = Home(s);
  CHECK(RunConfined(Compile(FsPolicy(s)), o, [&] { return ConnectAbstract(name); }) == EPERM);
  // Positive control: a policy that grants the name leaves abstract sockets unscoped.
  const ll::Ruleset granted = Compile(FsPolicy(s, " network { allow unix \"@" + name + "\" }\n"));
  CHECK(RunConfined(granted, o, [&] { return ConnectAbstract(name); }) == 0);
  close(server);
}

TEST_CASE("landlock enforce: signals to processes outside the domain") {
  Sandbox s;
  const pid_t outside = fork();
  if (outside == 0) {
    signal(SIGTERM, SIG_DFL);  // not Catch's handler: a plain death
    pause();
    _exit(0);
  }
  const ll::Ruleset r = Compile(FsPolicy(s));
  const auto o = Home(s);
  CHECK(RunConfined(r, o, [&] { return Errno(kill(outside, SIGTERM)); }) == EPERM);
  CHECK(RunConfined(r, o, [&] { return Errno(kill(getppid(), SIGCONT)); }) == EPERM);
  // Positive control: a process inside the same domain.
  CHECK(RunConfined(r, o, [&] {
          const pid_t inside = fork();
          if (inside == 0) {
            pause();
            _exit(0);
          }
          const int e = Errno(kill(inside, SIGKILL));  // uncatchable: no race with a handler
          waitpid(inside, nullptr, 0);
          return e;
        }) == 0);
  kill(outside, SIGKILL);
  waitpid(outside, nullptr, 0);
}

TEST_CASE("landlock enforce: a kernel ABI below the ruleset's is refused, naming the rights") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  enforce::LandlockOptions o = Home(s);
  enforce::PreparedLandlock prepared;
  std::string error;
  o.abi = 5;
  CHECK_FALSE(enforce::PrepareLandlock(r, o, &prepared, &error));
  CHECK(error ==
        "landlock: abi: the kernel offers Landlock ABI 5, the ruleset needs 6 (scope "
        "abstract_unix_socket, scope signal need ABI 6); refusing to run with a weaker ruleset");
  CHECK(prepared.ruleset_fd == -1);
  o.abi = 3;
  CHECK_FALSE(enforce::PrepareLandlock(r, o, &prepared, &error));
  CHECK(error ==
        "landlock: abi: the kernel offers Landlock ABI 3, the ruleset needs 6 (scope "
        "abstract_unix_socket, scope signal need ABI 6; ioctl_dev needs ABI 5; bind_tcp, "
        "connect_tcp need ABI 4); refusing to run with a weaker ruleset");
  o.abi = 6;
  o.log_new_exec = true;
  CHECK_FALSE(enforce::PrepareLandlock(r, o, &prepared, &error));
  CHECK(error ==
        "landlock: abi: the kernel offers Landlock ABI 6, the ruleset needs 7 (audit logging "
        "after exec needs ABI 7); refusing to run with a weaker ruleset");
  // The same ruleset at the kernel's own ABI prepares; the child applies it.
  o.abi = 0;
  o.log_new_exec = false;
  CHECK(RunConfined(r, o, [] { return 0; }) == 0);
}

TEST_CASE("landlock enforce: the resolution report and its errors") {
  Sandbox s;
  const ll::Ruleset r = Compile(FsPolicy(s));
  enforce::LandlockOptions o;
  enforce::PreparedLandlock prepared;
  std::string error;
  CHECK_FALSE(enforce::PrepareLandlock(r, o, &prepared, &error));
  CHECK(error == "landlock: resolve: the policy has ~ patterns and no home directory was given");
  o.home = s.home;
  REQUIRE(enforce::PrepareLandlock(r, o, &prepared, &error));
  const std::string report = enforce::DescribeLandlock(prepared);
  enforce::ReleaseLandlock(prepared);
  CHECK(report.find("grant " + s("/home/docs") + " read\n") != std::string::npos);
  CHECK(report.find("grant " + s("/work") + " read,write\n") != std::string::npos);
  CHECK(report.find("lost " + s("/home") + " read: partially granted") != std::string::npos);
  CHECK(report.find(".ssh") == std::string::npos);
}

TEST_CASE("landlock enforce: a shell under std/linux.ward plus a workspace") {
  Sandbox s;
  const ll::Ruleset r = Compile(
      "import \"std/linux.ward\"\npolicy t extends linux-base {\n"
      " filesystem { allow read write \"" +
      s("/work") + "\" }\n}\n");
  enforce::LandlockOptions o;
  auto shell = [](const std::string& script) {
    return [script] {
      char* const argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                            const_cast<char*>(script.c_str()), nullptr};
      char* const envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
      execve("/bin/sh", argv, envp);
      return 100 + errno;
    };
  };
  // Positive control: the toolchain runs, the workspace is read and written.
  CHECK(RunConfined(r, o,
                    shell("echo hi > " + s("/work/out") + " && cat " + s("/work/out") +
                          " >/dev/null && ls /usr/bin >/dev/null")) == 0);
  // Outside the policy: a file the base does not grant, and writing /etc.
  CHECK(RunConfined(r, o, shell("cat /etc/hostname >/dev/null 2>&1")) == 1);
  CHECK(RunConfined(r, o, shell("cat " + s("/ro/file") + " >/dev/null 2>&1")) == 1);
  CHECK(RunConfined(r, o, shell("echo x 2>/dev/null > /etc/ward-landlock-test")) == 2);
  // What the resolution reports for this host: /lib is Debian's symlink.
  enforce::PreparedLandlock prepared;
  std::string error;
  REQUIRE(enforce::PrepareLandlock(r, o, &prepared, &error));
  const std::string report = enforce::DescribeLandlock(prepared);
  enforce::ReleaseLandlock(prepared);
  CHECK(report.find("grant /usr read,exec\n") != std::string::npos);
  CHECK(report.find("grant " + s("/work") + " read,write\n") != std::string::npos);
  struct stat st {};
  if (lstat("/lib", &st) == 0 && S_ISLNK(st.st_mode)) {
    CHECK(report.find("lost /lib read,exec: a symbolic link: not followed") != std::string::npos);
  }
}

}  // namespace
}  // namespace ward::test
