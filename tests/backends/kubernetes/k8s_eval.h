// For the kubernetes and cilium backend tests: reads emitted YAML back (with
// yaml-cpp, independently of the backends' writer) and answers connectivity
// queries from the objects, with evaluators written from the Kubernetes
// NetworkPolicy documentation and Cilium's policy documentation, not from
// the emitters. Also the schema checks (validate_json.py) and the random
// policies the property tests share.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "compiler/network.h"
#include "language/literals.h"

namespace ward::test {

// Every document of a YAML stream as JSON: quoted scalars are strings, plain
// ones booleans, null, integers or strings as YAML 1.2's core schema reads
// them.
std::vector<nlohmann::json> ReadYamlStream(const std::string& text);

struct Query {
  ir::Direction dir = ir::Direction::kEgress;
  ir::Protocol proto = ir::Protocol::kTcp;
  IpPrefix addr;  // one address (the remote end)
  uint16_t port = 0;
};
std::string Describe(const Query& q);

// NetworkPolicy (networking.k8s.io/v1), for a pod with `labels` in the
// policies' namespace:
// - a policy selects the pod when its podSelector's matchLabels are among
//   the pod's labels (matchExpressions fail the test: never emitted);
// - policyTypes absent means Ingress, plus Egress when it has egress rules;
// - a pod no policy selects for a direction is not isolated: all allowed;
// - else a flow is allowed iff some rule of some selecting policy allows it:
//   a peer matches (no `to`/`from`: every peer; ipBlock: in cidr and in no
//   except) and a port matches (no `ports`: every port and protocol, ICMP
//   included; else protocol (default TCP), port (absent: all) up to
//   endPort). ICMP never matches a port entry.
// An IPv4-mapped IPv6 address is an IPv4 packet on the wire: it is folded.
bool NetworkPolicyAllows(const std::vector<nlohmann::json>& policies,
                         const std::map<std::string, std::string>& pod_labels, const Query& q);

// CiliumNetworkPolicy (cilium.io/v2), address rules only: allowed iff some
// egress/ingress rule allows (toCIDRSet/fromCIDRSet and toPorts; a rule with
// other peers such as toFQDNs or toEndpoints does not match an address) and
// no egressDeny/ingressDeny rule matches; with default deny on. ICMP: only
// `icmps` rules would match, and none are emitted.
bool CiliumAllows(const nlohmann::json& cnp, const std::map<std::string, std::string>& pod_labels,
                  const Query& q);

// The same for a flow to a name that resolved to q.addr (egress): also
// allowed by a toFQDNs rule whose matchName/matchPattern matches the name,
// provided some rule lets the pod look the name up through its DNS proxy
// (an L7 `dns` rule matching it); deny rules still win. Patterns as the CRD
// documents them: `*` is zero or more DNS characters other than '.'.
bool CiliumAllowsName(const nlohmann::json& cnp,
                      const std::map<std::string, std::string>& pod_labels, const Query& q,
                      const std::string& name);

// Writes `docs` as JSON files into a fresh temporary folder and validates
// them with tests/backends/validate_json.py against `schema` (a path).
// Returns the script's exit status (0: all valid) and its output.
int ValidateAgainst(const std::string& schema, const std::vector<nlohmann::json>& docs,
                    std::string* output);
// The openAPIV3Schema of the CiliumNetworkPolicy CRD, as a JSON file in a
// temporary folder (written once per process); its path.
std::string CiliumSchemaPath();
std::string SchemaDir();  // ../shared/schemas from the project root

using Rng = std::mt19937_64;
// A random network section's policy text: allows and denies, both
// directions, addresses in a small region so rules and queries meet;
// `domains` adds domain allows.
std::string RandomPolicy(Rng& rng, bool domains);
Query RandomQuery(Rng& rng);
uint64_t Seed();  // WARD_SEED, or the clock; printed

}  // namespace ward::test
