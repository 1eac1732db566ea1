// [root] The ebpf enforcer's unix-socket hooks (cgroup/connect_unix,
// cgroup/sendmsg_unix) for real. The servers are sockets this test binds
// (path sockets in a temporary folder, abstract ones under a random name),
// outside the enforced cgroup; each client is a child that joins a cgroup
// first: the enforced one, or a sibling where nothing is attached (the
// positive control of every denial: the same call succeeds there).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>

#include "enforcers/linux/ebpf.h"
#include "tests/backends/ebpf/ebpf_fixture.h"

#include "tests/root_guard.h"
namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf unix-socket tests");

constexpr const char* kPolicyName = "ebpfunix";

enum class UnixOp {
  kStreamConnect,  // connect() on a SOCK_STREAM socket
  kSeqConnect,     // connect() on a SOCK_SEQPACKET socket
  kDgramConnect,   // connect() on a SOCK_DGRAM socket, then send() one byte
  kDgramSendto,    // sendto() one byte on an unconnected SOCK_DGRAM socket
  kDgramSendmsg,   // sendmsg() with msg_name, likewise
  kSocketpair,     // socketpair() and a round trip: no address, no hook
  kBindConnect,    // bind() a stream socket at the address, listen, connect to it
};

// An address as a process passes it: `len` bytes of `addr`.
struct Address {
  sockaddr_un addr{};
  socklen_t len = 0;
};

Address Path(const std::string& path) {
  Address a;
  a.addr.sun_family = AF_UNIX;
  std::memcpy(a.addr.sun_path, path.data(), path.size());
  a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return a;
}

// The abstract name `name` (no trailing NUL: the name is the bytes after the
// leading NUL, up to the address length).
Address Abstract(const std::string& name) {
  Address a;
  a.addr.sun_family = AF_UNIX;
  std::memcpy(a.addr.sun_path + 1, name.data(), name.size());
  a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

int Do(UnixOp op, const Address& a) {
  const auto* sa = reinterpret_cast<const sockaddr*>(&a.addr);
  char c = 'u';
  switch (op) {
    case UnixOp::kStreamConnect:
    case UnixOp::kSeqConnect: {
      const int type = op == UnixOp::kSeqConnect ? SOCK_SEQPACKET : SOCK_STREAM;
      int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
      if (fd < 0) return errno;
      int rc = connect(fd, sa, a.len) == 0 ? 0 : errno;
      close(fd);
      return rc;
    }
    case UnixOp::kDgramConnect:
    case UnixOp::kDgramSendto:
    case UnixOp::kDgramSendmsg: {
      int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return errno;
      int rc = 0;
      if (op == UnixOp::kDgramConnect) {
        if (connect(fd, sa, a.len) != 0 || send(fd, &c, 1, 0) != 1) rc = errno;
      } else if (op == UnixOp::kDgramSendto) {
        if (sendto(fd, &c, 1, 0, sa, a.len) != 1) rc = errno;
      } else {
        iovec iov{&c, 1};
        msghdr mh{};
        mh.msg_name = const_cast<sockaddr_un*>(&a.addr);
        mh.msg_namelen = a.len;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        if (sendmsg(fd, &mh, 0) != 1) rc = errno;
      }
      close(fd);
      return rc;
    }
    case UnixOp::kSocketpair: {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return errno;
      int rc = write(sv[0], &c, 1) == 1 && read(sv[1], &c, 1) == 1 ? 0 : errno;
      close(sv[0]);
      close(sv[1]);
      return rc;
    }
    case UnixOp::kBindConnect: {
      int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int rc = 0;
      if (server < 0 || client < 0 || bind(server, sa, a.len) != 0 || listen(server, 4) != 0) {
        rc = 1000 + errno;  // not the decision under test
      } else if (connect(client, sa, a.len) != 0) {
        rc = errno;
      }
      close(server);
      close(client);
      return rc;
    }
  }
  return EINVAL;
}

// Runs `op` in a child that first joins `cgroup` and enters `cwd`: 0, or
// the errno of the first failing call.
int RunIn(const std::string& cgroup, UnixOp op, const Address& a, const std::string& cwd = "/") {
  int pipefd[2];
  REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::ofstream procs(cgroup + "/cgroup.procs");
    procs << getpid() << std::flush;
    int rc = !procs ? 2000 : chdir(cwd.c_str()) != 0 ? 3000 : Do(op, a);
    if (write(pipefd[1], &rc, sizeof rc) != sizeof rc) _exit(1);
    _exit(0);
  }
  close(pipefd[1]);
  int rc = -1;
  const bool got = read(pipefd[0], &rc, sizeof rc) == sizeof rc;
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(got);
  return rc;
}

// The servers, the cgroups and the temporary folder; removed by the
// destructor, with the policy.
class UnixEnv {
 public:
  UnixEnv() {
    std::string error;
    const std::string mount = enforce::CgroupV2Mount(&error);
    INFO(error);
    REQUIRE(!mount.empty());
    root_ = mount + "/ward-unix-" + std::to_string(getpid());
    rmdir((root_ + "/enforced").c_str());
    rmdir((root_ + "/sibling").c_str());
    rmdir(root_.c_str());
    REQUIRE(mkdir(root_.c_str(), 0755) == 0);
    enforced_ = root_ + "/enforced";
    sibling_ = root_ + "/sibling";
    REQUIRE(mkdir(enforced_.c_str(), 0755) == 0);
    REQUIRE(mkdir(sibling_.c_str(), 0755) == 0);
    char tmpl[] = "/tmp/ward-unix-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    REQUIRE(mkdir((dir_ + "/sub").c_str(), 0755) == 0);
    std::random_device rd;
    abstract_ = "ward-unix-test-" + std::to_string(getpid()) + "-" + std::to_string(rd());

    Listen(Path(dir_ + "/granted.sock"));
    Listen(Path(dir_ + "/other.sock"));
    Listen(Path(dir_ + "/denied.sock"));
    Listen(Abstract(abstract_ + "-granted"));
    Listen(Abstract(abstract_ + "-other"));
    Listen(Path(dir_ + "/seq.sock"), SOCK_SEQPACKET);
    dgram_granted_ = Bind(Path(dir_ + "/dgram-granted.sock"));
    dgram_other_ = Bind(Path(dir_ + "/dgram-other.sock"));
    dgram_abstract_denied_ = Bind(Abstract(abstract_ + "-dgram-denied"));
    REQUIRE(symlink((dir_ + "/other.sock").c_str(), (dir_ + "/link.sock").c_str()) == 0);
  }

  ~UnixEnv() {
    bool removed;
    std::string error;
    enforce::EbpfRemove(kPolicyName, &removed, &error);
    for (int fd : fds_) close(fd);
    for (const char* f : {"granted.sock", "other.sock", "denied.sock", "dgram-granted.sock",
                          "dgram-other.sock", "link.sock", "self.sock", "seq.sock"}) {
      unlink((dir_ + "/" + f).c_str());
    }
    rmdir((dir_ + "/sub").c_str());
    rmdir(dir_.c_str());
    rmdir(enforced_.c_str());
    rmdir(sibling_.c_str());
    rmdir(root_.c_str());
  }

  // Unix rule ids follow the (here absent) address rules: the sockets of
  // the allow rule are 1 to 5, those of the deny rule 6 and 7.
  std::string Source(const std::string& extra = "") const {
    return "policy " + std::string(kPolicyName) + " {\n  network {\n    allow unix \"" + dir_ +
           "/granted.sock\", \"" + dir_ + "/dgram-granted.sock\", \"@" + abstract_ +
           "-granted\", \"" + dir_ + "/denied.sock\", \"@" + abstract_ +
           "-dgram-denied\"\n    deny unix \"" + dir_ + "/denied.sock\", \"@" + abstract_ +
           "-dgram-denied\"\n" + extra + "  }\n}\n";
  }

  enforce::EbpfApplyResult Apply(const std::string& source, bool abstract_by_landlock) {
    const ir::Policy policy = CompilePolicy(source);
    std::string error;
    std::optional<enforce::Cgroup> cg = enforce::ResolveCgroup(enforced_, &error);
    INFO(error);
    REQUIRE(cg);
    enforce::EbpfApplyOptions options;
    options.abstract_unix_by_landlock = abstract_by_landlock;
    DiagnosticSink sink;
    enforce::EbpfApplyResult r;
    const bool ok = enforce::EbpfApply(policy, *cg, {}, options, sink, &r, &error);
    INFO(error);
    REQUIRE(ok);
    return r;
  }

  // The byte a datagram server received, or -1 when nothing is queued.
  static int Received(int fd) {
    char c = 0;
    return recv(fd, &c, 1, MSG_DONTWAIT) == 1 ? c : -1;
  }

  const std::string& enforced() const { return enforced_; }
  const std::string& sibling() const { return sibling_; }
  const std::string& dir() const { return dir_; }
  const std::string& abstract() const { return abstract_; }
  int dgram_granted() const { return dgram_granted_; }
  int dgram_other() const { return dgram_other_; }
  int dgram_abstract_denied() const { return dgram_abstract_denied_; }

 private:
  int Bind(const Address& a, int type = SOCK_DGRAM) {
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    fds_.push_back(fd);
    REQUIRE(bind(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len) == 0);
    return fd;
  }
  void Listen(const Address& a, int type = SOCK_STREAM) { REQUIRE(listen(Bind(a, type), 64) == 0); }

  std::string root_, enforced_, sibling_, dir_, abstract_;
  std::vector<int> fds_;
  int dgram_granted_ = -1, dgram_other_ = -1, dgram_abstract_denied_ = -1;
};

TEST_CASE("ebpf unix: path and abstract sockets by exact name, deny over allow", "[root]") {
  UnixEnv env;
  const std::string& d = env.dir();
  const std::string& abs = env.abstract();
  const enforce::EbpfApplyResult r = env.Apply(env.Source(), false);
  CHECK(r.unix_names == 5);
  CHECK_FALSE(r.abstract_unix_open);
  const std::string& in = env.enforced();
  const std::string& out = env.sibling();

  SECTION("stream connect") {
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/granted.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/other.sock")) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, Path(d + "/other.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kSeqConnect, Path(d + "/seq.sock")) == EPERM);
    CHECK(RunIn(out, UnixOp::kSeqConnect, Path(d + "/seq.sock")) == 0);
  }
  SECTION("the bytes after the path's NUL are ignored, as the kernel ignores them") {
    Address a = Path(d + "/granted.sock");
    std::memset(a.addr.sun_path + d.size() + 14, 'x', sizeof a.addr.sun_path - d.size() - 14);
    a.len = sizeof a.addr;
    CHECK(RunIn(in, UnixOp::kStreamConnect, a) == 0);
    Address b = Path(d + "/other.sock");
    std::memset(b.addr.sun_path + d.size() + 12, 'x', sizeof b.addr.sun_path - d.size() - 12);
    b.len = sizeof b.addr;
    CHECK(RunIn(in, UnixOp::kStreamConnect, b) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, b) == 0);
  }
  SECTION("datagram connect, sendto, sendmsg") {
    for (UnixOp op : {UnixOp::kDgramConnect, UnixOp::kDgramSendto, UnixOp::kDgramSendmsg}) {
      CHECK(RunIn(in, op, Path(d + "/dgram-granted.sock")) == 0);
      CHECK(UnixEnv::Received(env.dgram_granted()) == 'u');
      CHECK(RunIn(in, op, Path(d + "/dgram-other.sock")) == EPERM);
      CHECK(UnixEnv::Received(env.dgram_other()) == -1);
      CHECK(RunIn(out, op, Path(d + "/dgram-other.sock")) == 0);
      CHECK(UnixEnv::Received(env.dgram_other()) == 'u');
    }
  }
  SECTION("a path spelled otherwise than granted is refused (fails closed)") {
    // A symlink to a socket that is not granted.
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/link.sock")) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, Path(d + "/link.sock")) == 0);
    // The granted socket, by a relative path, with `..`, with `//`.
    for (const std::string& p :
         {std::string("granted.sock"), d + "/sub/../granted.sock", d + "//granted.sock"}) {
      INFO(p);
      CHECK(RunIn(in, UnixOp::kStreamConnect, Path(p), d) == EPERM);
      CHECK(RunIn(out, UnixOp::kStreamConnect, Path(p), d) == 0);
    }
  }
  SECTION("abstract names") {
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-granted")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-other")) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, Abstract(abs + "-other")) == 0);
    // The same name with a trailing NUL is another abstract name.
    Address padded = Abstract(abs + "-granted");
    padded.len += 1;
    CHECK(RunIn(in, UnixOp::kStreamConnect, padded) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, padded) == ECONNREFUSED);
  }
  SECTION("deny overrides allow") {
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/denied.sock")) == EPERM);
    CHECK(RunIn(out, UnixOp::kStreamConnect, Path(d + "/denied.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kDgramSendto, Abstract(abs + "-dgram-denied")) == EPERM);
    CHECK(UnixEnv::Received(env.dgram_abstract_denied()) == -1);
    CHECK(RunIn(out, UnixOp::kDgramSendto, Abstract(abs + "-dgram-denied")) == 0);
    CHECK(UnixEnv::Received(env.dgram_abstract_denied()) == 'u');
  }
  SECTION("socketpair has no address: unaffected") {
    CHECK(RunIn(in, UnixOp::kSocketpair, {}) == 0);
  }
  SECTION("a socket the workload binds itself is refused unless granted (no bind hook)") {
    CHECK(RunIn(in, UnixOp::kBindConnect, Path(d + "/self.sock")) == EPERM);
    unlink((d + "/self.sock").c_str());
    CHECK(RunIn(out, UnixOp::kBindConnect, Path(d + "/self.sock")) == 0);
    unlink((d + "/self.sock").c_str());
    CHECK(RunIn(in, UnixOp::kBindConnect, Abstract(abs + "-self")) == EPERM);
    CHECK(RunIn(out, UnixOp::kBindConnect, Abstract(abs + "-self")) == 0);
  }
  SECTION("a re-apply that grants a socket allows it (the other generation)") {
    REQUIRE(RunIn(in, UnixOp::kStreamConnect, Path(d + "/other.sock")) == EPERM);
    const enforce::EbpfApplyResult again =
        env.Apply(env.Source("    allow unix \"" + d + "/other.sock\"\n"), false);
    CHECK(again.replaced);
    CHECK(again.generation == (r.generation ^ 1u));
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/other.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/granted.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/denied.sock")) == EPERM);
  }
}

TEST_CASE("ebpf unix: denials in the ring buffer name the socket and the rule", "[root]") {
  UnixEnv env;
  const std::string& d = env.dir();
  const std::string& abs = env.abstract();
  env.Apply(env.Source(), false);
  std::string error;
  std::unique_ptr<enforce::EbpfEventReader> reader =
      enforce::EbpfEventReader::Open(kPolicyName, &error);
  INFO(error);
  REQUIRE(reader);
  const std::string& in = env.enforced();
  REQUIRE(RunIn(in, UnixOp::kStreamConnect, Path(d + "/other.sock")) == EPERM);
  REQUIRE(RunIn(in, UnixOp::kDgramSendmsg, Path(d + "/dgram-other.sock")) == EPERM);
  REQUIRE(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-other")) == EPERM);
  REQUIRE(RunIn(in, UnixOp::kStreamConnect, Path(d + "/denied.sock")) == EPERM);
  REQUIRE(RunIn(in, UnixOp::kDgramSendmsg, Abstract(abs + "-dgram-denied")) == EPERM);
  REQUIRE(RunIn(in, UnixOp::kStreamConnect, Abstract(std::string("a\nb\\c"))) == EPERM);
  std::vector<std::string> lines;
  for (int i = 0; i < 20 && lines.size() < 6; ++i) REQUIRE(reader->Poll(100, &lines, &error));
  CHECK(lines == std::vector<std::string>{
                     "connect to unix:" + d + "/other.sock denied (no rule matched)",
                     "sendmsg to unix:" + d + "/dgram-other.sock denied (no rule matched)",
                     "connect to unix:@" + abs + "-other denied (no rule matched)",
                     "connect to unix:" + d + "/denied.sock denied (rule 6: deny unix \"" + d +
                         "/denied.sock\")",
                     "sendmsg to unix:@" + abs + "-dgram-denied denied (rule 7: deny unix \"@" +
                         abs + "-dgram-denied\")",
                     "connect to unix:@a\\x0ab\\x5cc denied (no rule matched)",
                 });
}

TEST_CASE("ebpf unix: abstract names left to Landlock's scope when none is granted", "[root]") {
  UnixEnv env;
  const std::string& d = env.dir();
  const std::string& abs = env.abstract();
  const std::string& in = env.enforced();
  const std::string paths_only = "policy " + std::string(kPolicyName) +
                                 " {\n  network {\n    allow unix \"" + d +
                                 "/granted.sock\"\n  }\n}\n";

  SECTION("no abstract grant: every abstract address passes, paths are still decided") {
    CHECK(env.Apply(paths_only, true).abstract_unix_open);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-other")) == 0);
    CHECK(RunIn(in, UnixOp::kDgramSendto, Abstract(abs + "-dgram-denied")) == 0);
    CHECK(UnixEnv::Received(env.dgram_abstract_denied()) == 'u');
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/granted.sock")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Path(d + "/other.sock")) == EPERM);
    // The same policy without the option: the programs decide abstract names.
    CHECK_FALSE(env.Apply(paths_only, false).abstract_unix_open);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-other")) == EPERM);
  }
  SECTION("an abstract grant: the programs decide abstract names despite the option") {
    CHECK_FALSE(env.Apply(env.Source(), true).abstract_unix_open);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-granted")) == 0);
    CHECK(RunIn(in, UnixOp::kStreamConnect, Abstract(abs + "-other")) == EPERM);
    CHECK(RunIn(env.sibling(), UnixOp::kStreamConnect, Abstract(abs + "-other")) == 0);
  }
}

}  // namespace
}  // namespace ward::test::ebpf
