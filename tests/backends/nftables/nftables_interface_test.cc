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
    const uint64_t before = CounterPackets(table, "egress_dropped");
    const Outcome got = in.Run(c.op, c.address, c.port, c.dropped ? kDeniedWaitMs : 2000);
    const uint64_t dropped = CounterPackets(table, "egress_dropped") - before;
    INFO("got " << got.Describe() << ", egress_dropped +" << dropped);
    if (c.dropped == 0) {
      CHECK(got == kOk);  // the reply came back through the scope
      CHECK(dropped == 0);
    } else {
      // Nothing came back (a reject would have: ECONNREFUSED, EHOSTUNREACH
      // or EPERM), and Ward's drop rule took exactly the probe's packets.
      CHECK(got == Failed(kTimedOut));
      CHECK(dropped == static_cast<uint64_t>(c.dropped));
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

}  // namespace
}  // namespace ward::test
