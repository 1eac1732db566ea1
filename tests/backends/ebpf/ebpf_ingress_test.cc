// [root] The ebpf enforcer's ingress for real (cgroup/bind4, bind6,
// cgroup_skb/ingress): in the fixture's fresh network namespace (10.0.0.0/8
// and fd00::/64 routed locally on lo), a workload in the enforced cgroup
// binds and listens, clients in another cgroup connect and send to it from
// chosen source addresses. The positive control of every denial is the same
// server in a sibling cgroup where nothing is attached, reached by the same
// client from the same source in the same namespace. A dropped SYN is a
// client timeout (ETIMEDOUT, never "any error"); a dropped datagram is a
// receive timeout at the workload.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "enforcers/linux/ebpf.h"
#include "tests/backends/ebpf/ebpf_fixture.h"

#include "tests/root_guard.h"
namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf ingress tests");

constexpr const char* kPolicyName = "ebpfingress";

// Rule 4 refuses 10.0.0.66 whatever the others allow; 7002 is allowed for
// nothing, 7001 for TCP only, 5353 for UDP only.
constexpr const char* kPolicy = R"(policy ebpfingress { network {
  allow tcp to 10.0.0.0/8 port 9000
  allow udp to 10.0.0.0/8 port 9000
  allow ingress tcp from 10.0.0.0/24 ports 7001, 7003
  deny ingress tcp from 10.0.0.66
  allow ingress udp from 10.0.0.0/24 port 5353
  allow ingress tcp from fd00::5 port 7001
  allow ingress udp from fd00::/120 port 5353
  allow icmp to 10.0.0.0/8
} })";

// The same, with the IPv4 TCP and UDP grants narrowed to 10.0.0.7.
constexpr const char* kNarrowed = R"(policy ebpfingress { network {
  allow tcp to 10.0.0.0/8 port 9000
  allow udp to 10.0.0.0/8 port 9000
  allow ingress tcp from 10.0.0.7 ports 7001, 7003
  allow ingress udp from 10.0.0.7 port 5353
} })";

enum class Act : int32_t {
  kBind,        // socket(type), bind(local); TCP: listen. Kept in `slot`
  kAccept,      // wait up to timeout_ms for a connection on `slot`; kept in `out`
  kRecv,        // wait up to timeout_ms for one byte on `slot`
  kConnect,     // TCP from (local) to (remote), non-blocking, timeout_ms; kept in `slot`
  kSendUdp,     // one datagram from (local) to (remote)
  kSend,        // one byte on `slot`
  kSendTo,      // one datagram on the UDP socket in `slot` to (remote)
  kUdpConnect,  // connect() the UDP socket in `slot` to (remote), send one byte
};

struct Req {
  Act act = Act::kBind;
  int32_t type = SOCK_STREAM;
  int32_t slot = 0, out = 0;
  int32_t timeout_ms = 500;
  bool v6 = false;
  bool dual = false;  // an AF_INET6 socket that also takes IPv4 (IPV6_V6ONLY off)
  std::array<uint8_t, 16> local{}, remote{};
  uint16_t local_port = 0, remote_port = 0;
};

socklen_t Sockaddr(bool v6, const std::array<uint8_t, 16>& a, uint16_t port, sockaddr_storage* ss) {
  std::memset(ss, 0, sizeof *ss);
  if (!v6) {
    auto* s = reinterpret_cast<sockaddr_in*>(ss);
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    std::memcpy(&s->sin_addr, a.data(), 4);
    return sizeof *s;
  }
  auto* s = reinterpret_cast<sockaddr_in6*>(ss);
  s->sin6_family = AF_INET6;
  s->sin6_port = htons(port);
  std::memcpy(&s->sin6_addr, a.data(), 16);
  return sizeof *s;
}

// 0 when `fd` is readable within `ms`, else ETIMEDOUT (or poll's errno).
int WaitReadable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  const int n = poll(&p, 1, ms);
  return n > 0 ? 0 : n == 0 ? ETIMEDOUT : errno;
}

// A socket whose local address may be any address of the locally routed
// ranges (fd00::/64 is routed, not assigned).
int Socket(const Req& r, int type) {
  const int fd = socket(r.v6 ? AF_INET6 : AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
  if (r.v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, r.dual ? &zero : &one, sizeof one);
  return fd;
}

int slots[16];

int Do(const Req& r) {
  sockaddr_storage local, remote;
  const socklen_t local_len = Sockaddr(r.v6, r.local, r.local_port, &local);
  const socklen_t remote_len = Sockaddr(r.v6, r.remote, r.remote_port, &remote);
  switch (r.act) {
    case Act::kBind: {
      const int fd = Socket(r, r.type);
      if (fd < 0) return errno;
      if (bind(fd, reinterpret_cast<sockaddr*>(&local), local_len) != 0 ||
          (r.type == SOCK_STREAM && listen(fd, 16) != 0)) {
        const int err = errno;
        close(fd);
        return err;
      }
      slots[r.slot] = fd;
      return 0;
    }
    case Act::kAccept: {
      if (const int rc = WaitReadable(slots[r.slot], r.timeout_ms)) return rc;
      const int fd = accept4(slots[r.slot], nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return errno;
      slots[r.out] = fd;
      return 0;
    }
    case Act::kRecv: {
      if (const int rc = WaitReadable(slots[r.slot], r.timeout_ms)) return rc;
      char c;
      return recv(slots[r.slot], &c, 1, MSG_DONTWAIT) == 1 ? 0 : errno;
    }
    case Act::kConnect: {
      const int fd = Socket(r, SOCK_STREAM);
      if (fd < 0) return errno;
      int rc = 0;
      if (bind(fd, reinterpret_cast<sockaddr*>(&local), local_len) != 0) {
        rc = 1000 + errno;  // not the decision under test
      } else {
        fcntl(fd, F_SETFL, O_NONBLOCK);
        if (connect(fd, reinterpret_cast<sockaddr*>(&remote), remote_len) != 0) {
          rc = errno;
          if (rc == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            const int n = poll(&p, 1, r.timeout_ms);
            socklen_t len = sizeof rc;
            if (n == 0) {
              rc = ETIMEDOUT;
            } else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &len) != 0) {
              rc = errno;
            }
          }
        }
      }
      if (rc != 0) {
        close(fd);
        return rc;
      }
      fcntl(fd, F_SETFL, 0);
      slots[r.slot] = fd;
      return 0;
    }
    case Act::kSendUdp: {
      const int fd = Socket(r, SOCK_DGRAM);
      if (fd < 0) return errno;
      char c = 'u';
      int rc = 0;
      if (bind(fd, reinterpret_cast<sockaddr*>(&local), local_len) != 0) {
        rc = 1000 + errno;
      } else if (sendto(fd, &c, 1, 0, reinterpret_cast<sockaddr*>(&remote), remote_len) != 1) {
        rc = errno;
      }
      close(fd);
      return rc;
    }
    case Act::kSend: {
      char c = 's';
      return send(slots[r.slot], &c, 1, MSG_NOSIGNAL) == 1 ? 0 : errno;
    }
    case Act::kSendTo: {
      char c = 't';
      return sendto(slots[r.slot], &c, 1, 0, reinterpret_cast<sockaddr*>(&remote), remote_len) == 1
                 ? 0
                 : errno;
    }
    case Act::kUdpConnect: {
      char c = 'c';
      if (connect(slots[r.slot], reinterpret_cast<sockaddr*>(&remote), remote_len) != 0) {
        return errno;
      }
      return send(slots[r.slot], &c, 1, 0) == 1 ? 0 : errno;
    }
  }
  return EINVAL;
}

// A child that joins a cgroup, enters the namespace with setns() and runs
// one request at a time, keeping its sockets between requests.
class Agent {
 public:
  Agent(const std::string& cgroup, const std::string& netns_path) {
    int a[2], b[2];
    REQUIRE(pipe2(a, O_CLOEXEC) == 0);
    REQUIRE(pipe2(b, O_CLOEXEC) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::ofstream procs(cgroup + "/cgroup.procs");
      procs << getpid() << std::flush;
      if (!procs) _exit(10);
      const int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(11);
      close(ns);
      Req r;
      while (read(a[0], &r, sizeof r) == sizeof r) {
        const int rc = Do(r);
        if (write(b[1], &rc, sizeof rc) != sizeof rc) _exit(12);
      }
      _exit(0);
    }
    close(a[0]);
    close(b[1]);
    to_ = a[1];
    from_ = b[0];
  }
  ~Agent() {
    close(to_);
    close(from_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  int Run(const Req& r) {
    REQUIRE(write(to_, &r, sizeof r) == sizeof r);
    int rc = -1;
    REQUIRE(read(from_, &rc, sizeof rc) == sizeof rc);
    return rc;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

std::array<uint8_t, 16> Addr(const std::string& a, bool v6) {
  std::array<uint8_t, 16> out{};
  REQUIRE(inet_pton(v6 ? AF_INET6 : AF_INET, a.c_str(), out.data()) == 1);
  return out;
}

// "10.0.0.1" or "fd00::1" (IPv6 when it holds a colon).
bool IsV6(const std::string& a) { return a.find(':') != std::string::npos; }

Req Bind(int type, const std::string& addr, uint16_t port, int slot, bool dual = false) {
  Req r;
  r.act = Act::kBind;
  r.type = type;
  r.v6 = IsV6(addr);
  r.dual = dual;
  r.local = Addr(addr, r.v6);
  r.local_port = port;
  r.slot = slot;
  return r;
}

Req Accept(int slot, int out) {
  Req r;
  r.act = Act::kAccept;
  r.slot = slot;
  r.out = out;
  return r;
}

Req Recv(int slot) {
  Req r;
  r.act = Act::kRecv;
  r.slot = slot;
  return r;
}

Req Connect(const std::string& from, uint16_t from_port, const std::string& to, uint16_t port,
            int slot = 0) {
  Req r;
  r.act = Act::kConnect;
  r.v6 = IsV6(to);
  r.local = Addr(from, r.v6);
  r.local_port = from_port;
  r.remote = Addr(to, r.v6);
  r.remote_port = port;
  r.slot = slot;
  r.dual = to.rfind("::ffff:", 0) == 0;  // an AF_INET6 socket speaking IPv4
  return r;
}

Req SendUdp(const std::string& from, uint16_t from_port, const std::string& to, uint16_t port) {
  Req r = Connect(from, from_port, to, port);
  r.act = Act::kSendUdp;
  return r;
}

Req Send(int slot) {
  Req r;
  r.act = Act::kSend;
  r.slot = slot;
  return r;
}

struct Removal {
  ~Removal() {
    bool removed;
    std::string error;
    enforce::EbpfRemove(kPolicyName, &removed, &error);
  }
};

// Waits for `n` event lines (up to two seconds).
std::vector<std::string> Events(enforce::EbpfEventReader& reader, size_t n) {
  std::vector<std::string> lines;
  std::string error;
  for (int i = 0; i < 20 && lines.size() < n; ++i) REQUIRE(reader.Poll(100, &lines, &error));
  return lines;
}

// The processes of most cases: `in` in the enforced cgroup, `free` in a
// sibling (the controls), `client` in a third cgroup; Enforce() applies
// kPolicy to the enforced cgroup and opens its event reader.
struct Scene {
  Environment env;
  Removal removal;
  const std::string enforced = env.Cgroup("enforced"), sibling = env.Cgroup("sibling"),
                    clients = env.Cgroup("clients");
  Agent in{enforced, env.netns_path()}, free{sibling, env.netns_path()},
      client{clients, env.netns_path()};
  std::unique_ptr<enforce::EbpfEventReader> reader;

  void Enforce() {
    Apply(CompilePolicy(kPolicy), enforced);
    std::string error;
    reader = enforce::EbpfEventReader::Open(kPolicyName, &error);
    INFO(error);
    REQUIRE(reader);
  }
};

TEST_CASE_METHOD(Scene, "bind: a port no ingress rule allows is refused with EPERM, port 0 is not",
                 "[root]") {
  Enforce();

  // Nothing allows 7002; 7001 is TCP only, 5353 UDP only.
  CHECK(in.Run(Bind(SOCK_STREAM, "0.0.0.0", 7002, 1)) == EPERM);
  CHECK(in.Run(Bind(SOCK_DGRAM, "0.0.0.0", 7002, 1)) == EPERM);
  CHECK(in.Run(Bind(SOCK_DGRAM, "10.0.0.1", 7001, 1)) == EPERM);
  CHECK(in.Run(Bind(SOCK_STREAM, "10.0.0.1", 5353, 1)) == EPERM);
  CHECK(in.Run(Bind(SOCK_STREAM, "::", 7002, 1)) == EPERM);
  CHECK(in.Run(Bind(SOCK_DGRAM, "::", 7002, 1, /*dual=*/true)) == EPERM);
  // The controls: the same binds where nothing is attached.
  CHECK(free.Run(Bind(SOCK_STREAM, "0.0.0.0", 7002, 1)) == 0);
  CHECK(free.Run(Bind(SOCK_DGRAM, "0.0.0.0", 7002, 2)) == 0);
  CHECK(free.Run(Bind(SOCK_DGRAM, "10.0.0.1", 7001, 3)) == 0);
  CHECK(free.Run(Bind(SOCK_STREAM, "::", 7002, 4)) == 0);
  // Allowed ports, both families.
  CHECK(in.Run(Bind(SOCK_STREAM, "10.0.0.1", 7001, 1)) == 0);
  CHECK(in.Run(Bind(SOCK_DGRAM, "10.0.0.1", 5353, 2)) == 0);
  CHECK(in.Run(Bind(SOCK_STREAM, "fd00::1", 7001, 3)) == 0);
  CHECK(in.Run(Bind(SOCK_DGRAM, "fd00::1", 5353, 4)) == 0);
  // Port 0: the kernel picks an ephemeral port (clients do this).
  CHECK(in.Run(Bind(SOCK_STREAM, "0.0.0.0", 0, 5)) == 0);
  CHECK(in.Run(Bind(SOCK_DGRAM, "::", 0, 6)) == 0);

  CHECK(Events(*reader, 6) == std::vector<std::string>{
                                  "bind to port 7002/tcp denied (no rule matched)",
                                  "bind to port 7002/udp denied (no rule matched)",
                                  "bind to port 7001/udp denied (no rule matched)",
                                  "bind to port 5353/tcp denied (no rule matched)",
                                  "bind to port 7002/tcp denied (no rule matched)",
                                  "bind to port 7002/udp denied (no rule matched)",
                              });
}

TEST_CASE_METHOD(Scene, "TCP: a SYN from a source the ingress rules do not allow is dropped",
                 "[root]") {
  // The listeners exist before the policy: the SYN check does not depend on
  // how the socket was bound.
  REQUIRE(in.Run(Bind(SOCK_STREAM, "10.0.0.1", 7001, 1)) == 0);
  REQUIRE(free.Run(Bind(SOCK_STREAM, "10.0.0.2", 7001, 1)) == 0);
  Enforce();

  // Allowed source: connected and accepted, then data flows both ways.
  REQUIRE(client.Run(Connect("10.0.0.5", 0, "10.0.0.1", 7001, 1)) == 0);
  REQUIRE(in.Run(Accept(1, 2)) == 0);
  CHECK(client.Run(Send(1)) == 0);
  CHECK(in.Run(Recv(2)) == 0);
  CHECK(in.Run(Send(2)) == 0);
  CHECK(client.Run(Recv(1)) == 0);
  // A source no rule allows, and one a deny refuses: the SYN is dropped.
  CHECK(client.Run(Connect("10.1.0.5", 40001, "10.0.0.1", 7001, 3)) == ETIMEDOUT);
  CHECK(client.Run(Connect("10.0.0.66", 40002, "10.0.0.1", 7001, 3)) == ETIMEDOUT);
  CHECK(in.Run(Accept(1, 3)) == ETIMEDOUT);
  // The controls: the same sources reach the same port in the sibling.
  CHECK(client.Run(Connect("10.1.0.5", 0, "10.0.0.2", 7001, 4)) == 0);
  CHECK(client.Run(Connect("10.0.0.66", 0, "10.0.0.2", 7001, 5)) == 0);
  CHECK(free.Run(Accept(1, 2)) == 0);

  CHECK(Events(*reader, 2) ==
        std::vector<std::string>{
            "accept from 10.1.0.5:40001 on port 7001 denied (no rule matched)",
            "accept from 10.0.0.66:40002 on port 7001 denied (rule 4: deny ingress tcp from "
            "10.0.0.66)",
        });
}

TEST_CASE_METHOD(Scene, "UDP: a datagram to a bound socket from a source not allowed is dropped",
                 "[root]") {
  Enforce();
  REQUIRE(in.Run(Bind(SOCK_DGRAM, "10.0.0.1", 5353, 1)) == 0);
  REQUIRE(free.Run(Bind(SOCK_DGRAM, "10.0.0.2", 5353, 1)) == 0);

  REQUIRE(client.Run(SendUdp("10.0.0.5", 0, "10.0.0.1", 5353)) == 0);
  CHECK(in.Run(Recv(1)) == 0);
  REQUIRE(client.Run(SendUdp("10.1.0.5", 40003, "10.0.0.1", 5353)) == 0);
  CHECK(in.Run(Recv(1)) == ETIMEDOUT);
  // The control: the same datagram to the sibling's socket.
  REQUIRE(client.Run(SendUdp("10.1.0.5", 40003, "10.0.0.2", 5353)) == 0);
  CHECK(free.Run(Recv(1)) == 0);
  // Allowed again after the drop (nothing was left queued).
  REQUIRE(client.Run(SendUdp("10.0.0.9", 0, "10.0.0.1", 5353)) == 0);
  CHECK(in.Run(Recv(1)) == 0);

  CHECK(Events(*reader, 1) == std::vector<std::string>{
                                  "udp receive from 10.1.0.5:40003 on port 5353 denied (no rule "
                                  "matched)",
                              });
}

TEST_CASE("the workload's own TCP and UDP flows get their replies", "[root]") {
  Environment env;
  Removal removal;
  const std::string enforced = env.Cgroup("enforced");
  Prober in(enforced, env.netns_path());
  Agent workload(enforced, env.netns_path());
  Apply(CompilePolicy(kPolicy), enforced);
  // The fixture's echo servers answer from 10.0.0.1:9000, an address and
  // port no ingress rule names.
  CHECK(in.Run(V4(Op::kTcp, "10.0.0.1", 9000)) == 0);
  CHECK(in.Run(V4(Op::kUdpSendto, "10.0.0.1", 9000)) == 0);
  CHECK(in.Run(V4(Op::kUdpConnect, "10.0.0.1", 9000)) == 0);
  CHECK(in.Run(V6(Op::kTcp, "::ffff:10.0.0.1", 9000)) == 0);
  // A ping socket receives the echo reply: no ingress icmp rule is needed.
  CHECK(in.Run(V4(Op::kPing, "10.0.0.1", 0)) == 0);
  // The egress rules still refuse: the controls that these probes decide.
  CHECK(in.Run(V4(Op::kTcp, "10.0.0.1", 443)) == EPERM);
  // The echo server answers from the address asked: 10.2.0.1, which no
  // ingress rule allows.
  CHECK(in.Run(V4(Op::kUdpSendto, "10.2.0.1", 9000)) == 0);
  // A socket explicitly bound to an allowed port: unconnected, it receives
  // only what the ingress rules allow, so the reply is dropped; connected,
  // the kernel gives it only its peer's datagrams (connect decided the peer
  // by the egress rules), so the reply passes.
  REQUIRE(workload.Run(Bind(SOCK_DGRAM, "0.0.0.0", 5353, 1)) == 0);
  Req to_echo = Connect("0.0.0.0", 0, "10.2.0.1", 9000, 1);
  to_echo.act = Act::kSendTo;
  CHECK(workload.Run(to_echo) == 0);
  CHECK(workload.Run(Recv(1)) == ETIMEDOUT);
  to_echo.act = Act::kUdpConnect;
  CHECK(workload.Run(to_echo) == 0);
  CHECK(workload.Run(Recv(1)) == 0);
}

TEST_CASE_METHOD(Scene, "IPv6 sources, and IPv4 sources on a dual-stack socket (mapped)",
                 "[root]") {
  Enforce();

  REQUIRE(in.Run(Bind(SOCK_STREAM, "fd00::1", 7001, 1)) == 0);
  REQUIRE(free.Run(Bind(SOCK_STREAM, "fd00::2", 7001, 1)) == 0);
  CHECK(client.Run(Connect("fd00::5", 0, "fd00::1", 7001, 1)) == 0);
  CHECK(in.Run(Accept(1, 2)) == 0);
  CHECK(client.Run(Connect("fd00::6", 40004, "fd00::1", 7001, 2)) == ETIMEDOUT);
  CHECK(client.Run(Connect("fd00::6", 0, "fd00::2", 7001, 3)) == 0);  // control

  REQUIRE(in.Run(Bind(SOCK_DGRAM, "fd00::1", 5353, 3)) == 0);
  REQUIRE(free.Run(Bind(SOCK_DGRAM, "fd00::2", 5353, 3)) == 0);
  REQUIRE(client.Run(SendUdp("fd00::7", 0, "fd00::1", 5353)) == 0);
  CHECK(in.Run(Recv(3)) == 0);
  REQUIRE(client.Run(SendUdp("fd00::1:5", 40005, "fd00::1", 5353)) == 0);
  CHECK(in.Run(Recv(3)) == ETIMEDOUT);
  REQUIRE(client.Run(SendUdp("fd00::1:5", 40005, "fd00::2", 5353)) == 0);
  CHECK(free.Run(Recv(3)) == 0);  // control

  // AF_INET6 listeners that take IPv4 (bound to a mapped address, so that
  // the control can listen on the same port): IPv4 clients arrive as
  // ::ffff:a.b.c.d and are decided by the IPv4 rules.
  REQUIRE(in.Run(Bind(SOCK_STREAM, "::ffff:10.0.0.1", 7003, 4, /*dual=*/true)) == 0);
  REQUIRE(free.Run(Bind(SOCK_STREAM, "::ffff:10.0.0.2", 7003, 4, /*dual=*/true)) == 0);
  CHECK(client.Run(Connect("10.0.0.5", 0, "10.0.0.1", 7003, 4)) == 0);
  CHECK(in.Run(Accept(4, 5)) == 0);
  CHECK(client.Run(Connect("::ffff:10.0.0.6", 0, "::ffff:10.0.0.1", 7003, 5)) == 0);
  CHECK(in.Run(Accept(4, 6)) == 0);
  CHECK(client.Run(Connect("10.1.0.5", 40006, "10.0.0.1", 7003, 6)) == ETIMEDOUT);
  CHECK(client.Run(Connect("::ffff:10.1.0.6", 40007, "::ffff:10.0.0.1", 7003, 6)) == ETIMEDOUT);
  CHECK(in.Run(Accept(4, 6)) == ETIMEDOUT);
  CHECK(client.Run(Connect("10.1.0.5", 0, "10.0.0.2", 7003, 7)) == 0);  // control

  CHECK(Events(*reader, 4) ==
        std::vector<std::string>{
            "accept from [fd00::6]:40004 on port 7001 denied (no rule matched)",
            "udp receive from [fd00::1:5]:40005 on port 5353 denied (no rule matched)",
            "accept from 10.1.0.5:40006 on port 7003 denied (no rule matched)",
            "accept from 10.1.0.6:40007 on port 7003 denied (no rule matched)",
        });
}

TEST_CASE("a re-apply that narrows ingress drops new inbound flows at once", "[root]") {
  Environment env;
  Removal removal;
  const std::string enforced = env.Cgroup("enforced");
  const std::string clients = env.Cgroup("clients");
  Agent in(enforced, env.netns_path());
  Agent client(clients, env.netns_path());
  Apply(CompilePolicy(kPolicy), enforced);
  REQUIRE(in.Run(Bind(SOCK_STREAM, "10.0.0.1", 7001, 1)) == 0);
  REQUIRE(in.Run(Bind(SOCK_DGRAM, "10.0.0.1", 5353, 2)) == 0);
  REQUIRE(client.Run(Connect("10.0.0.5", 0, "10.0.0.1", 7001, 1)) == 0);
  REQUIRE(in.Run(Accept(1, 3)) == 0);
  REQUIRE(client.Run(SendUdp("10.0.0.5", 0, "10.0.0.1", 5353)) == 0);
  REQUIRE(in.Run(Recv(2)) == 0);

  Apply(CompilePolicy(kNarrowed), enforced);
  CHECK(client.Run(Connect("10.0.0.5", 0, "10.0.0.1", 7001, 2)) == ETIMEDOUT);
  REQUIRE(client.Run(SendUdp("10.0.0.5", 0, "10.0.0.1", 5353)) == 0);
  CHECK(in.Run(Recv(2)) == ETIMEDOUT);
  // What the narrowed policy still allows (the control in the same state).
  CHECK(client.Run(Connect("10.0.0.7", 0, "10.0.0.1", 7001, 3)) == 0);
  CHECK(in.Run(Accept(1, 4)) == 0);
  REQUIRE(client.Run(SendUdp("10.0.0.7", 0, "10.0.0.1", 5353)) == 0);
  CHECK(in.Run(Recv(2)) == 0);
  // Stateless: a connection accepted before the narrowing is not cut.
  CHECK(client.Run(Send(1)) == 0);
  CHECK(in.Run(Recv(3)) == 0);
  // No port is allowed from any address any more but 7001, 7003 and 5353.
  CHECK(in.Run(Bind(SOCK_STREAM, "10.0.0.1", 7002, 5)) == EPERM);
}

}  // namespace
}  // namespace ward::test::ebpf
