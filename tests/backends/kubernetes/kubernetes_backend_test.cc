// The kubernetes backend (backends/kubernetes/README.md): NetworkPolicy
// objects read back and evaluated (k8s_eval.h) against IR decide() on random
// policies, every emitted object validated against the published schemas,
// goldens for the bundled policies, determinism, and the diagnostics.
#include <catch2/catch.hpp>
#include <iostream>
#include <regex>

#include "backends/kubernetes/kubernetes_backend.h"
#include "backends/oci/oci_backend.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/kubernetes/k8s_eval.h"
#include "tests/network_cases.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using nlohmann::json;

// With --partial: domain allows are left out (and listed) instead of refused.
std::unique_ptr<Compiled> K8s(const std::string& source, bool partial = true) {
  backend::Options options;
  options.partial = partial;
  return CompileWith(backend::KubernetesBackend(), source, options);
}

bool Has(const std::vector<backend::Section>& v, backend::Section s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Query Q(ir::Direction dir, ir::Protocol proto, const std::string& addr, uint16_t port) {
  std::string error;
  auto p = ParseIpOrCidr(addr, &error);
  REQUIRE(p.has_value());
  return {dir, proto, *p, port};
}

const auto kE = ir::Direction::kEgress;
const auto kI = ir::Direction::kIngress;
const auto kTcp = ir::Protocol::kTcp;
const auto kUdp = ir::Protocol::kUdp;
const auto kIcmp = ir::Protocol::kIcmp;

const std::map<std::string, std::string> kDefaultPod = {{"ward/policy", "web"}};

// ---- the evaluator itself, on hand-written objects --------------------------

TEST_CASE("evaluator: NetworkPolicy semantics from the documentation") {
  const auto docs = ReadYamlStream(R"(
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: a}
spec:
  podSelector: {matchLabels: {app: x}}
  egress:
  - to:
    - ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}
    ports:
    - port: 443
    - {protocol: UDP, port: 1000, endPort: 1010}
  - to:
    - ipBlock: {cidr: 192.168.0.0/24}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: b}
spec:
  podSelector: {matchLabels: {app: other}}
  policyTypes: [Ingress, Egress]
)");
  REQUIRE(docs.size() == 2);
  const std::map<std::string, std::string> x = {{"app", "x"}, {"tier", "web"}};
  // Selected for egress (policyTypes absent, egress present): isolated.
  CHECK(NetworkPolicyAllows(docs, x, Q(kE, kTcp, "10.2.3.4", 443)));
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kE, kUdp, "10.2.3.4", 443)));  // TCP by default
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kE, kTcp, "10.1.3.4", 443)));  // except
  CHECK(NetworkPolicyAllows(docs, x, Q(kE, kUdp, "10.2.3.4", 1010)));       // endPort
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kE, kUdp, "10.2.3.4", 1011)));
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kE, kIcmp, "10.2.3.4", 0)));
  // No ports: every port and protocol, ICMP included.
  CHECK(NetworkPolicyAllows(docs, x, Q(kE, kIcmp, "192.168.0.9", 0)));
  CHECK(NetworkPolicyAllows(docs, x, Q(kE, kUdp, "192.168.0.9", 9)));
  CHECK(NetworkPolicyAllows(docs, x, Q(kE, kTcp, "::ffff:192.168.0.9", 9)));  // on the wire: IPv4
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kE, kTcp, "fd00::1", 443)));
  // policyTypes absent always includes Ingress: a has no ingress rules, so
  // x is isolated for ingress with nothing allowed.
  CHECK_FALSE(NetworkPolicyAllows(docs, x, Q(kI, kTcp, "8.8.8.8", 22)));
  // The other pod: isolated both ways by b, with no rules.
  const std::map<std::string, std::string> other = {{"app", "other"}};
  CHECK_FALSE(NetworkPolicyAllows(docs, other, Q(kI, kTcp, "8.8.8.8", 22)));
  CHECK_FALSE(NetworkPolicyAllows(docs, other, Q(kE, kTcp, "10.2.3.4", 443)));
  // A pod nothing selects.
  CHECK(NetworkPolicyAllows(docs, {{"app", "y"}}, Q(kE, kTcp, "10.1.3.4", 1)));
}

// ---- emitted objects ----------------------------------------------------------

const char* kWeb = R"(
policy web {
  network {
    allow tcp to any port 443
    allow udp to 10.0.0.0/8 ports 1000-2000, 53
    deny to 169.254.169.254, 10.9.0.0/16
    allow ingress tcp from 192.168.0.0/16 port 8080
  }
  process {
    no_new_privileges
    capabilities keep [CAP_NET_BIND_SERVICE]
    user 1000:1000
  }
  limits {
    cpus 0.5
    memory 1GiB
    disk 10G
    timeout 1h
  }
}
)";

TEST_CASE("kubernetes: NetworkPolicy objects for a policy") {
  auto c = K8s(kWeb);
  REQUIRE(c->result.ok);
  INFO(c->Diagnostics());
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  REQUIRE(docs.size() == 3);
  CHECK(docs[0]["metadata"]["name"] == "web-default-deny");
  CHECK(docs[0]["spec"]["policyTypes"] == json({"Ingress", "Egress"}));
  CHECK_FALSE(docs[0]["spec"].contains("egress"));
  CHECK(docs[0]["spec"]["podSelector"]["matchLabels"] == json({{"ward/policy", "web"}}));
  CHECK(docs[1]["metadata"]["name"] == "web-egress");
  CHECK(docs[2]["metadata"]["name"] == "web-ingress");
  // deny-overrides-allow as ipBlock except: 0.0.0.0/0 minus the metadata
  // address is one block.
  bool found = false;
  for (const json& rule : docs[1]["spec"]["egress"]) {
    for (const json& peer : rule["to"]) {
      if (peer["ipBlock"]["cidr"] == "0.0.0.0/0") {
        found = true;
        CHECK(peer["ipBlock"]["except"].dump().find("169.254.169.254/32") != std::string::npos);
      }
    }
    for (const json& port : rule["ports"]) CHECK(port.contains("protocol"));
  }
  CHECK(found);
  // The UDP range as port/endPort.
  CHECK(c->Artifact(".networkpolicy.yaml").find("endPort: 2000") != std::string::npos);
  CHECK(NetworkPolicyAllows(docs, kDefaultPod, Q(kE, kUdp, "10.1.2.3", 1500)));
  CHECK_FALSE(NetworkPolicyAllows(docs, kDefaultPod, Q(kE, kUdp, "10.9.2.3", 1500)));
  CHECK_FALSE(NetworkPolicyAllows(docs, kDefaultPod, Q(kE, kTcp, "169.254.169.254", 443)));
  CHECK(NetworkPolicyAllows(docs, kDefaultPod, Q(kI, kTcp, "192.168.7.7", 8080)));
  CHECK_FALSE(NetworkPolicyAllows(docs, kDefaultPod, Q(kI, kTcp, "192.168.7.7", 8081)));
  CHECK(Has(c->result.enforced, backend::Section::kNetwork));
  CHECK(Has(c->result.enforced, backend::Section::kSyscalls));
  CHECK(Has(c->result.enforced, backend::Section::kProcess));
  CHECK(Has(c->result.enforced, backend::Section::kLimits));
}

TEST_CASE("kubernetes: the pod snippet") {
  auto c = K8s(kWeb);
  REQUIRE(c->result.ok);
  const auto pod = ReadYamlStream(c->Artifact(".pod.yaml"));
  REQUIRE(pod.size() == 1);
  const json& spec = pod[0]["spec"];
  CHECK(pod[0]["metadata"]["labels"] == json({{"ward/policy", "web"}}));
  CHECK(spec["activeDeadlineSeconds"] == 3600);
  CHECK(spec["securityContext"]["runAsUser"] == 1000);
  CHECK(spec["securityContext"]["runAsGroup"] == 1000);
  CHECK(spec["securityContext"]["runAsNonRoot"] == true);
  CHECK(spec["securityContext"]["seccompProfile"] ==
        json({{"type", "Localhost"}, {"localhostProfile", "ward/web.json"}}));
  const json& container = spec["containers"][0];
  CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
  CHECK(container["securityContext"]["capabilities"]["drop"] == json({"ALL"}));
  CHECK(container["securityContext"]["capabilities"]["add"] == json({"NET_BIND_SERVICE"}));
  CHECK(container["resources"]["limits"] ==
        json({{"cpu", "500m"}, {"memory", "1073741824"}, {"ephemeral-storage", "10000000000"}}));
  // The seccomp profile the pod references is written where the kubelet's
  // seccomp root mirrors it.
  const json profile = json::parse(c->Artifact("kubelet-seccomp/ward/web.json"));
  CHECK(profile["defaultAction"] == "SCMP_ACT_KILL_PROCESS");
  // non-root with kept capabilities: not effective in Kubernetes.
  CHECK(c->Diagnostics().find("no ambient capabilities") != std::string::npos);
}

TEST_CASE("kubernetes: absent sections are the strictest reading") {
  auto c = K8s("policy p {}");
  REQUIRE(c->result.ok);
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  REQUIRE(docs.size() == 1);  // the default deny alone
  for (const char* a : {"1.2.3.4", "::1", "fd00::5"}) {
    CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kTcp, a, 443)));
    CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kI, kUdp, a, 53)));
  }
  const auto pod = ReadYamlStream(c->Artifact(".pod.yaml"));
  const json& sc = pod[0]["spec"]["containers"][0]["securityContext"];
  CHECK(sc["allowPrivilegeEscalation"] == false);
  CHECK(sc["capabilities"] == json({{"drop", {"ALL"}}}));
  CHECK_FALSE(pod[0]["spec"]["securityContext"].contains("runAsUser"));
  CHECK_FALSE(pod[0]["spec"]["containers"][0].contains("resources"));
  // Loopback is not filtered inside a pod: said.
  CHECK(c->Diagnostics().find("inside the pod") != std::string::npos);
}

TEST_CASE("kubernetes: the target block places the objects") {
  auto c = K8s(R"(
policy agent {
  network { allow tcp to 10.0.0.0/8 port 22 }
  target kubernetes {
    namespace "agents"
    pod_selector { app = "coding-agent", tier = "sandbox" }
  }
})");
  REQUIRE(c->result.ok);
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  for (const json& d : docs) {
    CHECK(d["metadata"]["namespace"] == "agents");
    CHECK(d["spec"]["podSelector"]["matchLabels"] ==
          json({{"app", "coding-agent"}, {"tier", "sandbox"}}));
  }
  const std::map<std::string, std::string> pod = {{"app", "coding-agent"}, {"tier", "sandbox"}};
  CHECK(NetworkPolicyAllows(docs, pod, Q(kE, kTcp, "10.3.3.3", 22)));
  CHECK_FALSE(NetworkPolicyAllows(docs, pod, Q(kE, kTcp, "10.3.3.3", 23)));
  const auto snippet = ReadYamlStream(c->Artifact(".pod.yaml"));
  CHECK(snippet[0]["metadata"]["labels"] == json({{"app", "coding-agent"}, {"tier", "sandbox"}}));
  CHECK(snippet[0]["metadata"]["namespace"] == "agents");
}

// ---- diagnostics ----------------------------------------------------------------

TEST_CASE("kubernetes: domain allows are refused, or with --partial left out and listed") {
  const char* source = R"(
policy p {
  network {
    allow tcp to "github.com", "*.githubusercontent.com" port 443
    allow udp to 10.0.0.10 port 53
  }
})";
  auto refused = K8s(source, /*partial=*/false);
  CHECK_FALSE(refused->result.ok);
  CHECK(refused->Diagnostics().find(
            "error[B3002]: NetworkPolicy cannot name domains: *.githubusercontent.com, "
            "github.com") != std::string::npos);
  auto c = K8s(source);
  REQUIRE(c->result.ok);
  const std::string d = c->Diagnostics();
  CHECK(d.find("B3002") != std::string::npos);
  CHECK(d.find("left out (not allowed): *.githubusercontent.com, github.com\n") !=
        std::string::npos);
  CHECK_FALSE(Has(c->result.enforced, backend::Section::kNetwork));
  // The address rules are still there; the DNS rule only because the IR has it.
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  CHECK(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kUdp, "10.0.0.10", 53)));
  CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kTcp, "140.82.112.3", 443)));
}

TEST_CASE("kubernetes with cilium among the targets: domain allows left to it, not refused") {
  const char* source = R"(
policy p {
  network {
    allow tcp to "github.com" port 443
    allow udp to 10.0.0.10 port 53
  }
})";
  backend::Options options;
  options.targets = {"kubernetes", "cilium"};
  auto c = CompileWith(backend::KubernetesBackend(), source, options);
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().find("note[B3002]: NetworkPolicy cannot name domains; left to -t cilium "
                              "(toFQDNs): github.com\n") != std::string::npos);
  CHECK(c->Diagnostics().find("error") == std::string::npos);
  CHECK_FALSE(Has(c->result.enforced, backend::Section::kNetwork));
  // The NetworkPolicy objects keep the address rules and never the name's.
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  CHECK(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kUdp, "10.0.0.10", 53)));
  CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kTcp, "140.82.112.3", 443)));
  // The positive control: another companion target changes nothing.
  options.targets = {"kubernetes", "oci"};
  CHECK_FALSE(CompileWith(backend::KubernetesBackend(), source, options)->result.ok);
}

TEST_CASE("kubernetes: a DNS rule only where the IR has one") {
  auto c = K8s("policy p { network { allow tcp to 1.2.3.4 port 443 } }");
  REQUIRE(c->result.ok);
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  CHECK(c->Artifact(".networkpolicy.yaml").find("53") == std::string::npos);
  CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kUdp, "10.96.0.10", 53)));
}

TEST_CASE("kubernetes: refusals") {
  SECTION("a deny by domain") {
    auto c = K8s(R"(policy p { network { allow tcp to any port 443
                                          deny to "evil.example" } })");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("deny by domain") != std::string::npos);
  }
  SECTION("namespace_selector") {
    auto c = K8s(R"(policy p { target kubernetes { namespace_selector { team = "a" } } })");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("namespace_selector") != std::string::npos);
  }
  SECTION("no_new_privileges with CAP_SYS_ADMIN") {
    auto c = K8s("policy p { process { no_new_privileges\n capabilities keep [CAP_SYS_ADMIN] } }");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("CAP_SYS_ADMIN") != std::string::npos);
  }
  SECTION("a name too long for Kubernetes") {
    auto c = K8s("policy " + std::string(51, 'a') + " { }");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("Kubernetes object name") != std::string::npos);
  }
  SECTION("an empty selector") {
    auto c = K8s("policy p { target kubernetes { pod_selector { } } }");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("every pod") != std::string::npos);
  }
}

TEST_CASE("kubernetes: names are lower-cased with '_' as '-'") {
  auto c = K8s("policy Bad_Name { }");
  REQUIRE(c->result.ok);
  CHECK(c->Artifact(".networkpolicy.yaml").find("name: \"bad-name-default-deny\"") !=
        std::string::npos);
}

TEST_CASE("kubernetes: ICMP is reported only where the IR still allows it") {
  auto c = K8s("policy p { network { allow to 10.0.0.0/8 port 53\n deny icmp to 10.0.0.0/8 } }");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().find("ICMP") == std::string::npos);
  auto d = K8s("policy p { network { allow to ::ffff:10.0.0.0/104 } }");
  REQUIRE(d->result.ok);
  CHECK(d->Diagnostics().find("cannot express ICMP") != std::string::npos);
}

TEST_CASE("kubernetes: what a pod cannot hold is said, and the section not claimed") {
  auto c = K8s(R"(
policy p {
  network { allow to 10.0.0.0/8 port 53
            allow icmp to 10.0.0.0/8 }
  process { env allow ["PATH"] }
  limits { pids 100
           open_files 10 }
})");
  REQUIRE(c->result.ok);
  const std::string d = c->Diagnostics();
  CHECK(d.find("cannot express ICMP") != std::string::npos);
  CHECK(d.find("'pids'") != std::string::npos);
  CHECK(d.find("'open_files'") != std::string::npos);
  CHECK(d.find("env allow") != std::string::npos);
  CHECK_FALSE(Has(c->result.enforced, backend::Section::kProcess));
  CHECK_FALSE(Has(c->result.enforced, backend::Section::kLimits));
  CHECK(Has(c->result.enforced, backend::Section::kNetwork));  // ICMP: towards deny
  const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
  CHECK_FALSE(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kIcmp, "10.0.0.1", 0)));
  CHECK(NetworkPolicyAllows(docs, {{"ward/policy", "p"}}, Q(kE, kUdp, "10.0.0.1", 53)));
}

// ---- the property test --------------------------------------------------------

TEST_CASE("kubernetes: the NetworkPolicy evaluator agrees with IR decide() on random policies") {
  Rng rng(Seed());
  int queries = 0, allowed = 0, icmp_lost = 0;
  for (int round = 0; round < 250; ++round) {
    const std::string source = RandomPolicy(rng, false);
    auto c = K8s(source);
    INFO(source);
    REQUIRE(c->result.ok);
    const auto docs = ReadYamlStream(c->Artifact(".networkpolicy.yaml"));
    const std::map<std::string, std::string> pod = {{"ward/policy", "random"}};
    for (int i = 0; i < 60; ++i) {
      const Query q = RandomQuery(rng);
      const bool ir = c->ir.network.Decide(q.dir, q.proto, q.addr, q.port);
      const bool np = NetworkPolicyAllows(docs, pod, q);
      INFO(Describe(q) << " ir=" << ir << " networkpolicy=" << np);
      ++queries;
      if (q.proto == ir::Protocol::kIcmp) {
        CHECK_FALSE(np);  // deny-only approximation
        if (ir) {
          ++icmp_lost;
          CHECK(c->Diagnostics().find("cannot express ICMP") != std::string::npos);
        }
      } else {
        CHECK(np == ir);
        allowed += ir;
      }
    }
  }
  std::cout << queries << " queries, " << allowed << " allowed, " << icmp_lost
            << " ICMP grants approximated\n";
  CHECK(allowed > queries / 50);  // the generator reaches both answers
}

// The awkward cases of tests/network_cases.h (overlapping allows and denies
// in either order and across extends, equal CIDRs, `any`, `loopback`, the
// IPv4-mapped, NAT64 and compatible forms, port ranges overlapping in part,
// an omitted protocol against tcp/udp/icmp, both directions), probed half
// at their edges: the NetworkPolicy objects read back decide as IR decide()
// and the reference oracle for TCP and UDP, and deny ICMP.
TEST_CASE("kubernetes differential: NetworkPolicy read back over the awkward cases") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::cout << "kubernetes differential: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  net::Rng rng(seed);
  net::Universe u;
  u.ports = {22, 53, 80, 443, 1000, 5432, 8000, 8050, 8100, 8101};
  int queries = 0, allowed = 0, mismatches = 0;
  const int rounds = Rounds(200);
  for (int round = 0; round < rounds; ++round) {
    const net::Case c = net::RandomCase(rng, u, round, "diff");
    INFO("case " << round << " (" << c.shape << "):\n" << c.text);
    auto front = CheckSource(c.text);
    REQUIRE_FALSE(front->sink.has_errors());
    const ast::File* f = front->program.file(front->program.roots.at(0));
    const ast::Policy* target = nullptr;
    for (const ast::Policy& p : f->policies) {
      if (p.name.text == c.target) target = &p;
    }
    REQUIRE(target != nullptr);
    DiagnosticSink sink;
    const ir::Policy policy = ir::Lower(front->program, *target, sink);
    REQUIRE_FALSE(sink.has_errors());
    const backend::Result result = backend::KubernetesBackend().Compile(policy, {}, sink);
    REQUIRE(result.ok);
    const std::string* yaml = nullptr;
    for (const backend::Artifact& a : result.artifacts) {
      if (a.path == "diff.networkpolicy.yaml") yaml = &a.bytes;
    }
    REQUIRE(yaml != nullptr);
    const auto docs = ReadYamlStream(*yaml);
    const std::map<std::string, std::string> pod = {{"ward/policy", "diff"}};
    for (int i = 0; i < 80; ++i) {
      const net::Probe probe = net::CaseProbe(rng, u, c);
      std::string error;
      auto addr = ParseIpOrCidr(probe.addr.Text(), &error);
      REQUIRE(addr.has_value());
      const Query q{probe.ingress ? kI : kE,
                    probe.proto == net::Proto::kTcp   ? kTcp
                    : probe.proto == net::Proto::kUdp ? kUdp
                                                      : kIcmp,
                    *addr, probe.port};
      const bool ir = policy.network.Decide(q.dir, q.proto, q.addr, q.port);
      const bool reference = net::Reference(c.rules, probe);
      const bool np = NetworkPolicyAllows(docs, pod, q);
      INFO(probe.Describe() << ": reference " << reference << ", IR " << ir << ", networkpolicy "
                            << np << "\n"
                            << *yaml);
      REQUIRE(ir == reference);  // a NetworkPolicy agreeing with a wrong IR proves nothing
      ++queries;
      const bool want = q.proto == kIcmp ? false : ir;  // ICMP: deny-only approximation
      if (np != want) ++mismatches;
      CHECK(np == want);
      allowed += np;
    }
  }
  std::cout << "kubernetes differential: " << queries << " queries on " << rounds << " policies, "
            << allowed << " allowed, " << mismatches << " mismatches (seed " << seed << ")\n";
  CHECK(allowed * 20 > queries);
}

// ---- schemas --------------------------------------------------------------------

std::vector<std::string> SchemaSources() {
  std::vector<std::string> sources = {kWeb, "policy p {}",
                                      ReadTestFile("../policies/coding-agent.ward"),
                                      R"(policy q { process { user 0:0 } target kubernetes {
                                           namespace "ns" pod_selector { app = "x" } } })"};
  Rng rng(Seed() + 1);
  for (int i = 0; i < 20; ++i) sources.push_back(RandomPolicy(rng, false));
  return sources;
}

TEST_CASE("kubernetes: every emitted object is valid against the published schemas") {
  std::vector<json> policies, pod_contexts, container_contexts, seccomp_profiles;
  for (const std::string& source : SchemaSources()) {
    auto c = K8s(source);
    REQUIRE(c->result.ok);
    for (json& d : ReadYamlStream(c->Artifact(".networkpolicy.yaml"))) policies.push_back(d);
    const auto pod = ReadYamlStream(c->Artifact(".pod.yaml"));
    REQUIRE(pod.size() == 1);
    pod_contexts.push_back(pod[0]["spec"]["securityContext"]);
    seccomp_profiles.push_back(pod[0]["spec"]["securityContext"]["seccompProfile"]);
    for (const json& container : pod[0]["spec"]["containers"]) {
      container_contexts.push_back(container["securityContext"]);
      // No published schema for ResourceRequirements here: quantities are
      // checked by their grammar.
      if (container.contains("resources")) {
        for (const auto& [k, v] : container["resources"]["limits"].items()) {
          CHECK(std::regex_match(v.get<std::string>(), std::regex("^[0-9]+m?$")));
        }
      }
    }
  }
  const std::string dir = SchemaDir() + "/";
  std::string out;
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-networkpolicy-networking-v1.json", policies, &out) == 0);
  INFO(out);
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-podsecuritycontext-v1.json", pod_contexts, &out) == 0);
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-securitycontext-v1.json", container_contexts, &out) ==
        0);
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-seccompprofile-v1.json", seccomp_profiles, &out) == 0);
  std::cout << policies.size() << " NetworkPolicy objects, " << pod_contexts.size()
            << " pod snippets validated\n";
  // Negative controls: the schemas are not vacuous.
  json bad = policies.back();
  bad["spec"]["egress"] = json::array({{{"ports", {{{"port", 443}, {"endPort", "x"}}}}}});
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-networkpolicy-networking-v1.json", {bad}, nullptr) != 0);
  json bad_sc = container_contexts.back();
  bad_sc["allowPrivilegeEscalation"] = "no";
  CHECK(ValidateAgainst(dir + "k8s-v1.31.0-securitycontext-v1.json", {bad_sc}, nullptr) != 0);
}

// ---- goldens and determinism ------------------------------------------------------

TEST_CASE("kubernetes: golden files for the bundled policies") {
  auto c = K8s(ReadTestFile("../policies/coding-agent.ward"));
  REQUIRE(c->result.ok);
  CHECK(MatchesGolden("backends/kubernetes/testdata/coding-agent.networkpolicy.yaml",
                      c->Artifact(".networkpolicy.yaml")));
  CHECK(MatchesGolden("backends/kubernetes/testdata/coding-agent.pod.yaml",
                      c->Artifact(".pod.yaml")));
  CHECK(
      MatchesGolden("backends/kubernetes/testdata/coding-agent.diagnostics.txt", c->Diagnostics()));
  // The seccomp profile is the OCI backend's, byte for byte.
  auto oci = CompileWith(backend::OciBackend(), ReadTestFile("../policies/coding-agent.ward"));
  REQUIRE(oci->result.ok);
  CHECK(c->Artifact("kubelet-seccomp/ward/coding-agent.json") ==
        oci->Artifact("coding-agent.seccomp.json"));
  // Domains are left out: the network section is not claimed.
  CHECK_FALSE(Has(c->result.enforced, backend::Section::kNetwork));
}

TEST_CASE("kubernetes: same policy, same bytes") {
  const std::string a = R"(policy p { network {
    allow tcp to any port 443
    deny to 169.254.169.254
    allow udp to 10.0.0.0/8 ports 53, 1000-2000
    allow ingress tcp from 192.168.0.0/16 port 22 } })";
  const std::string b = R"(policy p { network {
    allow ingress tcp from 192.168.0.0/16 port 22
    allow udp to 10.0.0.0/8 ports 1000-2000, 53
    deny to 169.254.169.254
    allow tcp to any port 443 } })";
  auto x = K8s(a), y = K8s(a), z = K8s(b);
  REQUIRE(x->result.ok);
  REQUIRE(x->result.artifacts.size() == z->result.artifacts.size());
  for (size_t i = 0; i < x->result.artifacts.size(); ++i) {
    CHECK(x->result.artifacts[i].path == y->result.artifacts[i].path);
    CHECK(x->result.artifacts[i].bytes == y->result.artifacts[i].bytes);
    CHECK(x->result.artifacts[i].bytes == z->result.artifacts[i].bytes);  // rule order is no matter
  }
}

}  // namespace
}  // namespace ward::test
