// [root] Differential: random policies (Ward source text) and thousands of
// random (protocol, address, port) tuples in the ranges the test's own
// namespace routes locally; the IR's decision must equal what the live eBPF
// programs do, read from the syscall's outcome (0 end to end, or EPERM).
// An unconnected ICMPv6 echo has no errno to read (the backstop's drop is
// not reported to sendto()): its decision is read from the backstop's event,
// written before sendto() returns, and the namespace's Icmp6InEchos counter.
// Policies are applied one after another, so every step also exercises the
// generation flip of a re-apply. WARD_SEED=N replays a run.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <arpa/inet.h>
#include <unistd.h>

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

#include "tests/root_guard.h"
namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf differential test");

const char* const kPeers[] = {
    "10.200.0.0/16",   "10.200.1.0/24",
    "10.200.1.128/25", "10.200.2.0/23",
    "10.200.1.7",      "10.200.3.0/24",
    "10.0.0.0/8",      "any",
    "fd00::/64",       "fd00::/120",
    "fd00::80/121",    "fd00::5",
    "loopback",        "::ffff:10.200.1.0/120",
};
const char* const kV4[] = {"10.200.0.1",   "10.200.1.7", "10.200.1.130", "10.200.2.9",
                           "10.200.3.255", "10.7.0.1",   "10.200.1.128"};
const char* const kV6[] = {"fd00::5", "fd00::81", "fd00::1:2", "fd00::7f"};
const char* const kMapped[] = {"::ffff:10.200.1.7", "::ffff:10.200.0.1", "::ffff:10.7.0.1"};
const char* const kPortLists[] = {"22",    "53",      "443",  "8000-8100",
                                  "50-90", "22, 443", "9000", "53, 8050"};

std::string RandomPolicy(std::mt19937& rng, int index) {
  std::ostringstream s;
  s << "policy ebpfdiff { network {\n";
  int rules = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < rules; ++i) {
    s << "  " << (rng() % 10 < 7 ? "allow" : "deny");
    int proto = static_cast<int>(rng() % 4);  // tcp, udp, icmp, omitted
    const char* names[] = {" tcp", " udp", " icmp", ""};
    s << names[proto] << " to " << kPeers[rng() % std::size(kPeers)];
    if (proto != 2 && rng() % 3 != 0) s << " port " << kPortLists[rng() % std::size(kPortLists)];
    s << "\n";
  }
  s << "} }\n";
  (void)index;
  return s.str();
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
  std::mt19937 rng(static_cast<uint32_t>(seed));
  Environment env;
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
  for (int n = 0; n < 12; ++n) {
    const std::string source = RandomPolicy(rng, n);
    ir::Policy policy = CompilePolicy(source);
    if (n % 5 == 4) Remove("ebpfdiff");  // now and then a first apply again
    Apply(policy, cg);
    events = enforce::EbpfEventReader::Open("ebpfdiff", &error);  // a first apply pins anew
    INFO(error);
    REQUIRE(events);
    for (int t = 0; t < 250; ++t) {
      int kind = static_cast<int>(rng() % 3);  // tcp, udp, icmp
      int fam = static_cast<int>(rng() % 3);   // v4, v6, mapped
      if (kind == 2 && fam == 2) fam = 0;      // no ICMP echo to a mapped address
      uint16_t port = kind == 2 ? 0 : kPorts[rng() % std::size(kPorts)];
      // ICMPv6 unconnected: kPingSend, decided below by event and counter.
      Op op = kind == 0   ? Op::kTcp
              : kind == 1 ? udp_ops[rng() % 4]
              : fam == 1  ? (rng() % 2 ? Op::kPingSend : Op::kPingConnect)
                          : (rng() % 2 ? Op::kPing : Op::kPingConnect);
      Probe p = fam == 0   ? V4(op, kV4[rng() % std::size(kV4)], port)
                : fam == 1 ? V6(op, kV6[rng() % std::size(kV6)], port)
                           : V6(op, kMapped[rng() % std::size(kMapped)], port);
      const ir::Protocol proto = kind == 0   ? ir::Protocol::kTcp
                                 : kind == 1 ? ir::Protocol::kUdp
                                             : ir::Protocol::kIcmp;
      const bool allowed = policy.network.Decide(ir::Direction::kEgress, proto, Parse(p), port);
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
            << " unconnected ICMPv6, " << unconnected6_denied
            << " of them denied) under 12 policies in " << s << " s\n";
}

}  // namespace
}  // namespace ward::test::ebpf
