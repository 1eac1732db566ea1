// The nftables backend as a pure function: goldens of the text and JSON it
// emits (regenerate with UPDATE_GOLDENS=1 and review the diff), determinism,
// and its refusals. libnftables' own check of both artifacts (nft -c, JSON
// load) runs as root in backend_nftables_enforce_test.
#include <catch2/catch.hpp>

#include "backends/nftables/nftables_backend.h"
#include "backends/nftables/ruleset.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

const backend::Backend& Nft() { return backend::NftablesBackend(); }

const char* kAgent = R"(
policy agent {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow tcp to 10.1.0.0/16 port 22
    allow udp to 10.0.0.53 port 53
    deny to 169.254.169.254
    allow tcp to 10.20.0.0/16 ports 5432, 6379, 8000-8100
    allow icmp to 10.30.0.0/16, 10.30.5.5
    allow to fd00:200::/64
    deny tcp to fd00:200::dead port 80
    allow tcp to 2001:db8::1 port 443
    allow ingress tcp from 10.1.0.0/16 port 8080
    allow ingress icmp from fd00::/8
  }
}
)";

}  // namespace

TEST_CASE("nftables: golden text and JSON") {
  auto c = CompileWith(Nft(), kAgent);
  INFO(c->Diagnostics());
  REQUIRE(c->result.ok);
  REQUIRE(c->result.artifacts.size() == 2);
  CHECK(c->result.artifacts[0].path == "agent.nft");
  CHECK(c->result.artifacts[1].path == "agent.nft.json");
  CHECK(MatchesGolden("backends/nftables/testdata/agent.nft", c->Artifact(".nft")));
  CHECK(MatchesGolden("backends/nftables/testdata/agent.nft.json", c->Artifact(".nft.json")));
  CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kNetwork});
  CHECK(c->sink.diagnostics().empty());
}

TEST_CASE("nftables: same meaning, same bytes") {
  auto a = CompileWith(Nft(), kAgent);
  auto b = CompileWith(Nft(), R"(
policy agent {
  network {
    allow ingress icmp from fd00::/8
    deny tcp to fd00:200::dead port 80
    allow ingress tcp from 10.1.0.0/16 port 8080
    allow tcp to 2001:db8::1 port 443
    allow to fd00:200::/64
    allow icmp to 10.30.5.5, 10.30.0.0/16
    allow tcp to 10.20.0.0/16 ports 8000-8100, 6379, 5432
    deny to 169.254.169.254
    allow udp to 10.0.0.53 port 53
    allow tcp to 10.1.0.0/16 port 22
    allow tcp to 10.0.0.0/8 port 443
  }
}
)");
  REQUIRE(a->result.ok);
  REQUIRE(b->result.ok);
  CHECK(a->Artifact(".nft") == b->Artifact(".nft"));
  CHECK(a->Artifact(".nft.json") == b->Artifact(".nft.json"));
}

TEST_CASE("nftables: exact addresses in hash sets, the rest in interval sets") {
  auto c = CompileWith(Nft(), R"(
policy s {
  network {
    allow tcp to 10.0.0.1 port 443
    allow tcp to 10.0.0.2 ports 80, 443
    allow tcp to 10.9.0.0/16 port 22
    allow tcp to 10.0.0.3 ports 1000-2000
  }
}
)");
  REQUIRE(c->result.ok);
  const std::string& text = c->Artifact(".nft");
  CHECK(text.find("\tset egress_v4_tcp_exact {\n"
                  "\t\ttype ipv4_addr . inet_service\n"
                  "\t\tsize 3\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.1 . 443,\n"
                  "\t\t\t10.0.0.2 . 80,\n"
                  "\t\t\t10.0.0.2 . 443\n"
                  "\t\t}\n") != std::string::npos);
  CHECK(text.find("\tset egress_v4_tcp_ranges {\n"
                  "\t\ttype ipv4_addr . inet_service\n"
                  "\t\tflags interval\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.3 . 1000-2000,\n"
                  "\t\t\t10.9.0.0/16 . 22\n"
                  "\t\t}\n") != std::string::npos);
  // No set, no rule for what the policy does not grant.
  CHECK(text.find("udp") == std::string::npos);
  CHECK(text.find("icmp_") == std::string::npos);
}

TEST_CASE("nftables: addresses sharing a decision share one address set") {
  // Five groups of single addresses sharing a decision (sizes 5, 4, 3, 3,
  // 2), a lone address, and two prefixes sharing one: the four largest
  // groups of singles become classes (the tie between the two groups of 3
  // broken by the decision, not by rule order), the group of 2 and the lone
  // address stay in the concatenation, the prefixes get an interval class.
  std::string rules;
  auto hosts = [&](int first, int n, const std::string& proto, const std::string& ports) {
    for (int i = first; i < first + 2 * n; i += 2) {  // not adjacent: pieces of their own
      rules += "    allow " + proto + " to 10.0.0." + std::to_string(i) + " " + ports + "\n";
    }
  };
  hosts(1, 5, "tcp", "port 443");
  hosts(11, 4, "udp", "port 53");
  hosts(21, 3, "tcp", "ports 80, 8000-8080");
  hosts(31, 3, "tcp", "port 22");
  hosts(41, 2, "tcp", "port 25");
  hosts(51, 1, "tcp", "port 443");  // with port 22 and icmp below: a decision of its own
  rules += "    allow tcp to 10.0.0.51 port 22\n";
  rules += "    allow icmp to 10.0.0.51\n";
  rules += "    allow tcp to 10.8.0.0/16 port 443\n    allow tcp to 10.9.0.0/16 port 443\n";
  auto c = CompileWith(Nft(), "policy s {\n  network {\n" + rules + "  }\n}\n");
  REQUIRE(c->result.ok);
  const std::string& text = c->Artifact(".nft");
  CHECK(text.find("\tset egress_v4_exact_c0 {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tsize 5\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.1,\n") != std::string::npos);
  CHECK(text.find("\tset egress_v4_exact_c1 {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tsize 4\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.11,\n") != std::string::npos);
  // Ties: the decision keys "22-22,//" < "80-80,8000-8080,//".
  CHECK(text.find("\tset egress_v4_exact_c2 {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tsize 3\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.31,\n") != std::string::npos);
  CHECK(text.find("\tset egress_v4_exact_c3 {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tsize 3\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.21,\n") != std::string::npos);
  CHECK(text.find("egress_v4_exact_c4") == std::string::npos);
  CHECK(text.find("\tset egress_v4_ranges_c0 {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tflags interval\n"
                  "\t\telements = {\n"
                  "\t\t\t10.8.0.0-10.9.255.255\n") == std::string::npos);  // one piece: no class
  CHECK(text.find("\tset egress_v4_tcp_exact {\n"
                  "\t\ttype ipv4_addr . inet_service\n"
                  "\t\tsize 4\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.41 . 25,\n"
                  "\t\t\t10.0.0.43 . 25,\n"
                  "\t\t\t10.0.0.51 . 22,\n"
                  "\t\t\t10.0.0.51 . 443\n") != std::string::npos);
  CHECK(text.find("\tset egress_v4_icmp_exact {\n"
                  "\t\ttype ipv4_addr\n"
                  "\t\tsize 1\n"
                  "\t\telements = {\n"
                  "\t\t\t10.0.0.51\n") != std::string::npos);
  // The port first, then the address; both directions.
  for (const char* rule :
       {"ct direction original tcp dport 443 ip daddr @egress_v4_exact_c0 goto allow\n",
        "ct direction original udp dport 53 ip daddr @egress_v4_exact_c1 goto allow\n",
        "ct direction original tcp dport 22 ip daddr @egress_v4_exact_c2 goto allow\n",
        "ct direction original tcp dport { 80, 8000-8080 } ip daddr @egress_v4_exact_c3 goto "
        "allow\n",
        "ct direction reply tcp sport 443 ip saddr @egress_v4_exact_c0 goto allow\n",
        "ct direction reply tcp sport { 80, 8000-8080 } ip saddr @egress_v4_exact_c3 goto "
        "allow\n"}) {
    CHECK(text.find(rule) != std::string::npos);
  }
  // Two prefixes sharing a decision, not adjacent: an interval class.
  auto r = CompileWith(Nft(),
                       "policy r { network { allow tcp to 10.8.0.0/16 port 443\n"
                       "allow tcp to 10.10.0.0/16 port 443 } }");
  REQUIRE(r->result.ok);
  CHECK(r->Artifact(".nft").find("\tset egress_v4_ranges_c0 {\n"
                                 "\t\ttype ipv4_addr\n"
                                 "\t\tflags interval\n"
                                 "\t\telements = {\n"
                                 "\t\t\t10.8.0.0/16,\n"
                                 "\t\t\t10.10.0.0/16\n") != std::string::npos);
  CHECK(r->Artifact(".nft.json").find("\"size\"") == std::string::npos);  // interval: no size
}

TEST_CASE("nftables: a policy without network grants still has every chain") {
  auto c = CompileWith(Nft(), "policy none { }");
  REQUIRE(c->result.ok);
  const std::string& text = c->Artifact(".nft");
  CHECK(text.find("\tset ") == std::string::npos);
  for (const char* chain : {"egress", "ingress", "allow", "egress_reject", "egress_drop",
                            "ingress_reject", "ingress_drop", "output", "input", "forward"}) {
    CHECK(text.find("\tchain " + std::string(chain) + " {") != std::string::npos);
  }
}

TEST_CASE("nftables: a deny by domain is refused, an allow by domain warned about") {
  auto c = CompileWith(Nft(), R"(
policy d {
  network {
    deny to "evil.example.com"
  }
}
)");
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics() ==
        "test.ward:4:5: error[B3002]: nftables cannot enforce a deny by domain: the name's other "
        "addresses get through\n"
        " 4 |     deny to \"evil.example.com\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "  = hint: deny the addresses instead, or use a DNS-aware target\n");
  auto w = CompileWith(Nft(), "policy d { network { allow tcp to \"example.com\" port 443 } }");
  CHECK(w->result.ok);
  CHECK(w->sink.warning_count() == 1);
}

TEST_CASE("nftables: the scope and generation ward apply fills in") {
  auto c = CompileWith(Nft(), "policy s { network { allow tcp to 10.0.0.1 port 443 } }");
  namespace nft = backend::nftables;
  nft::RenderOptions options;
  options.generation = 7;
  nft::Scope scope;
  scope.kind = nft::Scope::Kind::kCgroup;
  scope.cgroup_path = "ward/agent";
  scope.cgroup_level = 2;
  options.scope = scope;
  nft::Ruleset r;
  DiagnosticSink sink;
  REQUIRE(nft::RenderRuleset(c->ir, options, &r, sink));
  CHECK(r.table == "ward_s");
  CHECK(r.elements == 1);
  // No fast path on the mark: another table may have set the same value.
  CHECK(r.text.find("ct mark 0x00000007 accept") == std::string::npos);
  CHECK(r.text.find("\t\tct mark set 0x00000007 accept\n") != std::string::npos);
  CHECK(r.text.find("\t\tsocket cgroupv2 level 2 \"ward/agent\" goto egress_reject\n") !=
        std::string::npos);
  CHECK(r.text.find("\t\tsocket cgroupv2 level 2 \"ward/agent\" goto ingress_reject\n") !=
        std::string::npos);
  scope.kind = nft::Scope::Kind::kInterface;
  scope.interface = "tap0";
  options.scope = scope;
  REQUIRE(nft::RenderRuleset(c->ir, options, &r, sink));
  CHECK(r.text.find("\tchain forward {\n"
                    "\t\ttype filter hook forward priority filter; policy accept;\n"
                    "\t\tiifname \"tap0\" goto egress_drop\n"
                    "\t\toifname \"tap0\" goto ingress_drop\n"
                    "\t}\n") != std::string::npos);
  scope.kind = nft::Scope::Kind::kUid;
  scope.uid = 1000;
  options.scope = scope;
  REQUIRE(nft::RenderRuleset(c->ir, options, &r, sink));
  CHECK(r.text.find("\t\tmeta skuid 1000 goto egress_reject\n") != std::string::npos);
}

}  // namespace ward::test
