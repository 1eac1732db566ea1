// [root] Drift, nftables half (enforcers/linux/drift.h): a policy applied
// with the nftables enforcer in a fresh network namespace, the table then
// changed behind Ward's back with nft commands, and ReadLive's answer
// asserted exactly: in sync or not, the lines ir::Diff(desired, live)
// gives (the permissions gained and lost), the foreign objects named.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>

#include <nlohmann/json.hpp>

#include "backends/nftables/nftables_backend.h"
#include "compiler/diff.h"
#include "enforcers/linux/drift.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"
#include "tests/language/frontend_fixture.h"
#include "tests/network_cases.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("enforcers_drift_nftables_test"), true);

const char* kRules = R"(
    allow tcp to 10.0.0.1 port 443
    allow tcp to 10.1.0.0/16 ports 8000-8100
    allow udp to 10.0.0.53 port 53
    allow icmp to 10.2.0.0/16
    allow ingress tcp from 10.3.0.0/16 port 22
    allow tcp to 10.4.0.0/16 port 443
    allow tcp to 10.6.0.0/16 port 443
    allow udp to fd00::/64 port 53
)";

// Policy `drift` with `rules` as its network section.
std::string Source(const std::string& rules) {
  return "policy drift {\n  network {\n" + rules + "  }\n}\n";
}
const std::string kPolicy = Source(kRules);

ir::Policy Lowered(const std::string& source) {
  return CompileWith(backend::NftablesBackend(), source)->ir;
}

void Apply(const ir::Policy& policy, const enforce::Target& target,
           const enforce::ApplyOptions& options = {}) {
  DiagnosticSink sink;
  std::string error;
  const enforce::NetworkEnforcer* nft = enforce::FindNetworkEnforcer("nftables");
  REQUIRE(nft != nullptr);
  const bool ok = nft->Apply(policy, target, options, sink, &error);
  INFO(error);
  REQUIRE(ok);
}

enforce::LiveState Live(const ir::Policy& policy, const enforce::Target& target) {
  enforce::LiveState live;
  std::string error;
  const bool ok = enforce::ReadLive(policy, target, "nftables", {}, &live, &error);
  INFO(error);
  REQUIRE(ok);
  return live;
}

// The diff's lines, each with its kind: "widened + egress tcp ...".
std::vector<std::string> Lines(const ir::Policy& desired, const enforce::LiveState& live) {
  std::vector<std::string> out;
  for (const ir::Change& c : ir::Diff(desired, live.live).changes) {
    out.push_back(std::string(ir::KindName(c.kind)) + " " + c.line);
  }
  return out;
}

void Nft(const std::string& commands) {
  std::string error;
  INFO(commands);
  const bool ok = enforce::RunNft(commands, false, false, nullptr, &error);
  INFO(error);
  REQUIRE(ok);
}

// The handle of the rule of `chain` whose JSON contains `needle`.
uint64_t HandleOf(const std::string& chain, const std::string& needle) {
  std::string text, error;
  REQUIRE(enforce::RunNft("list chain inet ward_drift " + chain, false, true, &text, &error));
  const nlohmann::json listing = nlohmann::json::parse(text);
  for (const auto& item : listing["nftables"]) {
    if (!item.contains("rule")) continue;
    if (item["rule"]["expr"].dump().find(needle) != std::string::npos) {
      return item["rule"]["handle"].get<uint64_t>();
    }
  }
  FAIL("no rule in " << chain << " with " << needle);
  return 0;
}

enforce::Target UidTarget(uint32_t uid) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kUid;
  t.uid = uid;
  return t;
}

enforce::Target CgroupTarget(const TestCgroup& c) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kCgroup;
  t.cgroup = c.path();
  return t;
}

#define CHECK_LINES(desired, live, ...)                         \
  do {                                                          \
    const std::vector<std::string> got_ = Lines(desired, live); \
    const std::vector<std::string> want_ = __VA_ARGS__;         \
    CHECK(got_ == want_);                                       \
  } while (0)

TEST_CASE("drift nftables: an untouched table is in sync, on a uid and on a cgroup", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  TestCgroup cgroup("drift");
  for (const enforce::Target& target : {UidTarget(4242), CgroupTarget(cgroup)}) {
    Apply(policy, target);
    const enforce::LiveState live = Live(policy, target);
    CHECK(live.present);
    CHECK(live.in_sync);
    CHECK(live.generation >= 1);
    CHECK(live.unknown.empty());
    CHECK(Lines(policy, live).empty());
    CHECK(live.live.network == policy.network);
  }
}

TEST_CASE("drift nftables: a deleted rule is the exact permission lost or gained", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  TestCgroup cgroup("drift");
  const enforce::Target target = CgroupTarget(cgroup);
  Apply(policy, target);

  // The egress lookup of the UDP grant: that grant is lost.
  Nft("delete rule inet ward_drift egress handle " +
      std::to_string(HandleOf("egress", "\"@egress_v4_udp_exact\"")));
  enforce::LiveState live = Live(policy, target);
  CHECK(live.present);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK_LINES(policy, live, {"narrowed - egress udp 10.0.0.53/32 ports 53"});

  // The replies' lookup of an address class (in the ingress chain): the
  // flows it answers are lost, though their first packets still leave.
  Apply(policy, target);
  REQUIRE(Live(policy, target).in_sync);
  Nft("delete rule inet ward_drift ingress handle " +
      std::to_string(HandleOf("ingress", "\"@egress_v4_ranges_c0\"")));
  live = Live(policy, target);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK_LINES(policy, live,
              {"narrowed - egress tcp 10.4.0.0/16 ports 443",
               "narrowed - egress tcp 10.6.0.0/16 ports 443"});

  // The reject at the end of egress_reject: UDP and ICMP leave unchecked.
  Apply(policy, target);
  REQUIRE(Live(policy, target).in_sync);
  Nft("delete rule inet ward_drift egress_reject handle " +
      std::to_string(HandleOf("egress_reject", "admin-prohibited")));
  live = Live(policy, target);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  // Exactly what a policy that also allowed every UDP and ICMP flow out
  // would add (the compiler's IR of it, not the decoder's).
  const ir::Policy wider =
      Lowered(Source(std::string(kRules) + "    allow udp to any\n    allow icmp to any\n"));
  const std::vector<std::string> gains =
      Lines(policy, enforce::LiveState{true, true, 0, wider, {}});
  CHECK(Lines(policy, live) == gains);
  REQUIRE(gains.size() >= 3);
  CHECK(gains[0] ==
        "widened + egress udp "
        "0.0.0.0/5,8.0.0.0/7,10.0.0.0/27,10.0.0.32/28,10.0.0.48/30,10.0.0.52/32");
  CHECK(gains[1] == "widened + egress icmp 0.0.0.0/5,8.0.0.0/7,10.0.0.0/15");
  CHECK(gains[2] == "widened + egress udp 10.0.0.53/32 ports 1-52,54-65535");
}

TEST_CASE("drift nftables: a deleted table leaves the scope unenforced", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  const enforce::Target target = UidTarget(4242);
  Apply(policy, target);
  Nft("delete table inet ward_drift");
  const enforce::LiveState live = Live(policy, target);
  CHECK_FALSE(live.present);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  // Nothing enforced: exactly what `allow to any` both ways adds.
  const ir::Policy open = Lowered(Source("    allow to any\n    allow ingress from any\n"));
  const std::vector<std::string> gains = Lines(policy, enforce::LiveState{true, true, 0, open, {}});
  CHECK(Lines(policy, live) == gains);
  REQUIRE(gains.size() >= 4);
  CHECK(gains[0] == "widened + egress tcp 0.0.0.0/5,8.0.0.0/7,10.0.0.0/32");
  CHECK(gains[3] == "widened + egress tcp 10.0.0.1/32 ports 1-442,444-65535");
}

TEST_CASE("drift nftables: an element added to an allow set is the exact gain", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  const enforce::Target target = UidTarget(4242);
  Apply(policy, target);
  // (The hash sets are sized to their elements: an interval set takes one.)
  Nft("add element inet ward_drift egress_v4_tcp_ranges { 10.9.9.0/24 . 25 }");
  const enforce::LiveState live = Live(policy, target);
  CHECK(live.present);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK_LINES(policy, live, {"widened + egress tcp 10.9.9.0/24 ports 25"});
}

TEST_CASE("drift nftables: a foreign rule in Ward's chain is unknown, never merged", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  const enforce::Target target = UidTarget(4242);
  Apply(policy, target);
  Nft("add rule inet ward_drift egress ip daddr 10.7.7.7 accept");
  const uint64_t handle = HandleOf("egress", "10.7.7.7");
  const enforce::LiveState live = Live(policy, target);
  CHECK(live.present);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown ==
        std::vector<std::string>{
            "rule in chain egress (handle " + std::to_string(handle) +
            ") that Ward does not render: "
            "[{\"match\":{\"left\":{\"payload\":{\"field\":\"daddr\",\"protocol\":\"ip\"}},"
            "\"op\":\"==\",\"right\":\"10.7.7.7\"}},{\"accept\":null}]"});
  CHECK(Lines(policy, live).empty());
}

}  // namespace
}  // namespace ward::test

namespace ward::test {
namespace {

// A domain grant: its sets hold whatever addresses were resolved (no DNS
// query is sent to check them); what they hold beyond the grant's ports,
// and a lookup taken away, are drift.
TEST_CASE("drift nftables: domain sets, compared as addresses", "[root]") {
  TestNetns ns;
  const ir::Policy policy =
      Lowered(Source(std::string(kRules) + "    allow tcp to \"api.example.test\" port 443\n"));
  const enforce::Target target = UidTarget(4242);
  enforce::ApplyOptions no_dns;
  no_dns.resolve_domains = false;
  Apply(policy, target, no_dns);
  enforce::LiveState live = Live(policy, target);
  CHECK(live.in_sync);
  CHECK(Lines(policy, live).empty());

  // An address the name resolved to, with a timeout: still in sync.
  Nft("add element inet ward_drift egress_v4_dom_tcp { 10.5.5.5 . 443 timeout 60s }");
  live = Live(policy, target);
  CHECK(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK(Lines(policy, live).empty());

  // A port no grant allows: gained at that address.
  Nft("add element inet ward_drift egress_v4_dom_tcp { 10.5.5.6 . 8443 timeout 60s }");
  live = Live(policy, target);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK_LINES(policy, live, {"widened + egress tcp 10.5.5.6/32 ports 8443"});

  // The lookup of the domain set gone: the grant is lost.
  Apply(policy, target, no_dns);
  Nft("delete rule inet ward_drift egress handle " +
      std::to_string(HandleOf("egress", "\"@egress_v4_dom_tcp\"")));
  live = Live(policy, target);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK_LINES(policy, live, {"narrowed - egress tcp \"api.example.test\" ports 443"});
}

TEST_CASE("drift nftables: an interface scope in sync, and a foreign set and chain", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  enforce::Target target;
  target.kind = enforce::Target::Kind::kInterface;
  target.interface = "wdrift0";
  Apply(policy, target);
  enforce::LiveState live = Live(policy, target);
  CHECK(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK(Lines(policy, live).empty());

  Nft("add set inet ward_drift extra { type ipv4_addr; }\n"
      "add chain inet ward_drift sidecar\n");
  live = Live(policy, target);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown == std::vector<std::string>{"chain sidecar that Ward does not render",
                                                 "set extra that Ward does not render"});
  CHECK(Lines(policy, live).empty());
}

TEST_CASE("drift: ReadLive names the enforcers it knows", "[root]") {
  const ir::Policy policy = Lowered(kPolicy);
  enforce::LiveState live;
  std::string error;
  CHECK_FALSE(enforce::ReadLive(policy, UidTarget(1), "iptables", {}, &live, &error));
  CHECK(error == "unknown enforcer 'iptables' (nftables or ebpf)");
}

}  // namespace
}  // namespace ward::test

namespace ward::test {
namespace {

TEST_CASE("drift nftables: another table's rule on the same scope is unknown", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  const enforce::Target target = UidTarget(4242);
  Apply(policy, target);
  // Another uid's rule is none of this policy's business.
  Nft("add table ip sidecar\n"
      "add chain ip sidecar out { type filter hook output priority -10; policy accept; }\n"
      "add rule ip sidecar out meta skuid 4243 accept\n"
      "add rule ip sidecar out meta skuid 4242 accept\n");
  const enforce::LiveState live = Live(policy, target);
  CHECK(live.present);
  CHECK_FALSE(live.in_sync);
  std::string text, error;
  REQUIRE(enforce::RunNft("list chain ip sidecar out", false, true, &text, &error));
  const nlohmann::json listing = nlohmann::json::parse(text);
  uint64_t handle = 0;
  for (const auto& item : listing["nftables"]) {
    if (item.contains("rule") && item["rule"]["expr"].dump().find("4242") != std::string::npos) {
      handle = item["rule"]["handle"].get<uint64_t>();
    }
  }
  CHECK(live.unknown ==
        std::vector<std::string>{
            "rule in table ip sidecar, chain out (handle " + std::to_string(handle) +
            ") names this policy's scope: "
            "[{\"match\":{\"left\":{\"meta\":{\"key\":\"skuid\"}},\"op\":\"==\",\"right\":4242}},"
            "{\"accept\":null}]"});
  CHECK(Lines(policy, live).empty());
  Nft("delete table ip sidecar");
}

}  // namespace
}  // namespace ward::test

namespace ward::test {
namespace {

// The fixed rules decide what reaches the lookups: a scope no longer
// dispatched, or a drop chain without its drop, lets every flow of the
// chain's direction out (exactly what `allow to any` adds); a missing jump
// to the lookups refuses them all.
TEST_CASE("drift nftables: fixed rules deleted: dispatch, drop, jump", "[root]") {
  TestNetns ns;
  const ir::Policy policy = Lowered(kPolicy);
  const ir::Policy any_out = Lowered(Source(std::string(kRules) + "    allow to any\n"));
  const std::vector<std::string> gains =
      Lines(policy, enforce::LiveState{true, true, 0, any_out, {}});
  REQUIRE(!gains.empty());
  TestCgroup cgroup("drift");
  const enforce::Target on_cgroup = CgroupTarget(cgroup);

  Apply(policy, on_cgroup);
  Nft("delete rule inet ward_drift output handle " +
      std::to_string(HandleOf("output", "egress_reject")));
  enforce::LiveState live = Live(policy, on_cgroup);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK(Lines(policy, live) == gains);

  enforce::Target on_tap;
  on_tap.kind = enforce::Target::Kind::kInterface;
  on_tap.interface = "wdrift0";
  Apply(policy, on_tap);
  Nft("delete rule inet ward_drift egress_drop handle " +
      std::to_string(HandleOf("egress_drop", "\"drop\"")));
  live = Live(policy, on_tap);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  CHECK(Lines(policy, live) == gains);

  // Without `jump ingress`, nothing reaches the workload: every ingress
  // grant lost, and the egress flows' replies with them.
  Apply(policy, on_cgroup);
  Nft("delete rule inet ward_drift ingress_reject handle " +
      std::to_string(HandleOf("ingress_reject", "\"jump\"")));
  live = Live(policy, on_cgroup);
  CHECK_FALSE(live.in_sync);
  CHECK(live.unknown.empty());
  const ir::Policy none = Lowered(Source(""));
  CHECK(Lines(policy, live) == Lines(policy, enforce::LiveState{true, true, 0, none, {}}));
}

}  // namespace
}  // namespace ward::test

namespace ward::test {
namespace {

// The policy `c.target` of a generated case, lowered.
ir::Policy LowerCase(const net::Case& c) {
  auto front = CheckSource(c.text);
  INFO(front->text);
  REQUIRE_FALSE(front->sink.has_errors());
  const ast::File* f = front->program.file(front->program.roots.at(0));
  REQUIRE(f != nullptr);
  for (const ast::Policy& p : f->policies) {
    if (p.name.text != c.target) continue;
    DiagnosticSink sink;
    ir::Policy out = ir::Lower(front->program, p, sink);
    REQUIRE_FALSE(sink.has_errors());
    return out;
  }
  FAIL("no policy " << c.target);
  return {};
}

// The decoder against the renderer over random policies (the generator
// of the differential tests: deny inside allow, any, loopback, IPv4-mapped,
// NAT64, partial port overlaps, address classes, ...): every applied table
// reads back in sync as exactly its IR; and a lookup rule deleted at random
// only ever narrows, never leaves the diff empty.
TEST_CASE("drift nftables: random policies read back as their IR", "[root]") {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("WARD_SEED")) seed = std::strtoull(s, nullptr, 10);
  INFO("seed " << seed << " (replay: WARD_SEED=" << seed << ")");
  net::Rng rng(seed);
  net::Universe universe;
  universe.ports = {22, 53, 443, 8080};
  TestNetns ns;
  const enforce::Target target = UidTarget(4242);
  for (int i = 0; i < 32; ++i) {  // every awkward kind (network_cases.h) twice and more
    const net::Case c = net::RandomCase(rng, universe, i, "drift");
    INFO("policy " << i << " (" << c.shape << "):\n" << c.text);
    const ir::Policy policy = LowerCase(c);
    Apply(policy, target);
    enforce::LiveState live = Live(policy, target);
    CHECK(live.in_sync);
    CHECK(live.unknown.empty());
    CHECK(live.live.network == policy.network);

    std::string text, error;
    REQUIRE(enforce::RunNft("list table inet ward_drift", false, true, &text, &error));
    std::vector<std::pair<std::string, uint64_t>> lookups;
    const nlohmann::json listing = nlohmann::json::parse(text);  // outlives the loop
    for (const auto& item : listing["nftables"]) {
      if (!item.contains("rule")) continue;
      const std::string chain = item["rule"]["chain"];
      if ((chain == "egress" || chain == "ingress") &&
          item["rule"]["expr"].dump().find("\"@") != std::string::npos) {
        lookups.push_back({chain, item["rule"]["handle"].get<uint64_t>()});
      }
    }
    if (lookups.empty()) continue;  // a policy that allows nothing
    const auto& [chain, handle] = lookups[rng() % lookups.size()];
    Nft("delete rule inet ward_drift " + chain + " handle " + std::to_string(handle));
    live = Live(policy, target);
    CHECK_FALSE(live.in_sync);
    CHECK(live.unknown.empty());
    const ir::DiffResult diff = ir::Diff(policy, live.live);
    CHECK_FALSE(diff.changes.empty());
    for (const ir::Change& ch : diff.changes) {
      INFO(ch.line);
      CHECK(ch.kind == ir::ChangeKind::kNarrowed);
    }
  }
}

}  // namespace
}  // namespace ward::test
