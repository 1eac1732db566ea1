// The network IR: the disjoint partition decides every flow exactly as
// language.md says. A reference evaluator that shares nothing with
// compiler/ but the AST types walks the rules directly; random policies are
// generated as source text and go through the whole front end.
#include <arpa/inet.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <set>

#include "compiler/agent_guard.h"
#include "compiler/explain.h"
#include "compiler/extends.h"
#include "compiler/network.h"
#include "tests/language/frontend_fixture.h"
#include "tests/network_cases.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

// ---- the reference evaluator ----------------------------------------------

struct Query {
  ast::Direction direction;
  ast::Protocol protocol;  // kTcp, kUdp or kIcmp
  std::array<uint8_t, 16> addr{};
  bool v6 = false;
  uint16_t port = 0;
};

bool InPrefix(const uint8_t* addr, const uint8_t* net, int length) {
  for (int bit = 0; bit < length; ++bit) {
    int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((addr[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

// Every IPv6 address that stands for the IPv4 address `v4` under a rule:
// mapped always; NAT64 and compatible only for denies.
bool V6FormOf(const uint8_t* v6, uint8_t* v4, bool deny) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  static const uint8_t kCompat[12] = {};
  bool match = std::memcmp(v6, kMapped, 12) == 0 ||
               (deny && (std::memcmp(v6, kNat64, 12) == 0 || std::memcmp(v6, kCompat, 12) == 0));
  if (match) std::memcpy(v4, v6 + 12, 4);
  return match;
}

bool PeerMatches(const ast::Peer& peer, const Query& q, bool deny) {
  switch (peer.kind) {
    case ast::PeerKind::kAny:
      return true;
    case ast::PeerKind::kLoopback: {
      ast::Peer lo4, lo6;
      lo4.kind = lo6.kind = ast::PeerKind::kAddress;
      lo4.prefix.bytes[0] = 127;
      lo4.prefix.length = 8;
      lo6.prefix.v6 = true;
      lo6.prefix.bytes[15] = 1;
      lo6.prefix.length = 128;
      return PeerMatches(lo4, q, deny) || PeerMatches(lo6, q, deny);
    }
    case ast::PeerKind::kAddress: {
      const IpPrefix& p = peer.prefix;
      if (!p.v6) {
        if (!q.v6) return InPrefix(q.addr.data(), p.bytes.data(), p.length);
        uint8_t v4[4];
        // The mapped form is the same address (folded); NAT64/compat for denies.
        if (!V6FormOf(q.addr.data(), v4, deny)) return false;
        return InPrefix(v4, p.bytes.data(), p.length);
      }
      if (q.v6) {
        uint8_t v4[4];
        // A mapped address is IPv4: an IPv6 rule covers it through its
        // ::ffff:0:0/96 part, exactly as it covers the IPv4 address.
        if (V6FormOf(q.addr.data(), v4, false)) {
          uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
          std::memcpy(mapped + 12, v4, 4);
          return InPrefix(mapped, p.bytes.data(), p.length);
        }
        return InPrefix(q.addr.data(), p.bytes.data(), p.length);
      }
      uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      std::memcpy(mapped + 12, q.addr.data(), 4);
      return InPrefix(mapped, p.bytes.data(), p.length);
    }
    case ast::PeerKind::kDomain:
    case ast::PeerKind::kWildcardDomain:
      return false;
  }
  return false;
}

bool RuleMatches(const ast::NetRule& r, const Query& q) {
  if (r.is_unix || r.direction != q.direction) return false;
  bool has_ports = !r.raw_ports.empty();
  if (r.protocol == ast::Protocol::kAll) {
    if (has_ports && q.protocol == ast::Protocol::kIcmp) return false;
  } else if (r.protocol != q.protocol) {
    return false;
  }
  if (has_ports && q.protocol != ast::Protocol::kIcmp) {
    bool in = false;
    for (const PortRange& p : r.ports) in |= p.lo <= q.port && q.port <= p.hi;
    if (!in) return false;
  }
  for (const ast::Peer& peer : r.peers) {
    if (PeerMatches(peer, q, !r.allow)) return true;
  }
  return false;
}

// Deny overrides allow; both directions default to deny.
bool Reference(const std::vector<const ast::Policy*>& sources, const Query& q) {
  bool allowed = false, denied = false;
  for (const ast::Policy* p : sources) {
    if (!p->network) continue;
    for (const ast::NetRule& r : p->network->rules) {
      if (!RuleMatches(r, q)) continue;
      (r.allow ? allowed : denied) = true;
    }
  }
  return allowed && !denied;
}

// The query in the IR's terms.
struct IrQuery {
  IpPrefix addr;
  ir::Protocol proto;
  ir::Direction dir;
};

IrQuery ToIr(const Query& q) {
  IrQuery out;
  out.addr.v6 = q.v6;
  out.addr.bytes = q.addr;
  out.addr.length = q.v6 ? 128 : 32;
  out.proto = q.protocol == ast::Protocol::kTcp   ? ir::Protocol::kTcp
              : q.protocol == ast::Protocol::kUdp ? ir::Protocol::kUdp
                                                  : ir::Protocol::kIcmp;
  out.dir =
      q.direction == ast::Direction::kEgress ? ir::Direction::kEgress : ir::Direction::kIngress;
  return out;
}

bool Compiled(const ir::NetRules& ir, const Query& q) {
  IrQuery x = ToIr(q);
  return ir.Decide(x.dir, x.proto, x.addr, q.port);
}

std::set<uint32_t> ReferenceSpans(const std::vector<const ast::Policy*>& sources, const Query& q) {
  std::set<uint32_t> out;
  for (const ast::Policy* p : sources) {
    if (!p->network) continue;
    for (const ast::NetRule& r : p->network->rules) {
      if (RuleMatches(r, q)) out.insert(r.span.begin);
    }
  }
  return out;
}

std::set<uint32_t> CitedSpans(const ir::NetRules& ir, const Query& q) {
  IrQuery x = ToIr(q);
  std::set<uint32_t> out;
  for (const ir::FlatRule* f : ir.Matching(x.dir, x.proto, &x.addr, nullptr, q.port)) {
    out.insert(f->span.begin);
  }
  return out;
}

// ---- helpers --------------------------------------------------------------

struct Lowered {
  std::unique_ptr<FrontendResult> r;
  std::vector<const ast::Policy*> sources;
  ir::NetRules ir;
};

Lowered Lower(const std::string& text, const std::string& name) {
  Lowered l;
  l.r = CheckSource(text);
  INFO(l.r->text);
  REQUIRE_FALSE(l.r->sink.has_errors());
  const ast::File* f = l.r->program.file(l.r->program.roots.at(0));
  const ast::Policy* policy = nullptr;
  for (const ast::Policy& p : f->policies) {
    if (p.name.text == name) policy = &p;
  }
  REQUIRE(policy);
  l.sources = ir::ExtendsOrder(l.r->program, *policy);
  std::vector<const ast::NetworkSection*> sections;
  for (const ast::Policy* p : l.sources) {
    if (p->network) sections.push_back(&*p->network);
  }
  l.ir = ir::LowerNetwork(sections);
  return l;
}

Query Q(const char* addr, uint16_t port, ast::Protocol proto = ast::Protocol::kTcp,
        ast::Direction dir = ast::Direction::kEgress) {
  Query q;
  q.direction = dir;
  q.protocol = proto;
  q.port = port;
  q.v6 = std::string(addr).find(':') != std::string::npos;
  inet_pton(q.v6 ? AF_INET6 : AF_INET, addr, q.addr.data());
  return q;
}

}  // namespace

// ---- named edge cases -----------------------------------------------------

TEST_CASE("IPv4 rules cover the mapped form; IPv4 denies also NAT64 and compatible forms") {
  auto l = Lower(R"(policy p { network {
    allow tcp to any port 443
    deny to 10.0.0.0/8
  } })",
                 "p");
  CHECK(Compiled(l.ir, Q("93.184.216.34", 443)));
  CHECK_FALSE(Compiled(l.ir, Q("10.0.0.1", 443)));
  CHECK_FALSE(Compiled(l.ir, Q("::ffff:10.0.0.1", 443)));
  CHECK_FALSE(Compiled(l.ir, Q("64:ff9b::a00:1", 443)));
  CHECK_FALSE(Compiled(l.ir, Q("::10.0.0.1", 443)));
  CHECK(Compiled(l.ir, Q("2001:db8::1", 443)));
  CHECK(Compiled(l.ir, Q("::ffff:93.184.216.34", 443)));
  CHECK_FALSE(Compiled(l.ir, Q("93.184.216.34", 80)));
}

TEST_CASE("a /14 equals the four /16s it spans, whatever the order of rules") {
  auto a = Lower("policy p { network { allow tcp to 10.4.0.0/14 port 22 } }", "p");
  auto b = Lower(R"(policy p { network {
    allow tcp to 10.7.0.0/16 port 22
    allow tcp to 10.5.0.0/16, 10.4.0.0/16 port 22
    allow tcp to 10.6.0.0/16 port 22
    allow tcp to 10.6.1.0/24 port 22
  } })",
                 "p");
  CHECK(a.ir == b.ir);
  REQUIRE(a.ir.egress.v4.size() == 3);
  CHECK(ir::V4Cidrs(a.ir.egress.v4[1].range) == std::vector<std::string>{"10.4.0.0/14"});
  CHECK(a.ir.egress.v4[1].decision.tcp.ToString() == "22");
}

TEST_CASE("a deny carved out of an allow splits the allowed range exactly") {
  auto l = Lower(R"(policy p { network {
    allow tcp to 10.1.99.0/24 ports 5432, 6379
    deny tcp to 10.1.99.0/25
  } })",
                 "p");
  CHECK_FALSE(Compiled(l.ir, Q("10.1.99.127", 5432)));
  CHECK(Compiled(l.ir, Q("10.1.99.128", 5432)));
  CHECK(Compiled(l.ir, Q("10.1.99.255", 6379)));
  std::vector<std::string> allowed;
  for (const auto& piece : l.ir.egress.v4) {
    if (!piece.decision.empty()) {
      for (const std::string& c : ir::V4Cidrs(piece.range)) allowed.push_back(c);
    }
  }
  CHECK(allowed == std::vector<std::string>{"10.1.99.128/25"});
}

TEST_CASE("a base's deny holds in every policy that extends it") {
  auto l = Lower(R"(
abstract policy base { network { deny to 169.254.169.254, fd00:ec2::254 } }
policy child extends base { network { allow to any } })",
                 "child");
  CHECK_FALSE(Compiled(l.ir, Q("169.254.169.254", 80)));
  CHECK_FALSE(Compiled(l.ir, Q("fd00:ec2::254", 80)));
  CHECK_FALSE(Compiled(l.ir, Q("169.254.169.254", 0, ast::Protocol::kIcmp)));
  CHECK(Compiled(l.ir, Q("169.254.169.253", 80)));
}

TEST_CASE("protocols: omitted is tcp, udp and icmp; with ports only tcp and udp") {
  auto l = Lower(R"(policy p { network {
    allow to 10.0.0.53 port 53
    allow to 10.0.0.1
    allow ingress tcp from 192.168.0.0/16 port 8080
  } })",
                 "p");
  CHECK(Compiled(l.ir, Q("10.0.0.53", 53, ast::Protocol::kUdp)));
  CHECK(Compiled(l.ir, Q("10.0.0.53", 53, ast::Protocol::kTcp)));
  CHECK_FALSE(Compiled(l.ir, Q("10.0.0.53", 0, ast::Protocol::kIcmp)));
  CHECK(Compiled(l.ir, Q("10.0.0.1", 0, ast::Protocol::kIcmp)));
  CHECK(Compiled(l.ir, Q("10.0.0.1", 1, ast::Protocol::kUdp)));
  // Directions are separate: ingress grants nothing outgoing and back.
  CHECK(Compiled(l.ir, Q("192.168.3.4", 8080, ast::Protocol::kTcp, ast::Direction::kIngress)));
  CHECK_FALSE(Compiled(l.ir, Q("192.168.3.4", 8080)));
  CHECK_FALSE(Compiled(l.ir, Q("10.0.0.1", 1, ast::Protocol::kTcp, ast::Direction::kIngress)));
}

TEST_CASE("domains: strict subdomains on a label boundary, names normalised") {
  auto l = Lower(R"(policy p { network {
    allow tcp to "*.example.com" port 443
    allow tcp to "EXAMPLE.org." port 443
    deny tcp to "bad.example.com"
  } })",
                 "p");
  auto name = [&](const char* n) {
    return l.ir.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, n, nullptr, 443);
  };
  CHECK(name("www.example.com"));
  CHECK(name("a.b.example.com"));
  CHECK_FALSE(name("example.com"));
  CHECK_FALSE(name("evilexample.com"));
  CHECK_FALSE(name("bad.example.com"));
  CHECK(name("Example.ORG."));
  CHECK(name("example.org"));
  CHECK_FALSE(name("www.example.org"));
  // A name that resolves into a denied address is refused.
  auto m = Lower(R"(policy p { network {
    allow tcp to "*.example.com" port 443
    deny to 10.0.0.0/8
  } })",
                 "p");
  IpPrefix inside, outside;
  inside.bytes = {10, 1, 2, 3};
  inside.length = 32;
  outside.bytes = {93, 184, 216, 34};
  outside.length = 32;
  CHECK_FALSE(
      m.ir.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "a.example.com", &inside, 443));
  CHECK(
      m.ir.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "a.example.com", &outside, 443));
}

TEST_CASE("domains outside ASCII are normalised to their A-labels (IDNA 2008, libidn2)") {
  CHECK(ir::NormaliseDomain("B\xc3\xbc"
                            "cher.Example.") == "xn--bcher-kva.example");
  auto l = Lower(
      "policy p { network {\n  allow tcp to \"b\xc3\xbc"
      "cher.example\" port 443\n} }",
      "p");
  REQUIRE(l.ir.egress_domains.count("xn--bcher-kva.example") == 1);
  CHECK(l.ir.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "xn--bcher-kva.example",
                        nullptr, 443));
  CHECK_FALSE(l.ir.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "xn--bcher-kva.example",
                              nullptr, 80));
}

TEST_CASE("unix socket grants, denies overriding them") {
  auto l = Lower(R"(policy p { network {
    allow unix "/run/app.sock", "@ward-test", "/run/docker.sock"
    deny unix "/run/docker.sock"
  } })",
                 "p");
  CHECK(l.ir.unix_paths == std::set<std::string>{"/run/app.sock"});
  CHECK(l.ir.unix_abstract == std::set<std::string>{"ward-test"});
}

TEST_CASE("netlink grants: route, a deny overriding it whatever the order, across extends") {
  auto granted = Lower("policy p { network { allow netlink route, route } }", "p");
  CHECK(granted.ir.netlink == std::set<std::string>{"route"});
  REQUIRE(granted.ir.netlink_rules.size() == 2u);
  CHECK(granted.ir.netlink_rules[0].allow);
  CHECK(granted.ir.netlink_rules[0].protocol == "route");
  auto denied = Lower("policy p { network { deny netlink route\n allow netlink route } }", "p");
  CHECK(denied.ir.netlink.empty());
  CHECK(denied.ir.netlink_rules.size() == 2u);
  auto child = Lower(R"(abstract policy b { network { deny netlink route } }
policy p extends b { network { allow netlink route } })",
                     "p");
  CHECK(child.ir.netlink.empty());
  auto inherited = Lower(R"(abstract policy b { network { allow netlink route } }
policy p extends b { network { allow tcp to 10.0.0.1 port 1 } })",
                         "p");
  CHECK(inherited.ir.netlink == std::set<std::string>{"route"});
  // Canonical: a grant changes the meaning, provenance does not.
  CHECK_FALSE(granted.ir == denied.ir);
  CHECK(denied.ir == Lower("policy p { network {} }", "p").ir);
}

TEST_CASE("the partition covers both spaces with disjoint, merged pieces") {
  auto l = Lower("policy p { network { allow tcp to 10.0.0.0/8 port 1-100 } }", "p");
  for (const auto* part : {&l.ir.egress, &l.ir.ingress}) {
    REQUIRE_FALSE(part->v4.empty());
    CHECK(part->v4.front().range.lo == 0);
    CHECK(part->v4.back().range.hi == UINT32_MAX);
    for (size_t i = 1; i < part->v4.size(); ++i) {
      CHECK(part->v4[i].range.lo == part->v4[i - 1].range.hi + 1);
      CHECK_FALSE((part->v4[i].decision == part->v4[i - 1].decision &&
                   part->v4[i].denied == part->v4[i - 1].denied));
    }
    CHECK(part->v6.front().range.lo == 0);
    CHECK(part->v6.back().range.hi == ~ir::V6{0});
  }
}

// ---- property test --------------------------------------------------------

namespace {

// A small universe of addresses so that random rules overlap often.
const char* const kV4Nets[] = {"10.0.0.0/8",    "10.1.0.0/16",  "10.1.2.0/24",    "10.1.2.3",
                               "10.1.2.128/25", "0.0.0.0/0",    "192.168.0.0/16", "10.0.0.0/7",
                               "127.0.0.1",     "10.200.0.0/14"};
const char* const kV6Nets[] = {
    "::/0",         "fd00::/8",      "fd00:1::/32",   "::1",  "::ffff:10.1.0.0/112",
    "64:ff9b::/96", "::ffff:0:0/96", "2001:db8::/32", "::/96"};
const char* const kV4Hosts[] = {"10.1.2.3", "10.1.2.200",    "10.1.3.1",  "10.200.1.1",
                                "11.0.0.1", "192.168.5.5",   "127.0.0.1", "8.8.8.8",
                                "10.0.0.0", "10.255.255.255"};
const char* const kV6Hosts[] = {
    "fd00:1::5",        "fd00:2::1",  "::1",         "::ffff:10.1.2.3", "::ffff:8.8.8.8",
    "64:ff9b::a01:203", "::10.1.2.3", "2001:db8::7", "fe80::1",         "::ffff:192.168.5.5"};

template <size_t N>
const char* Pick(std::mt19937& rng, const char* const (&a)[N]) {
  return a[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

std::string RandomRule(std::mt19937& rng) {
  auto coin = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::string r = coin(3) == 0 ? "deny" : "allow";
  bool ingress = coin(4) == 0;
  if (ingress) r += " ingress";
  int proto = coin(4);  // 0 omitted, tcp, udp, icmp
  static const char* kProtos[] = {"", " tcp", " udp", " icmp"};
  r += kProtos[proto];
  r += ingress ? " from " : " to ";
  int n = 1 + coin(2);
  for (int i = 0; i < n; ++i) {
    if (i) r += ", ";
    int kind = coin(10);
    r += kind == 0   ? "any"
         : kind == 1 ? "loopback"
         : kind < 6  ? Pick(rng, kV4Nets)
                     : Pick(rng, kV6Nets);
  }
  if (proto != 3 && coin(2) == 0) {
    static const char* kPorts[] = {"22",        "53",      "443",          "1-1024",
                                   "8000-8100", "80, 443", "53, 1000-2000"};
    r += " port " + std::string(kPorts[coin(7)]);
  }
  return r;
}

}  // namespace

TEST_CASE("property: the partition decides every flow as the reference evaluator does") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::mt19937 rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  for (int round = 0; round < 150; ++round) {
    std::string base, child;
    int nb = std::uniform_int_distribution<int>(0, 4)(rng);
    int nc = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int i = 0; i < nb; ++i) base += "    " + RandomRule(rng) + "\n";
    for (int i = 0; i < nc; ++i) child += "    " + RandomRule(rng) + "\n";
    std::string text = "abstract policy b {\n  network {\n" + base + "  }\n}\n" +
                       "policy c extends b {\n  network {\n" + child + "  }\n}\n";
    INFO(text);
    auto l = Lower(text, "c");
    for (int k = 0; k < 60; ++k) {
      auto coin = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
      static const uint16_t kQueryPorts[] = {22, 53, 80, 443, 1024, 1025, 8050, 1500, 65535};
      Query q = Q(coin(2) ? Pick(rng, kV4Hosts) : Pick(rng, kV6Hosts), kQueryPorts[coin(9)],
                  static_cast<ast::Protocol>(1 + coin(3)),
                  coin(3) == 0 ? ast::Direction::kIngress : ast::Direction::kEgress);
      INFO("query " << (q.direction == ast::Direction::kEgress ? "egress" : "ingress") << " proto "
                    << static_cast<int>(q.protocol) << " port " << q.port);
      REQUIRE(Compiled(l.ir, q) == Reference(l.sources, q));
      // explain cites exactly the rules that match the flow.
      REQUIRE(CitedSpans(l.ir, q) == ReferenceSpans(l.sources, q));
    }
  }
}

namespace {

Query FromProbe(const net::Probe& p) {
  Query q;
  q.direction = p.ingress ? ast::Direction::kIngress : ast::Direction::kEgress;
  q.protocol = p.proto == net::Proto::kUdp    ? ast::Protocol::kUdp
               : p.proto == net::Proto::kIcmp ? ast::Protocol::kIcmp
                                              : ast::Protocol::kTcp;
  q.v6 = p.addr.v6;
  q.addr = p.addr.b;
  q.port = p.port;
  return q;
}

}  // namespace

// The awkward cases on purpose (tests/network_cases.h): overlapping rules of
// opposite verdicts, in one policy in either order or across extends, the
// policies in either order in the file, split across lists. Three answers
// must agree: the IR's, the reference above (over the checked AST, the
// extends order as ir::ExtendsOrder gives it) and the generator's own
// (over the rules as it wrote them, sharing nothing, not even the parser).
TEST_CASE("property: awkward pairs, across extends and lists, decide as both references do") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  net::Rng rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  net::Universe u;
  u.v4_base = "10.1.0.0";
  u.v4_bits = 12;
  u.v6_base = "fd00:1::";
  u.v6_bits = 12;
  u.ports = {22, 53, 80, 443, 1000, 1024, 1025, 5432, 8000, 8050, 8100, 65535};
  long probes = 0, allowed = 0, awkward = 0;
  for (int round = 0, rounds = Rounds(400); round < rounds; ++round) {
    const net::Case c = net::RandomCase(rng, u, round);
    INFO("case " << round << " (" << c.shape << "):\n" << c.text);
    auto l = Lower(c.text, c.target);
    awkward += !c.focus_addrs.empty();
    for (int k = 0; k < 80; ++k) {
      const net::Probe p = net::CaseProbe(rng, u, c);
      const Query q = FromProbe(p);
      const bool want = net::Reference(c.rules, p);
      INFO("probe " << p.Describe() << ": generator's reference says "
                    << (want ? "allow" : "deny"));
      REQUIRE(Reference(l.sources, q) == want);
      REQUIRE(Compiled(l.ir, q) == want);
      REQUIRE(CitedSpans(l.ir, q) == ReferenceSpans(l.sources, q));
      ++probes;
      allowed += want;
    }
  }
  WARN(probes << " probes (" << allowed << " allowed) over " << awkward
              << " cases with an awkward pair");
  CHECK(allowed > probes / 20);
}

// wardd's listeners (compiler/agent_guard.h): the implicit deny decides as
// a `deny tcp to ADDRESS port PORT` rule appended to the policy would, by
// the generator's reference, on the awkward cases; a wildcard listener as
// `deny tcp to any port PORT`.
TEST_CASE("property: the agent guard denies as an explicit deny rule would") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  net::Rng rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  net::Universe u;
  u.v4_base = "10.1.0.0";
  u.v4_bits = 12;
  u.v6_base = "fd00:1::";
  u.v6_bits = 12;
  u.ports = {22, 53, 80, 443, 1000, 1024, 1025, 5432, 8000, 8050, 8100, 65535};
  long probes = 0, guarded = 0;
  for (int round = 0, rounds = Rounds(300); round < rounds; ++round) {
    const net::Case c = net::RandomCase(rng, u, round);
    INFO("case " << round << " (" << c.shape << "):\n" << c.text);
    auto l = Lower(c.text, c.target);
    // The listener: an address the case probes (often one of its edges),
    // or a wildcard of either family; a port the universe probes.
    const net::Probe at = net::CaseProbe(rng, u, c);
    const bool wildcard = rng() % 4 == 0;
    const uint16_t port = u.ports[rng() % u.ports.size()];
    ir::AgentEndpoints e;
    e.tcp.push_back({wildcard ? (rng() % 2 ? "0.0.0.0" : "::") : at.addr.Text(), port});
    INFO("listener " << e.tcp[0].address << " port " << port);
    ir::Policy policy;
    policy.network = l.ir;
    std::string error;
    REQUIRE(ir::GuardAgentEndpoints(&policy, e, &error));
    // Idempotent.
    ir::Policy twice = policy;
    REQUIRE(ir::GuardAgentEndpoints(&twice, e, &error));
    REQUIRE(twice.network == policy.network);
    REQUIRE(twice.network.rules.size() == policy.network.rules.size());

    std::vector<net::Rule> rules = c.rules;
    net::Rule deny;
    deny.allow = false;
    deny.proto = net::Proto::kTcp;
    net::Peer peer;
    if (wildcard) {
      peer.kind = net::PeerKind::kAny;
    } else {
      peer.kind = net::PeerKind::kPrefix;
      peer.prefix.net = at.addr;
      peer.prefix.length = at.addr.v6 ? 128 : 32;
    }
    deny.peers = {peer};
    deny.ports = {{port, port}};
    rules.push_back(deny);
    for (int k = 0; k < 80; ++k) {
      net::Probe p = net::CaseProbe(rng, u, c);
      if (k % 4 == 0) {  // at the listener itself, in every protocol
        p.addr = at.addr;
        p.port = p.proto == net::Proto::kIcmp ? 0 : port;
      }
      const bool want = net::Reference(rules, p);
      INFO("probe " << p.Describe() << ": reference says " << (want ? "allow" : "deny"));
      REQUIRE(Compiled(policy.network, FromProbe(p)) == want);
      guarded += net::Reference(c.rules, p) && !want;
      ++probes;
    }
  }
  WARN(probes << " probes, " << guarded << " of them refused by the guard alone");
  CHECK(guarded > 0);
}

TEST_CASE("the agent guard withdraws the agent's socket and names its rules in explain") {
  auto r = CheckSource(R"(policy p {
  network {
    allow unix "/run/ward/agent/agent.sock"
    allow unix "/run/app.sock"
    allow tcp to "*.example.com" port 7443
    allow tcp to any
  }
})");
  REQUIRE_FALSE(r->sink.has_errors());
  ir::Policy policy = ir::Lower(r->program, r->policy(), r->sink);
  REQUIRE(policy.network.unix_paths.count("/run/ward/agent/agent.sock") == 1);
  ir::AgentEndpoints e = ir::DefaultAgentEndpoints();
  e.tcp.push_back({"127.0.0.1", 7443});
  e.tcp.push_back({"::", 7444});
  std::string error;
  REQUIRE(ir::GuardAgentEndpoints(&policy, e, &error));
  CHECK(policy.network.unix_paths == std::set<std::string>{"/run/app.sock"});

  ir::Explanation unix = ir::ExplainUnix(policy, "/run/ward/agent/agent.sock");
  CHECK(unix.decision == "deny");
  CHECK(unix.rules.empty());  // the source's allow is overridden, not cited
  CHECK(unix.implicit ==
        std::vector<std::string>{"wardd listens on unix:///run/ward/agent/agent.sock"});
  CHECK_FALSE(unix.by_default());

  ir::FlowQuery q;
  q.protocol = ir::Protocol::kTcp;
  q.host = "127.0.0.1";
  q.port = 7443;
  auto flow = ir::ExplainFlow(policy, q, &error);
  REQUIRE(flow);
  CHECK(flow->decision == "deny");
  CHECK(flow->implicit == std::vector<std::string>{"wardd listens on tcp://127.0.0.1:7443"});
  q.host = "127.0.0.2";
  flow = ir::ExplainFlow(policy, q, &error);
  CHECK(flow->decision == "allow");
  CHECK(flow->implicit.empty());
  // The wildcard listener: every address, both families.
  q.port = 7444;
  for (const char* host : {"10.9.8.7", "::1", "2001:db8::1", "::ffff:10.0.0.1"}) {
    q.host = host;
    flow = ir::ExplainFlow(policy, q, &error);
    INFO(host);
    CHECK(flow->decision == "deny");
    CHECK(flow->implicit == std::vector<std::string>{"wardd listens on tcp://[::]:7444"});
  }
  // A domain grant does not reach the listener either, wherever its name
  // resolves.
  IpPrefix lo = *ParseIpOrCidr("127.0.0.1", &error);
  CHECK_FALSE(policy.network.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "a.example.com",
                                        &lo, 7443));
  IpPrefix other = *ParseIpOrCidr("10.0.0.1", &error);
  CHECK(policy.network.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "a.example.com",
                                  &other, 7443));
  CHECK_FALSE(policy.network.DecideName(ir::Direction::kEgress, ir::Protocol::kTcp, "a.example.com",
                                        &other, 7444));
}

TEST_CASE("the agent's endpoints file reads back, and refuses what is not one") {
  ir::AgentEndpoints e = ir::DefaultAgentEndpoints();
  e.unix_paths.push_back("/tmp/x/agent.sock");
  e.tcp.push_back({"127.0.0.1", 7443});
  e.tcp.push_back({"::", 9});
  std::string error;
  auto back = ir::EndpointsFromJson(ir::EndpointsToJson(e), &error);
  REQUIRE(back);
  CHECK(*back == e);
  CHECK_FALSE(ir::EndpointsFromJson("{}", &error));
  CHECK_FALSE(ir::EndpointsFromJson(R"({"version": 1, "unix": ["relative"]})", &error));
  CHECK_FALSE(
      ir::EndpointsFromJson(R"({"version": 1, "tcp": [{"address": "x", "port": 1}]})", &error));
  CHECK(error == "\"tcp\": 'x' is not an IP address");
  CHECK_FALSE(
      ir::EndpointsFromJson(R"({"version": 1, "tcp": [{"address": "::", "port": 0}]})", &error));
  CHECK_FALSE(ir::EndpointsFromJson(R"({"version": 1, "tcp": [{"address": "::", "port": 70000}]})",
                                    &error));
}

}  // namespace ward::test
