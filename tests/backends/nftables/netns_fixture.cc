#include "tests/backends/nftables/netns_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "enforcers/linux/enforcer.h"

namespace ward::test {
namespace {

std::string ScratchLog() { return "/tmp/ward-nft-test-" + std::to_string(getpid()) + ".log"; }

int System(const std::string& command) {
  const int raw = std::system((command + " >>" + ScratchLog() + " 2>&1").c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

void Must(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("test setup failed: " + what + " (log: " + ScratchLog() + ")");
}

// ---- servers ------------------------------------------------------------------

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78  // linux/in6.h
#endif

// Serves `ports` until killed; writes one byte to `ready` (when >= 0) once
// every socket is bound.
[[noreturn]] void Serve(int ready, const std::vector<uint16_t>& ports) {
  // Dies with the test: a test that aborts (a sanitizer report, a failed
  // REQUIRE in a destructor) must not leave its server holding ctest's
  // output pipe, which hangs the suite until the test's timeout.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::vector<pollfd> fds;
  std::map<int, int> kind;  // fd -> 0 tcp listener, 1 udp, 2 tcp connection
  for (uint16_t port : ports) {
    for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
      int s = socket(AF_INET6, type | SOCK_NONBLOCK, 0);
      int zero = 0, one = 1;
      setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(port);
      if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) _exit(3);
      if (type == SOCK_STREAM && listen(s, 512) != 0) _exit(4);
      if (type == SOCK_DGRAM) {
        setsockopt(s, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
        // The answer's source is the address asked, which no interface
        // holds (a `local` route covers it): without freebind the kernel
        // refuses it (EINVAL) and no echo would go out.
        setsockopt(s, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);
      }
      fds.push_back({s, POLLIN, 0});
      kind[s] = type == SOCK_STREAM ? 0 : 1;
    }
  }
  if (ready >= 0 && (write(ready, "r", 1) != 1 || close(ready) != 0)) _exit(6);
  char buf[2048];
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    std::vector<pollfd> add;
    for (pollfd& p : fds) {
      if (!(p.revents & (POLLIN | POLLERR | POLLHUP))) continue;
      if (kind[p.fd] == 0) {
        int c = accept4(p.fd, nullptr, nullptr, SOCK_NONBLOCK);
        if (c >= 0) {
          add.push_back({c, POLLIN, 0});
          kind[c] = 2;
        }
      } else if (kind[p.fd] == 1) {
        // Answer from the address asked (IPV6_PKTINFO), as a real server
        // on that address would: a connected client takes nothing else,
        // and conntrack sees the answer as the flow's reply.
        sockaddr_in6 from{};
        char control[256];
        iovec iov{buf, sizeof buf};
        msghdr m{};
        m.msg_name = &from;
        m.msg_namelen = sizeof from;
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = sizeof control;
        ssize_t n = recvmsg(p.fd, &m, 0);
        if (n <= 0) continue;
        iov.iov_len = static_cast<size_t>(n);
        // An IPv4 datagram's IPV6_PKTINFO holds the mapped address asked:
        // the kernel takes it as the IPv4 source too.
        if (sendmsg(p.fd, &m, 0) < 0) {
          std::fprintf(stderr, "echo server: sendmsg: %s\n", std::strerror(errno));
        }
      } else {
        ssize_t n = read(p.fd, buf, sizeof buf);
        if (n > 0) {
          ssize_t w = write(p.fd, buf, n);
          (void)w;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          close(p.fd);
          kind.erase(p.fd);
          p.fd = -1;
        }
      }
    }
    std::erase_if(fds, [](const pollfd& p) { return p.fd < 0; });
    fds.insert(fds.end(), add.begin(), add.end());
  }
}

// In a forked child: joins `cgroup` (non-empty), the network namespace at
// `netns` (non-empty), then becomes `uid` (>= 0); exits on failure.
void EnterChild(const std::string& cgroup, int64_t uid, const std::string& netns) {
  if (!cgroup.empty()) std::ofstream(cgroup + "/cgroup.procs") << getpid() << std::flush;
  if (!netns.empty()) {  // before setuid: setns needs CAP_SYS_ADMIN
    const int ns = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(6);
    close(ns);
  }
  if (uid >= 0 && (setgid(static_cast<gid_t>(uid)) != 0 || setuid(static_cast<uid_t>(uid)) != 0)) {
    _exit(5);
  }
}

// ---- probes -------------------------------------------------------------------

struct Request {
  Op op;
  char address[64];
  char source[64];  // "" or the address the probe's socket is bound to
  uint16_t port;
  int timeout_ms;
};

struct Address {
  sockaddr_storage sa{};
  socklen_t len = 0;
  int family = AF_INET;
};

Address Parse(const char* text, uint16_t port) {
  Address a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.sa);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.sa);
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.len = sizeof *v4;
  } else {
    inet_pton(AF_INET6, text, &v6->sin6_addr);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.len = sizeof *v6;
    a.family = AF_INET6;
  }
  return a;
}

// Waits for `fd` to be readable (or writable); false on timeout.
bool Wait(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int n;
  while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  return n > 0;
}

Outcome Err() { return Failed(errno); }

// A socket for the probe, bound to its source when it has one.
int Open(const Request& r, int family, int type, int protocol = 0) {
  const int fd = socket(family, type, protocol);
  if (fd < 0 || r.source[0] == 0) return fd;
  const Address s = Parse(r.source, 0);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&s.sa), s.len) == 0) return fd;
  const int err = errno;
  close(fd);
  errno = err;
  return -1;
}

// Reads the echo of "ward" (any error the socket holds comes back as errno).
Outcome ReadEcho(int fd, int timeout_ms) {
  if (!Wait(fd, POLLIN, timeout_ms)) return Failed(kTimedOut);
  char buf[64];
  ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) return Err();
  if (n == 0) return Failed(EPIPE);
  return kOk;
}

Outcome TcpConnect(const Request& r, const Address& a, int* out_fd) {
  const int timeout_ms = r.timeout_ms;
  int fd = Open(r, a.family, SOCK_STREAM | SOCK_NONBLOCK);
  if (fd < 0) return Err();
  *out_fd = fd;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a.sa), a.len) != 0 && errno != EINPROGRESS) {
    return Err();
  }
  if (!Wait(fd, POLLOUT, timeout_ms)) return Failed(kTimedOut);
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return Failed(err);
  return kOk;
}

Outcome Echo(int fd, int timeout_ms) {
  if (send(fd, "ward", 4, MSG_NOSIGNAL) < 0) return Err();
  return ReadEcho(fd, timeout_ms);
}

int held = -1;

Outcome RunProbe(const Request& r) {
  const Address a = Parse(r.address, r.port);
  int fd = -1;
  Outcome o;
  switch (r.op) {
    case Op::kTcp:
      o = TcpConnect(r, a, &fd);
      if (o.ok) o = Echo(fd, r.timeout_ms);
      break;
    case Op::kTcpHold:
      if (held >= 0) close(held);
      held = -1;
      o = TcpConnect(r, a, &fd);
      if (o.ok) o = Echo(fd, r.timeout_ms);
      if (o.ok) std::swap(held, fd);
      break;
    case Op::kTcpHeldEcho:
      return held < 0 ? Failed(EBADF) : Echo(held, r.timeout_ms);
    case Op::kTcpHeldClose:
      if (held >= 0) close(held);
      held = -1;
      return kOk;
    case Op::kUdpConnected:
      fd = Open(r, a.family, SOCK_DGRAM);
      if (fd < 0) return Err();
      if (connect(fd, reinterpret_cast<const sockaddr*>(&a.sa), a.len) != 0) {
        o = Err();
      } else {
        o = Echo(fd, r.timeout_ms);
      }
      break;
    case Op::kUdpSendto:
      fd = Open(r, a.family, SOCK_DGRAM);
      if (fd < 0) return Err();
      o = sendto(fd, "ward", 4, 0, reinterpret_cast<const sockaddr*>(&a.sa), a.len) < 0
              ? Err()
              : ReadEcho(fd, r.timeout_ms);
      break;
    case Op::kUdpSendmsg: {
      fd = Open(r, a.family, SOCK_DGRAM);
      if (fd < 0) return Err();
      char data[] = "ward";
      iovec iov{data, 4};
      msghdr m{};
      m.msg_name = const_cast<sockaddr_storage*>(&a.sa);
      m.msg_namelen = a.len;
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      o = sendmsg(fd, &m, 0) < 0 ? Err() : ReadEcho(fd, r.timeout_ms);
      break;
    }
    case Op::kUdpSendmmsg: {
      fd = Open(r, a.family, SOCK_DGRAM);
      if (fd < 0) return Err();
      char data[] = "ward";
      iovec iov{data, 4};
      mmsghdr m[2] = {};
      for (mmsghdr& h : m) {
        h.msg_hdr.msg_name = const_cast<sockaddr_storage*>(&a.sa);
        h.msg_hdr.msg_namelen = a.len;
        h.msg_hdr.msg_iov = &iov;
        h.msg_hdr.msg_iovlen = 1;
      }
      const int sent = sendmmsg(fd, m, 2, 0);
      if (sent < 0) {
        o = Err();
      } else if (sent != 2) {
        o = Failed(EMSGSIZE);  // partial: not expected either way
      } else {
        o = ReadEcho(fd, r.timeout_ms);
      }
      break;
    }
    case Op::kRaw: {
      fd = Open(r, a.family, SOCK_RAW, 253);
      if (fd < 0) return Err();
      o = sendto(fd, "ward", 4, 0, reinterpret_cast<const sockaddr*>(&a.sa), a.len) < 0 ? Err()
                                                                                        : kOk;
      break;
    }
    case Op::kIcmp: {
      fd = Open(r, a.family, SOCK_DGRAM,
                a.family == AF_INET ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6});
      if (fd < 0) return Err();
      unsigned char echo[16] = {};
      echo[0] = a.family == AF_INET ? 8 : 128;  // echo request
      o = sendto(fd, echo, sizeof echo, 0, reinterpret_cast<const sockaddr*>(&a.sa), a.len) < 0
              ? Err()
              : ReadEcho(fd, r.timeout_ms);
      break;
    }
  }
  if (fd >= 0) close(fd);
  return o;
}

}  // namespace

void RequireRoot(const char* test) {
  if (geteuid() == 0) return;
  std::fprintf(stdout, "%s: needs root; skipped\n", test);
  std::fflush(stdout);
  std::_Exit(77);
}

const std::vector<uint16_t>& ServerPorts() {
  static const std::vector<uint16_t> ports = {22, 53, 80, 443, 1000, 5432, 8000, 8050, 8100, 8101};
  return ports;
}

namespace {

// The value after `name` in /proc/PID/net/<file>, whose lines are either
// "name value" (snmp6) or a header line of names and a line of values with
// the same prefix (netstat: "TcpExt: a b ...", "TcpExt: 1 2 ...").
uint64_t NetCounter(pid_t pid, const std::string& file, const std::string& prefix,
                    const std::string& name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/net/" + file);
  std::string line, header;
  while (std::getline(f, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (prefix.empty()) {
      uint64_t value = 0;
      if (first == name && fields >> value) return value;
      continue;
    }
    if (first != prefix) continue;
    if (header.empty()) {
      header = line;
      continue;
    }
    std::istringstream names(header);
    std::string key;
    names >> key;  // the prefix
    uint64_t value = 0;
    while (names >> key && fields >> value) {
      if (key == name) return value;
    }
    header.clear();
  }
  Must(false, "no " + name + " in /proc/" + std::to_string(pid) + "/net/" + file);
  return 0;
}

}  // namespace

uint64_t Snmp6(pid_t pid, const std::string& name) { return NetCounter(pid, "snmp6", "", name); }

uint64_t TcpExt(pid_t pid, const std::string& name) {
  return NetCounter(pid, "netstat", "TcpExt:", name);
}

Server::Server(const std::vector<uint16_t>& ports, const std::string& cgroup, int64_t uid,
               const std::string& netns) {
  int ready[2];
  Must(pipe2(ready, O_CLOEXEC) == 0, "pipe");
  pid_ = fork();
  if (pid_ == 0) {
    close(ready[0]);
    EnterChild(cgroup, uid, netns);
    Serve(ready[1], ports);
  }
  close(ready[1]);
  char c = 0;
  const bool up = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  Must(up, "echo servers did not start");
}

Server::~Server() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string Outcome::Describe() const {
  if (ok) return "ok";
  if (err == kTimedOut) return "timed out";
  return std::string("errno ") + std::to_string(err) + " (" + strerror(err) + ")";
}

TestNetns::TestNetns() {
  static int counter = 0;
  name_ = "ward-nft-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  Must(System("ip netns add " + name_) == 0, "ip netns add " + name_);
  original_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int fd = open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
  Must(fd >= 0 && setns(fd, CLONE_NEWNET) == 0, "setns " + name_);
  close(fd);
  Must(Sh("ip link set lo up") == 0, "lo up");
  Must(Sh("ip route add local 10.0.0.0/8 dev lo") == 0, "route 10/8");
  Must(Sh("ip -6 addr add fd00:200::1/64 dev lo") == 0, "fd00:200::1");
  Must(Sh("ip -6 route add local fd00:200::/64 dev lo") == 0, "route fd00:200::/64");
  Must(Sh("sysctl -qw net.ipv4.ping_group_range='0 2147483647'") == 0, "ping_group_range");
  server_ = fork();
  if (server_ == 0) Serve(-1, ServerPorts());
  // The servers are up once a TCP connect to the last port succeeds.
  for (int i = 0; i < 200; ++i) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(ServerPorts().back());
    a.sin_addr.s_addr = htonl(0x0ac80001);
    const bool up = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(s);
    if (up) return;
    usleep(10000);
  }
  Must(false, "servers did not start");
}

TestNetns::~TestNetns() {
  if (server_ > 0) {
    kill(server_, SIGKILL);
    waitpid(server_, nullptr, 0);
  }
  if (original_ >= 0) {
    setns(original_, CLONE_NEWNET);
    close(original_);
  }
  System("ip netns del " + name_);
}

int TestNetns::Sh(const std::string& command) const { return System(command); }

void TestNetns::FlushWardTables() const {
  System(
      "for t in $(nft -j list tables inet | grep -o '\"name\": \"ward_[^\"]*' | cut -d'\"' -f4);"
      " do nft delete table inet $t; done");
}

PeerNetns::PeerNetns(const std::string& link, int n, bool serve) : link_(link), n_(n) {
  name_ = "ward-nft-" + std::to_string(getpid()) + "-" + link;
  path_ = "/var/run/netns/" + name_;
  Must(System("ip netns add " + name_) == 0, "ip netns add " + name_);
  const std::string in = "nsenter --net=" + path_ + " ";
  // Before the veth end arrives: it takes the namespace's defaults.
  Must(System(in + "sysctl -qw net.ipv6.conf.default.router_solicitations=0"
                   " net.ipv6.conf.all.router_solicitations=0"
                   " net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0"
                   " net.ipv4.ping_group_range='0 2147483647'") == 0,
       "sysctls in " + name_);
  Must(System("sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1"
              " net.ipv6.conf.default.accept_dad=0") == 0,
       "forwarding");
  Must(System("ip link add " + link + " type veth peer name eth0 netns " + name_) == 0,
       "veth " + link);
  const std::string v4 = "172.30." + std::to_string(n) + ".", v6 = "fd00:30:" + std::to_string(n);
  Must(System("ip addr add " + v4 + "1/24 dev " + link) == 0, "router v4");
  Must(System("ip -6 addr add " + v6 + "::1/64 dev " + link + " nodad") == 0, "router v6");
  Must(System("ip link set " + link + " up") == 0, "router link up");
  const std::string ip = "ip -n " + name_ + " ";
  Must(System(ip + "link set lo up") == 0, "peer lo");
  for (const char* host : {"2", "3"}) {
    Must(System(ip + "addr add " + v4 + host + "/24 dev eth0") == 0, "peer v4");
    Must(System(ip + "-6 addr add " + v6 + "::" + host + "/64 dev eth0 nodad") == 0, "peer v6");
  }
  Must(System(ip + "link set eth0 up") == 0, "peer link up");
  Must(System(ip + "route add default via " + v4 + "1") == 0, "peer v4 route");
  Must(System(ip + "-6 route add default via " + v6 + "::1") == 0, "peer v6 route");
  if (!serve) return;
  int ready[2];
  Must(pipe2(ready, O_CLOEXEC) == 0, "pipe");
  server_ = fork();
  if (server_ == 0) {
    close(ready[0]);
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) _exit(2);
    Serve(ready[1], ServerPorts());
  }
  close(ready[1]);
  char c = 0;
  const bool up = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  Must(up, "servers in " + name_ + " did not start");
}

PeerNetns::~PeerNetns() {
  if (server_ > 0) {
    kill(server_, SIGKILL);
    waitpid(server_, nullptr, 0);
  }
  System("ip link del " + link_);  // both ends
  System("ip netns del " + name_);
}

void PeerNetns::FlushNeighbours() const {
  Must(System("ip neigh flush dev " + link_) == 0, "neigh flush " + link_);
  Must(System("ip -n " + name_ + " neigh flush dev eth0") == 0, "neigh flush in " + name_);
}

std::string PeerNetns::V4(int host) const {
  return "172.30." + std::to_string(n_) + "." + std::to_string(host);
}

std::string PeerNetns::V6(int host) const {
  return "fd00:30:" + std::to_string(n_) + "::" + std::to_string(host);
}

TestCgroup::TestCgroup(const std::string& leaf) {
  std::string error;
  const std::string mount = enforce::CgroupV2Mount(&error);
  Must(!mount.empty(), error);
  const std::string parent = mount + "/ward-nft-" + std::to_string(getpid());
  mkdir(parent.c_str(), 0755);
  path_ = parent + "/" + leaf;
  Must(mkdir(path_.c_str(), 0755) == 0, "mkdir " + path_);
}

TestCgroup::~TestCgroup() {
  // Workers have left (their destructors ran first); remove the leaf and,
  // when it is empty, the parent.
  rmdir(path_.c_str());
  rmdir(std::filesystem::path(path_).parent_path().c_str());
}

uint64_t TestCgroup::id() const {
  struct stat st;
  return stat(path_.c_str(), &st) == 0 ? st.st_ino : 0;
}

Worker::Worker(const std::string& cgroup, int64_t uid, const std::string& netns) {
  int sv[2];
  Must(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
  pid_ = fork();
  if (pid_ == 0) {
    close(sv[0]);
    EnterChild(cgroup, uid, netns);
    Request r;
    while (read(sv[1], &r, sizeof r) == sizeof r) {
      Outcome o = RunProbe(r);
      int reply[2] = {o.ok, o.err};
      if (write(sv[1], reply, sizeof reply) != sizeof reply) break;
    }
    _exit(0);
  }
  close(sv[1]);
  fd_ = sv[0];
}

Worker::~Worker() {
  close(fd_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

Outcome Worker::Run(Op op, const std::string& address, uint16_t port, int timeout_ms,
                    const std::string& source) {
  Request r{op, {}, {}, port, timeout_ms};
  std::snprintf(r.address, sizeof r.address, "%s", address.c_str());
  std::snprintf(r.source, sizeof r.source, "%s", source.c_str());
  Must(write(fd_, &r, sizeof r) == sizeof r, "worker request");
  int reply[2];
  Must(read(fd_, reply, sizeof reply) == sizeof reply, "worker reply");
  return {reply[0] != 0, reply[1]};
}

}  // namespace ward::test
