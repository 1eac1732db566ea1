#include "backends/kubernetes/kubernetes_backend.h"

#include <algorithm>

#include "backends/bypass_warnings.h"
#include "backends/kubernetes/k8s_common.h"
#include "backends/oci/seccomp_profile.h"

namespace ward::backend {
namespace {

using k8s::ordered_json;

ordered_json Metadata(const k8s::Placement& where, const std::string& suffix) {
  ordered_json m;
  m["name"] = where.name + suffix;
  if (!where.namespace_.empty()) m["namespace"] = where.namespace_;
  m["labels"] = {{k8s::kPolicyLabel, where.name}};
  return m;
}

ordered_json PodSelector(const k8s::Placement& where) {
  ordered_json labels = ordered_json::object();
  for (const auto& [k, v] : where.labels) labels[k] = v;
  return {{"matchLabels", labels}};
}

ordered_json NetworkPolicy(const k8s::Placement& where, const std::string& suffix) {
  ordered_json np;
  np["apiVersion"] = "networking.k8s.io/v1";
  np["kind"] = "NetworkPolicy";
  np["metadata"] = Metadata(where, suffix);
  np["spec"]["podSelector"] = PodSelector(where);
  return np;
}

// The allow rules of one direction: one rule per set of peers that get the
// same ports. Every rule lists its ports with their protocol: a rule without
// ports would allow every protocol, ICMP and SCTP included.
ordered_json Rules(const ir::Partition& partition, const char* peers_key) {
  ordered_json rules = ordered_json::array();
  for (const k8s::PortGroup& g : k8s::GroupByPorts(partition)) {
    ordered_json peers = ordered_json::array();
    for (const k8s::IpBlock& b : g.Blocks()) {
      ordered_json block;
      block["cidr"] = b.cidr;
      if (!b.except.empty()) block["except"] = b.except;
      peers.push_back({{"ipBlock", block}});
    }
    ordered_json ports = ordered_json::array();
    k8s::AppendPorts(g.tcp, "TCP", false, &ports);
    k8s::AppendPorts(g.udp, "UDP", false, &ports);
    ordered_json rule;
    rule[peers_key] = std::move(peers);
    rule["ports"] = std::move(ports);
    rules.push_back(std::move(rule));
  }
  return rules;
}

// Domain grants: NetworkPolicy has no names. Left out (towards deny): with
// cilium among the targets, which carries them as toFQDNs, a note says so
// (the union of both objects' grants is Cilium's); else an error, or with
// --partial a warning, that lists them. The network section is then not
// enforced by kubernetes (the manifest's coverage names cilium, or nothing).
// `*refused`: the error was given.
bool DomainsLeftOut(const ir::NetRules& net, const Options& options, DiagnosticSink& sink,
                    bool* refused) {
  std::string names;
  Span at;
  for (const auto* domains : {&net.egress_domains, &net.ingress_domains}) {
    for (const auto& [pattern, entry] : *domains) {
      if (entry.allow.empty()) continue;
      names += (names.empty() ? "" : ", ") + pattern;
    }
  }
  if (names.empty()) return false;
  for (const ir::FlatRule& r : net.rules) {
    if (r.allow &&
        (r.peer.kind == ast::PeerKind::kDomain || r.peer.kind == ast::PeerKind::kWildcardDomain)) {
      at = r.span;
      break;
    }
  }
  const bool with_cilium =
      std::find(options.targets.begin(), options.targets.end(), "cilium") != options.targets.end();
  if (with_cilium) {
    sink.Note(Code::kCannotExpress, at,
              "NetworkPolicy cannot name domains; left to -t cilium (toFQDNs): " + names);
    return true;
  }
  if (!options.partial) {
    *refused = true;
    sink.Error(Code::kCannotExpress, at, "NetworkPolicy cannot name domains: " + names,
               "compile with Cilium too (-t kubernetes,cilium: its toFQDNs carries them), or "
               "pass --partial to leave them out (not allowed)");
    return true;
  }
  sink.Warning(Code::kCannotExpress, at,
               "NetworkPolicy cannot name domains; left out (not allowed): " + names,
               "the network section is not enforced by -t kubernetes: compile with Cilium too "
               "(-t kubernetes,cilium)");
  return true;
}

std::string Capability(std::string name) {
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.rfind("CAP_", 0) == 0) name = name.substr(4);
  return name;
}

// Kubernetes quantities: milli-CPUs as whole CPUs or "NNNm", bytes as a
// plain number.
std::string CpuQuantity(uint64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

class Kubernetes final : public Backend {
 public:
  std::string_view name() const override { return "kubernetes"; }
  std::string_view description() const override {
    return "NetworkPolicy YAML, pod securityContext/resources snippet and its Localhost seccomp "
           "profile";
  }
  std::vector<Section> covers() const override {
    return {Section::kSyscalls, Section::kNetwork, Section::kProcess, Section::kLimits};
  }

  Result Compile(const ir::Policy& policy, const Options& options,
                 DiagnosticSink& sink) const override {
    Result result;
    k8s::Placement where;
    bool ok = k8s::ResolvePlacement(policy, "kubernetes", "pod_selector", sink, &where);
    if (auto t = policy.targets.find("kubernetes"); t != policy.targets.end()) {
      if (auto s = t->second.find("namespace_selector"); s != t->second.end()) {
        sink.Error(Code::kCannotExpress, s->second.span,
                   "namespace_selector has no NetworkPolicy meaning for address rules",
                   "a NetworkPolicy applies in one namespace: set `namespace` instead");
        ok = false;
      }
    }
    ok = k8s::RefuseDomainDenies(policy.network, "NetworkPolicy", sink) && ok;

    nlohmann::ordered_json seccomp;
    ok = oci::SeccompProfile(policy.syscalls, sink, &seccomp) && ok;
    if (!ok) return result;
    WarnReopenedBypasses(policy.syscalls, sink);

    // ---- network ----
    const ir::NetRules& net = policy.network;
    bool refused = false;
    const bool domains_left_out = DomainsLeftOut(net, options, sink, &refused);
    if (refused) return result;
    k8s::WarnIcmp(net, "NetworkPolicy", sink);
    k8s::WarnLoopback(net, "NetworkPolicy", sink);
    k8s::WarnUnix(net, "NetworkPolicy", sink);
    std::vector<ordered_json> docs;
    ordered_json deny = NetworkPolicy(where, "-default-deny");
    deny["spec"]["policyTypes"] = {"Ingress", "Egress"};
    docs.push_back(std::move(deny));
    ordered_json egress = Rules(net.egress, "to");
    if (!egress.empty()) {
      ordered_json np = NetworkPolicy(where, "-egress");
      np["spec"]["policyTypes"] = {"Egress"};
      np["spec"]["egress"] = std::move(egress);
      docs.push_back(std::move(np));
    }
    ordered_json ingress = Rules(net.ingress, "from");
    if (!ingress.empty()) {
      ordered_json np = NetworkPolicy(where, "-ingress");
      np["spec"]["policyTypes"] = {"Ingress"};
      np["spec"]["ingress"] = std::move(ingress);
      docs.push_back(std::move(np));
    }
    if (!domains_left_out) result.enforced.push_back(Section::kNetwork);

    // ---- pod ----
    const std::string seccomp_path = "ward/" + policy.name + ".json";
    ordered_json pod;
    pod["metadata"]["labels"] = PodSelector(where)["matchLabels"];
    if (!where.namespace_.empty()) pod["metadata"]["namespace"] = where.namespace_;
    ordered_json spec;
    ordered_json pod_sc;
    const ir::ProcessRules& p = policy.process;
    if (p.user) {
      pod_sc["runAsUser"] = p.user->first;
      pod_sc["runAsGroup"] = p.user->second;
      if (p.user->first != 0) pod_sc["runAsNonRoot"] = true;
    }
    pod_sc["seccompProfile"] = {{"type", "Localhost"}, {"localhostProfile", seccomp_path}};

    ordered_json sc;
    sc["allowPrivilegeEscalation"] = !p.no_new_privileges;
    sc["privileged"] = false;
    ordered_json add = ordered_json::array();
    for (const std::string& c : p.capabilities_kept) add.push_back(Capability(c));
    sc["capabilities"]["drop"] = {"ALL"};
    if (!add.empty()) sc["capabilities"]["add"] = add;
    bool process_exact = true;
    for (const std::string& c : p.capabilities_kept) {
      if (p.no_new_privileges && Capability(c) == "SYS_ADMIN") {
        sink.Error(Code::kCannotExpress, {},
                   "Kubernetes refuses allowPrivilegeEscalation: false with CAP_SYS_ADMIN: "
                   "no_new_privileges and `capabilities keep [CAP_SYS_ADMIN]` cannot both hold",
                   "drop CAP_SYS_ADMIN, or compile with -t oci for another runtime");
        return result;
      }
    }
    if (!add.empty() && p.user && p.user->first != 0) {
      sink.Warning(Code::kCannotExpress, {},
                   "Kubernetes gives a non-root container no ambient capabilities: the kept "
                   "capabilities are bounded, not effective",
                   "deny-only approximation: the workload runs without them");
    }
    // allowPrivilegeEscalation, capabilities and runAsUser/runAsGroup
    // carry these; nothing carries env allow.
    result.fields.push_back("process.no_new_privileges");
    result.fields.push_back("process.capabilities");
    if (p.user) result.fields.push_back("process.user");
    if (!p.env_allowed.empty()) {
      process_exact = false;
      sink.Warning(Code::kCannotExpress, {},
                   "a pod spec cannot filter the environment: `env allow` is not enforced by "
                   "this target",
                   "a container's env is the whole environment it gets");
    }

    ordered_json limits = ordered_json::object();
    bool limits_exact = true;
    for (const auto& [key, limit] : policy.limits) {
      if (key == "cpus" || key == "memory" || key == "disk" || key == "timeout") {
        result.fields.push_back("limits." + key);
      }
      if (key == "cpus") {
        limits["cpu"] = CpuQuantity(limit.value);
      } else if (key == "memory") {
        limits["memory"] = std::to_string(limit.value);
      } else if (key == "disk") {
        limits["ephemeral-storage"] = std::to_string(limit.value);
      } else if (key == "timeout") {
        // Whole seconds, rounded down (towards deny), at least one.
        spec["activeDeadlineSeconds"] = std::max<uint64_t>(1, limit.value / 1000);
      } else {
        limits_exact = false;
        sink.Warning(Code::kCannotExpress, limit.span,
                     "a pod spec has no field for the limit '" + key + "'",
                     key == "pids" ? "the kubelet's podPidsLimit bounds every pod of a node"
                                   : "the limit is not enforced by this target");
      }
    }
    spec["securityContext"] = std::move(pod_sc);
    ordered_json container;
    container["securityContext"] = std::move(sc);
    if (!limits.empty()) container["resources"]["limits"] = std::move(limits);
    spec["containers"] = ordered_json::array({std::move(container)});
    pod["spec"] = std::move(spec);

    result.enforced.push_back(Section::kSyscalls);
    if (process_exact) result.enforced.push_back(Section::kProcess);
    if (limits_exact) result.enforced.push_back(Section::kLimits);

    result.artifacts.push_back(
        {policy.name + ".networkpolicy.yaml", "# Ward policy " + policy.name +
                                                  ": NetworkPolicy objects (kubectl apply -f)\n" +
                                                  k8s::ToYamlStream(docs)});
    result.artifacts.push_back(
        {policy.name + ".pod.yaml",
         "# Ward policy " + policy.name +
             ": merge into the pod template (backends/kubernetes/README.md): metadata,\n"
             "# spec, and the workload container's securityContext and resources (the limits\n"
             "# are the whole sandbox's: give them to one container). Install\n"
             "# kubelet-seccomp/" +
             seccomp_path + " under the kubelet's seccomp root on every node.\n" +
             k8s::ToYaml(pod)});
    result.artifacts.push_back({"kubelet-seccomp/" + seccomp_path, seccomp.dump(2) + "\n"});
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& KubernetesBackend() {
  static const Kubernetes backend;
  return backend;
}

}  // namespace ward::backend
