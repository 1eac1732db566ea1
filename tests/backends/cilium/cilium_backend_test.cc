// The cilium backend (backends/cilium/README.md): the CiliumNetworkPolicy
// read back and evaluated (tests/backends/kubernetes/k8s_eval.h) against IR
// decide() on random policies, domains as toFQDNs with the DNS rule that
// makes them work, address denies as egressDeny, the CRD's openAPIV3Schema
// on every object, golden files and determinism.
#include <catch2/catch.hpp>
#include <iostream>

#include "backends/cilium/cilium_backend.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/kubernetes/k8s_eval.h"

namespace ward::test {
namespace {

using nlohmann::json;

std::unique_ptr<Compiled> Cil(const std::string& source) {
  return CompileWith(backend::CiliumBackend(), source);
}

json ReadOne(const Compiled& c) {
  auto docs = ReadYamlStream(c.Artifact(".cilium.yaml"));
  REQUIRE(docs.size() == 1);
  return docs[0];
}

Query Q(ir::Direction dir, ir::Protocol proto, const std::string& addr, uint16_t port) {
  std::string error;
  auto p = ParseIpOrCidr(addr, &error);
  REQUIRE(p.has_value());
  return {dir, proto, *p, port};
}

const auto kE = ir::Direction::kEgress;
const auto kTcp = ir::Protocol::kTcp;
const auto kUdp = ir::Protocol::kUdp;

TEST_CASE("evaluator: Cilium deny rules win over allows") {
  const auto docs = ReadYamlStream(R"(
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: a}
spec:
  endpointSelector: {matchLabels: {app: x}}
  egress:
  - toCIDRSet: [{cidr: 0.0.0.0/0, except: [10.0.0.0/8]}]
    toPorts: [{ports: [{port: "443", protocol: TCP}]}]
  - toCIDRSet: [{cidr: 10.1.0.0/16}]
    toPorts: [{ports: [{port: "1000", endPort: 1010, protocol: ANY}]}]
  egressDeny:
  - toCIDRSet: [{cidr: 1.1.1.1/32}]
    toPorts: [{ports: [{port: "443", protocol: TCP}]}]
)");
  const std::map<std::string, std::string> x = {{"app", "x"}};
  CHECK(CiliumAllows(docs[0], x, Q(kE, kTcp, "8.8.8.8", 443)));
  CHECK_FALSE(CiliumAllows(docs[0], x, Q(kE, kTcp, "1.1.1.1", 443)));   // deny wins
  CHECK_FALSE(CiliumAllows(docs[0], x, Q(kE, kTcp, "10.2.0.1", 443)));  // except
  CHECK(CiliumAllows(docs[0], x, Q(kE, kUdp, "10.1.0.1", 1005)));       // ANY, endPort
  CHECK_FALSE(CiliumAllows(docs[0], x, Q(kE, kUdp, "10.1.0.1", 1011)));
  CHECK_FALSE(CiliumAllows(docs[0], x, Q(kE, ir::Protocol::kIcmp, "8.8.8.8", 0)));
  CHECK(CiliumAllows(docs[0], {{"app", "y"}}, Q(kE, kTcp, "1.1.1.1", 443)));  // not selected
}

TEST_CASE("cilium: domains become toFQDNs with a DNS rule for exactly those names") {
  auto c = Cil(R"(
policy agent {
  network {
    allow tcp to "github.com", "*.githubusercontent.com" port 443
    allow tcp to any port 443
    deny to 169.254.169.254
  }
  target cilium { namespace "agents" endpoint_selector { app = "agent" } }
})");
  REQUIRE(c->result.ok);
  const json cnp = ReadOne(*c);
  CHECK(cnp["metadata"]["namespace"] == "agents");
  CHECK(cnp["spec"]["endpointSelector"]["matchLabels"] == json({{"app", "agent"}}));
  CHECK(cnp["spec"]["enableDefaultDeny"] == json({{"egress", true}, {"ingress", true}}));
  bool fqdn = false, dns = false;
  for (const json& rule : cnp["spec"]["egress"]) {
    if (rule.contains("toFQDNs")) {
      fqdn = true;
      CHECK(rule["toFQDNs"] == json::parse(R"([{"matchPattern": "*.githubusercontent.com"},
                                                {"matchName": "github.com"}])"));
      CHECK(rule["toPorts"][0]["ports"] == json::parse(R"([{"port":"443","protocol":"TCP"}])"));
    }
    if (rule.contains("toEndpoints")) {
      dns = true;
      CHECK(rule["toEndpoints"][0]["matchLabels"]["k8s:k8s-app"] == "kube-dns");
      CHECK(rule["toPorts"][0]["rules"]["dns"].size() == 2);
    }
  }
  CHECK(fqdn);
  CHECK(dns);
  // The address deny also holds against the names: egressDeny.
  REQUIRE(cnp["spec"].contains("egressDeny"));
  const std::map<std::string, std::string> pod = {{"app", "agent"}};
  CHECK_FALSE(CiliumAllows(cnp, pod, Q(kE, kTcp, "169.254.169.254", 443)));
  CHECK(CiliumAllows(cnp, pod, Q(kE, kTcp, "140.82.112.3", 443)));
  // Ward's *.name reaches every depth, Cilium's one label: said.
  CHECK(c->Diagnostics().find("one label") != std::string::npos);
  CHECK(std::find(c->result.enforced.begin(), c->result.enforced.end(),
                  backend::Section::kNetwork) != c->result.enforced.end());
}

TEST_CASE("cilium: no domains, no DNS rule and no deny rules") {
  auto c = Cil("policy p { network { allow tcp to 10.0.0.0/8 port 22\n deny to 10.1.0.0/16 } }");
  REQUIRE(c->result.ok);
  const json cnp = ReadOne(*c);
  CHECK_FALSE(cnp["spec"].contains("egressDeny"));
  CHECK(c->Artifact(".cilium.yaml").find("kube-dns") == std::string::npos);
  CHECK(cnp["spec"]["egress"][0]["toCIDRSet"] ==
        json::parse(R"([{"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}])"));
}

TEST_CASE("cilium: refusals") {
  auto c = Cil(R"(policy p { network { allow tcp to any port 443
                                         deny to "evil.example" } })");
  CHECK_FALSE(c->result.ok);
  CHECK(c->Diagnostics().find("deny by domain") != std::string::npos);
}

TEST_CASE("cilium: ports beyond the CRD's 40 per PortRule are split") {
  std::string ports;
  for (int i = 0; i < 45; ++i) ports += (i ? ", " : "") + std::to_string(1000 + 2 * i);
  auto c = Cil("policy p { network { allow tcp to 10.0.0.0/8 ports " + ports + " } }");
  REQUIRE(c->result.ok);
  const json cnp = ReadOne(*c);
  const json& to_ports = cnp["spec"]["egress"][0]["toPorts"];
  REQUIRE(to_ports.size() == 2);
  CHECK(to_ports[0]["ports"].size() == 40);
  CHECK(to_ports[1]["ports"].size() == 5);
  CHECK(CiliumAllows(cnp, {{"ward/policy", "p"}}, Q(kE, kTcp, "10.0.0.1", 1088)));
  CHECK_FALSE(CiliumAllows(cnp, {{"ward/policy", "p"}}, Q(kE, kTcp, "10.0.0.1", 1089)));
}

TEST_CASE("cilium: the evaluator agrees with IR decide() on random policies") {
  Rng rng(Seed() + 7);
  int queries = 0, allowed = 0;
  for (int round = 0; round < 250; ++round) {
    const std::string source = RandomPolicy(rng, true);
    auto c = Cil(source);
    INFO(source);
    if (!c->result.ok) {
      // Only a deny by domain is refused, and the generator writes none.
      FAIL(c->Diagnostics());
    }
    const json cnp = ReadOne(*c);
    for (int i = 0; i < 60; ++i) {
      const Query q = RandomQuery(rng);
      const bool ir = c->ir.network.Decide(q.dir, q.proto, q.addr, q.port);
      const bool cil = CiliumAllows(cnp, {{"ward/policy", "random"}}, q);
      INFO(Describe(q) << " ir=" << ir << " cilium=" << cil);
      ++queries;
      if (q.proto == ir::Protocol::kIcmp) {
        CHECK_FALSE(cil);
      } else {
        CHECK(cil == ir);
        allowed += ir;
      }
    }
  }
  std::cout << queries << " queries, " << allowed << " allowed\n";
  CHECK(allowed > queries / 50);
}

TEST_CASE("cilium: flows to names agree with IR DecideName, never wider") {
  Rng rng(Seed() + 11);
  // Names of each kind the generator's patterns ("example.com",
  // "*.example.org") meet: exact, one label under, two labels under (where
  // Cilium's `*.` is narrower: the IR may allow what Cilium refuses), the
  // apex of a wildcard, and a stranger.
  const std::vector<std::pair<std::string, bool>> names = {{"example.com", true},
                                                           {"a.example.org", true},
                                                           {"b.a.example.org", false},
                                                           {"example.org", true},
                                                           {"other.net", true}};
  int queries = 0, allowed = 0, narrowed = 0;
  for (int round = 0; round < 150; ++round) {
    const std::string source = RandomPolicy(rng, true);
    auto c = Cil(source);
    INFO(source);
    REQUIRE(c->result.ok);
    const json cnp = ReadOne(*c);
    for (int i = 0; i < 40; ++i) {
      Query q = RandomQuery(rng);
      q.dir = ir::Direction::kEgress;
      const auto& [name, exact] = names[rng() % names.size()];
      const bool ir = c->ir.network.DecideName(q.dir, q.proto, name, &q.addr, q.port);
      const bool cil = CiliumAllowsName(cnp, {{"ward/policy", "random"}}, q, name);
      INFO(Describe(q) << " name " << name << " ir=" << ir << " cilium=" << cil);
      ++queries;
      CHECK((!cil || ir));  // never wider
      if (exact && q.proto != ir::Protocol::kIcmp) {
        CHECK(cil == ir);
      } else if (ir && !cil) {
        ++narrowed;
      }
      allowed += cil;
    }
  }
  std::cout << queries << " name queries, " << allowed << " allowed, " << narrowed
            << " narrowed (ICMP, deeper names)\n";
  CHECK(allowed > queries / 50);
}

TEST_CASE("cilium: every emitted object is valid against the CRD's schema") {
  std::vector<json> docs;
  std::vector<std::string> sources = {"policy p {}", ReadTestFile("../policies/coding-agent.ward")};
  Rng rng(Seed() + 3);
  for (int i = 0; i < 25; ++i) sources.push_back(RandomPolicy(rng, true));
  for (const std::string& s : sources) {
    auto c = Cil(s);
    REQUIRE(c->result.ok);
    docs.push_back(ReadOne(*c));
  }
  std::string out;
  CHECK(ValidateAgainst(CiliumSchemaPath(), docs, &out) == 0);
  INFO(out);
  std::cout << docs.size() << " CiliumNetworkPolicy objects validated\n";
  json bad = docs.back();
  bad["spec"]["egress"] =
      json::array({{{"toPorts", {{{"ports", {{{"port", "443"}, {"protocol", "ICMP"}}}}}}}}});
  CHECK(ValidateAgainst(CiliumSchemaPath(), {bad}, nullptr) != 0);
}

TEST_CASE("cilium: golden file for the bundled policy, and same bytes twice") {
  const std::string source = ReadTestFile("../policies/coding-agent.ward");
  auto c = Cil(source);
  REQUIRE(c->result.ok);
  CHECK(MatchesGolden("backends/cilium/testdata/coding-agent.cilium.yaml",
                      c->Artifact(".cilium.yaml")));
  CHECK(MatchesGolden("backends/cilium/testdata/coding-agent.diagnostics.txt", c->Diagnostics()));
  auto again = Cil(source);
  CHECK(again->Artifact(".cilium.yaml") == c->Artifact(".cilium.yaml"));
}

}  // namespace
}  // namespace ward::test
