// What the kubernetes and cilium backends share (backends/kubernetes/README.md):
// a deterministic YAML writer, the IR's partition as address blocks with
// exceptions, grouped by the ports they allow, and the object names, label
// selectors and warnings both targets give.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "language/diagnostics.h"

namespace ward::backend::k8s {

using nlohmann::ordered_json;

// Block-style YAML of one value: strings always double-quoted (JSON
// escapes, which YAML's double-quoted style reads the same), API field names
// plain, everything else quoted; no anchors, no tags. Same value, same bytes.
std::string ToYaml(const ordered_json& value);
// Several documents, each after a `---` line.
std::string ToYamlStream(const std::vector<ordered_json>& docs);

// An address block minus exceptions (NetworkPolicy ipBlock, Cilium
// CIDRRule): cidr and except as written.
struct IpBlock {
  std::string cidr;
  std::vector<std::string> except;
};

// The fewest blocks (counting cidr and except strings) found by splitting
// the address space in halves, that together cover exactly the ranges
// (sorted; adjacent ones are merged).
std::vector<IpBlock> V4Blocks(std::vector<ir::Range<ir::V4>> ranges);
std::vector<IpBlock> V6Blocks(std::vector<ir::Range<ir::V6>> ranges);

// Pieces of one direction's partition with the same TCP and UDP ports
// (ICMP aside: neither target gets it), in a fixed order.
struct PortGroup {
  ir::PortSet tcp, udp;
  std::vector<ir::Range<ir::V4>> v4;
  std::vector<ir::Range<ir::V6>> v6;
  std::vector<IpBlock> Blocks() const;  // v4 blocks, then v6
};
// From each piece's `decision` (allowed) or, with `denied`, its `denied`.
std::vector<PortGroup> GroupByPorts(const ir::Partition& partition, bool denied = false);

// Where the target settings come from: `target NAME { namespace ...
// SELECTOR_KEY { ... } }`, falling back to the `target kubernetes` block.
struct Placement {
  std::string name;                           // metadata.name stem (DNS-1123 label)
  std::string namespace_;                     // "" when not set
  std::map<std::string, std::string> labels;  // the pods the policy applies to
};
// False after an error (a name or label Kubernetes would refuse).
bool ResolvePlacement(const ir::Policy& policy, const std::string& target,
                      const std::string& selector_key, DiagnosticSink& sink, Placement* out);

// The label a pod gets when the policy names no selector.
inline constexpr const char* kPolicyLabel = "ward/policy";

// Warnings for what neither NetworkPolicy nor CiliumNetworkPolicy
// enforces: ICMP grants (dropped: towards deny), flows inside the pod
// (loopback; outside any network policy), unix socket rules.
void WarnIcmp(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink);
void WarnLoopback(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink);
void WarnUnix(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink);

// Domain denies (no target can hold them: the name's other addresses get
// through): an error per rule. Returns false when there was one.
bool RefuseDomainDenies(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink);

// One protocol's port ranges as port entries: {protocol, port[, endPort]};
// `port_as_string` for Cilium (whose port is a string).
void AppendPorts(const ir::PortSet& ports, const char* protocol, bool port_as_string,
                 ordered_json* out);

}  // namespace ward::backend::k8s
