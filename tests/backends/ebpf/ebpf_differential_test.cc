// [root] Differential: random policies (Ward source text from
// tests/network_cases.h: most of them hold an awkward pair of overlapping
// rules of opposite verdicts, in one policy or across extends) and
// thousands of (protocol, address, port) tuples in the ranges the test's own
// namespace routes locally, half of them at the pair's edges; the IR's
// decision must equal the reference's (network_cases.h, over the rules as
// generated) and what the live eBPF programs do, read from the syscall's
// outcome (0 end to end, or EPERM).
// An unconnected ICMPv6 echo has no errno to read (the backstop's drop is
// not reported to sendto()): its decision is read from the backstop's event,
// written before sendto() returns, and the namespace's Icmp6InEchos counter.
// Policies are applied one after another, so every step also exercises the
// generation flip of a re-apply. WARD_SEED=N replays a run; the seed and
// the policy are printed on failure.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "enforcers/linux/ebpf.h"
#include "tests/backends/ebpf/ebpf_fixture.h"
#include "tests/network_cases.h"

#include "tests/root_guard.h"
namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf differential test");

// Rules and probes meet inside 10.200.0.0/22 and fd00::/118 (fd00::/64 is
// routed to lo), on the servers' ports; beside them loopback and the IPv6
// forms of IPv4 addresses (mapped; NAT64, compatible and ::fffe:a.b.c.d
// routed to lo below). An ICMP echo to an IPv4-mapped address is no IPv4
// echo: those probes are tcp or udp. The workers only connect out.
net::Universe Universe() {
  net::Universe u;
  u.v6_base = "fd00::";
  u.ports.assign(std::begin(kPorts), std::end(kPorts));
  std::sort(u.ports.begin(), u.ports.end());
  u.ingress_probes = false;
  u.icmp_mapped = false;
  return u;
}

IpPrefix Parse(const Probe& p) {
  IpPrefix a;
  a.v6 = p.v6;
  a.bytes = p.addr;
  a.length = p.v6 ? 128 : 32;
  return a;
}

TEST_CASE("live eBPF decisions equal the IR's", "[root]") {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("WARD_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::cout << "ebpf differential: seed " << seed << " (WARD_SEED to replay)\n";
  net::Rng rng(seed);
  const net::Universe universe = Universe();
  Environment env;
  // The NAT64, IPv4-compatible and ::fffe:a.b.c.d forms reach the servers too.
  const std::string ip = "ip -n " + env.netns_path().substr(env.netns_path().rfind('/') + 1);
  REQUIRE(std::system((ip + " -6 route add local 64:ff9b::/96 dev lo && " + ip +
                       " -6 route add local ::/96 dev lo && " + ip +
                       " -6 route add local ::fffe:0:0/96 dev lo")
                          .c_str()) == 0);
  const std::string cg = env.Cgroup("policy");
  Prober in(cg, env.netns_path());
  struct Cleanup {
    ~Cleanup() {
      bool removed;
      std::string e;
      enforce::EbpfRemove("ebpfdiff", &removed, &e);
    }
  } cleanup;
  std::unique_ptr<enforce::EbpfEventReader> events;
  std::vector<std::string> lines;
  std::string error;
  size_t unconnected6 = 0, unconnected6_denied = 0;
  const auto start = std::chrono::steady_clock::now();
  const Op udp_ops[] = {Op::kUdpConnect, Op::kUdpSendto, Op::kUdpSendmsg, Op::kUdpSendmmsg};
  size_t probes = 0;
  const int policies = 14;  // every awkward kind of network_cases.h, most of them once
  for (int n = 0; n < policies; ++n) {
    const net::Case c = net::RandomCase(rng, universe, n, "ebpfdiff");
    const std::string& source = c.text;
    ir::Policy policy = CompilePolicy(source, c.target);
    if (n % 5 == 4) Remove("ebpfdiff");  // now and then a first apply again
    Apply(policy, cg);
    events = enforce::EbpfEventReader::Open("ebpfdiff", &error);  // a first apply pins anew
    INFO(error);
    REQUIRE(events);
    for (int t = 0; t < 220; ++t) {
      const net::Probe probe = net::CaseProbe(rng, universe, c);
      const std::string text = probe.addr.Text();
      const uint16_t port = probe.port;
      // ICMPv6 unconnected: kPingSend, decided below by event and counter.
      Op op = probe.proto == net::Proto::kTcp   ? Op::kTcp
              : probe.proto == net::Proto::kUdp ? udp_ops[rng() % 4]
              : probe.addr.v6                   ? (rng() % 2 ? Op::kPingSend : Op::kPingConnect)
                                                : (rng() % 2 ? Op::kPing : Op::kPingConnect);
      Probe p = probe.addr.v6 ? V6(op, text, port) : V4(op, text, port);
      const ir::Protocol proto = probe.proto == net::Proto::kTcp   ? ir::Protocol::kTcp
                                 : probe.proto == net::Proto::kUdp ? ir::Protocol::kUdp
                                                                   : ir::Protocol::kIcmp;
      const bool allowed = policy.network.Decide(ir::Direction::kEgress, proto, Parse(p), port);
      // The IR against the reference first: a live program that agrees
      // with a wrong IR would prove nothing.
      INFO("seed " << seed << ", policy " << n << " (" << c.shape << "):\n"
                   << source << "probe " << probe.Describe() << ": reference "
                   << (net::Reference(c.rules, probe) ? "allow" : "deny") << ", IR "
                   << (allowed ? "allow" : "deny"));
      REQUIRE(allowed == net::Reference(c.rules, probe));
      char addr[INET6_ADDRSTRLEN];
      inet_ntop(p.v6 ? AF_INET6 : AF_INET, p.addr.data(), addr, sizeof addr);
      Outcome o;
      if (op == Op::kPingSend) {
        // Denied: exactly one event for this address, the request never
        // arrived (0 ends as EPERM). Allowed: no event, it arrived and the
        // reply came back (0).
        ++unconnected6;
        if (!allowed) ++unconnected6_denied;
        lines.clear();
        REQUIRE(events->Poll(0, &lines, &error));  // earlier probes' events
        lines.clear();
        const uint64_t before = Snmp6(in.pid(), "Icmp6InEchos");
        REQUIRE(in.Run(p) == 0);  // sendto() itself succeeds either way
        REQUIRE(events->Poll(0, &lines, &error));
        Outcome reply = -1;
        if (lines.empty()) {
          reply = in.Run({Op::kPingReply});
          // No reply: the event's wake-up may only have come late.
          if (reply != 0) REQUIRE(events->Poll(100, &lines, &error));
        }
        const std::string prefix = "icmp packet to [" + std::string(addr) + "] denied (";
        if (lines.size() == 1 && lines[0].rfind(prefix, 0) == 0) {
          // Dropped in the sending call: nothing is in flight to arrive later.
          o = Snmp6(in.pid(), "Icmp6InEchos") == before ? EPERM : EIO;
        } else if (lines.empty() && reply == 0) {
          o = Snmp6(in.pid(), "Icmp6InEchos") == before + 1 ? 0 : EIO;
        } else {
          o = lines.empty() ? reply : EIO;
        }
      } else {
        lines.clear();
        o = in.Run(p);
      }
      ++probes;
      INFO("seed " << seed << ", policy " << n << ":\n"
                   << source << "probe " << static_cast<int>(op) << " " << addr << " port " << port
                   << ": IR " << (allowed ? "allow" : "deny") << ", kernel "
                   << (o == 0 ? "ok" : std::strerror(o)) << "\nevents: " << lines.size()
                   << (lines.empty() ? "" : " " + lines[0]));
      REQUIRE(o == (allowed ? 0 : EPERM));
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "ebpf differential: " << probes << " probes (" << unconnected6
            << " unconnected ICMPv6, " << unconnected6_denied << " of them denied) under "
            << policies << " policies in " << s << " s\n";
}

}  // namespace
}  // namespace ward::test::ebpf
