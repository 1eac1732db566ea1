// A fresh network namespace with 10.0.0.0/8 and fd00::/64 routed locally on
// its `lo`, echo servers on the wildcard address, cgroups under the v2 mount,
// and probers: children that join a cgroup, enter the namespace with
// setns() and run one operation per request, reporting the exact errno.
// Everything is removed by the destructor, also when a test fails.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::test::ebpf {

// The ports the servers listen on (TCP and UDP, IPv4 and IPv6).
inline constexpr uint16_t kPorts[] = {22, 53, 80, 443, 5432, 8000, 8050, 8100, 9000};

enum class Op : int32_t {
  kTcp,          // connect(), then a round trip
  kUdpConnect,   // connect() + send(), then the echo
  kUdpSendto,    // sendto() on an unconnected socket, then the echo
  kUdpSendmsg,   // sendmsg() with msg_name
  kUdpSendmmsg,  // sendmmsg() of two messages
  kPing,         // ICMP / ICMPv6 echo over an unconnected ping socket
  kPingConnect,  // the same, connect() first
  kSocket,       // socket(family, type, protocol) only
  kHoldTcp,      // connect() and keep the connection (one at a time)
  kCheckHeld,    // a round trip on the held connection
  kPingSend,     // an unconnected ICMP / ICMPv6 echo, sent only: the socket is kept
  kPingReply,    // the echo reply on the kept ping socket, which is then closed
};

struct Probe {
  Op op = Op::kTcp;
  bool v6 = false;                 // the socket's family
  std::array<uint8_t, 16> addr{};  // v4 in the first four bytes
  uint16_t port = 0;
  int32_t type = 0, protocol = 0, family = 0;  // kSocket
};

// 0: the operation succeeded end to end (the reply came back); otherwise
// the errno of the first failing call (ETIMEDOUT: no reply in time).
using Outcome = int;

Probe V4(Op op, const std::string& addr, uint16_t port);
Probe V6(Op op, const std::string& addr, uint16_t port);  // "::ffff:10.1.2.3" is mapped

class Prober {
 public:
  // Forks a child that joins `cgroup` (a directory) and enters `netns`.
  Prober(const std::string& cgroup, const std::string& netns_path);
  ~Prober();
  Outcome Run(const Probe& p);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

class Environment {
 public:
  Environment();  // REQUIREs on failure; the destructor cleans up
  ~Environment();
  const std::string& netns_path() const { return netns_path_; }
  const std::string& cgroup_root() const { return cg_root_; }  // absolute
  std::string Cgroup(const std::string& name);                 // creates <root>/<name>
  const std::string& v2_mount() const { return mount_; }

 private:
  std::string netns_, netns_path_, mount_, cg_root_;
  std::vector<std::string> cgroups_;
  pid_t server_ = -1;
};

// A counter of the IPv6 statistics (/proc/net/snmp6, e.g. "Icmp6InEchos")
// of the network namespace `pid` is in; REQUIREs it is there.
uint64_t Snmp6(pid_t pid, const std::string& name);

// Compiles Ward source (the policy `name`, or its last one) to the IR;
// REQUIREs no errors.
ir::Policy CompilePolicy(const std::string& source, const std::string& name = "");

// Applies / removes through the enforcer; REQUIREs success.
void Apply(const ir::Policy& policy, const std::string& cgroup_dir);
void Remove(const std::string& policy);

}  // namespace ward::test::ebpf
