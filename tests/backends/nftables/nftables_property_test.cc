// [root] Differential test: random policies, written as Ward source, applied
// with the nftables enforcer to a cgroup in a fresh network namespace, and
// thousands of random (protocol, address, port) probes from a worker in that
// cgroup to servers on locally routed addresses (10.200.0.0/16 and
// fd00:200::/64, the IPv4 ones also through IPv4-mapped IPv6). The IR's
// decision (NetRules::Decide) must equal the live outcome: allowed probes
// get their echo, denied ones fail with the reject's exact errno; anything
// else (a timeout) fails the test. WARD_SEED=N replays a run; the seed is
// printed on failure. WARD_PROPERTY_POLICIES sets the number of policies.
#include <arpa/inet.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <random>
#include <sstream>

#include "backends/nftables/nftables_backend.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("backend_nftables_property_test"), true);

using Rng = std::mt19937_64;

int Pick(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// Addresses inside 10.200.0.0/22 and fd00:200::/118 so that random rules and
// random probes meet often.
std::string V4Address(Rng& rng) {
  return "10.200." + std::to_string(Pick(rng, 0, 3)) + "." + std::to_string(Pick(rng, 0, 255));
}

std::string V6Address(Rng& rng) {
  std::ostringstream s;
  s << "fd00:200::" << std::hex << Pick(rng, 0, 0x3ff);
  return s.str();
}

std::string V4Prefix(Rng& rng) {
  const int len = Pick(rng, 0, 5) == 0 ? 16 : Pick(rng, 22, 32);
  return V4Address(rng) + "/" + std::to_string(len);
}

std::string V6Prefix(Rng& rng) {
  return V6Address(rng) + "/" + std::to_string(Pick(rng, 118, 128));
}

std::string Ports(Rng& rng) {
  const auto& ports = ServerPorts();
  std::string out;
  const int n = Pick(rng, 1, 3);
  for (int i = 0; i < n; ++i) {
    const size_t a = Pick(rng, 0, static_cast<int>(ports.size()) - 1);
    std::string p = std::to_string(ports[a]);
    if (Pick(rng, 0, 3) == 0 && a + 1 < ports.size()) {
      p += "-" + std::to_string(
                     ports[Pick(rng, static_cast<int>(a) + 1, static_cast<int>(ports.size()) - 1)]);
    }
    out += (i ? ", " : "") + p;
  }
  return out;
}

std::string RandomPolicy(Rng& rng) {
  std::string s = "policy diff {\n  network {\n";
  const int rules = Pick(rng, 1, 8);
  for (int i = 0; i < rules; ++i) {
    const bool allow = Pick(rng, 0, 2) != 0;
    s += allow ? "    allow" : "    deny";
    const int proto = Pick(rng, 0, 3);
    const bool ports = proto != 3 && Pick(rng, 0, 2) != 0;
    s += proto == 0 ? " tcp" : proto == 1 ? " udp" : proto == 2 ? "" : " icmp";
    s += " to ";
    const int peer = Pick(rng, 0, 9);
    if (peer == 0) {
      s += "any";
    } else if (peer == 1) {
      s += "::ffff:" + V4Address(rng) + "/" + std::to_string(Pick(rng, 118, 128));
    } else if (peer <= 6) {
      s += V4Prefix(rng);
    } else {
      s += V6Prefix(rng);
    }
    if (ports) s += " ports " + Ports(rng);
    s += "\n";
  }
  return s + "  }\n}\n";
}

struct Tuple {
  Op op;
  ir::Protocol proto;
  std::string address;  // as the worker connects to it
  uint16_t port;
};

Tuple RandomTuple(Rng& rng) {
  static const Op kUdp[] = {Op::kUdpConnected, Op::kUdpSendto, Op::kUdpSendmsg, Op::kUdpSendmmsg};
  Tuple t;
  const int proto = Pick(rng, 0, 9);
  if (proto < 5) {
    t.op = Op::kTcp;
    t.proto = ir::Protocol::kTcp;
  } else if (proto < 8) {
    t.op = kUdp[Pick(rng, 0, 3)];
    t.proto = ir::Protocol::kUdp;
  } else {
    t.op = Op::kIcmp;
    t.proto = ir::Protocol::kIcmp;
  }
  const int family = Pick(rng, 0, 9);
  // An ICMP echo to an IPv4-mapped address is no IPv4 echo: ICMP probes
  // are IPv4 or IPv6.
  if (family < 5 || (t.op == Op::kIcmp && family >= 8)) {
    t.address = V4Address(rng);
  } else if (family < 8) {
    t.address = V6Address(rng);
  } else {
    t.address = "::ffff:" + V4Address(rng);
  }
  t.port = t.op == Op::kIcmp
               ? 0
               : ServerPorts()[Pick(rng, 0, static_cast<int>(ServerPorts().size()) - 1)];
  return t;
}

bool IrDecides(const ir::Policy& p, const Tuple& t) {
  std::string error;
  const auto prefix = ParseIpOrCidr(t.address, &error);
  REQUIRE(prefix.has_value());
  return p.network.Decide(ir::Direction::kEgress, t.proto, *prefix, t.port);
}

Outcome Denied(const Tuple& t) { return t.op == Op::kTcp ? Failed(ECONNREFUSED) : Failed(EPERM); }

bool IsIcmp6(const Tuple& t) {
  return t.op == Op::kIcmp && t.address.find(':') != std::string::npos;
}

// Runs the probe. A refused ICMPv6 echo returns no errno (the ping socket's
// send succeeds, no reply comes): it counts as refused (EPERM, as a refused
// IPv4 echo) only when the namespace's own counters prove it, the request
// never arrived (Icmp6InEchos +0) and the reject's admin-prohibited came
// back (Icmp6InDestUnreachs +1); an answered echo must have arrived once.
// Anything else is returned as it is and fails the comparison.
Outcome Probe(Worker& w, const Tuple& t, int timeout_ms) {
  if (!IsIcmp6(t)) return w.Run(t.op, t.address, t.port, timeout_ms);
  const pid_t pid = w.pid();
  const uint64_t echos = Snmp6(pid, "Icmp6InEchos"),
                 unreachable = Snmp6(pid, "Icmp6InDestUnreachs");
  const Outcome o = w.Run(t.op, t.address, t.port, timeout_ms);
  const uint64_t arrived = Snmp6(pid, "Icmp6InEchos") - echos,
                 refused = Snmp6(pid, "Icmp6InDestUnreachs") - unreachable;
  if (o == Failed(kTimedOut) && arrived == 0 && refused == 1) return Failed(EPERM);
  if (o == kOk && (arrived != 1 || refused != 0)) return Failed(EIO);
  return o;
}

}  // namespace

TEST_CASE("nftables differential: the live ruleset decides as the IR", "[root]") {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("WARD_SEED")) seed = std::strtoull(s, nullptr, 10);
  int policies = 25;
  if (const char* n = std::getenv("WARD_PROPERTY_POLICIES")) policies = std::atoi(n);
  const int tuples_per_policy = 160;
  INFO("seed " << seed << " (replay: WARD_SEED=" << seed << ")");
  Rng rng(seed);
  TestNetns ns;
  TestCgroup cgroup("diff");
  Worker worker(cgroup.path());
  enforce::Target target;
  target.kind = enforce::Target::Kind::kCgroup;
  target.cgroup = cgroup.path();
  const auto start = std::chrono::steady_clock::now();
  int probes = 0, allowed = 0, with_classes = 0;
  int tcp6[2] = {}, udp6[2] = {}, icmp6[2] = {};  // IPv6 probes: [denied, allowed]
  for (int i = 0; i < policies; ++i) {
    const std::string source = RandomPolicy(rng);
    INFO("policy " << i << ":\n" << source);
    auto compiled = CompileWith(backend::NftablesBackend(), source);
    REQUIRE(compiled->result.ok);
    // Pieces sharing a decision in address sets of their own (ruleset.cc,
    // Class): a deny carved out of an allow leaves two such pieces.
    with_classes += compiled->Artifact(".nft").find("_c0 {") != std::string::npos;
    DiagnosticSink sink;
    std::string error;
    INFO(error);
    REQUIRE(enforce::NftablesEnforcer().Apply(compiled->ir, target, {}, sink, &error));
    for (int j = 0; j < tuples_per_policy; ++j) {
      const Tuple t = RandomTuple(rng);
      const bool allow = IrDecides(compiled->ir, t);
      // A refused ICMPv6 echo waits for its reply in vain: a short first
      // wait (an echo on lo is answered within microseconds; one the
      // counters cannot prove yet is asked again below).
      Outcome got = Probe(worker, t, IsIcmp6(t) ? 5 : 1000);
      // A lost datagram on this loaded machine is asked again, once, with
      // more time; a second timeout fails the test (never a "denied").
      if (got == Failed(kTimedOut)) got = Probe(worker, t, 3000);
      const Outcome want = allow ? kOk : Denied(t);
      INFO("probe " << ir::ProtocolName(t.proto) << " (op " << static_cast<int>(t.op) << ") "
                    << t.address << " port " << t.port << ": IR says " << (allow ? "allow" : "deny")
                    << ", live " << got.Describe());
      REQUIRE(got == want);
      ++probes;
      allowed += allow;
      if (t.address.find(':') != std::string::npos && t.address.find('.') == std::string::npos) {
        (t.proto == ir::Protocol::kUdp    ? udp6
         : t.proto == ir::Protocol::kIcmp ? icmp6
                                          : tcp6)[allow]++;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "nftables differential: seed %llu, %d policies (%d with address classes), %d probes (%d "
      "allowed), %.1f s\n",
      static_cast<unsigned long long>(seed), policies, with_classes, probes, allowed, seconds);
  std::printf("  IPv6 (allowed/probes): tcp %d/%d, udp %d/%d, icmp %d/%d\n", tcp6[1],
              tcp6[0] + tcp6[1], udp6[1], udp6[0] + udp6[1], icmp6[1], icmp6[0] + icmp6[1]);
  CHECK(with_classes > 0);
  CHECK(allowed > probes / 20);  // IPv6 probes, half of them, are seldom allowed
  CHECK(allowed < probes * 9 / 10);
}

}  // namespace ward::test
