// [root] The nftables enforcer's interface scope (a VM's tap) for real:
// a "vm" namespace behind a veth pair into the router (the TestNetns this
// test runs in, forwarding on), a "server" namespace behind a second veth
// pair with the echo servers, and the policy applied to the router's end of
// the vm's pair. The vm's egress is forwarded (forward hook) or, to the
// router's own addresses, delivered (input hook); what the policy refuses
// there is DROPPED, not rejected. A drop is asserted positively: the
// table's `egress_dropped` counter, read back through libnftables, counts
// exactly the probe's packets, and the probe gets nothing back (no reset,
// no ICMP error: it times out, which alone would prove nothing). Allowed
// probes must come back end to end (the reply passes the ingress side of
// the scope) with the counter unchanged. Controls in the same environment:
// every probe succeeds before the policy, from a second vm outside the
// scope under it, and after its removal.
#include <nftables/libnftables.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/nftables/nftables_backend.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("backend_nftables_interface_test"), true);

// A denied probe waits this long for an answer: under the initial TCP
// retransmission timeout (1 s), so a refused connect sends one SYN only
// and the drop counter's increase is exact.
constexpr int kDeniedWaitMs = 500;

// The packets of a named counter of the table, through libnftables (in
// this process's namespace: the router's).
uint64_t CounterPackets(const std::string& table, const std::string& counter) {
  std::unique_ptr<nft_ctx, void (*)(nft_ctx*)> ctx(nft_ctx_new(NFT_CTX_DEFAULT), nft_ctx_free);
  REQUIRE(ctx);
  nft_ctx_output_set_flags(ctx.get(), NFT_CTX_OUTPUT_JSON);
  REQUIRE(nft_ctx_buffer_output(ctx.get()) == 0);
  REQUIRE(nft_ctx_buffer_error(ctx.get()) == 0);
  const std::string cmd = "list counter inet " + table + " " + counter;
  const int rc = nft_run_cmd_from_buffer(ctx.get(), cmd.c_str());
  INFO(cmd << ": " << nft_ctx_get_error_buffer(ctx.get()));
  REQUIRE(rc == 0);
  const auto listing = nlohmann::json::parse(nft_ctx_get_output_buffer(ctx.get()));
  for (const auto& item : listing.at("nftables")) {
    if (item.contains("counter") && item["counter"].value("name", "") == counter) {
      return item["counter"].at("packets").get<uint64_t>();
    }
  }
  FAIL("no counter " << counter << " in " << listing.dump());
  return 0;
}

enforce::Target Interface(const std::string& name) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kInterface;
  t.interface = name;
  return t;
}

void Apply(const std::string& source, const enforce::Target& target) {
  DiagnosticSink sink;
  std::string error;
  const bool ok = enforce::NftablesEnforcer().Apply(
      CompileWith(backend::NftablesBackend(), source)->ir, target, {}, sink, &error);
  INFO(error);
  REQUIRE(ok);
}

void Remove(const std::string& policy) {
  std::string error;
  bool removed = false;
  const bool ok = enforce::NftablesEnforcer().Remove(policy, &removed, &error);
  INFO(error);
  REQUIRE(ok);
  REQUIRE(removed);
}

struct Case {
  Op op;
  std::string address;
  uint16_t port;
  int dropped;  // 0: allowed; else the packets the probe sends, all dropped
  std::string Describe() const {
    return "op " + std::to_string(static_cast<int>(op)) + " to " + address + " port " +
           std::to_string(port) + (dropped ? " (denied)" : " (allowed)");
  }
};

// From the vm, as the router's table sees it: egress (forwarded to the
// server namespace, or delivered to the router's own 10.200.0.1 and
// fd00:200::1 on its lo).
const char* const kPolicy = R"(
policy vmtap {
  network {
    allow tcp to 172.30.2.0/24 port 443
    deny tcp to 172.30.2.3 port 443
    allow udp to 172.30.2.2 port 53
    allow icmp to 172.30.2.2
    allow tcp to fd00:30:2::/64 ports 80, 443
    deny tcp to fd00:30:2::3 port 443
    allow udp to fd00:30:2::2 port 53
    allow icmp to fd00:30:2::2
    allow tcp to 10.200.0.1 port 80
    allow tcp to fd00:200::1 port 80
  }
}
)";

std::vector<Case> Cases(const PeerNetns& server) {
  const std::string s2 = server.V4(2), s3 = server.V4(3), t2 = server.V6(2), t3 = server.V6(3);
  return {
      // IPv4, forwarded.
      {Op::kTcp, s2, 443, 0},
      {Op::kTcp, s2, 22, 1},
      {Op::kTcp, s3, 443, 1},  // deny carved out of the allow
      {Op::kUdpSendto, s2, 53, 0},
      {Op::kUdpConnected, s2, 53, 0},
      {Op::kUdpSendto, s2, 8000, 1},
      {Op::kUdpSendto, s3, 53, 1},
      {Op::kUdpSendmmsg, s3, 53, 2},
      {Op::kIcmp, s2, 0, 0},
      {Op::kIcmp, s3, 0, 1},
      // IPv6, forwarded.
      {Op::kTcp, t2, 443, 0},
      {Op::kTcp, t2, 80, 0},
      {Op::kTcp, t3, 80, 0},
      {Op::kTcp, t3, 443, 1},
      {Op::kTcp, t2, 22, 1},
      {Op::kUdpSendto, t2, 53, 0},
      {Op::kUdpConnected, t2, 53, 0},
      {Op::kUdpSendmsg, t2, 8000, 1},
      {Op::kUdpSendto, t3, 53, 1},
      {Op::kIcmp, t2, 0, 0},
      {Op::kIcmp, t3, 0, 1},
      // To the router itself (input hook; its servers on its lo routes).
      {Op::kTcp, "10.200.0.1", 80, 0},
      {Op::kTcp, "10.200.0.1", 22, 1},
      {Op::kUdpSendto, "10.200.0.1", 53, 1},
      {Op::kTcp, "fd00:200::1", 80, 0},
      {Op::kTcp, "fd00:200::1", 443, 1},
  };
}

TEST_CASE("interface scope: a VM's forwarded and delivered egress, denials dropped and counted",
          "[root]") {
  TestNetns router;
  router.FlushWardTables();
  // Destroyed before the router: their links are in its namespace.
  PeerNetns vm("wardvm0", 1, false), other("wardvm1", 3, false), server("wardsrv0", 2, true);
  Worker in(std::string(), -1, vm.path()), out(std::string(), -1, other.path());
  // Only its namespace: the server's ICMPv6 counters (a refused ICMPv6
  // echo: the request never arrived there).
  Worker at_server(std::string(), -1, server.path());
  const std::vector<Case> cases = Cases(server);

  for (const Case& c : cases) {  // no policy: every probe works end to end
    INFO("control without the policy: " << c.Describe());
    CHECK(in.Run(c.op, c.address, c.port) == kOk);
  }

  Apply(kPolicy, Interface(vm.link()));
  // What the controls taught the neighbour caches is forgotten: the VM and
  // the router must find each other again through the policy's table
  // (IPv6 neighbour discovery passes its drop chains).
  vm.FlushNeighbours();
  const std::string table = "ward_vmtap";
  for (const Case& c : cases) {
    INFO(c.Describe());
    struct Measure {
      Outcome got;
      uint64_t dropped, resent, arrived6;
    };
    auto measure = [&] {
      Measure m{};
      const uint64_t before = CounterPackets(table, "egress_dropped");
      const uint64_t echos6 = Snmp6(at_server.pid(), "Icmp6InEchos");
      const uint64_t syn_retrans = TcpExt(in.pid(), "TCPSynRetrans");
      m.got = in.Run(c.op, c.address, c.port, c.dropped ? kDeniedWaitMs : 2000);
      m.dropped = CounterPackets(table, "egress_dropped") - before;
      // A SYN the prober sent again (its first retransmission timer, 1 s,
      // fired before the probe closed: a stalled machine) is one more
      // packet dropped.
      m.resent = TcpExt(in.pid(), "TCPSynRetrans") - syn_retrans;
      m.arrived6 = Snmp6(at_server.pid(), "Icmp6InEchos") - echos6;
      return m;
    };
    Measure m = measure();
    // The counter also counts the link's own traffic the table drops (a
    // late multicast listener report): a window with more drops than the
    // probe's is measured again, once, and that one decides.
    if (m.dropped > static_cast<uint64_t>(c.dropped) + m.resent) {
      UNSCOPED_INFO("first window: egress_dropped +" << m.dropped << "; measured again");
      m = measure();
    }
    const Outcome got = m.got;
    const uint64_t dropped = m.dropped, resent = m.resent, arrived6 = m.arrived6;
    INFO("got " << got.Describe() << ", egress_dropped +" << dropped << ", server Icmp6InEchos +"
                << arrived6);
    const bool icmp6 = c.op == Op::kIcmp && c.address.find(':') != std::string::npos;
    if (c.dropped == 0) {
      CHECK(got == kOk);  // the reply came back through the scope
      CHECK(dropped == 0);
      if (icmp6) CHECK(arrived6 == 1);
    } else {
      // Nothing came back (a reject would have: ECONNREFUSED, EHOSTUNREACH
      // or EPERM), and Ward's drop rule took exactly the probe's packets.
      CHECK(got == Failed(kTimedOut));
      CHECK(dropped == static_cast<uint64_t>(c.dropped) + resent);
      if (icmp6) CHECK(arrived6 == 0);
    }
  }
  // The scope is the interface: the other vm, forwarded by the same router,
  // is unaffected, and its probes touch no counter.
  const uint64_t before = CounterPackets(table, "egress_dropped");
  for (const Case& c : cases) {
    INFO("outside the scope: " << c.Describe());
    CHECK(out.Run(c.op, c.address, c.port) == kOk);
  }
  CHECK(CounterPackets(table, "egress_dropped") == before);

  std::vector<enforce::Enforcement> status;
  std::string error;
  REQUIRE(enforce::NftablesEnforcer().Status(&status, &error));
  REQUIRE(status.size() == 1);
  CHECK(status[0].policy == "vmtap");
  CHECK(status[0].scope == enforce::Target::Kind::kInterface);
  CHECK(status[0].interface == vm.link());

  Remove("vmtap");
  for (const Case& c : cases) {  // removed completely
    INFO("after remove: " << c.Describe());
    CHECK(in.Run(c.op, c.address, c.port) == kOk);
  }
}

// Ingress through the tap: the vm runs the echo servers, the server
// namespace's workers are its peers (each probe from a chosen source,
// 172.30.2.2/.3 and fd00:30:2::2/::3), forwarded by the router to the vm
// (forward hook, `oifname`); the router's own probes to the vm leave through
// its output hook. A denial is dropped and counted by `ingress_dropped`
// (exactly the probe's packets), and for ICMPv6, whose refusal no errno
// reports anyway, the vm's own counters show the echo request never arrived.
const char* const kInboundPolicy = R"(
policy vmin {
  network {
    allow ingress tcp from 172.30.2.2 port 443
    allow ingress udp from 172.30.2.0/24 port 53
    deny ingress udp from 172.30.2.3 port 53
    allow ingress icmp from 172.30.2.2
    allow ingress tcp from fd00:30:2::/64 port 443
    deny ingress tcp from fd00:30:2::3
    allow ingress udp from fd00:30:2::2 port 53
    allow ingress icmp from fd00:30:2::2
    allow ingress tcp from 172.30.1.1 port 80
    allow tcp to 172.30.2.2 port 8000
    allow udp to fd00:30:2::2 port 8000
  }
}
)";

struct InboundCase {
  Op op;
  std::string source, address;
  uint16_t port;
  int dropped;  // 0: allowed; else the packets the probe sends, all dropped
  // What the prober sees of a drop: nothing comes back, but a datagram the
  // router itself sends is dropped in its own output hook, which fails the
  // sending call.
  Outcome refused = Failed(kTimedOut);
  std::string Describe() const {
    return "op " + std::to_string(static_cast<int>(op)) + " from " + source + " to " + address +
           " port " + std::to_string(port) + (dropped ? " (denied)" : " (allowed)");
  }
};

std::vector<InboundCase> InboundCases(const PeerNetns& vm, const PeerNetns& server) {
  const std::string v4 = vm.V4(2), v6 = vm.V6(2);
  const std::string s2 = server.V4(2), s3 = server.V4(3), t2 = server.V6(2), t3 = server.V6(3);
  return {
      {Op::kTcp, s2, v4, 443, 0},
      {Op::kTcp, s2, v4, 22, 1},
      {Op::kTcp, s3, v4, 443, 1},
      {Op::kUdpSendto, s2, v4, 53, 0},
      {Op::kUdpConnected, s2, v4, 53, 0},
      {Op::kUdpSendto, s3, v4, 53, 1},  // deny carved out of the allow
      {Op::kUdpSendmmsg, s3, v4, 53, 2},
      {Op::kUdpSendto, s2, v4, 80, 1},
      {Op::kIcmp, s2, v4, 0, 0},
      {Op::kIcmp, s3, v4, 0, 1},
      {Op::kTcp, t2, v6, 443, 0},
      {Op::kTcp, t3, v6, 443, 1},  // deny carved out of the allow
      {Op::kTcp, t2, v6, 80, 1},
      {Op::kUdpSendto, t2, v6, 53, 0},
      {Op::kUdpConnected, t2, v6, 53, 0},
      {Op::kUdpSendmsg, t3, v6, 53, 1},
      {Op::kIcmp, t2, v6, 0, 0},
      {Op::kIcmp, t3, v6, 0, 1},
  };
}

// The counters one probe moved: the table's drop counters, and the echo
// requests the vm's namespace received.
struct Moved {
  uint64_t egress, ingress, echos6;
};

TEST_CASE("interface scope: inbound to a VM, denials dropped and counted by ingress_dropped",
          "[root]") {
  TestNetns router;
  router.FlushWardTables();
  PeerNetns vm("wardvm0", 1, true), other("wardvm1", 3, true), server("wardsrv0", 2, true);
  Worker peer(std::string(), -1, server.path()), local{std::string()},
      own(std::string(), -1, vm.path());
  const std::vector<InboundCase> cases = InboundCases(vm, server);
  // The vm's own outbound flows: their replies pass the ingress side.
  const std::vector<Case> outbound = {{Op::kTcp, server.V4(2), 8000, 0},
                                      {Op::kUdpSendto, server.V6(2), 8000, 0}};
  // The router's own connections to the vm (output hook).
  const std::vector<InboundCase> from_router = {
      {Op::kTcp, vm.V4(1), vm.V4(2), 80, 0},
      {Op::kTcp, vm.V4(1), vm.V4(2), 22, 1},
      {Op::kUdpSendto, vm.V4(1), vm.V4(2), 53, 1, Failed(EPERM)}};

  for (const InboundCase& c : cases) {
    INFO("control without the policy: " << c.Describe());
    CHECK(peer.Run(c.op, c.address, c.port, 2000, c.source) == kOk);
  }
  for (const Case& c : outbound) {
    INFO("control without the policy: " << c.Describe());
    CHECK(own.Run(c.op, c.address, c.port) == kOk);
  }
  for (const InboundCase& c : from_router) {
    INFO("control without the policy: " << c.Describe());
    CHECK(local.Run(c.op, c.address, c.port, 2000, c.source) == kOk);
  }

  Apply(kInboundPolicy, Interface(vm.link()));
  vm.FlushNeighbours();  // neighbour discovery must pass the table
  const std::string table = "ward_vmin";
  auto counters = [&] {
    return Moved{CounterPackets(table, "egress_dropped"), CounterPackets(table, "ingress_dropped"),
                 Snmp6(own.pid(), "Icmp6InEchos")};
  };
  auto probe = [&](Worker& w, const InboundCase& c) {
    INFO(c.Describe());
    // Drops of this probe's packets, and a SYN sent again by a stalled
    // prober (one more packet dropped).
    struct Measure {
      Outcome got;
      Moved before, after;
      uint64_t resent;
    };
    auto measure = [&] {
      Measure m{};
      m.before = counters();
      const uint64_t syn_retrans = TcpExt(w.pid(), "TCPSynRetrans");
      m.got = w.Run(c.op, c.address, c.port, c.dropped ? kDeniedWaitMs : 2000, c.source);
      m.after = counters();
      m.resent = TcpExt(w.pid(), "TCPSynRetrans") - syn_retrans;
      return m;
    };
    Measure m = measure();
    // The counter also counts the link's own traffic the table drops (a
    // multicast listener report the namespace sends late): a window with
    // more drops than the probe's is measured again, once, and that one
    // decides.
    const uint64_t expected = static_cast<uint64_t>(c.dropped);
    if (m.after.ingress - m.before.ingress > expected + m.resent) {
      UNSCOPED_INFO("first window: ingress_dropped +" << m.after.ingress - m.before.ingress
                                                      << "; measured again");
      m = measure();
    }
    const Outcome got = m.got;
    const uint64_t ingress = m.after.ingress - m.before.ingress,
                   echos6 = m.after.echos6 - m.before.echos6;
    INFO("got " << got.Describe() << ", ingress_dropped +" << ingress << ", egress_dropped +"
                << m.after.egress - m.before.egress << ", vm Icmp6InEchos +" << echos6);
    CHECK(m.after.egress == m.before.egress);
    const bool icmp6 = c.op == Op::kIcmp && c.address.find(':') != std::string::npos;
    if (c.dropped == 0) {
      CHECK(got == kOk);
      CHECK(ingress == 0);
      if (icmp6) CHECK(echos6 == 1);
    } else {
      CHECK(got == c.refused);
      CHECK(ingress == expected + m.resent);
      if (icmp6) CHECK(echos6 == 0);
    }
  };
  for (const InboundCase& c : cases) probe(peer, c);
  for (const InboundCase& c : from_router) probe(local, c);
  for (const Case& c : outbound) {
    probe(own, {c.op, std::string(), c.address, c.port, 0});
  }
  // Outside the scope: the same peers reach a second vm, no counter moves.
  const Moved before = counters();
  for (const InboundCase& c : InboundCases(other, server)) {
    INFO("outside the scope: " << c.Describe());
    CHECK(peer.Run(c.op, c.address, c.port, 2000, c.source) == kOk);
  }
  const Moved after = counters();
  CHECK(after.ingress == before.ingress);
  CHECK(after.egress == before.egress);

  Remove("vmin");
  for (const InboundCase& c : cases) {
    INFO("after remove: " << c.Describe());
    CHECK(peer.Run(c.op, c.address, c.port, 2000, c.source) == kOk);
  }
}

}  // namespace
}  // namespace ward::test
