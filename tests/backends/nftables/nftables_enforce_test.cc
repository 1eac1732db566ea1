// [root] The nftables enforcer for real: policies applied through
// libnftables in a fresh network namespace, probed by workers in cgroups or
// as users, against servers this test runs on the namespace's locally
// routed addresses. Every deny has its positive control: the same probe from
// the same worker succeeds before the policy is applied, under a policy
// that allows it, or from a worker outside the scope. A timeout, a missing
// listener or route is never taken for a denial: a denied probe must fail
// with the exact errno of the reject.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "backends/nftables/nftables_backend.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("backend_nftables_enforce_test"), true);

// What a reject does to each kind of probe, as this kernel reports it: TCP
// gets a reset (ECONNREFUSED); UDP and ICMP packets are dropped in the
// output hook after the ICMP admin-prohibited is sent, so the sending call
// itself fails with EPERM.
const Outcome kRefused = Failed(ECONNREFUSED);
const Outcome kDatagramDenied = Failed(EPERM);

ir::Policy Lowered(const std::string& source) {
  return CompileWith(backend::NftablesBackend(), source)->ir;
}

void Apply(const std::string& source, const enforce::Target& target) {
  DiagnosticSink sink;
  std::string error;
  const bool ok = enforce::NftablesEnforcer().Apply(Lowered(source), target, {}, sink, &error);
  INFO(error);
  REQUIRE(ok);
  // The uid scope's ingress gap is said at every apply (and only there);
  // the sockets outside IP at every apply to a host scope.
  bool uid_gap = false, non_ip = false;
  for (const Diagnostic& d : sink.diagnostics()) {
    uid_gap |= d.message.rfind("the uid scope cannot see inbound", 0) == 0;
    non_ip |= d.message.rfind("nftables does not see packet sockets (AF_PACKET", 0) == 0;
  }
  CHECK(uid_gap == (target.kind == enforce::Target::Kind::kUid));
  CHECK(non_ip == (target.kind != enforce::Target::Kind::kInterface));
}

enforce::Target CgroupTarget(const TestCgroup& c) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kCgroup;
  t.cgroup = c.path();
  return t;
}

std::vector<enforce::Enforcement> Status() {
  std::vector<enforce::Enforcement> out;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Status(&out, &error));
  return out;
}

struct Case {
  Op op;
  std::string address;
  uint16_t port;
  Outcome expected;
};

#define CHECK_PROBE(worker, c)                                                              \
  do {                                                                                      \
    const Outcome got_ = (worker).Run((c).op, (c).address, (c).port);                       \
    INFO("op " << static_cast<int>((c).op) << " to " << (c).address << " port " << (c).port \
               << ": expected " << (c).expected.Describe() << ", got " << got_.Describe()); \
    CHECK(got_ == (c).expected);                                                            \
  } while (0)

const char* kPolicy = R"(
policy probe {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow tcp to 10.1.0.0/16 port 22
    allow tcp to 10.200.0.0/16 ports 8000-8100
    deny to 10.200.9.0/24
    allow udp to 10.200.0.0/16 port 53
    allow icmp to 10.200.0.0/16
    allow to fd00:200::/64
    deny tcp to fd00:200::dead port 80
  }
}
)";

std::vector<Case> Cases() {
  std::vector<Case> c = {
      // Overlapping allows with different ports.
      {Op::kTcp, "10.5.0.1", 443, kOk},
      {Op::kTcp, "10.5.0.1", 22, kRefused},
      {Op::kTcp, "10.1.2.3", 22, kOk},
      {Op::kTcp, "10.1.2.3", 443, kOk},
      {Op::kTcp, "10.1.2.3", 80, kRefused},
      // A port range and its edges.
      {Op::kTcp, "10.200.0.5", 8000, kOk},
      {Op::kTcp, "10.200.0.5", 8050, kOk},
      {Op::kTcp, "10.200.0.5", 8100, kOk},
      {Op::kTcp, "10.200.0.5", 8101, kRefused},
      // Deny carved out of allow (whatever else allows it).
      {Op::kTcp, "10.200.9.5", 8050, kRefused},
      {Op::kTcp, "10.200.9.5", 443, kRefused},
      {Op::kTcp, "10.200.10.5", 443, kOk},
      // IPv6, and a deny of one port at one address.
      {Op::kTcp, "fd00:200::5", 80, kOk},
      {Op::kTcp, "fd00:200::dead", 80, kRefused},
      {Op::kTcp, "fd00:200::dead", 443, kOk},
      {Op::kIcmp, "fd00:200::5", 0, kOk},
      // A connected UDP socket takes only replies from the address it
      // connected to: the server answers from the configured address.
      {Op::kUdpConnected, "fd00:200::1", 80, kOk},
      // IPv4-mapped IPv6 is decided as IPv4.
      {Op::kTcp, "::ffff:10.5.0.1", 443, kOk},
      {Op::kTcp, "::ffff:10.5.0.1", 22, kRefused},
      {Op::kTcp, "::ffff:10.200.9.5", 8050, kRefused},
      {Op::kUdpSendto, "::ffff:10.200.0.5", 53, kOk},
      {Op::kUdpSendto, "::ffff:10.200.9.5", 53, kDatagramDenied},
      // ICMP.
      {Op::kIcmp, "10.200.0.5", 0, kOk},
      {Op::kIcmp, "10.200.9.5", 0, kDatagramDenied},
      {Op::kIcmp, "10.5.0.1", 0, kDatagramDenied},
  };
  // UDP through every sending call.
  for (Op op : {Op::kUdpConnected, Op::kUdpSendto, Op::kUdpSendmsg, Op::kUdpSendmmsg}) {
    c.push_back({op, "10.200.0.5", 53, kOk});
    c.push_back({op, "10.200.0.5", 80, kDatagramDenied});
    c.push_back({op, "10.200.9.5", 53, kDatagramDenied});
    c.push_back({op, "10.5.0.1", 53, kDatagramDenied});
  }
  return c;
}

}  // namespace

TEST_CASE("cgroup scope: each probe as the IR decides it, a sibling cgroup unaffected", "[root]") {
  TestNetns ns;
  TestCgroup scoped("scoped"), sibling("sibling");
  Worker in(scoped.path()), beside(sibling.path());
  // Positive control: without a policy every probe succeeds from both.
  for (const Case& c : Cases()) {
    const Case open{c.op, c.address, c.port, kOk};
    CHECK_PROBE(in, open);
  }
  Apply(kPolicy, CgroupTarget(scoped));
  for (const Case& c : Cases()) CHECK_PROBE(in, c);
  for (const Case& c : Cases()) {
    const Case open{c.op, c.address, c.port, kOk};
    CHECK_PROBE(beside, open);
  }
  // The table names the cgroup by id; status reads it back.
  const auto held = Status();
  REQUIRE(held.size() == 1);
  CHECK(held[0].policy == "probe");
  CHECK(held[0].generation == 1);
  CHECK(held[0].scope == enforce::Target::Kind::kCgroup);
  CHECK(held[0].cgroup_id == scoped.id());
  // Removed, the same probes succeed again.
  bool removed = false;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Remove("probe", &removed, &error));
  CHECK(removed);
  CHECK(Status().empty());
  for (const Case& c : Cases()) {
    const Case open{c.op, c.address, c.port, kOk};
    CHECK_PROBE(in, open);
  }
}

TEST_CASE(
    "cgroup scope: a raw socket's packets are refused, even where tcp, udp and icmp are allowed",
    "[root]") {
  // Raw IP is never granted by a rule (language.md): the table allows TCP,
  // UDP and ICMP by address and port, so another protocol meets no allow
  // and is refused in the output hook (the send fails with EPERM).
  TestNetns ns;
  TestCgroup cgroup("raw");
  Worker in(cgroup.path());
  for (const char* address : {"10.200.0.7", "fd00:200::7"}) {
    INFO(address);
    CHECK(in.Run(Op::kRaw, address) == kOk);  // positive control
  }
  Apply(kPolicy, CgroupTarget(cgroup));
  for (const char* address : {"10.200.0.7", "fd00:200::7"}) {
    INFO(address);
    CHECK(in.Run(Op::kRaw, address) == Failed(EPERM));
    CHECK(in.Run(Op::kIcmp, address) == kOk);  // the address itself is allowed
  }
  bool removed = false;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Remove("probe", &removed, &error));
  CHECK(in.Run(Op::kRaw, "10.200.0.7") == kOk);
}

TEST_CASE("uid scope: the user's sockets only", "[root]") {
  TestNetns ns;
  Worker user("", 12345), other("", 12346);
  enforce::Target t;
  t.kind = enforce::Target::Kind::kUid;
  t.uid = 12345;
  const Case denied{Op::kTcp, "10.5.0.1", 22, kRefused};
  const Case allowed{Op::kTcp, "10.5.0.1", 443, kOk};
  const Case open{Op::kTcp, "10.5.0.1", 22, kOk};
  CHECK_PROBE(user, open);
  Apply(kPolicy, t);
  CHECK_PROBE(user, denied);
  CHECK_PROBE(user, allowed);
  CHECK_PROBE(other, open);
  const auto held = Status();
  REQUIRE(held.size() == 1);
  CHECK(held[0].scope == enforce::Target::Kind::kUid);
  CHECK(held[0].uid == 12345);
}

TEST_CASE("a narrowing cuts an established connection; a re-apply that still allows it does not",
          "[root]") {
  TestNetns ns;
  TestCgroup scoped("narrow");
  Worker in(scoped.path());
  const std::string wide = "policy n { network { allow tcp to 10.200.0.0/16 ports 8000, 8050 } }";
  const std::string narrow = "policy n { network { allow tcp to 10.200.0.0/16 port 8050 } }";
  Apply(wide, CgroupTarget(scoped));
  REQUIRE(in.Run(Op::kTcpHold, "10.200.0.7", 8000) == kOk);
  CHECK(in.Run(Op::kTcpHeldEcho, "", 0) == kOk);
  // A new generation that still allows the flow: it goes on.
  Apply(wide, CgroupTarget(scoped));
  CHECK(Status().at(0).generation == 2);
  CHECK(in.Run(Op::kTcpHeldEcho, "", 0) == kOk);
  // The narrowing: the next packet of the flow is refused with a reset.
  Apply(narrow, CgroupTarget(scoped));
  CHECK(Status().at(0).generation == 3);
  const Outcome cut = in.Run(Op::kTcpHeldEcho, "", 0);
  INFO(cut.Describe());
  CHECK(cut == Failed(ECONNRESET));
  // Positive control: a new connection the narrowed policy allows works.
  CHECK(in.Run(Op::kTcp, "10.200.0.7", 8050) == kOk);
  CHECK(in.Run(Op::kTcp, "10.200.0.7", 8000) == kRefused);
}

TEST_CASE("two policies covering one socket: each decides, whichever allowed first", "[root]") {
  // A uid-scoped policy allows port 8000; a cgroup-scoped one does not. A
  // socket in both scopes must be refused: a flow one table allowed (and
  // marked) is still looked up by the other.
  TestNetns ns;
  TestCgroup scoped("layered");
  Worker both(scoped.path(), 12345);
  const std::string by_uid =
      "policy by-uid { network { allow tcp to 10.200.0.0/16 ports 8000, 8050 } }";
  const std::string by_cgroup =
      "policy by-cgroup { network { allow tcp to 10.200.0.0/16 port 8050 } }";
  enforce::Target uid;
  uid.kind = enforce::Target::Kind::kUid;
  uid.uid = 12345;
  auto remove = [](const std::string& name) {
    bool removed = false;
    std::string error;
    REQUIRE(enforce::NftablesEnforcer().Remove(name, &removed, &error));
  };
  // Positive control: the uid policy alone lets the flow through.
  Apply(by_uid, uid);
  REQUIRE(both.Run(Op::kTcp, "10.200.0.7", 8000) == kOk);
  for (int order = 0; order < 2; ++order) {
    INFO("order " << order);
    if (order == 0) {
      Apply(by_cgroup, CgroupTarget(scoped));  // by-uid loaded first
    } else {
      remove("by-uid");
      remove("by-cgroup");
      Apply(by_cgroup, CgroupTarget(scoped));
      Apply(by_uid, uid);  // by-cgroup loaded first
    }
    CHECK(both.Run(Op::kTcp, "10.200.0.7", 8000) == kRefused);
    CHECK(both.Run(Op::kTcp, "10.200.0.7", 8050) == kOk);
  }
}

TEST_CASE("a failed apply changes nothing", "[root]") {
  TestNetns ns;
  TestCgroup scoped("failed");
  Worker in(scoped.path());
  Apply(kPolicy, CgroupTarget(scoped));
  enforce::Target missing;
  missing.kind = enforce::Target::Kind::kCgroup;
  missing.cgroup = scoped.path() + "-absent";
  DiagnosticSink sink;
  std::string error;
  CHECK_FALSE(enforce::NftablesEnforcer().Apply(
      Lowered("policy probe { network { allow to any } }"), missing, {}, sink, &error));
  CHECK(error == "cgroup " + scoped.path() + "-absent does not exist");
  const Case still{Op::kTcp, "10.5.0.1", 22, kRefused};
  CHECK_PROBE(in, still);
  CHECK(Status().at(0).generation == 1);
}

}  // namespace ward::test

namespace ward::test {

TEST_CASE("compiled artifacts: nft -c accepts the text, the JSON loads through libnftables",
          "[root]") {
  TestNetns ns;
  auto c = CompileWith(backend::NftablesBackend(), kPolicy);
  REQUIRE(c->result.ok);
  const std::string text = "/tmp/ward-nft-" + std::to_string(getpid()) + ".nft";
  std::ofstream(text) << c->Artifact(".nft");
  CHECK(ns.Sh("nft -c -f " + text) == 0);
  std::remove(text.c_str());
  std::string error;
  INFO(error);
  REQUIRE(enforce::RunNft(c->Artifact(".nft.json"), true, false, nullptr, &error));
  // Loaded twice: the artifact replaces its own table.
  REQUIRE(enforce::RunNft(c->Artifact(".nft.json"), true, false, nullptr, &error));
  const auto held = Status();
  REQUIRE(held.size() == 1);
  CHECK(held[0].policy == "probe");
  CHECK_FALSE(held[0].scope.has_value());
  CHECK(held[0].generation == 1);
  ns.FlushWardTables();
  CHECK(Status().empty());
}

}  // namespace ward::test

namespace ward::test {
namespace {

// Ingress: the workload is a server in the scoped cgroup (on ports of its
// own: the namespace's servers hold ServerPorts), its peers are workers in
// the same namespace outside the scope, each probe from a chosen source
// address on the namespace's locally routed 10.0.0.0/8 or an address of its
// `lo`. The input hook finds the server's socket (`socket cgroupv2` looks it
// up), so a refused connect is reset and a refused datagram answered with
// ICMP admin-prohibited: a connected UDP socket reports it (EHOSTUNREACH for
// IPv4, EACCES for IPv6).
const std::vector<uint16_t> kWorkloadPorts = {7000, 7053, 7443};
constexpr uint16_t kSiblingPort = 7100;

const char* kInboundPolicy = R"(
policy inbound {
  network {
    allow ingress tcp from 10.7.0.0/16 port 7443
    allow ingress udp from 10.7.0.0/16 port 7053
    deny ingress from 10.7.9.0/24
    allow ingress tcp from fd00:200::7 port 7443
    allow ingress udp from fd00:200::7 port 7053
    allow tcp to 10.200.0.0/16 port 443
    allow udp to 10.200.0.0/16 port 53
    allow to fd00:200::5
  }
}
)";

// A probe from `source` (peers only; empty for the workload's own).
struct InboundCase {
  Op op;
  std::string source, address;
  uint16_t port;
  Outcome expected;
};

std::string Describe(const InboundCase& c) {
  return "op " + std::to_string(static_cast<int>(c.op)) + " from " +
         (c.source.empty() ? "(kernel's choice)" : c.source) + " to " + c.address + " port " +
         std::to_string(c.port) + ": expected " + c.expected.Describe();
}

std::vector<InboundCase> InboundCases() {
  const Outcome v4_unreachable = Failed(EHOSTUNREACH), v6_prohibited = Failed(EACCES);
  return {
      // Allowed source and port.
      {Op::kTcp, "10.7.0.1", "10.200.0.1", 7443, kOk},
      {Op::kUdpConnected, "10.7.0.1", "10.200.0.1", 7053, kOk},
      {Op::kTcp, "fd00:200::7", "fd00:200::1", 7443, kOk},
      {Op::kUdpConnected, "fd00:200::7", "fd00:200::1", 7053, kOk},
      // The allowed source to a port it is not allowed.
      {Op::kTcp, "10.7.0.1", "10.200.0.1", 7000, kRefused},
      {Op::kTcp, "10.7.0.1", "10.200.0.1", 7053, kRefused},
      {Op::kUdpConnected, "10.7.0.1", "10.200.0.1", 7443, v4_unreachable},
      {Op::kTcp, "fd00:200::7", "fd00:200::1", 7000, kRefused},
      {Op::kUdpConnected, "fd00:200::7", "fd00:200::1", 7443, v6_prohibited},
      // Sources no rule allows, and a deny carved out of the allow.
      {Op::kTcp, "10.8.0.1", "10.200.0.1", 7443, kRefused},
      {Op::kUdpConnected, "10.8.0.1", "10.200.0.1", 7053, v4_unreachable},
      {Op::kTcp, "10.7.9.1", "10.200.0.1", 7443, kRefused},
      {Op::kUdpConnected, "10.7.9.1", "10.200.0.1", 7053, v4_unreachable},
      {Op::kTcp, "10.7.10.1", "10.200.0.1", 7443, kOk},
      {Op::kTcp, "fd00:200::8", "fd00:200::1", 7443, kRefused},
      {Op::kUdpConnected, "fd00:200::8", "fd00:200::1", 7053, v6_prohibited},
  };
}

// The workload's own outbound flows: their replies pass the ingress side
// although no ingress rule allows their source.
std::vector<InboundCase> OutboundCases() {
  // clang-format off
  return {
      {Op::kTcp, "", "10.200.0.5", 443, kOk},
      {Op::kUdpSendto, "", "10.200.0.5", 53, kOk},
      {Op::kUdpConnected, "", "10.200.0.5", 53, kOk},
      {Op::kTcp, "", "fd00:200::5", 443, kOk},
      {Op::kIcmp, "", "fd00:200::5", 0, kOk},
      {Op::kTcp, "", "10.200.0.5", 22, kRefused},
  };
  // clang-format on
}

#define CHECK_INBOUND(worker, c)                                                        \
  do {                                                                                  \
    const Outcome got_ = (worker).Run((c).op, (c).address, (c).port, 2000, (c).source); \
    INFO(Describe(c) << ", got " << got_.Describe());                                   \
    CHECK(got_ == (c).expected);                                                        \
  } while (0)

InboundCase Open(const InboundCase& c) { return {c.op, c.source, c.address, c.port, kOk}; }

}  // namespace

TEST_CASE("cgroup scope, ingress: peers reach the workload's servers as the policy allows",
          "[root]") {
  TestNetns ns;
  // Peers' IPv6 sources: addresses of the namespace (IPv6 binds to no
  // address a local route merely covers).
  REQUIRE(ns.Sh("ip -6 addr add fd00:200::7/128 dev lo && ip -6 addr add fd00:200::8/128 dev lo") ==
          0);
  TestCgroup scoped("inbound"), sibling("inbound-sibling"), peers("peers");
  Server workload(kWorkloadPorts, scoped.path()), beside({kSiblingPort}, sibling.path());
  Worker own(scoped.path()), peer(peers.path());
  // Positive controls: every probe succeeds without the policy.
  for (const InboundCase& c : InboundCases()) CHECK_INBOUND(peer, Open(c));
  for (const InboundCase& c : OutboundCases()) CHECK_INBOUND(own, Open(c));

  Apply(kInboundPolicy, CgroupTarget(scoped));
  for (const InboundCase& c : InboundCases()) CHECK_INBOUND(peer, c);
  for (const InboundCase& c : OutboundCases()) CHECK_INBOUND(own, c);
  // A server in a sibling cgroup is not in the scope: every source reaches it.
  for (const char* source : {"10.8.0.1", "10.7.9.1"}) {
    for (Op op : {Op::kTcp, Op::kUdpConnected}) {
      CHECK_INBOUND(peer, (InboundCase{op, source, "10.200.0.1", kSiblingPort, kOk}));
    }
  }
  CHECK_INBOUND(peer, (InboundCase{Op::kTcp, "fd00:200::8", "fd00:200::1", kSiblingPort, kOk}));
  // Limit: an echo request has no socket, so `socket cgroupv2` finds no
  // cgroup and the kernel answers it whatever the policy's ingress icmp
  // says (the interface scope decides ICMP by the packet alone).
  CHECK_INBOUND(peer, (InboundCase{Op::kIcmp, "10.8.0.1", "10.200.0.1", 0, kOk}));
  CHECK_INBOUND(peer, (InboundCase{Op::kIcmp, "fd00:200::8", "fd00:200::1", 0, kOk}));

  bool removed = false;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Remove("inbound", &removed, &error));
  CHECK(removed);
  for (const InboundCase& c : InboundCases()) CHECK_INBOUND(peer, Open(c));
}

TEST_CASE("uid scope, ingress: a refused source's connect is never answered", "[root]") {
  // `meta skuid` on input sees only sockets early demux attached
  // (established ones): a new connection's SYN to the user's listener is
  // not dispatched. Its SYN-ACK is (output, the listener's uid), and the
  // egress chain refuses it as the reply of a flow no ingress rule allows:
  // the reject's reset goes to the workload's half-open connection
  // (TcpExt EmbryonicRsts +1), the peer gets no SYN-ACK and no reset, and
  // its connect does not complete (it would retry until its own timeout).
  // The same server as another user is the control.
  TestNetns ns;
  Server user({7443}, "", 12345), other({7444}, "", 12346);
  Worker peer("");
  enforce::Target t;
  t.kind = enforce::Target::Kind::kUid;
  t.uid = 12345;
  struct Moved {
    Outcome outcome;
    uint64_t embryonic_resets;
    bool operator==(const Moved&) const = default;
  };
  auto connect = [&](const std::string& source, uint16_t port) {
    const uint64_t before = TcpExt(peer.pid(), "EmbryonicRsts");
    // Under the initial retransmission timeout: one SYN, one SYN-ACK.
    const Outcome o = peer.Run(Op::kTcp, "10.200.0.1", port, 500, source);
    const Moved m{o, TcpExt(peer.pid(), "EmbryonicRsts") - before};
    INFO("from " << source << " to port " << port << ": " << m.outcome.Describe()
                 << ", EmbryonicRsts +" << m.embryonic_resets);
    return m;
  };
  const Moved answered{kOk, 0}, refused{Failed(kTimedOut), 1};
  CHECK(connect("10.8.0.1", 7443) == answered);  // positive control
  Apply(kInboundPolicy, t);
  CHECK(connect("10.7.0.1", 7443) == answered);
  CHECK(connect("10.8.0.1", 7443) == refused);
  CHECK(connect("10.7.9.1", 7443) == refused);
  CHECK(connect("10.8.0.1", 7444) == answered);  // another user's server
}

// A refused echo from an IPv6 ping socket: the output hook drops it after
// sending ICMPv6 admin-prohibited, which a ping socket does not report, so
// sendto() succeeds and no reply comes (a timeout, which alone proves
// nothing). Asserted with the namespace's own ICMPv6 counters instead (the
// worker pings addresses of its own namespace): the request never arrived
// (Icmp6InEchos +0) and the reject's error came back (Icmp6InDestUnreachs
// +1). The allowed echo, and every echo without the policy and after its
// removal, arrive and are answered.
TEST_CASE("cgroup scope: a refused ICMPv6 echo never arrives; the allowed one is answered",
          "[root]") {
  TestNetns ns;
  TestCgroup scoped("icmp6");
  Worker in(scoped.path());
  struct Delta {
    Outcome outcome;
    uint64_t requests, replies, unreachable;
    bool operator==(const Delta&) const = default;
  };
  auto ping = [&](const std::string& address, int timeout_ms) {
    const pid_t pid = in.pid();
    const uint64_t req = Snmp6(pid, "Icmp6InEchos"), rep = Snmp6(pid, "Icmp6InEchoReplies"),
                   unr = Snmp6(pid, "Icmp6InDestUnreachs");
    const Outcome o = in.Run(Op::kIcmp, address, 0, timeout_ms);
    return Delta{o, Snmp6(pid, "Icmp6InEchos") - req, Snmp6(pid, "Icmp6InEchoReplies") - rep,
                 Snmp6(pid, "Icmp6InDestUnreachs") - unr};
  };
  const Delta answered{kOk, 1, 1, 0}, refused{Failed(kTimedOut), 0, 0, 1};
  const std::vector<std::string> allowed = {"fd00:200::10", "fd00:200::11"},
                                 denied = {"fd00:200::12", "fd00:200::1:11"};
  for (const auto& list : {allowed, denied}) {
    for (const std::string& a : list) {
      INFO("without the policy: " << a);
      CHECK(ping(a, 2000) == answered);
    }
  }
  Apply(
      "policy icmp6 { network {\n  allow icmp to fd00:200::/120\n  deny icmp to fd00:200::12\n} }",
      CgroupTarget(scoped));
  for (const std::string& a : allowed) {
    INFO("allowed: " << a);
    CHECK(ping(a, 2000) == answered);
  }
  for (const std::string& a : denied) {
    INFO("denied: " << a);
    const Delta d = ping(a, 500);
    INFO("got " << d.outcome.Describe() << ", requests +" << d.requests << ", replies +"
                << d.replies << ", unreachable +" << d.unreachable);
    CHECK(d == refused);
  }
  bool removed = false;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Remove("icmp6", &removed, &error));
  for (const std::string& a : denied) {
    INFO("after remove: " << a);
    CHECK(ping(a, 2000) == answered);
  }
}

}  // namespace ward::test
