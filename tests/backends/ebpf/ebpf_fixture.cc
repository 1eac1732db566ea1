#include "tests/backends/ebpf/ebpf_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "enforcers/linux/ebpf.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test::ebpf {
namespace {

int Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

bool ReadAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

socklen_t Sockaddr(const Probe& p, sockaddr_storage* ss) {
  std::memset(ss, 0, sizeof *ss);
  if (!p.v6) {
    auto* s = reinterpret_cast<sockaddr_in*>(ss);
    s->sin_family = AF_INET;
    s->sin_port = htons(p.port);
    std::memcpy(&s->sin_addr, p.addr.data(), 4);
    return sizeof *s;
  }
  auto* s = reinterpret_cast<sockaddr_in6*>(ss);
  s->sin6_family = AF_INET6;
  s->sin6_port = htons(p.port);
  std::memcpy(&s->sin6_addr, p.addr.data(), 16);
  return sizeof *s;
}

void Timeouts(int fd) {
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// The errno of a receive that got nothing: a timeout is ETIMEDOUT.
int RecvErr() { return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno; }

int RoundTrip(int fd) {
  char c = 'x';
  if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) return errno;
  if (recv(fd, &c, 1, 0) != 1) return RecvErr();
  return 0;
}

int held_fd = -1, held_ping = -1;

uint8_t* EchoRequest(uint8_t (&pkt)[16], bool v6) {
  std::memset(pkt, 0, sizeof pkt);
  pkt[0] = v6 ? 128 : ICMP_ECHO;  // echo request; the kernel sets id and checksum
  pkt[7] = 1;
  return pkt;
}

Outcome DoProbe(const Probe& p) {
  sockaddr_storage ss;
  socklen_t len = Sockaddr(p, &ss);
  auto* sa = reinterpret_cast<sockaddr*>(&ss);
  const int family = p.v6 ? AF_INET6 : AF_INET;
  switch (p.op) {
    case Op::kSocket: {
      int fd = socket(p.family, p.type, p.protocol);
      if (fd < 0) return errno;
      close(fd);
      return 0;
    }
    case Op::kCheckHeld:
      return held_fd < 0 ? EBADF : RoundTrip(held_fd);
    case Op::kTcp:
    case Op::kHoldTcp: {
      int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return errno;
      Timeouts(fd);
      int rc = connect(fd, sa, len) == 0 ? RoundTrip(fd) : errno;
      if (rc == 0 && p.op == Op::kHoldTcp) {
        if (held_fd >= 0) close(held_fd);
        held_fd = fd;
      } else {
        close(fd);
      }
      return rc;
    }
    case Op::kPing:
    case Op::kPingConnect: {
      int fd =
          socket(family, SOCK_DGRAM | SOCK_CLOEXEC, p.v6 ? int{IPPROTO_ICMPV6} : int{IPPROTO_ICMP});
      if (fd < 0) return errno;
      Timeouts(fd);
      uint8_t pkt[16];
      EchoRequest(pkt, p.v6);
      int rc = 0;
      if (p.op == Op::kPingConnect && connect(fd, sa, len) != 0) {
        rc = errno;
      } else if (sendto(fd, pkt, sizeof pkt, 0, p.op == Op::kPingConnect ? nullptr : sa,
                        p.op == Op::kPingConnect ? 0 : len) < 0) {
        rc = errno;
      } else if (recv(fd, pkt, sizeof pkt, 0) < 0) {
        rc = RecvErr();
      }
      close(fd);
      return rc;
    }
    case Op::kPingSend: {
      if (held_ping >= 0) close(held_ping);
      held_ping =
          socket(family, SOCK_DGRAM | SOCK_CLOEXEC, p.v6 ? int{IPPROTO_ICMPV6} : int{IPPROTO_ICMP});
      if (held_ping < 0) return errno;
      Timeouts(held_ping);
      uint8_t pkt[16];
      return sendto(held_ping, EchoRequest(pkt, p.v6), sizeof pkt, 0, sa, len) < 0 ? errno : 0;
    }
    case Op::kPingReply: {
      if (held_ping < 0) return EBADF;
      uint8_t pkt[16];
      int rc = recv(held_ping, pkt, sizeof pkt, 0) < 0 ? RecvErr() : 0;
      close(held_ping);
      held_ping = -1;
      return rc;
    }
    case Op::kUdpConnect:
    case Op::kUdpSendto:
    case Op::kUdpSendmsg:
    case Op::kUdpSendmmsg: {
      int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return errno;
      Timeouts(fd);
      char c = 'u';
      int rc = 0;
      iovec iov{&c, 1};
      msghdr mh{};
      mh.msg_name = sa;
      mh.msg_namelen = len;
      mh.msg_iov = &iov;
      mh.msg_iovlen = 1;
      if (p.op == Op::kUdpConnect) {
        if (connect(fd, sa, len) != 0 || send(fd, &c, 1, 0) != 1) rc = errno;
      } else if (p.op == Op::kUdpSendto) {
        if (sendto(fd, &c, 1, 0, sa, len) != 1) rc = errno;
      } else if (p.op == Op::kUdpSendmsg) {
        if (sendmsg(fd, &mh, 0) != 1) rc = errno;
      } else {
        mmsghdr mm[2] = {};
        mm[0].msg_hdr = mh;
        mm[1].msg_hdr = mh;
        int n = sendmmsg(fd, mm, 2, 0);
        if (n != 2) rc = n < 0 ? errno : EIO;
      }
      if (rc == 0 && recv(fd, &c, 1, 0) != 1) rc = RecvErr();
      close(fd);
      return rc;
    }
  }
  return EINVAL;
}

// Echoes one datagram from the address it was sent to (a connected client
// accepts nothing else; on a local route the kernel could pick another).
void EchoDatagram(int fd) {
  char buf[64];
  char control[128];
  sockaddr_storage from;
  iovec iov{buf, sizeof buf};
  msghdr mh{};
  mh.msg_name = &from;
  mh.msg_namelen = sizeof from;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n = recvmsg(fd, &mh, 0);
  if (n <= 0) return;
  iov.iov_len = static_cast<size_t>(n);
  // The same control message (IP_PKTINFO / IPV6_PKTINFO) sets the source.
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      reinterpret_cast<in_pktinfo*>(CMSG_DATA(c))->ipi_ifindex = 0;
      reinterpret_cast<in_pktinfo*>(CMSG_DATA(c))->ipi_spec_dst =
          reinterpret_cast<in_pktinfo*>(CMSG_DATA(c))->ipi_addr;
    }
    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      reinterpret_cast<in6_pktinfo*>(CMSG_DATA(c))->ipi6_ifindex = 0;
    }
  }
  sendmsg(fd, &mh, 0);
}

// Echo servers on every port of kPorts: TCP (accepted connections kept and
// echoed) and UDP, IPv4 and IPv6, on the wildcard address.
[[noreturn]] void Serve() {
  std::vector<pollfd> fds;
  std::vector<int> kinds;  // 0 listener, 1 udp, 2 connection
  for (uint16_t port : kPorts) {
    for (int family : {AF_INET, AF_INET6}) {
      for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
        int fd = socket(family, type | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (type == SOCK_DGRAM) {  // replies leave from the address asked
          if (family == AF_INET) setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
          if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
          // fd00::/64 is routed locally but not assigned: free bind lets the
          // reply leave from it.
          setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
        }
        sockaddr_storage ss{};
        Probe any;
        any.v6 = family == AF_INET6;
        any.port = port;
        socklen_t len = Sockaddr(any, &ss);
        if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) _exit(3);
        if (type == SOCK_STREAM && listen(fd, 512) != 0) _exit(4);
        fds.push_back({fd, POLLIN, 0});
        kinds.push_back(type == SOCK_STREAM ? 0 : 1);
      }
    }
  }
  if (write(STDOUT_FILENO, "r", 1) != 1) _exit(5);
  while (true) {
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      int fd = fds[i].fd;
      if (kinds[i] == 0) {
        int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          fds.push_back({c, POLLIN, 0});
          kinds.push_back(2);
        }
      } else if (kinds[i] == 1) {
        EchoDatagram(fd);
      } else {
        char buf[64];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
          send(fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
        } else {
          close(fd);
          fds[i].fd = -1;  // poll ignores it
        }
      }
      fds[i].revents = 0;
    }
  }
}

}  // namespace

Probe V4(Op op, const std::string& addr, uint16_t port) {
  Probe p;
  p.op = op;
  p.port = port;
  REQUIRE(inet_pton(AF_INET, addr.c_str(), p.addr.data()) == 1);
  return p;
}

Probe V6(Op op, const std::string& addr, uint16_t port) {
  Probe p;
  p.op = op;
  p.v6 = true;
  p.port = port;
  REQUIRE(inet_pton(AF_INET6, addr.c_str(), p.addr.data()) == 1);
  return p;
}

Prober::Prober(const std::string& cgroup, const std::string& netns_path) {
  int a[2], b[2];
  REQUIRE(pipe2(a, O_CLOEXEC) == 0);
  REQUIRE(pipe2(b, O_CLOEXEC) == 0);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    // Join the cgroup first: `ip netns exec` would remount /sys and hide it.
    if (!WriteFile(cgroup + "/cgroup.procs", std::to_string(getpid()))) _exit(10);
    int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(11);
    close(ns);
    Probe p;
    while (ReadAll(a[0], &p, sizeof p)) {
      Outcome o = DoProbe(p);
      if (write(b[1], &o, sizeof o) != sizeof o) _exit(12);
    }
    _exit(0);
  }
  close(a[0]);
  close(b[1]);
  to_ = a[1];
  from_ = b[0];
}

Prober::~Prober() {
  close(to_);
  close(from_);
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

Outcome Prober::Run(const Probe& p) {
  REQUIRE(write(to_, &p, sizeof p) == sizeof p);
  Outcome o = -1;
  REQUIRE(ReadAll(from_, &o, sizeof o));
  return o;
}

Environment::Environment() {
  netns_ = "ward-ebpf-" + std::to_string(getpid());
  netns_path_ = "/var/run/netns/" + netns_;
  Sh("ip netns del " + netns_);
  REQUIRE(Sh("ip netns add " + netns_) == 0);
  const std::string ip = "ip -n " + netns_ + " ";
  REQUIRE(Sh(ip + "link set lo up") == 0);
  REQUIRE(Sh(ip + "route add local 10.0.0.0/8 dev lo") == 0);
  REQUIRE(Sh(ip + "-6 route add local fd00::/64 dev lo") == 0);
  std::string error;
  mount_ = enforce::CgroupV2Mount(&error);
  REQUIRE(!mount_.empty());
  cg_root_ = mount_ + "/" + netns_;
  rmdir(cg_root_.c_str());
  REQUIRE(mkdir(cg_root_.c_str(), 0755) == 0);

  int ready[2];
  REQUIRE(pipe(ready) == 0);
  server_ = fork();
  REQUIRE(server_ >= 0);
  if (server_ == 0) {
    int ns = open(netns_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(2);
    // Ping sockets for every group (root's included), in this namespace only.
    WriteFile("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");
    dup2(ready[1], STDOUT_FILENO);
    close(ready[0]);
    Serve();
  }
  close(ready[1]);
  char c = 0;
  bool ok = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  REQUIRE(ok);
}

std::string Environment::Cgroup(const std::string& name) {
  std::string dir = cg_root_ + "/" + name;
  REQUIRE((mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST));
  cgroups_.push_back(dir);
  return dir;
}

Environment::~Environment() {
  if (server_ > 0) {
    kill(server_, SIGKILL);
    waitpid(server_, nullptr, 0);
  }
  // Deepest first.
  for (auto it = cgroups_.rbegin(); it != cgroups_.rend(); ++it) rmdir(it->c_str());
  rmdir(cg_root_.c_str());
  Sh("ip netns del " + netns_);
}

uint64_t Snmp6(pid_t pid, const std::string& name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/net/snmp6");
  std::string key;
  uint64_t value = 0;
  while (f >> key >> value) {
    if (key == name) return value;
  }
  FAIL("no " << name << " in /proc/" << pid << "/net/snmp6");
  return 0;
}

ir::Policy CompilePolicy(const std::string& source, const std::string& name) {
  auto front = CheckSource(source);
  INFO(source << "\n" << front->text);
  REQUIRE_FALSE(front->sink.has_errors());
  const ast::File* f = front->program.file(front->program.roots.at(0));
  REQUIRE(f != nullptr);
  const ast::Policy* policy = &f->policies.back();
  for (const ast::Policy& p : f->policies) {
    if (p.name.text == name) policy = &p;
  }
  INFO("policy " << name);
  REQUIRE((name.empty() || policy->name.text == name));
  DiagnosticSink sink;
  ir::Policy p = ir::Lower(front->program, *policy, sink);
  REQUIRE_FALSE(sink.has_errors());
  return p;
}

void Apply(const ir::Policy& policy, const std::string& cgroup_dir) {
  std::string error;
  std::optional<enforce::Cgroup> cg = enforce::ResolveCgroup(cgroup_dir, &error);
  INFO(error);
  REQUIRE(cg);
  DiagnosticSink sink;
  enforce::EbpfApplyResult r;
  bool ok = enforce::EbpfApply(policy, *cg, {}, sink, &r, &error);
  INFO(error);
  REQUIRE(ok);
}

void Remove(const std::string& policy) {
  bool removed = false;
  std::string error;
  INFO(error);
  REQUIRE(enforce::EbpfRemove(policy, &removed, &error));
}

}  // namespace ward::test::ebpf
