// A reference evaluator of Kubernetes NetworkPolicy against a cluster
// snapshot, for the `ward import --from networkpolicy` property test: given
// the namespaces and pods of a cluster (`kubectl get namespaces,pods -A -o
// json`) and a set of NetworkPolicy objects, does the cluster allow one flow
// to or from one pod? Written from the Kubernetes documentation
// (kubernetes.io "Network Policies") and the field docs of
// k8s.io/api networking/v1/types.go only; it shares nothing with
// importers/networkpolicy/. The points the documentation leaves to the
// implementation are decided as listed in k8s_cluster_eval.cc.
//
// It only depends on nlohmann::json and yaml-cpp (link yaml-cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace ward::test::k8s {

struct Flow {
  bool ingress = false;  // true: peer -> pod; false: pod -> peer
  std::string protocol;  // "TCP", "UDP" or "ICMP"
  std::string peer;      // the remote IP (v4 or v6 text)
  uint16_t port = 0;     // ingress: the pod's local port; egress: the peer's port; 0 for ICMP
};

// Does the cluster allow `flow` for pod `pod_namespace`/`pod_name`?
// `snapshot`: a List (kind List, items of kind Namespace and Pod) as kubectl
// prints it (a bare JSON array of items is accepted too). `policies`:
// NetworkPolicy objects (other kinds are ignored).
// Throws std::invalid_argument when the pod is not in the snapshot, when it is
// a hostNetwork pod, when the flow is malformed, or when a policy is one the
// API server would reject in a way that matters here (a peer with no field,
// ipBlock together with a selector, endPort without a numeric port or below
// it, an except outside its cidr, an unknown selector operator).
bool ClusterAllows(const nlohmann::json& snapshot, const std::vector<nlohmann::json>& policies,
                   const std::string& pod_namespace, const std::string& pod_name, const Flow& flow);

// True when the flow's peer is one of the pod's own IPs: the docs say "a pod
// cannot block access to itself", and ClusterAllows allows such a flow (and
// one with the pod's own node, status.hostIP) whatever the rules say.
bool IsSelfFlow(const nlohmann::json& snapshot, const std::string& pod_namespace,
                const std::string& pod_name, const Flow& flow);

// Every object of a YAML (or JSON) stream, `kind: *List` objects' items
// unwrapped (recursively); empty documents skipped. Quoted scalars are
// strings; plain ones true/false, null/~, integers or strings.
std::vector<nlohmann::json> ReadObjects(const std::string& yaml_or_json);

// Random data for the property test.
// 2-4 namespaces, 3-8 pods; at least two Running, non-hostNetwork pods with an
// IP (candidate targets). Also hostNetwork pods, Pending pods with no IP,
// Succeeded/Failed pods, dual-stack and IPv6-only pods. Addresses are in
// 10.0.0.0/24 and fd00::/120 (hostNetwork pods: node IPs 10.0.0.2-3).
nlohmann::json RandomCluster(std::mt19937_64& rng);
// 0-4 valid NetworkPolicy objects over the cluster's namespaces and labels.
std::vector<nlohmann::json> RandomPolicies(std::mt19937_64& rng, const nlohmann::json& cluster);
// Peers mostly IPs of the cluster's pods (every kind of pod, node IPs of
// hostNetwork pods included), some random addresses in the ranges the
// generated ipBlocks use (10.0.0.0/24, fd00::/120), a few outside them.
Flow RandomFlow(std::mt19937_64& rng, const nlohmann::json& cluster);
// The same, but some peers are drawn from inside (and at the edges of) the
// ipBlocks and excepts of `policies`.
Flow RandomFlow(std::mt19937_64& rng, const nlohmann::json& cluster,
                const std::vector<nlohmann::json>& policies);

// "ingress TCP 10.0.0.5:80" style text for failure messages.
std::string Describe(const Flow& flow);

}  // namespace ward::test::k8s
