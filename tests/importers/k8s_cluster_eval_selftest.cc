// Self-tests of the reference NetworkPolicy evaluator (k8s_cluster_eval.h):
// hand-computed verdicts for the upstream examples in
// testdata/networkpolicy/ (Kubernetes docs, ahmetb's recipes) against the
// hand-made snapshot testdata/networkpolicy/cluster.json, plus the
// random generators' validity.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tests/importers/k8s_cluster_eval.h"

#ifndef WARD_TESTDATA_DIR
#define WARD_TESTDATA_DIR "tests"
#endif

namespace ward::test::k8s {
namespace {

using nlohmann::json;

std::string ReadData(const std::string& relative) {
  const std::string path =
      std::string(WARD_TESTDATA_DIR) + "/importers/testdata/networkpolicy/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const json& Cluster() {
  static const json c = json::parse(ReadData("cluster.json"));
  return c;
}

std::vector<json> Policies(const std::string& relative) { return ReadObjects(ReadData(relative)); }

Flow In(const std::string& proto, const std::string& peer, uint16_t port) {
  return Flow{true, proto, peer, port};
}
Flow Out(const std::string& proto, const std::string& peer, uint16_t port) {
  return Flow{false, proto, peer, port};
}

bool Allows(const std::vector<json>& policies, const std::string& pod, const Flow& f,
            const std::string& ns = "default") {
  return ClusterAllows(Cluster(), policies, ns, pod, f);
}

// Pod IPs of cluster.json.
const char* const kDb = "10.244.0.10";
const char* const kFrontend = "10.244.0.11";
const char* const kWeb = "10.244.0.12";
const char* const kClient = "10.244.0.14";
const char* const kJobFrontend = "10.244.0.18";  // Succeeded, role=frontend
const char* const kCoreDns = "10.244.0.30";
const char* const kNode = "10.240.0.2";  // hostNetwork kube-proxy, role=frontend
const char* const kMyProject = "10.244.0.20";
const char* const kMonitorOps = "10.244.0.40";   // operations, type=monitoring
const char* const kFrontendOps = "10.244.0.41";  // operations, role=frontend
const char* const kMonitorDefault = "10.244.0.17";
const char* const kProd = "10.244.0.50";

TEST_CASE("k8s eval: ReadObjects reads the docs' JSON-flavoured YAML and unwraps Lists") {
  const std::vector<json> a = Policies("website/network-policy-default-deny-all.yaml");
  REQUIRE(a.size() == 1);
  CHECK(a[0]["metadata"]["name"] == "default-deny-all");
  CHECK(a[0]["spec"]["policyTypes"] == json({"Ingress", "Egress"}));
  const std::vector<json> n = Policies("website/nginx-policy.yaml");
  REQUIRE(n.size() == 1);
  CHECK(n[0]["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"]["access"] == "true");
  const std::vector<json> items = ReadObjects(ReadData("cluster.json"));
  CHECK(items.size() == 23);
  const std::vector<json> l = ReadObjects(
      "apiVersion: v1\nkind: List\nitems:\n- kind: NetworkPolicy\n  metadata: {name: a}\n"
      "- kind: NetworkPolicyList\n  items: [{kind: NetworkPolicy, metadata: {name: b}}]\n---\n"
      "---\nkind: NetworkPolicy\nmetadata: {name: c}\nspec: {ingress: [{ports: [{port: 80}]}]}\n");
  REQUIRE(l.size() == 3);
  CHECK(l[2]["spec"]["ingress"][0]["ports"][0]["port"] == 80);
}

TEST_CASE("k8s eval: the docs' test-network-policy") {
  const std::vector<json> p = Policies("website/networkpolicy.yaml");
  // Ingress to role=db on TCP 6379 from 172.17.0.0/16 minus 172.17.1.0/24,
  // from pods of namespaces labelled project=myproject, from role=frontend
  // pods of "default".
  CHECK(Allows(p, "db-0", In("TCP", "172.17.0.5", 6379)));
  CHECK(Allows(p, "db-0", In("TCP", "172.17.0.255", 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", "172.17.1.0", 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", "172.17.1.255", 6379)));
  CHECK(Allows(p, "db-0", In("TCP", "172.17.2.0", 6379)));
  CHECK(Allows(p, "db-0", In("TCP", "172.17.255.255", 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", "172.18.0.1", 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", "172.17.0.5", 6380)));
  CHECK_FALSE(Allows(p, "db-0", In("UDP", "172.17.0.5", 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("ICMP", "172.17.0.5", 0)));
  CHECK(Allows(p, "db-0", In("TCP", kFrontend, 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", kFrontend, 80)));
  CHECK(Allows(p, "db-0", In("TCP", kMyProject, 6379)));
  CHECK_FALSE(Allows(p, "db-0", In("TCP", kProd, 6379)));
  // podSelector alone: the policy's namespace only.
  CHECK_FALSE(Allows(p, "db-0", In("TCP", kFrontendOps, 6379)));
  // Succeeded and hostNetwork pods labelled role=frontend are not selected.
  CHECK_FALSE(Allows(p, "db-0", In("TCP", kJobFrontend, 6379)));
  // The hostNetwork pod's address is db-0's own node, which is always
  // allowed ("traffic to and from the node where a Pod is running").
  CHECK(Allows(p, "db-0", In("TCP", kNode, 6379)));
  // A v6 peer never matches the v4 ipBlock; the v6 address of a pod counts.
  CHECK_FALSE(Allows(p, "db-0", In("TCP", "::ffff:172.17.0.5", 6379)));
  // Egress from role=db: 10.0.0.0/24 on TCP 5978 only.
  CHECK(Allows(p, "db-0", Out("TCP", "10.0.0.7", 5978)));
  CHECK(Allows(p, "db-0", Out("TCP", "10.0.0.255", 5978)));
  CHECK_FALSE(Allows(p, "db-0", Out("TCP", "10.0.1.7", 5978)));
  CHECK_FALSE(Allows(p, "db-0", Out("TCP", "10.0.0.7", 5979)));
  CHECK_FALSE(Allows(p, "db-0", Out("UDP", "10.0.0.7", 5978)));
  CHECK_FALSE(Allows(p, "db-0", Out("TCP", kFrontend, 5978)));
  CHECK_FALSE(Allows(p, "db-0", Out("ICMP", "10.0.0.7", 0)));
  // Pods the policy does not select are not isolated (ICMP included).
  CHECK(Allows(p, "frontend-0", In("TCP", "192.168.1.1", 22)));
  CHECK(Allows(p, "frontend-0", Out("ICMP", "8.8.8.8", 0)));
  CHECK(Allows(p, "coredns-0", In("UDP", "172.17.1.1", 53), "kube-system"));
}

TEST_CASE("k8s eval: the docs' default policies") {
  const std::vector<json> deny_in = Policies("website/network-policy-default-deny-ingress.yaml");
  CHECK_FALSE(Allows(deny_in, "web-0", In("TCP", kFrontend, 80)));
  CHECK_FALSE(Allows(deny_in, "web-0", In("ICMP", kFrontend, 0)));
  CHECK(Allows(deny_in, "web-0", Out("TCP", "8.8.8.8", 443)));
  CHECK(Allows(deny_in, "web-0", Out("ICMP", "8.8.8.8", 0)));
  // metadata.namespace absent: "default"; kube-system is untouched.
  CHECK(Allows(deny_in, "coredns-0", In("UDP", kWeb, 53), "kube-system"));

  const std::vector<json> allow_in = Policies("website/network-policy-allow-all-ingress.yaml");
  CHECK(Allows(allow_in, "web-0", In("TCP", "203.0.113.9", 1)));
  CHECK(Allows(allow_in, "web-0", In("UDP", "2001:db8::1", 65535)));
  CHECK_FALSE(Allows(allow_in, "web-0", In("ICMP", "203.0.113.9", 0)));  // isolated: no ICMP
  // Together with default-deny-ingress the union allows.
  std::vector<json> both = deny_in;
  both.push_back(allow_in[0]);
  CHECK(Allows(both, "web-0", In("TCP", kFrontend, 80)));

  const std::vector<json> deny_out = Policies("website/network-policy-default-deny-egress.yaml");
  CHECK_FALSE(Allows(deny_out, "web-0", Out("UDP", kCoreDns, 53)));
  CHECK(Allows(deny_out, "web-0", In("TCP", kFrontend, 80)));

  const std::vector<json> allow_out = Policies("website/network-policy-allow-all-egress.yaml");
  CHECK(Allows(allow_out, "web-0", Out("UDP", kCoreDns, 53)));
  CHECK_FALSE(Allows(allow_out, "web-0", Out("ICMP", kCoreDns, 0)));

  const std::vector<json> deny_all = Policies("website/network-policy-default-deny-all.yaml");
  CHECK_FALSE(Allows(deny_all, "web-0", Out("TCP", kCoreDns, 53)));
  CHECK_FALSE(Allows(deny_all, "web-0", In("TCP", kFrontend, 80)));

  const std::vector<json> eg_in =
      Policies("website/network-policy-allow-all-egress-deny-all-ingress.yaml");
  CHECK(Allows(eg_in, "db-0", Out("TCP", "198.51.100.1", 8443)));
  CHECK(Allows(eg_in, "db-0", Out("UDP", "fd00::1", 53)));
  CHECK_FALSE(Allows(eg_in, "db-0", In("TCP", kFrontend, 6379)));
}

TEST_CASE("k8s eval: endPort ranges (docs' multi-port-egress)") {
  const std::vector<json> p = Policies("website/networkpolicy-multiport-egress.yaml");
  CHECK(Allows(p, "db-0", Out("TCP", "10.0.0.1", 32000)));
  CHECK(Allows(p, "db-0", Out("TCP", "10.0.0.1", 32400)));
  CHECK(Allows(p, "db-0", Out("TCP", "10.0.0.1", 32768)));
  CHECK_FALSE(Allows(p, "db-0", Out("TCP", "10.0.0.1", 31999)));
  CHECK_FALSE(Allows(p, "db-0", Out("TCP", "10.0.0.1", 32769)));
  CHECK_FALSE(Allows(p, "db-0", Out("UDP", "10.0.0.1", 32000)));
  // policyTypes [Egress] only: ingress not isolated.
  CHECK(Allows(p, "db-0", In("TCP", "192.0.2.1", 6379)));
}

TEST_CASE("k8s eval: recipes (selectors)") {
  // 04: `podSelector: matchLabels:` (null) selects every pod of default;
  // ingress only from pods of default.
  const std::vector<json> r04 = Policies("recipes/04-deny-traffic-from-other-namespaces.1.yaml");
  CHECK(Allows(r04, "web-0", In("TCP", kClient, 80)));
  CHECK(Allows(r04, "db-0", In("UDP", kFrontend, 9)));
  CHECK_FALSE(Allows(r04, "web-0", In("TCP", kMyProject, 80)));
  CHECK_FALSE(Allows(r04, "web-0", In("TCP", "192.0.2.1", 80)));

  // 05: app=web from every pod of every namespace, not from outside.
  const std::vector<json> r05 = Policies("recipes/05-allow-traffic-from-all-namespaces.1.yaml");
  CHECK(Allows(r05, "web-0", In("TCP", kProd, 80)));
  CHECK(Allows(r05, "web-0", In("TCP", kCoreDns, 443)));
  CHECK_FALSE(Allows(r05, "web-0", In("TCP", "192.0.2.1", 80)));
  CHECK(Allows(r05, "web-0", In("TCP", kNode, 80)));  // the pod's own node: always

  // 06: from namespaces labelled purpose=production.
  const std::vector<json> r06 = Policies("recipes/06-allow-traffic-from-a-namespace.1.yaml");
  CHECK(Allows(r06, "web-0", In("TCP", kProd, 80)));
  CHECK_FALSE(Allows(r06, "web-0", In("TCP", "10.244.0.60", 80)));  // dev
  CHECK_FALSE(Allows(r06, "web-0", In("TCP", kFrontend, 80)));

  // 07: namespaceSelector AND podSelector in one peer.
  const std::vector<json> r07 =
      Policies("recipes/07-allow-traffic-from-some-pods-in-another-namespace.1.yaml");
  CHECK(Allows(r07, "web-0", In("TCP", kMonitorOps, 80)));
  CHECK_FALSE(Allows(r07, "web-0", In("TCP", kFrontendOps, 80)));     // wrong pod labels
  CHECK_FALSE(Allows(r07, "web-0", In("TCP", kMonitorDefault, 80)));  // wrong namespace
  // The same selectors as two peers: OR.
  json split = r07[0];
  json& from = split["spec"]["ingress"][0]["from"];
  json pod_peer = {{"podSelector", from[0]["podSelector"]}};
  from[0].erase("podSelector");
  from.push_back(pod_peer);
  CHECK(Allows({split}, "web-0", In("TCP", kFrontendOps, 80)));     // namespace matches
  CHECK(Allows({split}, "web-0", In("TCP", kMonitorDefault, 80)));  // pod in default matches
  CHECK_FALSE(Allows({split}, "web-0", In("TCP", kMyProject, 80)));

  // 10: db-0 (app=bookstore, role=db) only from bookstore search/api or
  // inventory web pods; there are none, so only unselected pods talk.
  const std::vector<json> r10 =
      Policies("recipes/10-allowing-traffic-with-multiple-selectors.1.yaml");
  CHECK_FALSE(Allows(r10, "db-0", In("TCP", kFrontend, 6379)));
  CHECK(Allows(r10, "web-0", In("TCP", kFrontend, 80)));
  json r10b = r10.at(0);  // the second peer changed to role=frontend
  r10b["spec"]["ingress"][0]["from"][1]["podSelector"] = {{"matchLabels", {{"role", "frontend"}}}};
  CHECK(Allows({r10b}, "db-0", In("TCP", kFrontend, 6379)));
  CHECK_FALSE(Allows({r10b}, "db-0", In("TCP", kClient, 6379)));
  // 01/03: ingress [] denies.
  const std::vector<json> r03 =
      Policies("recipes/03-deny-all-non-whitelisted-traffic-in-the-namespace.1.yaml");
  CHECK_FALSE(Allows(r03, "client-0", In("TCP", kWeb, 80)));
  CHECK(Allows(r03, "client-0", Out("TCP", kWeb, 80)));  // ingress: [] does not add Egress
}

TEST_CASE("k8s eval: ports, named ports and DNS egress (recipes 09, 11, 12)") {
  // 09: app=apiserver on TCP 5000 from role=monitoring of default.
  const std::vector<json> r09 = Policies("recipes/09-allow-traffic-only-to-a-port.1.yaml");
  CHECK(Allows(r09, "apiserver-0", In("TCP", kMonitorDefault, 5000)));
  CHECK_FALSE(Allows(r09, "apiserver-0", In("TCP", kMonitorDefault, 9090)));
  CHECK_FALSE(Allows(r09, "apiserver-0", In("TCP", kMonitorOps, 5000)));
  // The recipe's named-port variant: `port: api-port` (ingress: the target's
  // containers; protocol must match the container port's).
  json named = r09[0];
  named["spec"]["ingress"][0]["ports"] = json::parse(R"([{"port": "api-port"}])");
  CHECK(Allows({named}, "apiserver-0", In("TCP", kMonitorDefault, 5000)));
  CHECK_FALSE(Allows({named}, "apiserver-0", In("TCP", kMonitorDefault, 5001)));
  CHECK_FALSE(Allows({named}, "apiserver-0", In("UDP", kMonitorDefault, 5000)));
  named["spec"]["ingress"][0]["ports"] =
      json::parse(R"([{"port": "statsd", "protocol": "UDP"}, {"port": "statsd"}])");
  CHECK(Allows({named}, "apiserver-0", In("UDP", kMonitorDefault, 8125)));        // 2nd container
  CHECK_FALSE(Allows({named}, "apiserver-0", In("TCP", kMonitorDefault, 8125)));  // statsd is UDP
  named["spec"]["ingress"][0]["ports"] = json::parse(R"([{"port": "no-such-port"}])");
  CHECK_FALSE(Allows({named}, "apiserver-0", In("TCP", kMonitorDefault, 5000)));

  // 11 (second policy): app=foo may only resolve DNS with kube-dns.
  const std::vector<json> r11 =
      Policies("recipes/11-deny-egress-traffic-from-an-application.2.yaml");
  CHECK(Allows(r11, "foo-0", Out("UDP", kCoreDns, 53)));
  CHECK(Allows(r11, "foo-0", Out("TCP", kCoreDns, 53)));
  CHECK_FALSE(Allows(r11, "foo-0", Out("TCP", kCoreDns, 9153)));
  CHECK_FALSE(Allows(r11, "foo-0", Out("UDP", "8.8.8.8", 53)));
  CHECK_FALSE(Allows(r11, "foo-0", Out("UDP", kFrontend, 53)));
  CHECK(Allows(r11, "foo-0", In("TCP", kFrontend, 80)));  // policyTypes [Egress]
  // Named egress ports resolve against the destination pod, ipBlock peers too.
  json dns = r11[0];
  dns["spec"]["egress"][0]["ports"] =
      json::parse(R"([{"port": "dns", "protocol": "UDP"}, {"port": "metrics"}])");
  CHECK(Allows({dns}, "foo-0", Out("UDP", kCoreDns, 53)));
  CHECK(Allows({dns}, "foo-0", Out("TCP", kCoreDns, 9153)));
  CHECK_FALSE(Allows({dns}, "foo-0", Out("TCP", kCoreDns, 53)));  // dns is the UDP name
  dns["spec"]["egress"][0]["to"] = json::parse(R"([{"ipBlock": {"cidr": "10.244.0.0/16"}}])");
  CHECK(Allows({dns}, "foo-0", Out("UDP", kCoreDns, 53)));
  CHECK(Allows({dns}, "foo-0", Out("TCP", "10.244.0.15", 9090)));     // apiserver-0 "metrics"
  CHECK_FALSE(Allows({dns}, "foo-0", Out("UDP", "10.244.9.9", 53)));  // no pod owns it

  // 12: every pod of default egress-isolated with no rule.
  const std::vector<json> r12 =
      Policies("recipes/12-deny-all-non-whitelisted-traffic-from-the-namespace.1.yaml");
  CHECK_FALSE(Allows(r12, "web-0", Out("UDP", kCoreDns, 53)));
  CHECK(Allows(r12, "coredns-0", Out("UDP", "8.8.8.8", 53), "kube-system"));
}

TEST_CASE("k8s eval: policyTypes defaulting and v6") {
  auto policy = [](const std::string& spec) {
    return json{{"apiVersion", "networking.k8s.io/v1"},
                {"kind", "NetworkPolicy"},
                {"metadata", {{"name", "p"}, {"namespace", "default"}}},
                {"spec", json::parse(spec)}};
  };
  // No policyTypes, egress: [] -> Ingress only.
  const json empty_egress = policy(R"({"podSelector": {}, "egress": []})");
  CHECK(Allows({empty_egress}, "web-0", Out("TCP", "8.8.8.8", 443)));
  CHECK_FALSE(Allows({empty_egress}, "web-0", In("TCP", kFrontend, 80)));
  // No policyTypes, one egress rule -> Ingress and Egress.
  const json some_egress = policy(
      R"({"podSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
          "egress": [{"to": [{"ipBlock": {"cidr": "fd00:10:244::/120", "except": ["fd00:10:244::a/128"]}}]}]})");
  CHECK(Allows({some_egress}, "web-0", Out("TCP", "fd00:10:244::c", 80)));
  CHECK(Allows({some_egress}, "web-0", Out("UDP", "fd00:10:244::ff", 5353)));
  CHECK_FALSE(Allows({some_egress}, "web-0", Out("TCP", "fd00:10:244::a", 80)));
  CHECK_FALSE(Allows({some_egress}, "web-0", Out("TCP", "fd00:10:244::100", 80)));
  CHECK_FALSE(Allows({some_egress}, "web-0", Out("TCP", kDb, 80)));  // v4
  CHECK_FALSE(Allows({some_egress}, "web-0", In("TCP", kFrontend, 80)));
  CHECK(Allows({some_egress}, "db-0", Out("TCP", "8.8.8.8", 80)));  // not app=web
  // A selector peer matches a dual-stack pod by either address.
  const json by_pod = policy(
      R"({"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"],
          "ingress": [{"from": [{"podSelector": {"matchExpressions": [
              {"key": "role", "operator": "Exists"}, {"key": "app", "operator": "NotIn", "values": ["web"]}]}}]}]})");
  CHECK(Allows({by_pod}, "web-0", In("TCP", "10.244.0.10", 80)));
  CHECK(Allows({by_pod}, "web-0", In("TCP", "fd00:10:244::a", 80)));
  CHECK(Allows({by_pod}, "web-0", In("TCP", "fd00:10:244:0::0a", 80)));  // same address
  CHECK_FALSE(Allows({by_pod}, "web-0", In("TCP", kClient, 80)));        // no role label
  // A policy in another namespace does not apply.
  json elsewhere = policy(R"({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})");
  elsewhere["metadata"]["namespace"] = "prod";
  CHECK(Allows({elsewhere}, "web-0", In("TCP", kFrontend, 80)));
  CHECK_FALSE(Allows({elsewhere}, "prod-0", In("TCP", kFrontend, 80), "prod"));
}

TEST_CASE("k8s eval: errors") {
  const std::vector<json> p = Policies("website/networkpolicy.yaml");
  CHECK_THROWS_AS(Allows(p, "kube-proxy-0", In("TCP", kFrontend, 80), "kube-system"),
                  std::invalid_argument);
  CHECK_THROWS_AS(Allows(p, "no-such-pod", In("TCP", kFrontend, 80)), std::invalid_argument);
  CHECK_THROWS_AS(Allows(p, "db-0", In("TCP", "not-an-ip", 80)), std::invalid_argument);
  CHECK(IsSelfFlow(Cluster(), "default", "db-0", In("TCP", "fd00:10:244::a", 1)));
  CHECK_FALSE(IsSelfFlow(Cluster(), "default", "db-0", In("TCP", kFrontend, 1)));
}

TEST_CASE("k8s eval: random clusters, policies and flows are valid and evaluable") {
  std::mt19937_64 rng(20261206);
  std::set<std::string> seen;  // features the generator produced
  int allowed = 0, denied = 0;
  for (int round = 0; round < 300; ++round) {
    const json cluster = RandomCluster(rng);
    const std::vector<json> policies = RandomPolicies(rng, cluster);
    REQUIRE(policies.size() <= 4);
    const std::string dump = cluster.dump() + json(policies).dump();
    for (const char* f : {"\"hostNetwork\":true", "\"Succeeded\"", "\"Pending\"",
                          "fd00::", "\"endPort\"", "\"except\"", "\"NotIn\"", "\"DoesNotExist\"",
                          "\"Exists\"", "\"In\"", "\"SCTP\"", "\"policyTypes\"", "no-such-port"})
      if (dump.find(f) != std::string::npos) seen.insert(f);
    std::vector<std::pair<std::string, std::string>> targets;
    for (const json& it : cluster["items"]) {
      if (it["kind"] != "Pod" || it["spec"].value("hostNetwork", false)) continue;
      targets.emplace_back(it["metadata"]["namespace"], it["metadata"]["name"]);
    }
    REQUIRE(targets.size() >= 2);
    for (int k = 0; k < 10; ++k) {
      const auto& [ns, name] = targets[static_cast<size_t>(k) % targets.size()];
      const Flow f = k % 2 ? RandomFlow(rng, cluster) : RandomFlow(rng, cluster, policies);
      INFO(cluster.dump() << "\n"
                          << json(policies).dump() << "\n"
                          << ns << "/" << name << " " << Describe(f));
      bool ok = false;
      REQUIRE_NOTHROW(ok = ClusterAllows(cluster, policies, ns, name, f));
      (ok ? allowed : denied)++;
    }
  }
  CHECK(seen.size() == 13);
  CHECK(allowed > 200);
  CHECK(denied > 200);
}

}  // namespace
}  // namespace ward::test::k8s
