// `ward import --from networkpolicy` (importers/networkpolicy/): one pod's
// effective policy, asked through `ward explain`'s library as the cluster
// would be asked. The hand-made cases pin each rule of the NetworkPolicy
// semantics (isolation per direction, peers, ports, named ports, except,
// ICMP, loopback); the refusals pin what the API server refuses; the
// upstream examples (testdata/networkpolicy/SOURCE.md) and random clusters
// are answered by an evaluator written from the Kubernetes documentation
// (k8s_cluster_eval.h), flow by flow.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>

#include "compiler/explain.h"
#include "compiler/load.h"
#include "importers/checked_import.h"
#include "importers/networkpolicy/networkpolicy.h"
#include "tests/importers/checked_load.h"
#include "tests/importers/k8s_cluster_eval.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using importers::ImportDiagnostic;

const std::string kStd = std::string(WARD_SOURCE_DIR) + "/policies/std";

std::string ReadTestData(const std::string& name) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/networkpolicy/" +
                   name);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string DiagnosticsText(const std::vector<ImportDiagnostic>& diagnostics) {
  std::string out;
  for (const ImportDiagnostic& d : diagnostics) {
    out += d.file;
    if (d.line) out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
    out += " #" + d.where + ": " + (d.severity == Severity::kError ? "error: " : "warning: ") +
           d.message + "\n";
  }
  return out;
}

struct Imported {
  importers::CheckedImport checked;
  std::unique_ptr<ir::LoadedPolicy> loaded;
  const std::string& text() const { return checked.result.text; }
  std::string Ask(ir::Direction dir, ir::Protocol proto, const std::string& peer,
                  uint16_t port) const {
    ir::FlowQuery q;
    q.direction = dir;
    q.protocol = proto;
    q.host = peer;
    q.port = port;
    std::string error;
    auto e = ir::ExplainFlow(loaded->ir, q, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision;
  }
  // `ward explain --listen PORT/proto --from PEER`
  std::string In(const std::string& peer, uint16_t port,
                 ir::Protocol proto = ir::Protocol::kTcp) const {
    return Ask(ir::Direction::kIngress, proto, peer, port);
  }
  // `ward explain --connect PEER:PORT/proto`
  std::string Out(const std::string& peer, uint16_t port,
                  ir::Protocol proto = ir::Protocol::kTcp) const {
    return Ask(ir::Direction::kEgress, proto, peer, port);
  }
};

importers::ImportOptions Options(const std::string& cluster, const std::string& pod,
                                 const std::vector<std::string>& files) {
  importers::ImportOptions options;
  options.name = "pod";
  options.from = "networkpolicy";
  options.cluster = {"cluster.json", cluster};
  options.pod = pod;
  for (size_t i = 0; i < files.size(); ++i) {
    options.files.push_back({"np" + std::to_string(i) + ".yaml", files[i]});
  }
  return options;
}

std::unique_ptr<Imported> Import(const std::string& cluster, const std::string& pod,
                                 const std::vector<std::string>& files) {
  auto out = std::make_unique<Imported>();
  const importers::ImportOptions options = Options(cluster, pod, files);
  out->checked.result = importers::ImportNetworkPolicy(files.empty() ? "" : files[0], options);
  INFO(DiagnosticsText(out->checked.result.diagnostics));
  REQUIRE(out->checked.result.ok);
  out->loaded = CheckAndLoad(&out->checked, kStd);
  return out;
}

// The errors of an import that is refused.
std::string Refused(const std::string& cluster, const std::string& pod,
                    const std::vector<std::string>& files) {
  const importers::ImportOptions options = Options(cluster, pod, files);
  importers::ImportResult r = importers::ImportNetworkPolicy(files[0], options);
  CHECK_FALSE(r.ok);
  std::vector<ImportDiagnostic> errors;
  for (const ImportDiagnostic& d : r.diagnostics) {
    if (d.severity == Severity::kError) errors.push_back(d);
  }
  return DiagnosticsText(errors);
}

// A cluster: namespaces `app` (team=a) and `other` (team=b); in app, db-0
// (role=db, 10.0.0.5 and fd00::5, named ports pg/TCP 5432 and metrics/TCP
// 9187, dns/UDP 53), web-0 (role=web, 10.0.0.6), web-1 (role=web,
// 10.0.0.7, Succeeded), node-agent (role=web, hostNetwork, 192.168.1.10);
// in other, client (role=web, 10.0.1.8, named port http/TCP 8080).
const char* const kCluster = R"({
  "apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Namespace",
     "metadata": {"name": "app", "labels": {"team": "a", "kubernetes.io/metadata.name": "app"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "b"}}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "db-0", "namespace": "app", "labels": {"role": "db"}},
     "spec": {"containers": [{"name": "pg", "ports": [
        {"name": "pg", "containerPort": 5432, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9187},
        {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}]},
     "status": {"phase": "Running", "podIP": "10.0.0.5",
                "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "web-0", "namespace": "app", "labels": {"role": "web"}},
     "spec": {"containers": [{"name": "web"}]},
     "status": {"phase": "Running", "podIP": "10.0.0.6"}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "web-1", "namespace": "app", "labels": {"role": "web"}},
     "spec": {"containers": [{"name": "web"}]},
     "status": {"phase": "Succeeded", "podIP": "10.0.0.7"}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "node-agent", "namespace": "app", "labels": {"role": "web"}},
     "spec": {"hostNetwork": true, "containers": [{"name": "a"}]},
     "status": {"phase": "Running", "podIP": "192.168.1.10"}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "client", "namespace": "other", "labels": {"role": "web"}},
     "spec": {"containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080}]}]},
     "status": {"phase": "Running", "podIP": "10.0.1.8"}}
  ]})";

const std::string kHead =
    "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: p\n  namespace: "
    "app\n";

TEST_CASE("networkpolicy: a pod no policy selects is open both ways", "[networkpolicy]") {
  auto p =
      Import(kCluster, "app/db-0", {kHead + "spec:\n  podSelector: {matchLabels: {role: web}}\n"});
  CHECK(p->In("203.0.113.1", 22) == "allow");
  CHECK(p->In("2001:db8::1", 22, ir::Protocol::kUdp) == "allow");
  CHECK(p->In("203.0.113.1", 0, ir::Protocol::kIcmp) == "allow");
  CHECK(p->Out("203.0.113.1", 443) == "allow");
  CHECK(p->text().find("// Ingress: not isolated") != std::string::npos);
}

TEST_CASE("networkpolicy: isolation is per direction, and ICMP is refused where isolated",
          "[networkpolicy]") {
  // policyTypes absent and no egress rules: Ingress only.
  auto p = Import(kCluster, "app/db-0", {kHead + "spec:\n  podSelector: {}\n  egress: []\n"});
  CHECK(p->In("10.0.0.6", 5432) == "deny");
  CHECK(p->In("10.0.0.6", 0, ir::Protocol::kIcmp) == "deny");
  CHECK(p->Out("203.0.113.1", 443) == "allow");
  CHECK(p->Out("203.0.113.1", 0, ir::Protocol::kIcmp) == "allow");
  // Loopback stays inside the pod.
  CHECK(p->In("127.0.0.1", 5432) == "allow");
  // policyTypes [Egress]: ingress open, egress closed.
  auto e =
      Import(kCluster, "app/db-0", {kHead + "spec:\n  podSelector: {}\n  policyTypes: [Egress]\n"});
  CHECK(e->In("10.0.0.6", 5432) == "allow");
  CHECK(e->Out("10.0.0.6", 5432) == "deny");
  CHECK(e->Out("::1", 5432) == "allow");
  // An egress rule without ports: TCP and UDP to every port, not ICMP.
  auto a = Import(kCluster, "app/db-0", {kHead + "spec:\n  podSelector: {}\n  egress: [{}]\n"});
  CHECK(a->Out("203.0.113.1", 1) == "allow");
  CHECK(a->Out("2001:db8::1", 65535, ir::Protocol::kUdp) == "allow");
  CHECK(a->Out("203.0.113.1", 0, ir::Protocol::kIcmp) == "deny");
  CHECK(a->In("203.0.113.1", 80) == "deny");
}

TEST_CASE("networkpolicy: selector peers are the selected pods' addresses", "[networkpolicy]") {
  const std::string np = kHead +
                         "spec:\n  podSelector: {matchLabels: {role: db}}\n  ingress:\n"
                         "  - from:\n    - podSelector: {matchLabels: {role: web}}\n"
                         "    ports: [{port: 5432}]\n";
  auto p = Import(kCluster, "app/db-0", {np});
  CHECK(p->In("10.0.0.6", 5432) == "allow");
  CHECK(p->In("10.0.0.6", 5433) == "deny");
  CHECK(p->In("10.0.0.6", 5432, ir::Protocol::kUdp) == "deny");
  // Succeeded and hostNetwork pods are not peers; nor is a pod of another
  // namespace (podSelector alone is the policy's namespace).
  CHECK(p->In("10.0.0.7", 5432) == "deny");
  CHECK(p->In("192.168.1.10", 5432) == "deny");
  CHECK(p->In("10.0.1.8", 5432) == "deny");
  // Each address is commented with its pod's name.
  CHECK(p->text().find("allow ingress tcp from 10.0.0.6 port 5432  // app/web-0") !=
        std::string::npos);
}

TEST_CASE("networkpolicy: namespaceSelector and podSelector in one peer intersect",
          "[networkpolicy]") {
  const std::string one = kHead +
                          "spec:\n  podSelector: {}\n  ingress:\n  - from:\n"
                          "    - namespaceSelector: {matchLabels: {team: b}}\n"
                          "      podSelector: {matchLabels: {role: db}}\n";
  auto p = Import(kCluster, "app/db-0", {one});
  CHECK(p->In("10.0.1.8", 80) == "deny");  // role=web in team b: not both
  const std::string two = kHead +
                          "spec:\n  podSelector: {}\n  ingress:\n  - from:\n"
                          "    - namespaceSelector: {matchLabels: {team: b}}\n"
                          "    - podSelector: {matchLabels: {role: db}}\n";
  auto q = Import(kCluster, "app/db-0", {two});
  CHECK(q->In("10.0.1.8", 80) == "allow");  // team b
  CHECK(q->In("10.0.0.5", 80) == "allow");  // role=db here
  CHECK(q->In("fd00::5", 80) == "allow");   // its other address
  CHECK(q->In("10.0.0.6", 80) == "deny");
  // matchExpressions, by the automatic namespace name label.
  const std::string expr = kHead +
                           "spec:\n  podSelector: {}\n  ingress:\n  - from:\n"
                           "    - namespaceSelector:\n        matchExpressions:\n"
                           "        - {key: kubernetes.io/metadata.name, operator: NotIn, values: "
                           "[app]}\n";
  auto r = Import(kCluster, "app/db-0", {expr});
  CHECK(r->In("10.0.1.8", 80) == "allow");
  CHECK(r->In("10.0.0.6", 80) == "deny");
}

TEST_CASE("networkpolicy: ipBlock except, endPort, and several policies add up",
          "[networkpolicy]") {
  const std::string a = kHead +
                        "spec:\n  podSelector: {}\n  policyTypes: [Egress]\n  egress:\n"
                        "  - to: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.0.1.0/24, "
                        "10.0.0.128/25]}}]\n"
                        "    ports: [{protocol: TCP, port: 8000, endPort: 8100}]\n";
  const std::string b =
      "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: q, namespace: "
      "app}\nspec:\n  podSelector: {matchLabels: {role: db}}\n  egress:\n"
      "  - to: [{ipBlock: {cidr: 10.0.1.0/24}}]\n    ports: [{protocol: UDP, port: 53}]\n";
  auto p = Import(kCluster, "app/db-0", {a, b});
  CHECK(p->Out("10.0.2.1", 8000) == "allow");
  CHECK(p->Out("10.0.2.1", 8100) == "allow");
  CHECK(p->Out("10.0.2.1", 8101) == "deny");
  CHECK(p->Out("10.0.0.200", 8050) == "deny");                   // except 10.0.0.128/25
  CHECK(p->Out("10.0.1.9", 8050) == "deny");                     // except 10.0.1.0/24 ...
  CHECK(p->Out("10.0.1.9", 53, ir::Protocol::kUdp) == "allow");  // ... which q allows for DNS
  CHECK(p->Out("10.1.0.1", 8050) == "deny");
  CHECK(p->In("203.0.113.1", 80) == "deny");  // q has no policyTypes: Ingress too
}

TEST_CASE("networkpolicy: named ports resolve on the pod that listens", "[networkpolicy]") {
  // Ingress: the target pod's own ports.
  const std::string in = kHead +
                         "spec:\n  podSelector: {}\n  ingress:\n  - ports:\n"
                         "    - port: pg\n    - {port: dns, protocol: UDP}\n"
                         "    - {port: metrics, protocol: UDP}\n    - port: nosuch\n";
  auto p = Import(kCluster, "app/db-0", {in});
  CHECK(p->In("203.0.113.1", 5432) == "allow");
  CHECK(p->In("203.0.113.1", 53, ir::Protocol::kUdp) == "allow");
  CHECK(p->In("203.0.113.1", 9187) == "deny");  // metrics is TCP, the entry UDP
  CHECK(p->In("203.0.113.1", 9187, ir::Protocol::kUdp) == "deny");
  // Egress: the destination pod's ports, for selectors and ipBlocks alike.
  const std::string out =
      kHead +
      "spec:\n  podSelector: {matchLabels: {role: web}}\n"
      "  policyTypes: [Egress]\n  egress:\n"
      "  - to: [{ipBlock: {cidr: 10.0.0.0/8}}]\n    ports: [{port: pg}, {port: 443}]\n"
      "  - to: [{namespaceSelector: {}}]\n    ports: [{port: http}]\n";
  auto q = Import(kCluster, "app/web-0", {out});
  CHECK(q->Out("10.0.0.5", 5432) == "allow");
  CHECK(q->Out("10.0.1.8", 5432) == "deny");  // client has no pg port
  CHECK(q->Out("10.9.9.9", 5432) == "deny");  // no pod there
  CHECK(q->Out("10.9.9.9", 443) == "allow");
  CHECK(q->Out("10.0.1.8", 8080) == "allow");
  CHECK(q->Out("10.0.0.5", 8080) == "deny");
  CHECK(q->Out("fd00::5", 5432) == "deny");  // not in the v4 block
}

TEST_CASE("networkpolicy: policies of other namespaces and SCTP", "[networkpolicy]") {
  const std::string other =
      "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: x, namespace: "
      "other}\nspec: {podSelector: {}}\n";
  auto p = Import(kCluster, "app/db-0", {other});
  CHECK(p->In("203.0.113.1", 80) == "allow");
  importers::ImportOptions options = Options(
      kCluster, "app/db-0",
      {kHead + "spec:\n  podSelector: {}\n  ingress:\n  - ports: [{protocol: SCTP, port: 9}]\n"});
  auto r = importers::ImportNetworkPolicy("", options);
  REQUIRE(r.ok);
  CHECK(DiagnosticsText(r.diagnostics) ==
        "np0.yaml:9:13 #/spec/ingress/0/ports/0: warning: SCTP is not allowed: a Ward policy "
        "never grants SCTP (narrower than the cluster)\n");
}

TEST_CASE("networkpolicy: a snapshot as kubectl -o yaml prints it", "[networkpolicy]") {
  const std::string yaml = R"(apiVersion: v1
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    labels:
      kubernetes.io/metadata.name: app
    name: app
- apiVersion: v1
  kind: Pod
  metadata:
    labels:
      role: db
    name: db-0
    namespace: app
  spec:
    containers:
    - name: pg
      ports:
      - containerPort: 5432
        name: pg
        protocol: TCP
  status:
    hostIP: 192.168.1.2
    phase: Running
    podIP: 10.0.0.5
    podIPs:
    - ip: 10.0.0.5
- apiVersion: v1
  kind: Pod
  metadata:
    labels:
      role: web
    name: web-0
    namespace: app
  status:
    phase: Running
    podIP: 10.0.0.6
kind: List
metadata:
  resourceVersion: ""
)";
  const std::string np = kHead +
                         "spec:\n  podSelector: {matchLabels: {role: db}}\n  ingress:\n"
                         "  - from: [{podSelector: {matchLabels: {role: web}}}]\n"
                         "    ports: [{port: pg}]\n";
  auto p = Import(yaml, "app/db-0", {np});
  CHECK(p->In("10.0.0.6", 5432) == "allow");
  CHECK(p->In("10.0.0.6", 5433) == "deny");
  CHECK(p->In("192.168.1.2", 22) == "allow");  // the pod's node
  CHECK(p->In("10.0.0.5", 22) == "allow");     // the pod itself
  CHECK(p->In("10.0.0.9", 5432) == "deny");
}

TEST_CASE("networkpolicy: a stream on which yaml-cpp 0.7 would loop forever is refused",
          "[networkpolicy]") {
  // Found by fuzz_networkpolicy: yaml-cpp 0.7's LoadAll makes empty
  // documents forever after the `,` (importers/yaml_documents.h).
  const std::string stream =
      "---\n{\n  apiVein:o rs\"networking.k8s.io/v1\",\n  kind   nAme: \"default-deny-ingress\",\n"
      "  },\n  spec: {\n    podSelector: {},\n    policyTypes: [\n      \"Ingressegress:],\n  "
      "},\n}\n";
  CHECK(Refused(kCluster, "app/db-0", {stream})
            .find("np0.yaml:5:4 #: error: not valid YAML: a document that consumes no input") == 0);
  importers::ImportOptions options = Options(stream, "app/db-0", {kHead + "spec: {}\n"});
  importers::ImportResult r = importers::ImportNetworkPolicy("", options);
  CHECK_FALSE(r.ok);
}

TEST_CASE("networkpolicy: what the API server refuses is refused", "[networkpolicy]") {
  auto spec = [](const std::string& body) { return kHead + "spec:\n" + body; };
  CHECK(Refused(kCluster, "app/db-0", {spec("  podSelector: {}\n  ingress:\n  - form: []\n")}) ==
        "np0.yaml:9:5 #/spec/ingress/0/form: error: unknown field 'form' (kubectl refuses "
        "unknown fields)\n");
  CHECK(Refused(kCluster, "app/db-0",
                {spec("  podSelector: {}\n  ingress:\n  - from: [{ipBlock: {cidr: 10.0.0.0/8}, "
                      "podSelector: {}}]\n")}) ==
        "np0.yaml:9:12 #/spec/ingress/0/from/0: error: ipBlock cannot be combined with "
        "podSelector or namespaceSelector in one peer\n");
  CHECK(
      Refused(kCluster, "app/db-0",
              {spec("  podSelector: {}\n  ingress:\n  - ports: [{port: http, endPort: 90}]\n")}) ==
      "np0.yaml:9:13 #/spec/ingress/0/ports/0: error: endPort needs a numeric port (the API "
      "server refuses it with a named port or none)\n");
  CHECK(Refused(kCluster, "app/db-0",
                {spec("  podSelector: {}\n  ingress:\n  - from: [{ipBlock: {cidr: 10.0.0.0/24, "
                      "except: [10.1.0.0/24]}}]\n")}) ==
        "np0.yaml:9:12 #/spec/ingress/0/from/0: error: except 10.1.0.0/24 is not strictly inside "
        "cidr 10.0.0.0/24 (the API server refuses it)\n");
  CHECK(Refused(kCluster, "app/db-0", {spec("  podSelector: {matchLabels: {role: yes}}\n")}) ==
        "np0.yaml:7:37 #/spec/podSelector/matchLabels/role: error: 'yes' is not a string to the "
        "API server (YAML 1.1 reads it as a number, boolean or null): quote it\n");
  CHECK(Refused(kCluster, "app/db-0", {spec("  podSelector: {}\n  ingress:\n  - from: [{}]\n")}) ==
        "np0.yaml:9:12 #/spec/ingress/0/from/0: error: a peer must name podSelector, "
        "namespaceSelector or ipBlock\n");
  CHECK(Refused(kCluster, "app/db-0",
                {"apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: c}\n"}) ==
        "np0.yaml:1:1 #: error: CiliumNetworkPolicy (cilium.io/v2) also decides traffic and is "
        "not a Kubernetes NetworkPolicy: importing the rest without it would not be the "
        "cluster's answer; give only networking.k8s.io/v1 NetworkPolicy objects\n");
  CHECK(Refused(kCluster, "app/db-0", {spec("  podSelector: {}\n"), spec("  podSelector: {}\n")}) ==
        "np1.yaml:1:1 #: error: NetworkPolicy app/p is also at np0.yaml:1: the cluster holds "
        "one object per name, so which one applies depends on the order they were applied in\n");
  CHECK(Refused(kCluster, "app/nosuch", {spec("  podSelector: {}\n")}) ==
        "cluster.json #: error: the snapshot has no pod app/nosuch (`kubectl get "
        "namespaces,pods -A -o json` lists every pod)\n");
  CHECK(Refused(kCluster, "app/node-agent", {spec("  podSelector: {}\n")})
            .find("uses the host's network") != std::string::npos);
}

// ---- against the evaluator (k8s_cluster_eval.h) ---------------------------

ir::Protocol ProtocolOf(const std::string& p) {
  return p == "TCP" ? ir::Protocol::kTcp : p == "UDP" ? ir::Protocol::kUdp : ir::Protocol::kIcmp;
}

// Every port a policy or container names, and its neighbours.
std::vector<uint16_t> PortsOf(const nlohmann::json& j, std::vector<uint16_t> out = {}) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if ((k == "port" || k == "endPort" || k == "containerPort") && v.is_number_integer()) {
        const int p = v.get<int>();
        for (int q : {p - 1, p, p + 1}) {
          if (q >= 1 && q <= 65535) out.push_back(static_cast<uint16_t>(q));
        }
      }
      out = PortsOf(v, std::move(out));
    }
  } else if (j.is_array()) {
    for (const auto& v : j) out = PortsOf(v, std::move(out));
  }
  return out;
}

// Imports `files` for `pod` of `cluster` and asks both Ward and the
// evaluator `random_flows` random flows and `sampled` of the flows between
// the pod and every address of the cluster on every port the objects name
// (all of them when there are fewer); returns how many were compared.
size_t Compare(const nlohmann::json& cluster, const std::vector<std::string>& files,
               const std::string& pod_ns, const std::string& pod_name, std::mt19937_64& rng,
               int random_flows, size_t sampled) {
  std::vector<nlohmann::json> policies;
  for (const std::string& f : files) {
    for (nlohmann::json& o : k8s::ReadObjects(f)) policies.push_back(std::move(o));
  }
  auto p = Import(cluster.dump(1), pod_ns + "/" + pod_name, files);
  std::vector<k8s::Flow> flows, every;
  // Every pod address with every port the objects name, both ways.
  std::vector<uint16_t> ports = PortsOf(policies);
  ports = PortsOf(cluster, ports);
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  for (const auto& item : cluster["items"]) {
    if (item.value("kind", "") != "Pod" || !item.contains("status")) continue;
    const auto& status = item["status"];
    std::vector<std::string> ips;
    for (const char* one : {"podIP", "hostIP"}) {
      if (status.contains(one)) ips.push_back(status[one].get<std::string>());
    }
    for (const char* many : {"podIPs", "hostIPs"}) {
      if (!status.contains(many)) continue;
      for (const auto& e : status[many]) ips.push_back(e["ip"].get<std::string>());
    }
    std::sort(ips.begin(), ips.end());
    ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
    for (const std::string& ip : ips) {
      for (bool ingress : {true, false}) {
        every.push_back({ingress, "ICMP", ip, 0});
        for (uint16_t port : ports) {
          every.push_back({ingress, "TCP", ip, port});
          every.push_back({ingress, "UDP", ip, port});
        }
      }
    }
  }
  std::shuffle(every.begin(), every.end(), rng);
  if (every.size() > sampled) every.resize(sampled);
  flows = std::move(every);
  for (int i = 0; i < random_flows; ++i) flows.push_back(k8s::RandomFlow(rng, cluster, policies));
  size_t compared = 0;
  for (const k8s::Flow& f : flows) {
    const bool cluster_allows = k8s::ClusterAllows(cluster, policies, pod_ns, pod_name, f);
    const std::string ward = f.ingress ? p->In(f.peer, f.port, ProtocolOf(f.protocol))
                                       : p->Out(f.peer, f.port, ProtocolOf(f.protocol));
    INFO("pod " << pod_ns << "/" << pod_name << ", " << k8s::Describe(f) << "\n" << p->text());
    REQUIRE(ward == (cluster_allows ? "allow" : "deny"));
    ++compared;
  }
  return compared;
}

std::vector<std::pair<std::string, std::string>> TargetPods(const nlohmann::json& cluster) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : cluster["items"]) {
    if (item.value("kind", "") != "Pod") continue;
    if (item.contains("spec") && item["spec"].value("hostNetwork", false)) continue;
    out.push_back({item["metadata"]["namespace"].get<std::string>(),
                   item["metadata"]["name"].get<std::string>()});
  }
  return out;
}

TEST_CASE("networkpolicy: the Kubernetes documentation's examples, for every pod",
          "[networkpolicy]") {
  const std::string dir = std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/networkpolicy/";
  const nlohmann::json cluster = nlohmann::json::parse(ReadTestData("cluster.json"));
  std::vector<std::string> names;
  for (const char* sub : {"website", "recipes"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir + sub)) {
      names.push_back(std::string(sub) + "/" + e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 20);
  std::mt19937_64 rng(7);
  size_t compared = 0, imports = 0;
  std::vector<std::string> all;
  std::set<std::string> all_names;  // a cluster has one object per name
  for (const std::string& name : names) {
    const std::string text = ReadTestData(name);
    bool fresh = true;
    for (const nlohmann::json& o : k8s::ReadObjects(text)) {
      const std::string id =
          o["metadata"].value("namespace", "default") + "/" + o["metadata"].value("name", "");
      fresh = fresh && !all_names.count(id);
    }
    if (fresh) {
      for (const nlohmann::json& o : k8s::ReadObjects(text)) {
        all_names.insert(o["metadata"].value("namespace", "default") + "/" +
                         o["metadata"].value("name", ""));
      }
      all.push_back(text);
    }
    // Six of the cluster's pods, a different six for each file (under
    // ASan each import costs a check and a load: all pods for every file
    // took six minutes there).
    const auto pods = TargetPods(cluster);
    for (size_t k = 0; k < 6 && k < pods.size(); ++k) {
      const auto& [ns, pod] = pods[(imports + k * 3) % pods.size()];
      INFO(name);
      compared += Compare(cluster, {text}, ns, pod, rng, 10, 60);
    }
    imports += std::min<size_t>(6, pods.size());
  }
  // All of them at once (but for a second object of one name): the
  // policies add up.
  REQUIRE(all.size() >= 15);
  for (const auto& [ns, pod] : TargetPods(cluster)) {
    compared += Compare(cluster, all, ns, pod, rng, 40, 600);
    ++imports;
  }
  std::cout << "networkpolicy: " << names.size() << " upstream files, " << imports << " imports, "
            << compared << " flows compared\n";
}

TEST_CASE("networkpolicy: random clusters and policies decide as the cluster does",
          "[networkpolicy][property]") {
  const uint64_t seed = [] {
    const char* env = std::getenv("WARD_SEED");
    const uint64_t s =
        env ? std::strtoull(env, nullptr, 10)
            : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count() %
                                    1000000007);
    std::cout << "seed " << s << " (WARD_SEED=" << s << " replays it)\n";
    return s;
  }();
  std::mt19937_64 rng(seed);
  const int rounds = Rounds(400);
  size_t compared = 0;
  for (int round = 0; round < rounds; ++round) {
    const nlohmann::json cluster = k8s::RandomCluster(rng);
    const std::vector<nlohmann::json> policies = k8s::RandomPolicies(rng, cluster);
    std::string text;
    for (const nlohmann::json& p : policies) text += p.dump() + "\n---\n";
    const auto targets = TargetPods(cluster);
    REQUIRE_FALSE(targets.empty());
    const auto& [ns, pod] = targets[rng() % targets.size()];
    INFO("round " << round << "\n" << text << "\ncluster " << cluster.dump());
    compared += Compare(cluster, {text}, ns, pod, rng, 20, 30);
  }
  std::cout << "networkpolicy: " << rounds << " random rounds, " << compared << " flows compared\n";
}

}  // namespace
}  // namespace ward::test
