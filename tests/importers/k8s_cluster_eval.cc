// Reference NetworkPolicy evaluator; see k8s_cluster_eval.h.
//
// Sources: kubernetes/website content/en/docs/concepts/services-networking/
// network-policies.md ("the docs") and kubernetes/api networking/v1/types.go
// ("types.go"). Decisions, with the sentence each rests on:
//
// * Which policies apply: those in the pod's namespace (metadata.namespace,
//   absent: "default") whose spec.podSelector matches the pod's labels.
//   types.go: "An empty selector matches all pods in the policy's namespace."
//   and "If it is not specified, it defaults to an empty selector."
// * policyTypes when absent (or empty: the API server treats a zero-length
//   list as not specified): Ingress always, Egress iff spec.egress has at
//   least one rule. types.go: "If this field is not specified, it will default
//   based on the existence of ingress or egress rules; policies that contain
//   an egress section are assumed to affect egress". The docs say it more
//   sharply: "`Egress` will be set if the NetworkPolicy has any egress rules."
//   `egress: []` contains no rule (and an empty list and an absent one are the
//   same value once decoded: the field is `omitempty`), so it does not add
//   Egress; a policy that means to deny all egress must name Egress in
//   policyTypes, as types.go says: "if you want to write a policy that
//   specifies that no egress is allowed, you must specify a policyTypes value
//   that include "Egress" (since such a policy would not include an egress
//   section and would otherwise default to just [ "Ingress" ])".
// * Isolation: docs: "By default, a pod is non-isolated for egress; all
//   outbound connections are allowed. A pod is isolated for egress if there is
//   any NetworkPolicy that both selects the pod and has "Egress" in its
//   `policyTypes`" (likewise ingress), "When a pod is isolated for egress, the
//   only allowed connections from the pod are those allowed by the `egress`
//   list of some NetworkPolicy that applies to the pod for egress." and "The
//   effects of those `egress` lists combine additively." A non-isolated
//   direction allows every flow, ICMP included.
// * ICMP in an isolated direction: never allowed, not even by a rule without
//   ports (Ward decision). The docs: "NetworkPolicy is defined for layer 4
//   connections (TCP, UDP, and optionally SCTP). For all the other protocols,
//   the behaviour may vary across network plugins." and "when a specific pod
//   is allowed as ingress source or egress destination, it is undefined what
//   happens with (for example) ICMP packets."
// * A rule: types.go: "The traffic must match both ports and from." `from`/`to`
//   "If this field is empty or missing, this rule matches all sources"; ports
//   "If this field is empty or missing, this rule matches all ports".
// * Peers: types.go NetworkPolicyPeer: podSelector alone "selects the pods
//   matching podSelector in the policy's own namespace"; namespaceSelector
//   alone "selects all pods in the namespaces selected by namespaceSelector";
//   both: "selects the pods matching podSelector in the Namespaces selected by
//   NamespaceSelector"; "if present but empty, it selects all pods" /
//   "all namespaces". ipBlock: "If this field is set then neither of the other
//   fields can be." except: "CIDRs that should not be included within this
//   rule"; "Except values will be rejected if they are outside the cidr range".
//   A selector peer matches when the flow's IP is one of a selected pod's IPs
//   (status.podIPs[].ip and status.podIP). Never selected (Ward decisions):
//   hostNetwork pods (docs: "NetworkPolicy behaviour for `hostNetwork` pods is
//   undefined", the second and "most common implementation" being that the
//   plugin "ignores `hostNetwork` pods when matching `podSelector` and
//   `namespaceSelector`. Traffic to/from `hostNetwork` pods is treated the same
//   as all other traffic to/from the node IP." -- so their node IP still
//   matches ipBlocks), pods without an IP, and pods in phase Succeeded or
//   Failed (the docs say nothing of these; terminated pods have no network).
//   A v4 cidr never matches a v6 address and vice versa; IPv4-mapped IPv6
//   addresses are not folded (they are plain v6 addresses here).
// * Namespace labels: a Namespace without `kubernetes.io/metadata.name` gets it
//   (docs: "The Kubernetes control plane sets an immutable label
//   kubernetes.io/metadata.name on all namespaces, the value of the label is
//   the namespace name."). A namespace that has pods in the snapshot but no
//   Namespace object is taken to carry only that label.
// * Ports: types.go NetworkPolicyPort: protocol "If not specified, this field
//   defaults to TCP."; port "If this field is not provided, this matches all
//   port names and numbers. If present, only traffic on the specified protocol
//   AND port will be matched."; endPort "the range of ports from port to
//   endPort if set, inclusive". SCTP entries match no TCP/UDP flow. A named
//   port (string) is looked up by name and protocol (container port protocol
//   default TCP) in spec.containers[].ports[] of: for ingress, the target pod;
//   for egress, the pod(s) owning the flow's peer IP among the pods that can
//   be peers (above), for every kind of peer (ipBlock too); no such pod, or no
//   such port: no match. (Init/sidecar containers are not looked at.)
// * Self traffic: "a pod cannot block access to itself": a flow whose peer is
//   one of the pod's own IPs is allowed, both ways (IsSelfFlow tells them).
//   Node traffic ("traffic to and from the node where a Pod is running is
//   always allowed"; "the only allowed connections into the pod are those
//   from the pod's node and those allowed by the `ingress` list"): a flow
//   whose peer is the pod's own node (status.hostIP, status.hostIPs) is
//   allowed, both ways. Another node's IP (a hostNetwork pod elsewhere) is
//   judged by the rules like any other address.
// * The target pod must be in the snapshot and not hostNetwork (else throw).
#include "tests/importers/k8s_cluster_eval.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace ward::test::k8s {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- YAML

json FromYaml(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = FromYaml(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(FromYaml(item));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return nullptr;
      static const std::regex integer("^[-+]?[0-9]+$");
      if (std::regex_match(s, integer)) {
        try {
          return std::stoll(s);
        } catch (const std::out_of_range&) {
          return s;
        }
      }
      return s;
    }
    default:  // Null, Undefined
      return nullptr;
  }
}

void Unwrap(const json& doc, std::vector<json>& out) {
  if (doc.is_null()) return;
  if (doc.is_object() && doc.contains("items") && doc["items"].is_array() &&
      doc.value("kind", std::string()).size() >= 4 &&
      doc.value("kind", std::string()).ends_with("List")) {
    for (const json& item : doc["items"]) Unwrap(item, out);
    return;
  }
  out.push_back(doc);
}

// ---------------------------------------------------------------- IPs

struct Ip {
  bool v6 = false;
  std::array<uint8_t, 16> b{};
  bool operator==(const Ip&) const = default;
  bool operator<(const Ip& o) const { return std::tie(v6, b) < std::tie(o.v6, o.b); }
};

std::optional<Ip> ParseIp(const std::string& s) {
  Ip ip;
  if (inet_pton(AF_INET, s.c_str(), ip.b.data()) == 1) return ip;
  ip.v6 = true;
  if (inet_pton(AF_INET6, s.c_str(), ip.b.data()) == 1) return ip;
  return std::nullopt;
}

std::string IpText(const Ip& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v6 ? AF_INET6 : AF_INET, ip.b.data(), buf, sizeof buf);
  return buf;
}

int Bits(const Ip& ip) { return ip.v6 ? 128 : 32; }

struct Cidr {
  Ip base;
  int len = 0;
};

Cidr ParseCidr(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) throw std::invalid_argument("ipBlock: not a CIDR: " + s);
  const std::optional<Ip> ip = ParseIp(s.substr(0, slash));
  const std::string len = s.substr(slash + 1);
  if (!ip || len.empty() || len.size() > 3 ||
      !std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::invalid_argument("ipBlock: not a CIDR: " + s);
  Cidr c{*ip, std::stoi(len)};
  if (c.len > Bits(c.base)) throw std::invalid_argument("ipBlock: bad prefix length: " + s);
  return c;
}

bool Contains(const Cidr& c, const Ip& ip) {
  if (c.base.v6 != ip.v6) return false;
  for (int i = 0; i < c.len; ++i) {
    const int byte = i / 8, bit = 7 - i % 8;
    if (((c.base.b[byte] >> bit) & 1) != ((ip.b[byte] >> bit) & 1)) return false;
  }
  return true;
}

// ---------------------------------------------------------------- labels

// Label values are strings; tolerate YAML's plain true/123 in hand-written data.
std::string Str(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

const json& Labels(const json& obj) {
  static const json empty = json::object();
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return empty;
  const json& m = obj["metadata"];
  if (!m.contains("labels") || !m["labels"].is_object()) return empty;
  return m["labels"];
}

// A LabelSelector; null/absent matches everything (callers that must tell an
// absent selector from an empty one check before calling).
bool Matches(const json& sel, const json& labels) {
  if (!sel.is_object()) return true;
  if (sel.contains("matchLabels") && sel["matchLabels"].is_object()) {
    for (const auto& [k, v] : sel["matchLabels"].items()) {
      if (!labels.contains(k) || Str(labels[k]) != Str(v)) return false;
    }
  }
  if (sel.contains("matchExpressions") && sel["matchExpressions"].is_array()) {
    for (const json& e : sel["matchExpressions"]) {
      const std::string key = Str(e.value("key", json()));
      const std::string op = Str(e.value("operator", json()));
      std::set<std::string> values;
      if (e.contains("values") && e["values"].is_array())
        for (const json& v : e["values"]) values.insert(Str(v));
      const bool has = labels.contains(key);
      const bool in = has && values.count(Str(labels[key])) > 0;
      if (op == "In") {
        if (!in) return false;
      } else if (op == "NotIn") {
        if (in) return false;
      } else if (op == "Exists") {
        if (!has) return false;
      } else if (op == "DoesNotExist") {
        if (has) return false;
      } else {
        throw std::invalid_argument("label selector: unknown operator " + op);
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------- snapshot

struct Pod {
  std::string ns, name;
  json labels, spec;
  std::vector<Ip> ips;
  std::vector<Ip> host_ips;  // status.hostIP(s): the node it runs on
  bool host_network = false;
  std::string phase;
  bool CanBePeer() const {
    return !host_network && !ips.empty() && phase != "Succeeded" && phase != "Failed";
  }
};

struct Cluster {
  std::map<std::string, json> ns_labels;
  std::vector<Pod> pods;

  json NsLabels(const std::string& ns) const {
    auto it = ns_labels.find(ns);
    if (it != ns_labels.end()) return it->second;
    return json{{"kubernetes.io/metadata.name", ns}};
  }
  const Pod* Find(const std::string& ns, const std::string& name) const {
    for (const Pod& p : pods)
      if (p.ns == ns && p.name == name) return &p;
    return nullptr;
  }
};

std::string NameOf(const json& obj) {
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  return Str(obj["metadata"].value("name", json("")));
}

std::string NamespaceOf(const json& obj) {
  if (obj.contains("metadata") && obj["metadata"].is_object() &&
      obj["metadata"].contains("namespace") && obj["metadata"]["namespace"].is_string() &&
      !obj["metadata"]["namespace"].get<std::string>().empty())
    return obj["metadata"]["namespace"].get<std::string>();
  return "default";
}

Cluster ReadCluster(const json& snapshot) {
  std::vector<json> items;
  if (snapshot.is_array()) {
    for (const json& i : snapshot) Unwrap(i, items);
  } else {
    Unwrap(snapshot, items);
  }
  Cluster c;
  for (const json& it : items) {
    if (!it.is_object()) continue;
    const std::string kind = it.value("kind", std::string());
    if (kind == "Namespace") {
      json l = Labels(it);
      const std::string name = NameOf(it);
      if (!l.contains("kubernetes.io/metadata.name")) l["kubernetes.io/metadata.name"] = name;
      c.ns_labels[name] = l;
    } else if (kind == "Pod") {
      Pod p;
      p.ns = NamespaceOf(it);
      p.name = NameOf(it);
      p.labels = Labels(it);
      p.spec = it.value("spec", json::object());
      p.host_network = p.spec.is_object() && p.spec.value("hostNetwork", false) == true;
      const json status = it.value("status", json::object());
      p.phase = Str(status.value("phase", json("")));
      std::set<Ip> seen;
      auto add = [&](const json& v) {
        if (!v.is_string()) return;
        if (auto ip = ParseIp(v.get<std::string>()); ip && seen.insert(*ip).second)
          p.ips.push_back(*ip);
      };
      if (status.contains("podIPs") && status["podIPs"].is_array())
        for (const json& e : status["podIPs"])
          if (e.is_object() && e.contains("ip")) add(e["ip"]);
      if (status.contains("podIP")) add(status["podIP"]);
      auto add_host = [&](const json& v) {
        if (!v.is_string()) return;
        if (auto ip = ParseIp(v.get<std::string>()))
          if (std::find(p.host_ips.begin(), p.host_ips.end(), *ip) == p.host_ips.end())
            p.host_ips.push_back(*ip);
      };
      if (status.contains("hostIPs") && status["hostIPs"].is_array())
        for (const json& e : status["hostIPs"])
          if (e.is_object() && e.contains("ip")) add_host(e["ip"]);
      if (status.contains("hostIP")) add_host(status["hostIP"]);
      c.pods.push_back(std::move(p));
    }
  }
  return c;
}

// ---------------------------------------------------------------- policy

bool HasType(const json& spec, const std::string& type) {
  const json types = spec.value("policyTypes", json());
  if (types.is_array() && !types.empty()) {
    for (const json& t : types)
      if (Str(t) == type) return true;
    return false;
  }
  if (type == "Ingress") return true;
  const json egress = spec.value("egress", json());
  return egress.is_array() && !egress.empty();
}

bool PeerMatches(const Cluster& c, const std::string& policy_ns, const json& peer, const Ip& ip) {
  if (!peer.is_object()) throw std::invalid_argument("NetworkPolicyPeer is not an object");
  const bool has_block = peer.contains("ipBlock") && !peer["ipBlock"].is_null();
  const bool has_pod = peer.contains("podSelector") && !peer["podSelector"].is_null();
  const bool has_ns = peer.contains("namespaceSelector") && !peer["namespaceSelector"].is_null();
  if (has_block) {
    if (has_pod || has_ns)
      throw std::invalid_argument("NetworkPolicyPeer: ipBlock together with a selector");
    const json& b = peer["ipBlock"];
    const Cidr cidr = ParseCidr(Str(b.value("cidr", json(""))));
    bool in = Contains(cidr, ip);
    if (b.contains("except") && b["except"].is_array()) {
      for (const json& e : b["except"]) {
        const Cidr ex = ParseCidr(Str(e));
        if (ex.base.v6 != cidr.base.v6 || ex.len < cidr.len || !Contains(cidr, ex.base))
          throw std::invalid_argument("ipBlock: except " + Str(e) + " outside its cidr");
        if (Contains(ex, ip)) in = false;
      }
    }
    return in;
  }
  if (!has_pod && !has_ns) throw std::invalid_argument("NetworkPolicyPeer with no field");
  for (const Pod& p : c.pods) {
    if (!p.CanBePeer()) continue;
    if (std::find(p.ips.begin(), p.ips.end(), ip) == p.ips.end()) continue;
    if (has_ns) {
      if (!Matches(peer["namespaceSelector"], c.NsLabels(p.ns))) continue;
    } else if (p.ns != policy_ns) {
      continue;
    }
    if (has_pod && !Matches(peer["podSelector"], p.labels)) continue;
    return true;
  }
  return false;
}

std::vector<int> NamedPort(const Pod& p, const std::string& name, const std::string& proto) {
  std::vector<int> out;
  if (!p.spec.is_object() || !p.spec.contains("containers") || !p.spec["containers"].is_array())
    return out;
  for (const json& ctr : p.spec["containers"]) {
    if (!ctr.is_object() || !ctr.contains("ports") || !ctr["ports"].is_array()) continue;
    for (const json& cp : ctr["ports"]) {
      if (!cp.is_object() || Str(cp.value("name", json(""))) != name) continue;
      const std::string cproto = cp.contains("protocol") ? Str(cp["protocol"]) : "TCP";
      if (cproto != proto) continue;
      if (cp.contains("containerPort") && cp["containerPort"].is_number_integer())
        out.push_back(cp["containerPort"].get<int>());
    }
  }
  return out;
}

bool PortMatches(const json& entry, const Flow& f, const std::vector<const Pod*>& named_pods) {
  if (!entry.is_object()) throw std::invalid_argument("NetworkPolicyPort is not an object");
  const std::string proto =
      entry.contains("protocol") && !entry["protocol"].is_null() ? Str(entry["protocol"]) : "TCP";
  const bool has_port = entry.contains("port") && !entry["port"].is_null();
  const bool has_end = entry.contains("endPort") && !entry["endPort"].is_null();
  if (has_end && (!has_port || !entry["port"].is_number_integer()))
    throw std::invalid_argument("NetworkPolicyPort: endPort without a numeric port");
  if (has_port && entry["port"].is_number_integer()) {
    const long long p = entry["port"].get<long long>();
    if (p < 1 || p > 65535) throw std::invalid_argument("NetworkPolicyPort: port out of range");
    if (has_end) {
      if (!entry["endPort"].is_number_integer())
        throw std::invalid_argument("NetworkPolicyPort: endPort not a number");
      const long long e = entry["endPort"].get<long long>();
      if (e < p || e > 65535) throw std::invalid_argument("NetworkPolicyPort: endPort < port");
    }
  }
  if (proto != f.protocol) return false;
  if (!has_port) return true;
  const json& port = entry["port"];
  if (port.is_number_integer()) {
    const long long p = port.get<long long>();
    const long long e = has_end ? entry["endPort"].get<long long>() : p;
    return f.port >= p && f.port <= e;
  }
  const std::string name = Str(port);
  for (const Pod* pod : named_pods)
    for (int cp : NamedPort(*pod, name, proto))
      if (cp == f.port) return true;
  return false;
}

bool ListEmpty(const json& spec_or_rule, const char* key) {
  if (!spec_or_rule.contains(key)) return true;
  const json& v = spec_or_rule[key];
  return v.is_null() || (v.is_array() && v.empty());
}

}  // namespace

std::vector<nlohmann::json> ReadObjects(const std::string& yaml_or_json) {
  std::vector<json> out;
  for (const YAML::Node& n : YAML::LoadAll(yaml_or_json)) Unwrap(FromYaml(n), out);
  return out;
}

bool IsSelfFlow(const nlohmann::json& snapshot, const std::string& pod_namespace,
                const std::string& pod_name, const Flow& flow) {
  const Cluster c = ReadCluster(snapshot);
  const Pod* pod = c.Find(pod_namespace, pod_name);
  const std::optional<Ip> ip = ParseIp(flow.peer);
  if (!pod || !ip) return false;
  return std::find(pod->ips.begin(), pod->ips.end(), *ip) != pod->ips.end();
}

bool ClusterAllows(const nlohmann::json& snapshot, const std::vector<nlohmann::json>& policies,
                   const std::string& pod_namespace, const std::string& pod_name,
                   const Flow& flow) {
  const Cluster c = ReadCluster(snapshot);
  const Pod* target = c.Find(pod_namespace, pod_name);
  if (!target) throw std::invalid_argument("pod " + pod_namespace + "/" + pod_name + " not found");
  if (target->host_network)
    throw std::invalid_argument("pod " + pod_namespace + "/" + pod_name + " is hostNetwork");
  if (flow.protocol != "TCP" && flow.protocol != "UDP" && flow.protocol != "ICMP")
    throw std::invalid_argument("flow protocol " + flow.protocol);
  const std::optional<Ip> peer = ParseIp(flow.peer);
  if (!peer) throw std::invalid_argument("flow peer " + flow.peer + " is not an IP");

  const std::string type = flow.ingress ? "Ingress" : "Egress";
  const char* rules_key = flow.ingress ? "ingress" : "egress";
  const char* peers_key = flow.ingress ? "from" : "to";

  std::vector<const Pod*> named_pods;
  if (flow.ingress) {
    named_pods.push_back(target);
  } else {
    for (const Pod& p : c.pods)
      if (p.CanBePeer() && std::find(p.ips.begin(), p.ips.end(), *peer) != p.ips.end())
        named_pods.push_back(&p);
  }

  bool isolated = false, allowed = false;
  for (const json& pol : policies) {
    if (!pol.is_object() || pol.value("kind", std::string("NetworkPolicy")) != "NetworkPolicy")
      continue;
    const std::string pns = NamespaceOf(pol);
    if (pns != target->ns) continue;
    const json spec = pol.value("spec", json::object());
    if (!Matches(spec.value("podSelector", json()), target->labels)) continue;
    if (!HasType(spec, type)) continue;
    isolated = true;
    if (flow.protocol == "ICMP" || allowed) continue;
    if (!spec.contains(rules_key) || !spec[rules_key].is_array()) continue;
    for (const json& rule_or_null : spec[rules_key]) {
      // Go's encoding/json decodes a null list element into the zero rule:
      // every peer, every port.
      const json rule = rule_or_null.is_null() ? json::object() : rule_or_null;
      bool peer_ok = ListEmpty(rule, peers_key);
      if (!peer_ok)
        for (const json& p : rule[peers_key])
          if (PeerMatches(c, pns, p, *peer)) peer_ok = true;
      bool port_ok = ListEmpty(rule, "ports");
      if (!port_ok)
        for (const json& e : rule["ports"])
          if (PortMatches(e, flow, named_pods)) port_ok = true;
      if (peer_ok && port_ok) allowed = true;
    }
  }
  // "a pod cannot block access to itself", and "traffic to and from the
  // node where a Pod is running is always allowed" (docs; the importer
  // applies both, so this evaluator does too, in both directions).
  auto has = [&](const std::vector<Ip>& ips) {
    return std::find(ips.begin(), ips.end(), *peer) != ips.end();
  };
  if (has(target->ips) || has(target->host_ips)) return true;
  return !isolated || allowed;
}

std::string Describe(const Flow& f) {
  std::ostringstream o;
  o << (f.ingress ? "ingress " : "egress ") << f.protocol << ' '
    << (f.peer.find(':') != std::string::npos ? "[" + f.peer + "]" : f.peer);
  if (f.protocol != "ICMP") o << ':' << f.port;
  return o.str();
}

// ---------------------------------------------------------------- random

namespace {

int Uni(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }
template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(Uni(rng, 0, static_cast<int>(v.size()) - 1))];
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& PodLabelPool() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> pool = {
      {"app", {"web", "db", "api"}},
      {"role", {"frontend", "db", "monitoring"}},
      {"tier", {"front", "back"}},
  };
  return pool;
}
const std::vector<std::pair<std::string, std::vector<std::string>>>& NsLabelPool() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> pool = {
      {"team", {"a", "b"}},
      {"env", {"prod", "dev"}},
      {"project", {"myproject"}},
  };
  return pool;
}

const std::vector<int>& PortPool() {
  static const std::vector<int> pool = {53, 80, 443, 5000, 6379, 8080, 9090};
  return pool;
}
const std::vector<std::string>& PortNamePool() {
  static const std::vector<std::string> pool = {"http", "dns", "metrics", "grpc"};
  return pool;
}

Ip V4(int last) {
  Ip ip;
  ip.b[0] = 10;
  ip.b[3] = static_cast<uint8_t>(last);
  return ip;
}
Ip V6(int last) {
  Ip ip;
  ip.v6 = true;
  ip.b[0] = 0xfd;
  ip.b[15] = static_cast<uint8_t>(last);
  return ip;
}

json RandomLabels(std::mt19937_64& rng,
                  const std::vector<std::pair<std::string, std::vector<std::string>>>& pool) {
  json l = json::object();
  for (const auto& [k, vs] : pool)
    if (Chance(rng, 0.5)) l[k] = Pick(rng, vs);
  return l;
}

struct Vocab {
  std::vector<std::string> namespaces;
  std::vector<std::string> pod_ips;  // every IP text of every pod
};

Vocab VocabOf(const json& cluster) {
  Vocab v;
  std::vector<json> items;
  Unwrap(cluster, items);
  for (const json& it : items) {
    const std::string kind = it.value("kind", std::string());
    if (kind == "Namespace") v.namespaces.push_back(NameOf(it));
    if (kind == "Pod") {
      const json st = it.value("status", json::object());
      if (st.contains("podIPs"))
        for (const json& e : st["podIPs"]) v.pod_ips.push_back(Str(e["ip"]));
      else if (st.contains("podIP"))
        v.pod_ips.push_back(Str(st["podIP"]));
    }
  }
  if (v.namespaces.empty()) v.namespaces.push_back("default");
  return v;
}

// A random LabelSelector over `pool` (plus kubernetes.io/metadata.name for
// namespace selectors), sometimes empty, with every operator.
json RandomSelector(std::mt19937_64& rng,
                    const std::vector<std::pair<std::string, std::vector<std::string>>>& pool,
                    const std::vector<std::string>& ns_names, bool for_namespaces) {
  auto keyvals = pool;
  if (for_namespaces) keyvals.push_back({"kubernetes.io/metadata.name", ns_names});
  keyvals.push_back({"absent-key", {"x"}});  // a key no object carries
  json sel = json::object();
  const int shape = Uni(rng, 0, 9);
  if (shape <= 2) return sel;  // {}
  if (shape <= 6 || shape == 9) {
    json ml = json::object();
    const int n = Uni(rng, 1, 2);
    for (int i = 0; i < n; ++i) {
      const auto& [k, vs] = Pick(rng, keyvals);
      if (k == "absent-key" && Chance(rng, 0.7)) continue;
      ml[k] = Chance(rng, 0.9) ? Pick(rng, vs) : std::string("nomatch");
    }
    if (!ml.empty()) sel["matchLabels"] = ml;
  }
  if (shape >= 7) {
    json exprs = json::array();
    const int n = Uni(rng, 1, 2);
    static const std::vector<std::string> ops = {"In", "NotIn", "Exists", "DoesNotExist"};
    for (int i = 0; i < n; ++i) {
      const auto& [k, vs] = Pick(rng, keyvals);
      const std::string& op = Pick(rng, ops);
      json e = {{"key", k}, {"operator", op}};
      if (op == "In" || op == "NotIn") {
        json values = json::array();
        std::set<std::string> seen;
        const int m = Uni(rng, 1, 2);
        for (int j = 0; j < m; ++j) {
          const std::string v = Chance(rng, 0.85) ? Pick(rng, vs) : std::string("nomatch");
          if (seen.insert(v).second) values.push_back(v);
        }
        e["values"] = values;
      }
      exprs.push_back(e);
    }
    sel["matchExpressions"] = exprs;
  }
  return sel;
}

// Canonical text of `ip` masked to `len` bits.
std::string CidrText(Ip ip, int len) {
  for (int i = len; i < Bits(ip); ++i) ip.b[i / 8] &= static_cast<uint8_t>(~(1u << (7 - i % 8)));
  return IpText(ip) + "/" + std::to_string(len);
}

// A random address within `c`: the low 8 bits random, the other host bits
// those of 10.0.0.0 / fd00:: (rarely random), so that addresses stay in the
// small ranges the pods use.
Ip RandomWithin(std::mt19937_64& rng, const Cidr& c) {
  Ip ip = c.base;
  const Ip home = ip.v6 ? V6(0) : V4(0);
  for (int i = c.len; i < Bits(ip); ++i) {
    const int byte = i / 8, bit = 7 - i % 8;
    bool one = (home.b[byte] >> bit) & 1;
    if (i >= Bits(ip) - 8 || Chance(rng, 0.03)) one = Chance(rng, 0.5);
    if (one)
      ip.b[byte] = static_cast<uint8_t>(ip.b[byte] | (1u << bit));
    else
      ip.b[byte] = static_cast<uint8_t>(ip.b[byte] & ~(1u << bit));
  }
  return ip;
}

json RandomIpBlock(std::mt19937_64& rng, const Vocab& v) {
  const bool v6 = Chance(rng, 0.35);
  Ip base;
  std::vector<Ip> candidates;
  for (const std::string& s : v.pod_ips)
    if (auto ip = ParseIp(s); ip && ip->v6 == v6) candidates.push_back(*ip);
  if (!candidates.empty() && Chance(rng, 0.7))
    base = Pick(rng, candidates);
  else
    base = v6 ? V6(Uni(rng, 0, 255)) : V4(Uni(rng, 0, 255));
  static const std::vector<int> v4lens = {0, 8, 16, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32};
  static const std::vector<int> v6lens = {0, 64, 112, 120, 120, 121, 122, 124, 126, 127, 128};
  const int len = Pick(rng, v6 ? v6lens : v4lens);
  json block = {{"cidr", CidrText(base, len)}};
  const int max = v6 ? 128 : 32;
  if (len < max && Chance(rng, 0.5)) {
    json except = json::array();
    const Cidr outer = ParseCidr(block["cidr"].get<std::string>());
    const int n = Uni(rng, 1, 3);
    std::optional<Cidr> last;
    for (int i = 0; i < n; ++i) {
      // Nested: sometimes inside the previous except.
      const Cidr within = (last && last->len < max && Chance(rng, 0.4)) ? *last : outer;
      const int lo = std::max(within.len + 1, max - 8);
      const int elen = Uni(rng, std::min(lo, max), max);
      const Ip at = RandomWithin(rng, within);
      const std::string text = CidrText(at, elen);
      except.push_back(text);
      last = ParseCidr(text);
    }
    block["except"] = except;
  }
  return block;
}

json RandomPeer(std::mt19937_64& rng, const Vocab& v) {
  const int kind = Uni(rng, 0, 3);
  if (kind == 0) return {{"ipBlock", RandomIpBlock(rng, v)}};
  json peer = json::object();
  if (kind == 1 || kind == 3)
    peer["podSelector"] = RandomSelector(rng, PodLabelPool(), v.namespaces, false);
  if (kind == 2 || kind == 3)
    peer["namespaceSelector"] = RandomSelector(rng, NsLabelPool(), v.namespaces, true);
  return peer;
}

json RandomPort(std::mt19937_64& rng) {
  json e = json::object();
  const int p = Uni(rng, 0, 9);
  if (p <= 3)
    e["protocol"] = "TCP";
  else if (p <= 6)
    e["protocol"] = "UDP";
  else if (p == 7)
    e["protocol"] = "SCTP";  // p 8, 9: absent (TCP)
  const int shape = Uni(rng, 0, 9);
  if (shape <= 1) return e;  // every port of the protocol
  if (shape <= 4) {
    e["port"] = Pick(rng, PortPool());
  } else if (shape <= 6) {
    const int lo = Chance(rng, 0.7) ? Pick(rng, PortPool()) : Uni(rng, 1, 9000);
    e["port"] = lo;
    e["endPort"] = std::min(65535, lo + (Chance(rng, 0.2) ? 0 : Uni(rng, 1, 600)));
  } else {
    e["port"] = Chance(rng, 0.85) ? Pick(rng, PortNamePool()) : std::string("no-such-port");
  }
  return e;
}

json RandomRule(std::mt19937_64& rng, const Vocab& v, const char* peers_key) {
  json r = json::object();
  const int peers = Uni(rng, 0, 5);
  if (peers == 1) r[peers_key] = json::array();
  if (peers >= 2) {
    json list = json::array();
    for (int i = Uni(rng, 1, 3); i > 0; --i) list.push_back(RandomPeer(rng, v));
    r[peers_key] = list;
  }
  const int ports = Uni(rng, 0, 5);
  if (ports == 1) r["ports"] = json::array();
  if (ports >= 2) {
    json list = json::array();
    for (int i = Uni(rng, 1, 3); i > 0; --i) list.push_back(RandomPort(rng));
    r["ports"] = list;
  }
  return r;
}

json RandomRules(std::mt19937_64& rng, const Vocab& v, const char* peers_key) {
  json list = json::array();
  for (int i = Uni(rng, 1, 3); i > 0; --i) list.push_back(RandomRule(rng, v, peers_key));
  return list;
}

}  // namespace

nlohmann::json RandomCluster(std::mt19937_64& rng) {
  static const std::vector<std::string> ns_names = {"default", "prod", "dev", "kube-system",
                                                    "team-a"};
  std::vector<std::string> names = ns_names;
  std::shuffle(names.begin(), names.end(), rng);
  names.resize(static_cast<size_t>(Uni(rng, 2, 4)));
  if (Chance(rng, 0.6) && std::find(names.begin(), names.end(), "default") == names.end())
    names[0] = "default";

  json items = json::array();
  for (const std::string& n : names) {
    json labels = RandomLabels(rng, NsLabelPool());
    if (Chance(rng, 0.8)) labels["kubernetes.io/metadata.name"] = n;  // else the evaluator adds it
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Namespace"},
                     {"metadata", {{"name", n}, {"labels", labels}}},
                     {"spec", {{"finalizers", {"kubernetes"}}}},
                     {"status", {{"phase", "Active"}}}});
  }

  const int npods = Uni(rng, 3, 8);
  for (int i = 0; i < npods; ++i) {
    // Pods 0 and 1 are ordinary (candidate targets); the rest any kind.
    const int kind =
        i < 2 ? 0 : Uni(rng, 0, 9);  // 0-5 ordinary, 6 hostNetwork, 7 pending, 8-9 done
    const int last = 10 + i;
    json status = json::object();
    json spec = json::object();
    json containers = json::array();
    std::set<std::string> used_names;
    std::set<std::pair<int, bool>> used_ports;
    for (int ci = Uni(rng, 1, 2); ci > 0; --ci) {
      json ports = json::array();
      for (int pi = Uni(rng, 0, 3); pi > 0; --pi) {
        json cp = json::object();
        const std::string name = Pick(rng, PortNamePool());
        if (used_names.insert(name).second && Chance(rng, 0.85)) cp["name"] = name;
        cp["containerPort"] = Pick(rng, PortPool());
        const bool udp = Chance(rng, 0.35);
        if (udp || Chance(rng, 0.85)) cp["protocol"] = udp ? "UDP" : "TCP";  // absent: TCP
        if (!used_ports.insert({cp["containerPort"].get<int>(), udp}).second) continue;
        ports.push_back(cp);
      }
      json ctr = {{"name", "c" + std::to_string(ci)}, {"image", "registry.example/app:1"}};
      if (!ports.empty()) ctr["ports"] = ports;
      containers.push_back(ctr);
    }
    spec["containers"] = containers;
    if (kind == 6) {
      spec["hostNetwork"] = true;
      const std::string node = IpText(V4(Uni(rng, 2, 3)));
      status = {{"phase", "Running"},
                {"hostIP", node},
                {"podIP", node},
                {"podIPs", json::array({{{"ip", node}}})}};
    } else if (kind == 7) {
      status = {{"phase", "Pending"}};
    } else {
      json ips = json::array();
      const int fam = Uni(rng, 0, 9);  // 0-5 v4, 6-8 dual-stack, 9 v6 only
      if (fam <= 8) ips.push_back({{"ip", IpText(V4(last))}});
      if (fam >= 6) ips.push_back({{"ip", IpText(V6(last))}});
      std::string phase = "Running";
      if (kind == 8) phase = "Succeeded";
      if (kind == 9) phase = "Failed";
      status = {
          {"phase", phase}, {"hostIP", IpText(V4(2))}, {"podIP", ips[0]["ip"]}, {"podIPs", ips}};
    }
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata",
                      {{"name", "pod-" + std::to_string(i)},
                       {"namespace", Pick(rng, names)},
                       {"labels", RandomLabels(rng, PodLabelPool())}}},
                     {"spec", spec},
                     {"status", status}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "List"},
          {"items", items},
          {"metadata", {{"resourceVersion", ""}}}};
}

std::vector<nlohmann::json> RandomPolicies(std::mt19937_64& rng, const nlohmann::json& cluster) {
  const Vocab v = VocabOf(cluster);
  std::vector<json> out;
  const int n = Uni(rng, 0, 4);
  for (int i = 0; i < n; ++i) {
    const std::string ns = Pick(rng, v.namespaces);
    json meta = {{"name", "np-" + std::to_string(i)}};
    if (ns != "default" || Chance(rng, 0.5)) meta["namespace"] = ns;
    json spec = json::object();
    spec["podSelector"] = RandomSelector(rng, PodLabelPool(), v.namespaces, false);
    if (Chance(rng, 0.1)) spec.erase("podSelector");
    switch (Uni(rng, 0, 4)) {
      case 0:
        break;  // absent
      case 1:
        spec["policyTypes"] = {"Ingress"};
        break;
      case 2:
        spec["policyTypes"] = {"Egress"};
        break;
      case 3:
        spec["policyTypes"] = {"Ingress", "Egress"};
        break;
      default:
        spec["policyTypes"] = {"Egress", "Ingress"};
        break;
    }
    for (const char* dir : {"ingress", "egress"}) {
      const int r = Uni(rng, 0, 4);  // 0 absent, 1 [], 2 [{}], 3-4 random rules
      if (r == 1) spec[dir] = json::array();
      if (r == 2) spec[dir] = json::array({json::object()});
      if (r >= 3) spec[dir] = RandomRules(rng, v, std::string(dir) == "ingress" ? "from" : "to");
    }
    out.push_back({{"apiVersion", "networking.k8s.io/v1"},
                   {"kind", "NetworkPolicy"},
                   {"metadata", meta},
                   {"spec", spec}});
  }
  return out;
}

namespace {

Flow RandomFlowFrom(std::mt19937_64& rng, const Vocab& v, const std::vector<Cidr>& blocks) {
  Flow f;
  f.ingress = Chance(rng, 0.5);
  const int p = Uni(rng, 0, 19);
  f.protocol = p < 9 ? "TCP" : p < 18 ? "UDP" : "ICMP";
  const int src = Uni(rng, 0, 19);
  if (src < 12 && !v.pod_ips.empty()) {
    f.peer = Pick(rng, v.pod_ips);
  } else if (src < 16 && !blocks.empty()) {
    const Cidr& c = Pick(rng, blocks);
    Ip ip = RandomWithin(rng, c);
    if (Chance(rng, 0.3)) {  // an edge: first or last address of the block
      const bool top = Chance(rng, 0.5);
      for (int i = c.len; i < Bits(ip) && i >= Bits(ip) - 8; ++i) {
        const int byte = i / 8, bit = 7 - i % 8;
        ip.b[byte] = top ? static_cast<uint8_t>(ip.b[byte] | (1u << bit))
                         : static_cast<uint8_t>(ip.b[byte] & ~(1u << bit));
      }
    }
    f.peer = IpText(ip);
  } else if (src < 19) {
    f.peer = IpText(Chance(rng, 0.6) ? V4(Uni(rng, 0, 255)) : V6(Uni(rng, 0, 255)));
  } else {
    static const std::vector<std::string> far = {"172.17.0.5",  "172.17.1.9", "192.168.1.1",
                                                 "2001:db8::1", "8.8.8.8",    "fd00::1:1"};
    f.peer = Pick(rng, far);
  }
  if (f.protocol == "ICMP") {
    f.port = 0;
  } else if (Chance(rng, 0.75)) {
    f.port = static_cast<uint16_t>(Pick(rng, PortPool()));
  } else {
    f.port = static_cast<uint16_t>(Uni(rng, 1, 9000));
  }
  return f;
}

}  // namespace

Flow RandomFlow(std::mt19937_64& rng, const nlohmann::json& cluster) {
  // The generated ipBlocks live in these ranges.
  const std::vector<Cidr> ranges = {ParseCidr("10.0.0.0/24"), ParseCidr("fd00::/120")};
  return RandomFlowFrom(rng, VocabOf(cluster), ranges);
}

Flow RandomFlow(std::mt19937_64& rng, const nlohmann::json& cluster,
                const std::vector<nlohmann::json>& policies) {
  std::vector<Cidr> blocks = {ParseCidr("10.0.0.0/24"), ParseCidr("fd00::/120")};
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_object()) {
      if (j.contains("ipBlock") && j["ipBlock"].is_object()) {
        const json& b = j["ipBlock"];
        if (b.contains("cidr")) blocks.push_back(ParseCidr(Str(b["cidr"])));
        if (b.contains("except") && b["except"].is_array())
          for (const json& e : b["except"]) blocks.push_back(ParseCidr(Str(e)));
      }
      for (const auto& [k, x] : j.items()) walk(x);
    } else if (j.is_array()) {
      for (const json& x : j) walk(x);
    }
  };
  for (const json& p : policies) walk(p);
  return RandomFlowFrom(rng, VocabOf(cluster), blocks);
}

}  // namespace ward::test::k8s
