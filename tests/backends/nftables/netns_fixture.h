// [root] The environment the nftables enforcement tests run in: a fresh
// network namespace this process enters with setns() (so /sys and the
// cgroup v2 tree stay visible, unlike `ip netns exec`), with 10.0.0.0/8 and
// fd00:200::/64 routed locally on its `lo`; servers this test starts on the
// wildcard address; cgroups under the v2 mount found in /proc/mounts; and
// workers that run probes (connect, sendto, ping, ...) from inside a cgroup
// or as a user and report the syscall's outcome. Everything is removed in
// the destructors, also when a test fails; nothing leaves the namespace.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ward::test {

// Exits 77 (CTest: skipped) unless root.
void RequireRoot(const char* test);

// The ports the servers listen on (TCP and UDP echo, IPv4 and IPv6).
const std::vector<uint16_t>& ServerPorts();

// A counter of the IPv6 statistics (/proc/net/snmp6, e.g. "Icmp6InEchos")
// of the network namespace `pid` is in; REQUIREs it is there. An ICMPv6
// echo a ping socket sends returns no errno when refused: these counters
// tell an echo that never arrived from one whose reply was lost.
uint64_t Snmp6(pid_t pid, const std::string& name);
// A TCP extension counter (/proc/net/netstat, "TcpExt:" lines, e.g.
// "EmbryonicRsts") of the network namespace `pid` is in.
uint64_t TcpExt(pid_t pid, const std::string& name);

class TestNetns {
 public:
  TestNetns();  // creates, enters, configures, starts the servers
  ~TestNetns();
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;
  const std::string& name() const { return name_; }
  // Runs a shell command (ip, nft) in the namespace; returns its exit code.
  int Sh(const std::string& command) const;
  // Deletes every ward_ table in the namespace.
  void FlushWardTables() const;

 private:
  std::string name_;
  int original_ = -1;
  pid_t server_ = -1;
};

// A namespace behind a veth pair from the current one (the router: the
// TestNetns this process is in). `link` (at most 15 bytes) is the router's
// end, holding 172.30.N.1/24 and fd00:30:N::1/64; the namespace's end is
// `eth0`, holding 172.30.N.2 and .3, fd00:30:N::2 and ::3, with its default
// routes through the router, which forwards IPv4 and IPv6. With `serve`,
// the echo servers (ServerPorts) run in it too. No DAD, and the namespace
// sends no router solicitations: what leaves it is the probes and neighbour
// discovery only.
class PeerNetns {
 public:
  PeerNetns(const std::string& link, int n, bool serve);
  ~PeerNetns();
  PeerNetns(const PeerNetns&) = delete;
  PeerNetns& operator=(const PeerNetns&) = delete;
  const std::string& path() const { return path_; }  // /var/run/netns/...
  const std::string& link() const { return link_; }
  std::string V4(int host) const;  // 172.30.N.<host>
  std::string V6(int host) const;  // fd00:30:N::<host>
  // Forgets the link-layer addresses both ends learnt: the next packets
  // need neighbour discovery (IPv6) and ARP (IPv4) again.
  void FlushNeighbours() const;

 private:
  std::string name_, path_, link_;
  int n_ = 0;
  pid_t server_ = -1;
};

// Echo servers (TCP and UDP on `ports`, IPv4 and IPv6 on the wildcard
// address) run from a cgroup (path non-empty) and/or as a user (uid >= 0),
// in the current network namespace or in the one at `netns`: a workload
// whose inbound traffic a policy scopes. Up once the constructor returns.
class Server {
 public:
  Server(const std::vector<uint16_t>& ports, const std::string& cgroup, int64_t uid = -1,
         const std::string& netns = "");
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

class TestCgroup {
 public:
  explicit TestCgroup(const std::string& leaf);  // <v2 mount>/ward-nft-<pid>/<leaf>
  ~TestCgroup();
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;
  const std::string& path() const { return path_; }  // absolute
  uint64_t id() const;

 private:
  std::string path_;
};

// What a probe's syscalls returned: ok (the echo came back), or the errno of
// the call that failed; kTimedOut when no answer came (never a "denied").
struct Outcome {
  bool ok = false;
  int err = 0;
  std::string Describe() const;
  bool operator==(const Outcome&) const = default;
};
inline constexpr int kTimedOut = -1;
inline const Outcome kOk{true, 0};
inline Outcome Failed(int err) { return {false, err}; }

enum class Op {
  kTcp,           // connect, send, read the echo
  kUdpConnected,  // connect, send, recv
  kUdpSendto,     // unconnected sendto, recvfrom
  kUdpSendmsg,    // unconnected sendmsg
  kUdpSendmmsg,   // unconnected sendmmsg (two datagrams)
  kIcmp,          // ping socket echo
  kTcpHold,       // connect and keep the connection (one at a time)
  kTcpHeldEcho,   // send and read the echo on the kept connection
  kTcpHeldClose,
  kRaw,  // a raw IP socket of protocol 253 (experimental) sends one packet
};

// A process that runs probes from a cgroup (path non-empty) and/or as a
// user (uid >= 0), in the current network namespace or in the one at
// `netns` (a /var/run/netns path, entered with setns()).
class Worker {
 public:
  Worker(const std::string& cgroup, int64_t uid = -1, const std::string& netns = "");
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  // `address` is IPv4 or IPv6 text (an IPv4-mapped one goes through an
  // AF_INET6 socket). With `source` (an address of this namespace, of the
  // same family) the socket is bound to it first: the probe's source.
  Outcome Run(Op op, const std::string& address, uint16_t port = 0, int timeout_ms = 2000,
              const std::string& source = "");
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace ward::test
