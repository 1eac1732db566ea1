#include "backends/cilium/cilium_backend.h"

#include "backends/kubernetes/k8s_common.h"

namespace ward::backend {
namespace {

using k8s::ordered_json;

// The CRD allows at most 40 ports per PortRule.
constexpr size_t kMaxPorts = 40;

ordered_json ToPorts(const ir::PortSet& tcp, const ir::PortSet& udp) {
  ordered_json ports = ordered_json::array();
  k8s::AppendPorts(tcp, "TCP", true, &ports);
  k8s::AppendPorts(udp, "UDP", true, &ports);
  ordered_json rules = ordered_json::array();
  for (size_t i = 0; i < ports.size(); i += kMaxPorts) {
    ordered_json chunk = ordered_json::array();
    for (size_t j = i; j < ports.size() && j < i + kMaxPorts; ++j) chunk.push_back(ports[j]);
    rules.push_back({{"ports", std::move(chunk)}});
  }
  return rules;
}

ordered_json CidrSet(const k8s::PortGroup& g) {
  ordered_json set = ordered_json::array();
  for (const k8s::IpBlock& b : g.Blocks()) {
    ordered_json rule;
    rule["cidr"] = b.cidr;
    if (!b.except.empty()) rule["except"] = b.except;
    set.push_back(std::move(rule));
  }
  return set;
}

// Address rules of one direction: `peers_key` is toCIDRSet or fromCIDRSet.
void AddressRules(const ir::Partition& partition, bool denied, const char* peers_key,
                  ordered_json* out) {
  for (const k8s::PortGroup& g : k8s::GroupByPorts(partition, denied)) {
    ordered_json rule;
    rule[peers_key] = CidrSet(g);
    rule["toPorts"] = ToPorts(g.tcp, g.udp);
    out->push_back(std::move(rule));
  }
}

ordered_json FqdnSelector(const std::string& pattern) {
  // Ward's `*.s` is every name under s; Cilium's `*.s` one label under s
  // (a warning says so).
  if (pattern.rfind("*.", 0) == 0) return {{"matchPattern", pattern}};
  return {{"matchName", pattern}};
}

class Cilium final : public Backend {
 public:
  std::string_view name() const override { return "cilium"; }
  std::string_view description() const override {
    return "CiliumNetworkPolicy YAML: CIDR rules with exceptions, domains as toFQDNs";
  }
  std::vector<Section> covers() const override { return {Section::kNetwork}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    k8s::Placement where;
    bool ok = k8s::ResolvePlacement(policy, "cilium", "endpoint_selector", sink, &where);
    const ir::NetRules& net = policy.network;
    ok = k8s::RefuseDomainDenies(net, "Cilium", sink) && ok;
    if (!ok) return result;
    k8s::WarnIcmp(net, "CiliumNetworkPolicy (as Ward writes it)", sink);
    k8s::WarnLoopback(net, "Cilium", sink);
    k8s::WarnUnix(net, "Cilium", sink);
    bool exact = true;

    ordered_json egress = ordered_json::array();
    AddressRules(net.egress, false, "toCIDRSet", &egress);

    // Domain grants, grouped by their ports.
    std::map<std::pair<std::string, std::string>, std::pair<ir::NetDecision, ordered_json>> fqdns;
    std::string icmp_lost, narrowed;
    ordered_json dns_names = ordered_json::array();
    for (const auto& [pattern, entry] : net.egress_domains) {
      if (entry.allow.icmp) icmp_lost += (icmp_lost.empty() ? "" : ", ") + pattern;
      if (entry.allow.tcp.empty() && entry.allow.udp.empty()) continue;
      auto& g = fqdns[{entry.allow.tcp.ToString(), entry.allow.udp.ToString()}];
      g.first = entry.allow;
      g.second.push_back(FqdnSelector(pattern));
      dns_names.push_back(FqdnSelector(pattern));
      if (pattern.rfind("*.", 0) == 0) narrowed += (narrowed.empty() ? "" : ", ") + pattern;
    }
    for (auto& [key, g] : fqdns) {
      ordered_json rule;
      rule["toFQDNs"] = std::move(g.second);
      rule["toPorts"] = ToPorts(g.first.tcp, g.first.udp);
      egress.push_back(std::move(rule));
    }
    if (!dns_names.empty()) {
      // toFQDNs learns a name's addresses from the lookups Cilium's DNS
      // proxy sees: lookups of exactly these names, through kube-dns.
      ordered_json rule;
      rule["toEndpoints"] = {
          {{"matchLabels",
            {{"k8s:io.kubernetes.pod.namespace", "kube-system"}, {"k8s:k8s-app", "kube-dns"}}}}};
      ordered_json ports = ordered_json::array(
          {{{"port", "53"}, {"protocol", "UDP"}}, {{"port", "53"}, {"protocol", "TCP"}}});
      rule["toPorts"] = {{{"ports", ports}, {"rules", {{"dns", dns_names}}}}};
      egress.push_back(std::move(rule));
    }
    if (!icmp_lost.empty()) {
      sink.Warning(Code::kCannotExpress, {},
                   "ICMP to these names is not allowed (deny-only approximation): " + icmp_lost);
    }
    if (!narrowed.empty()) {
      sink.Warning(Code::kCannotExpress, {},
                   "Cilium's `*.name` matches one label under the name, Ward's every name under "
                   "it: deeper names are not allowed (deny-only approximation): " +
                       narrowed);
    }
    std::string ingress_names;
    for (const auto& [pattern, entry] : net.ingress_domains) {
      if (!entry.allow.empty()) ingress_names += (ingress_names.empty() ? "" : ", ") + pattern;
    }
    if (!ingress_names.empty()) {
      exact = false;
      sink.Warning(
          Code::kCannotExpress, {},
          "Cilium cannot match ingress peers by name; left out (not allowed): " + ingress_names,
          "the network section is not enforced by -t cilium");
    }

    // An address deny holds against a domain grant whose name resolves into
    // it: Cilium's deny rules win over every allow.
    ordered_json egress_deny = ordered_json::array();
    AddressRules(net.egress, true, "toCIDRSet", &egress_deny);

    ordered_json ingress = ordered_json::array();
    AddressRules(net.ingress, false, "fromCIDRSet", &ingress);

    ordered_json cnp;
    cnp["apiVersion"] = "cilium.io/v2";
    cnp["kind"] = "CiliumNetworkPolicy";
    cnp["metadata"]["name"] = where.name;
    if (!where.namespace_.empty()) cnp["metadata"]["namespace"] = where.namespace_;
    cnp["metadata"]["labels"] = {{k8s::kPolicyLabel, where.name}};
    ordered_json labels = ordered_json::object();
    for (const auto& [k, v] : where.labels) labels[k] = v;
    cnp["spec"]["endpointSelector"] = {{"matchLabels", labels}};
    cnp["spec"]["enableDefaultDeny"] = {{"egress", true}, {"ingress", true}};
    if (!egress.empty()) cnp["spec"]["egress"] = std::move(egress);
    if (!egress_deny.empty()) cnp["spec"]["egressDeny"] = std::move(egress_deny);
    if (!ingress.empty()) cnp["spec"]["ingress"] = std::move(ingress);

    result.artifacts.push_back(
        {policy.name + ".cilium.yaml", "# Ward policy " + policy.name +
                                           ": CiliumNetworkPolicy (kubectl apply -f)\n" +
                                           k8s::ToYamlStream({cnp})});
    if (exact) result.enforced.push_back(Section::kNetwork);
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& CiliumBackend() {
  static const Cilium backend;
  return backend;
}

}  // namespace ward::backend
