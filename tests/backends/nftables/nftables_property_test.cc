// [root] Differential test: random policies, written as Ward source
// (tests/network_cases.h: three in four hold an awkward pair of overlapping
// rules of opposite verdicts, in one policy or across extends), applied
// with the nftables enforcer to a cgroup (one in four to a uid) in a fresh
// network namespace, and thousands of (protocol, address, port) probes,
// half of them at the awkward pair's edges: from a worker in that cgroup
// (or of that user) to servers on locally routed addresses (10.200.0.0/16,
// fd00:200::/64, loopback, the IPv4 ones also as IPv4-mapped, NAT64,
// IPv4-compatible and ::fffe:a.b.c.d IPv6), and inwards from peers to a
// server in the cgroup. The IR's decision (NetRules::Decide) must equal
// the reference's (network_cases.h, reading the generated rules by
// language/reference.md) and the live outcome: allowed probes get their
// echo, denied ones fail with the reject's exact errno; anything else (a
// timeout) fails the test. WARD_SEED=N replays a run; the seed and the
// policy are printed on failure. WARD_PROPERTY_POLICIES sets the number of
// policies.
#include <arpa/inet.h>

#include <algorithm>
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
#include "tests/network_cases.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("backend_nftables_property_test"), true);

using Rng = std::mt19937_64;

int Pick(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// Ingress: the workload is a server in the scoped cgroup on ports of its own
// (the namespace's servers hold ServerPorts); peers outside the scope
// connect to it from the probe's address (bound with ip_nonlocal_bind, the
// namespace routing all of them to `lo`).
const std::vector<uint16_t> kWorkloadPorts = {7000, 7022, 7053, 7080, 7443, 7500, 7800, 7801};

// Rules and probes meet inside 10.200.0.0/22 and fd00:200::/118, on the
// servers' ports; beside them loopback, the IPv4-mapped forms and the NAT64
// and IPv4-compatible ones and ::fffe:a.b.c.d (routed to `lo` below). An ICMP echo to an
// IPv4-mapped address is no IPv4 echo: those probes are tcp or udp. So are
// ingress probes: an echo request has no socket for `socket cgroupv2` to
// find, the cgroup scope cannot refuse it (nftables_enforce_test.cc).
net::Universe Universe() {
  net::Universe u;
  u.ports = ServerPorts();
  std::sort(u.ports.begin(), u.ports.end());
  u.ingress_ports = kWorkloadPorts;
  u.icmp_mapped = false;
  u.icmp_ingress = false;
  return u;
}

struct Tuple {
  Op op;
  ir::Protocol proto;
  bool ingress = false;
  std::string address;  // as the worker connects to it
  std::string source;   // ingress: the peer's address, which the rules decide
  uint16_t port;
};

// A local address of the family (and form) of an ingress probe's source.
std::string WorkloadAddress(const net::Addr& source) {
  const std::string s = source.Text();
  if (!source.v6) return s.rfind("127.", 0) == 0 ? "127.0.0.1" : "10.255.0.1";
  if (s.rfind("::ffff:", 0) == 0) {
    return s.rfind("::ffff:127.", 0) == 0 ? "::ffff:127.0.0.1" : "::ffff:10.255.0.1";
  }
  return s == "::1" ? "::1" : "fd00:200::1";
}

Tuple ToTuple(Rng& rng, const net::Probe& p) {
  static const Op kUdp[] = {Op::kUdpConnected, Op::kUdpSendto, Op::kUdpSendmsg, Op::kUdpSendmmsg};
  Tuple t;
  t.ingress = p.ingress;
  t.address = p.ingress ? WorkloadAddress(p.addr) : p.addr.Text();
  if (p.ingress) t.source = p.addr.Text();
  t.port = p.port;
  switch (p.proto) {
    case net::Proto::kTcp:
    case net::Proto::kOmitted:
      t.op = Op::kTcp;
      t.proto = ir::Protocol::kTcp;
      break;
    case net::Proto::kUdp:
      // Inwards only a connected socket hears the reject's ICMP error.
      t.op = p.ingress ? Op::kUdpConnected : kUdp[Pick(rng, 0, 3)];
      t.proto = ir::Protocol::kUdp;
      break;
    case net::Proto::kIcmp:
      t.op = Op::kIcmp;
      t.proto = ir::Protocol::kIcmp;
      break;
  }
  return t;
}

// Checks the case's text and compiles its target policy (CompileWith takes
// the file's last policy; here the target may come anywhere in the file).
std::unique_ptr<Compiled> CompileCase(const net::Case& c) {
  auto out = std::make_unique<Compiled>();
  out->front = CheckSource(c.text);
  INFO(out->front->text);
  REQUIRE_FALSE(out->front->sink.has_errors());
  const ast::File* f = out->front->program.file(out->front->program.roots.at(0));
  REQUIRE(f != nullptr);
  const ast::Policy* target = nullptr;
  for (const ast::Policy& p : f->policies) {
    if (p.name.text == c.target) target = &p;
  }
  REQUIRE(target != nullptr);
  out->ir = ir::Lower(out->front->program, *target, out->sink);
  INFO(out->Diagnostics());
  REQUIRE_FALSE(out->sink.has_errors());
  out->result = backend::NftablesBackend().Compile(out->ir, {}, out->sink);
  INFO(out->Diagnostics());
  REQUIRE(out->result.ok);
  return out;
}

bool IrDecides(const ir::Policy& p, const Tuple& t) {
  std::string error;
  const auto prefix = ParseIpOrCidr(t.ingress ? t.source : t.address, &error);
  REQUIRE(prefix.has_value());
  return p.network.Decide(t.ingress ? ir::Direction::kIngress : ir::Direction::kEgress, t.proto,
                          *prefix, t.port);
}

// A refused connect is reset; inwards, a refused datagram is answered with
// admin-prohibited, which a connected UDP socket reports (EHOSTUNREACH
// over IPv4, EACCES over IPv6); outwards the sending call fails (EPERM).
Outcome Denied(const Tuple& t) {
  if (t.op == Op::kTcp) return Failed(ECONNREFUSED);
  if (!t.ingress) return Failed(EPERM);
  const bool v4 = t.source.find(':') == std::string::npos || t.source.rfind("::ffff:", 0) == 0;
  return Failed(v4 ? EHOSTUNREACH : EACCES);
}

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
  if (!IsIcmp6(t)) return w.Run(t.op, t.address, t.port, timeout_ms, t.source);
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
  int policies = 28;  // the eleven awkward kinds, most of them twice (network_cases.h) and more
  if (const char* n = std::getenv("WARD_PROPERTY_POLICIES")) policies = std::atoi(n);
  const int tuples_per_policy = 160;
  INFO("seed " << seed << " (replay: WARD_SEED=" << seed << ")");
  Rng rng(seed);
  const net::Universe universe = Universe();
  TestNetns ns;
  // The NAT64, IPv4-compatible and ::fffe:a.b.c.d forms reach the
  // namespace's servers too.
  REQUIRE(ns.Sh("ip -6 route add local 64:ff9b::/96 dev lo && "
                "ip -6 route add local ::/96 dev lo && "
                "ip -6 route add local ::fffe:0:0/96 dev lo") == 0);
  REQUIRE(ns.Sh("sysctl -qw net.ipv4.ip_nonlocal_bind=1 net.ipv6.ip_nonlocal_bind=1") == 0);
  TestCgroup cgroup("diff"), peers("diff-peers");
  Worker worker(cgroup.path()), peer(peers.path());
  Server workload(kWorkloadPorts, cgroup.path());
  // One policy in four is applied to a user instead (the uid scope), its
  // worker in no cgroup of ours; outwards only: that scope cannot refuse
  // inbound flows by their source (nftables_enforce_test.cc).
  constexpr int64_t kUid = 12345;
  Worker user("", kUid);
  enforce::Target by_cgroup, by_uid;
  by_cgroup.kind = enforce::Target::Kind::kCgroup;
  by_cgroup.cgroup = cgroup.path();
  by_uid.kind = enforce::Target::Kind::kUid;
  by_uid.uid = kUid;
  const auto start = std::chrono::steady_clock::now();
  int probes = 0, allowed = 0, again = 0, with_classes = 0, awkward = 0, across_extends = 0;
  int inwards[2] = {};                            // ingress probes: [denied, allowed]
  int tcp6[2] = {}, udp6[2] = {}, icmp6[2] = {};  // IPv6 probes: [denied, allowed]
  int uid_scoped = 0;
  for (int i = 0; i < policies; ++i) {
    const net::Case c = net::RandomCase(rng, universe, i);
    const bool uid_scope = i % 4 == 2;
    INFO("policy " << i << " (" << c.shape << (uid_scope ? "; uid scope" : "; cgroup scope")
                   << "):\n"
                   << c.text);
    auto compiled = CompileCase(c);
    awkward += !c.focus_addrs.empty();
    across_extends += c.text.find(" extends ") != std::string::npos;
    // Pieces sharing a decision in address sets of their own (ruleset.cc,
    // Class): a deny carved out of an allow leaves two such pieces.
    with_classes += compiled->Artifact(".nft").find("_c0 {") != std::string::npos;
    DiagnosticSink sink;
    std::string error;
    // Re-applied over the previous policy (a new generation), removed
    // first where the scope changes.
    bool removed = false;
    if (i > 0 && uid_scope != ((i - 1) % 4 == 2)) {
      REQUIRE(enforce::NftablesEnforcer().Remove(c.target, &removed, &error));
    }
    const bool applied = enforce::NftablesEnforcer().Apply(
        compiled->ir, uid_scope ? by_uid : by_cgroup, {}, sink, &error);
    INFO(error);
    REQUIRE(applied);
    uid_scoped += uid_scope;
    for (int j = 0; j < tuples_per_policy; ++j) {
      net::Probe probe = net::CaseProbe(rng, universe, c);
      // fd00:200:: is the subnet-router anycast address of lo's /64: no
      // socket bound to it hears the reject's ICMPv6 error.
      while (probe.ingress && (uid_scope || probe.addr.Text() == "fd00:200::")) {
        probe = net::CaseProbe(rng, universe, c);
      }
      const Tuple t = ToTuple(rng, probe);
      const bool allow = IrDecides(compiled->ir, t);
      // The IR against the reference first: a live ruleset that agrees
      // with a wrong IR would prove nothing.
      INFO("probe " << probe.Describe() << ": reference says "
                    << (net::Reference(c.rules, probe) ? "allow" : "deny") << ", IR says "
                    << (allow ? "allow" : "deny"));
      REQUIRE(allow == net::Reference(c.rules, probe));
      // A refused ICMPv6 echo waits for its reply in vain: a short first
      // wait (an echo on lo is answered within microseconds; one the
      // counters cannot prove yet is asked again below).
      Worker& from = t.ingress ? peer : uid_scope ? user : worker;
      Outcome got = Probe(from, t, IsIcmp6(t) ? 5 : 1000);
      // A lost datagram on this loaded machine is asked again, once, with
      // more time; a second timeout fails the test (never a "denied"). So
      // is an answered ICMPv6 echo whose counters moved otherwise (EIO): a
      // refused UDP or ICMPv6 probe just before may send its reject's
      // admin-prohibited late, into this probe's count.
      if (got == Failed(kTimedOut) || (IsIcmp6(t) && got == Failed(EIO))) {
        ++again;
        got = Probe(from, t, 3000);
      }
      const Outcome want = allow ? kOk : Denied(t);
      INFO("op " << static_cast<int>(t.op) << (t.ingress ? " from " + t.source : "") << " to "
                 << t.address << " port " << t.port << ": live " << got.Describe());
      REQUIRE(got == want);
      ++probes;
      allowed += allow;
      inwards[allow] += t.ingress;
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
      "nftables differential: seed %llu, %d policies (%d with an awkward pair, %d across extends, "
      "%d uid-scoped, %d with address classes), %d probes (%d allowed, %d asked again), %.1f s\n",
      static_cast<unsigned long long>(seed), policies, awkward, across_extends, uid_scoped,
      with_classes, probes, allowed, again, seconds);
  std::printf("  IPv6 (allowed/probes): tcp %d/%d, udp %d/%d, icmp %d/%d; ingress %d/%d\n", tcp6[1],
              tcp6[0] + tcp6[1], udp6[1], udp6[0] + udp6[1], icmp6[1], icmp6[0] + icmp6[1],
              inwards[1], inwards[0] + inwards[1]);
  CHECK(with_classes > 0);
  // Both outcomes are exercised. IPv6 probes, half of them, are seldom
  // allowed: over 25 random seeds 8 to 20 % of the probes were allowed, and
  // seed 4007091515 gave 4.75 % (213 of 4480) in CI, so the floor is 2 %
  // (about 90 allowed probes), not a guess at the mean.
  CHECK(allowed > probes / 50);
  CHECK(allowed < probes * 9 / 10);
}

}  // namespace ward::test
