#include "importers/networkpolicy/networkpolicy.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "importers/ward_writer.h"
#include "importers/yaml_documents.h"
#include "language/literals.h"

namespace ward::importers {
namespace {

using Labels = std::map<std::string, std::string>;

constexpr size_t kMaxBytes = 16 << 20;
// The rules written, at most: aliases can multiply a small file's rules by
// the cluster's pods.
constexpr size_t kMaxLines = 100000;

size_t Line(const YAML::Mark& m) { return m.line < 0 ? 0 : static_cast<size_t>(m.line) + 1; }
size_t Column(const YAML::Mark& m) { return m.column < 0 ? 0 : static_cast<size_t>(m.column) + 1; }

// The member `key` of a mapping, or an undefined node. (yaml-cpp's const
// operator[] returns a node that throws on every question but IsDefined.)
YAML::Node Child(const YAML::Node& map, const char* key) {
  if (map.IsMap()) {
    for (const auto& kv : map) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Where a node is: the file, a JSON pointer into the object, and the line.
struct Place {
  std::string file;
  std::string pointer;
  size_t line = 0;
  size_t column = 0;
};

Place At(const Place& parent, const std::string& token, const YAML::Node& node) {
  Place p{parent.file, parent.pointer + "/" + JsonPointerToken(token), Line(node.Mark()),
          Column(node.Mark())};
  if (p.line == 0) {
    p.line = parent.line;
    p.column = parent.column;
  }
  return p;
}

std::string PlaceText(const Place& p) {
  std::string s = p.file;
  if (p.line > 0) s += ":" + std::to_string(p.line);
  return s;
}

// A selector's requirement (metav1.LabelSelectorRequirement).
struct Requirement {
  enum Op { kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = kIn;
  std::vector<std::string> values;
};

// metav1.LabelSelector: matchLabels and matchExpressions all hold. An empty
// one selects everything.
struct Selector {
  Labels match_labels;
  std::vector<Requirement> expressions;

  bool Matches(const Labels& labels) const {
    for (const auto& [k, v] : match_labels) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) return false;
    }
    for (const Requirement& r : expressions) {
      auto it = labels.find(r.key);
      const bool has = it != labels.end();
      const bool in =
          has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
      switch (r.op) {
        case Requirement::kIn:
          if (!in) return false;
          break;
        case Requirement::kNotIn:
          if (in) return false;
          break;
        case Requirement::kExists:
          if (!has) return false;
          break;
        case Requirement::kDoesNotExist:
          if (has) return false;
          break;
      }
    }
    return true;
  }
  bool Empty() const { return match_labels.empty() && expressions.empty(); }
  std::string Text() const {
    if (Empty()) return "{}";
    std::string out;
    for (const auto& [k, v] : match_labels) out += (out.empty() ? "" : ", ") + k + "=" + v;
    for (const Requirement& r : expressions) {
      out += out.empty() ? "" : ", ";
      static const char* const kOps[] = {" in ", " notin ", "", ""};
      if (r.op == Requirement::kDoesNotExist) out += "!";
      out += r.key;
      if (r.op == Requirement::kIn || r.op == Requirement::kNotIn) {
        out += kOps[r.op];
        out += "(";
        for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
        out += ")";
      }
    }
    return out;
  }
};

struct PortEntry {
  enum Kind { kAll, kNumber, kNamed };
  std::string protocol = "TCP";
  Kind kind = kAll;
  uint16_t lo = 0, hi = 0;
  std::string name;
  Place place;
};

struct Peer {
  bool ip_block = false;
  IpPrefix cidr;
  std::vector<IpPrefix> except;
  std::optional<Selector> pods, namespaces;
  Place place;
};

struct Rule {
  bool all_peers = true;  // no `from`/`to`, or an empty one
  std::vector<Peer> peers;
  std::vector<PortEntry> ports;  // empty: every port of TCP and UDP
  Place place;
};

struct Policy {
  std::string name, ns;
  Selector pod_selector;
  bool ingress = false, egress = false;  // policyTypes, defaulted
  std::vector<Rule> ingress_rules, egress_rules;
  Place place;
};

struct ContainerPort {
  std::string name;
  uint16_t port = 0;
  std::string protocol;
};

struct Pod {
  std::string ns, name;
  Labels labels;
  std::vector<IpPrefix> ips;
  std::vector<IpPrefix> host_ips;  // the node it runs on (status.hostIP, hostIPs)
  bool host_network = false;
  std::string phase;
  std::vector<ContainerPort> ports;
  // A peer a selector can name: the pod network's own address, running.
  bool Addressable() const {
    return !host_network && !ips.empty() && phase != "Succeeded" && phase != "Failed";
  }
  std::string Id() const { return ns + "/" + name; }
};

// Does `outer` hold every address of `inner`?
bool Contains(const IpPrefix& outer, const IpPrefix& inner) {
  if (outer.v6 != inner.v6 || outer.length > inner.length) return false;
  for (int bit = 0; bit < outer.length; ++bit) {
    const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((outer.bytes[bit / 8] & mask) != (inner.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

// `block` minus every prefix of `gaps`, as the fewest disjoint prefixes
// found by halving.
void Subtract(const IpPrefix& block, const std::vector<IpPrefix>& gaps,
              std::vector<IpPrefix>* out) {
  bool overlaps = false;
  for (const IpPrefix& g : gaps) {
    if (Contains(g, block)) return;
    if (Contains(block, g)) overlaps = true;
  }
  if (!overlaps) {
    out->push_back(block);
    return;
  }
  for (int half = 0; half < 2; ++half) {
    IpPrefix h = block;
    h.length = static_cast<uint8_t>(block.length + 1);
    if (half) h.bytes[block.length / 8] |= static_cast<uint8_t>(0x80 >> (block.length % 8));
    Subtract(h, gaps, out);
  }
}

bool InBlock(const Peer& peer, const IpPrefix& ip) {
  if (!Contains(peer.cidr, ip)) return false;
  for (const IpPrefix& e : peer.except) {
    if (Contains(e, ip)) return false;
  }
  return true;
}

// A DNS-1123-ish label part, as the API server validates label keys and
// values (k8s.io/apimachinery validation.IsQualifiedName, IsValidLabelValue).
bool LabelName(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}
bool LabelKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return LabelName(key, 63);
  const std::string prefix = key.substr(0, slash);
  if (prefix.empty() || prefix.size() > 253) return false;
  for (char c : prefix) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.'))
      return false;
  }
  return LabelName(key.substr(slash + 1), 63);
}
bool LabelValue(const std::string& v) { return v.empty() || LabelName(v, 63); }

// IANA_SVC_NAME (validation.IsValidPortName): what a named port may be.
bool PortName(const std::string& s) {
  if (s.empty() || s.size() > 15) return false;
  bool letter = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= 'a' && c <= 'z') {
      letter = true;
    } else if (!(c >= '0' && c <= '9') && c != '-') {
      return false;
    }
    if (c == '-' && (i == 0 || i + 1 == s.size() || s[i - 1] == '-')) return false;
  }
  return letter;
}

class Importer {
 public:
  Importer(const ImportOptions& options, std::vector<ImportDiagnostic>* diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  bool Run(std::string* out) {
    if (options_.files.empty()) return Error({}, "no NetworkPolicy file given");
    ReadCluster();
    for (const ImportInput& input : options_.files) ReadPolicies(input);
    // One name per namespace: applying both files, the cluster would keep
    // the last, while adding both up could allow more.
    std::map<std::pair<std::string, std::string>, const Policy*> names;
    for (const Policy& p : policies_) {
      auto [it, fresh] = names.emplace(std::make_pair(p.ns, p.name), &p);
      if (!fresh) {
        Error(p.place, "NetworkPolicy " + p.ns + "/" + p.name + " is also at " +
                           PlaceText(it->second->place) +
                           ": the cluster holds one object per name, so which one applies "
                           "depends on the order they were applied in");
      }
    }
    if (errors_ > 0) return false;
    const size_t slash = options_.pod.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == options_.pod.size()) {
      return Error({}, "--pod takes NAMESPACE/NAME, not '" + options_.pod + "'");
    }
    const std::string ns = options_.pod.substr(0, slash), name = options_.pod.substr(slash + 1);
    for (const Pod& p : pods_) {
      if (p.ns == ns && p.name == name) pod_ = &p;
    }
    if (!pod_) {
      return Error({options_.cluster.path, "", 0, 0},
                   "the snapshot has no pod " + options_.pod +
                       " (`kubectl get namespaces,pods -A -o json` lists every pod)");
    }
    if (pod_->host_network) {
      return Error({options_.cluster.path, "", 0, 0},
                   "pod " + options_.pod +
                       " uses the host's network (spec.hostNetwork): NetworkPolicy does not "
                       "govern its traffic (the Kubernetes documentation leaves it to the network "
                       "plugin), so it has no effective policy to import");
    }
    Decide(true);
    Decide(false);
    if (errors_ > 0) return false;
    *out = Write();
    return true;
  }

 private:
  bool Error(const Place& p, const std::string& message) {
    diagnostics_->push_back({Severity::kError, p.pointer, message, p.line, p.column, p.file});
    ++errors_;
    return false;
  }
  void Warn(const Place& p, const std::string& message) {
    diagnostics_->push_back({Severity::kWarning, p.pointer, message, p.line, p.column, p.file});
    std::string at = PlaceText(p);
    if (!p.pointer.empty()) at += (at.empty() ? "#" : " #") + p.pointer;
    warnings_.push_back((at.empty() ? "" : at + ": ") + message);
  }

  // ---- YAML as the API server reads it --------------------------------

  // The members of a map, each key once; `known` (when given) lists the
  // fields the object's type has: kubectl refuses others
  // (--validate=strict, its default), and one mistyped (`form:` for
  // `from:`) would otherwise widen the rule to every peer.
  bool Members(const YAML::Node& n, const Place& at, const std::set<std::string>* known,
               std::vector<std::pair<std::string, YAML::Node>>* out) {
    if (!n.IsMap()) return Error(at, "expected a mapping");
    std::set<std::string> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) {
        Error(at, "a key must be a string");
        continue;
      }
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) {
        Error(At(at, key, kv.first), "duplicate key '" + key + "' (the API server refuses it)");
        continue;
      }
      if (known && !known->count(key)) {
        Error(At(at, key, kv.first),
              "unknown field '" + key + "' (kubectl refuses unknown fields)");
        continue;
      }
      if (kv.second.IsNull()) continue;  // null: as if absent (Go's JSON)
      out->push_back({key, kv.second});
    }
    return true;
  }

  // A plain scalar that YAML 1.1 (sigs.k8s.io/yaml, go-yaml v2's resolver)
  // reads as a number, a boolean or null, not as a string: a label value
  // `yes` or `1.0` is refused by the API server.
  static bool Yaml11NonString(const YAML::Node& n) {
    if (n.Tag() != "?") return false;
    static const std::regex kNonString(
        "|~|null|Null|NULL"
        "|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
        "|[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[0-9][0-9_]*(:[0-5]?[0-9])*)"
        "|[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?"
        "|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
    return std::regex_match(n.Scalar(), kNonString);
  }

  bool String(const YAML::Node& n, const Place& at, std::string* out) {
    if (!n.IsScalar()) return Error(at, "expected a string");
    if (Yaml11NonString(n)) {
      return Error(at, "'" + n.Scalar() +
                           "' is not a string to the API server (YAML 1.1 reads it as a number, "
                           "boolean or null): quote it");
    }
    *out = n.Scalar();
    return true;
  }

  // A decimal integer, as JSON writes it (kubectl's -o json) and as YAML
  // writes it plainly; YAML 1.1's other forms (0x50, 0120, 1_0, 1:20) are
  // refused rather than guessed.
  bool Integer(const YAML::Node& n, const Place& at, int64_t lo, int64_t hi, int64_t* out) {
    if (!n.IsScalar() || n.Tag() != "?") return Error(at, "expected a number");
    const std::string& s = n.Scalar();
    const size_t start = (!s.empty() && s[0] == '-') ? 1 : 0;
    if (s.size() == start || s.size() - start > 12 ||
        !std::all_of(s.begin() + static_cast<std::ptrdiff_t>(start), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; }) ||
        (s.size() - start > 1 && s[start] == '0')) {
      return Error(at, "'" + s + "' is not a decimal number (write it as kubectl prints it)");
    }
    const int64_t v = std::stoll(s);
    if (v < lo || v > hi) {
      return Error(at, s + " is outside " + std::to_string(lo) + "-" + std::to_string(hi));
    }
    *out = v;
    return true;
  }

  bool Bool(const YAML::Node& n, const Place& at, bool* out) {
    if (n.IsScalar() && n.Tag() == "?" && (n.Scalar() == "true" || n.Scalar() == "false")) {
      *out = n.Scalar() == "true";
      return true;
    }
    return Error(at, "expected true or false");
  }

  bool ReadLabels(const YAML::Node& n, const Place& at, Labels* out, bool validate) {
    std::vector<std::pair<std::string, YAML::Node>> members;
    if (!Members(n, at, nullptr, &members)) return false;
    for (const auto& [k, v] : members) {
      const Place p = At(at, k, v);
      std::string value;
      if (!String(v, p, &value)) continue;
      if (validate && !LabelKey(k)) {
        Error(p, "'" + k + "' is not a valid label key");
        continue;
      }
      if (validate && !LabelValue(value)) {
        Error(p, "'" + value + "' is not a valid label value");
        continue;
      }
      (*out)[k] = value;
    }
    return true;
  }

  std::optional<Selector> ReadSelector(const YAML::Node& n, const Place& at) {
    static const std::set<std::string> kKeys = {"matchLabels", "matchExpressions"};
    static const std::set<std::string> kExprKeys = {"key", "operator", "values"};
    std::vector<std::pair<std::string, YAML::Node>> members;
    const size_t before = errors_;
    Selector s;
    if (!Members(n, at, &kKeys, &members)) return std::nullopt;
    for (const auto& [k, v] : members) {
      const Place p = At(at, k, v);
      if (k == "matchLabels") {
        ReadLabels(v, p, &s.match_labels, true);
        continue;
      }
      if (!v.IsSequence()) {
        Error(p, "expected a list");
        continue;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        const Place ep = At(p, std::to_string(i), v[i]);
        std::vector<std::pair<std::string, YAML::Node>> fields;
        if (!Members(v[i], ep, &kExprKeys, &fields)) continue;
        Requirement r;
        std::string op;
        bool has_values = false;
        for (const auto& [fk, fv] : fields) {
          const Place fp = At(ep, fk, fv);
          if (fk == "key") {
            if (String(fv, fp, &r.key) && !LabelKey(r.key))
              Error(fp, "'" + r.key + "' is not a valid label key");
          } else if (fk == "operator") {
            String(fv, fp, &op);
          } else if (!fv.IsSequence()) {
            Error(fp, "expected a list");
          } else {
            has_values = fv.size() > 0;
            for (size_t j = 0; j < fv.size(); ++j) {
              std::string value;
              const Place vp = At(fp, std::to_string(j), fv[j]);
              if (String(fv[j], vp, &value)) {
                if (!LabelValue(value)) Error(vp, "'" + value + "' is not a valid label value");
                r.values.push_back(value);
              }
            }
          }
        }
        if (r.key.empty()) Error(ep, "a requirement needs a key");
        if (op == "In" || op == "NotIn") {
          r.op = op == "In" ? Requirement::kIn : Requirement::kNotIn;
          if (!has_values) Error(ep, "operator " + op + " needs values");
        } else if (op == "Exists" || op == "DoesNotExist") {
          r.op = op == "Exists" ? Requirement::kExists : Requirement::kDoesNotExist;
          if (has_values) Error(ep, "operator " + op + " takes no values");
        } else {
          Error(ep, "operator '" + op + "': In, NotIn, Exists or DoesNotExist");
        }
        s.expressions.push_back(r);
      }
    }
    if (errors_ > before) return std::nullopt;
    return s;
  }

  std::optional<IpPrefix> Cidr(const YAML::Node& n, const Place& at) {
    std::string text;
    if (!String(n, at, &text)) return std::nullopt;
    std::string error;
    if (text.find('/') == std::string::npos) {
      Error(at, "'" + text + "' is not a CIDR (ADDRESS/LENGTH)");
      return std::nullopt;
    }
    std::optional<IpPrefix> p = ParseIpOrCidr(text, &error);
    if (!p) {
      Error(at, "'" + text + "' is not a CIDR: " + error);
      return std::nullopt;
    }
    IpPrefix canonical;
    // Go's net.ParseCIDR keeps the network: 10.0.0.1/24 is 10.0.0.0/24.
    HostBitsSet(*p, &canonical);
    return canonical;
  }

  std::optional<Peer> ReadPeer(const YAML::Node& n, const Place& at) {
    static const std::set<std::string> kKeys = {"podSelector", "namespaceSelector", "ipBlock"};
    static const std::set<std::string> kBlockKeys = {"cidr", "except"};
    std::vector<std::pair<std::string, YAML::Node>> members;
    const size_t before = errors_;
    if (!Members(n, at, &kKeys, &members)) return std::nullopt;
    Peer peer;
    peer.place = at;
    bool block = false;
    for (const auto& [k, v] : members) {
      const Place p = At(at, k, v);
      if (k == "podSelector") {
        peer.pods = ReadSelector(v, p);
      } else if (k == "namespaceSelector") {
        peer.namespaces = ReadSelector(v, p);
      } else {
        block = true;
        std::vector<std::pair<std::string, YAML::Node>> fields;
        if (!Members(v, p, &kBlockKeys, &fields)) continue;
        bool has_cidr = false;
        for (const auto& [fk, fv] : fields) {
          const Place fp = At(p, fk, fv);
          if (fk == "cidr") {
            if (auto c = Cidr(fv, fp)) {
              peer.cidr = *c;
              has_cidr = true;
            }
          } else if (!fv.IsSequence()) {
            Error(fp, "expected a list");
          } else {
            for (size_t j = 0; j < fv.size(); ++j) {
              if (auto e = Cidr(fv[j], At(fp, std::to_string(j), fv[j]))) peer.except.push_back(*e);
            }
          }
        }
        if (!has_cidr) Error(p, "ipBlock needs a cidr");
      }
    }
    if (block && (peer.pods || peer.namespaces)) {
      Error(at, "ipBlock cannot be combined with podSelector or namespaceSelector in one peer");
    }
    if (!block && !peer.pods && !peer.namespaces && errors_ == before) {
      Error(at, "a peer must name podSelector, namespaceSelector or ipBlock");
    }
    peer.ip_block = block;
    if (block) {
      for (size_t j = 0; j < peer.except.size(); ++j) {
        const IpPrefix& e = peer.except[j];
        if (!Contains(peer.cidr, e) || e.length == peer.cidr.length) {
          Error(at, "except " + FormatPrefix(e) + " is not strictly inside cidr " +
                        FormatPrefix(peer.cidr) + " (the API server refuses it)");
        }
      }
    }
    if (errors_ > before) return std::nullopt;
    return peer;
  }

  std::optional<PortEntry> ReadPort(const YAML::Node& n, const Place& at) {
    static const std::set<std::string> kKeys = {"protocol", "port", "endPort"};
    std::vector<std::pair<std::string, YAML::Node>> members;
    const size_t before = errors_;
    if (!Members(n, at, &kKeys, &members)) return std::nullopt;
    PortEntry e;
    e.place = at;
    std::optional<int64_t> end;
    for (const auto& [k, v] : members) {
      const Place p = At(at, k, v);
      if (k == "protocol") {
        if (String(v, p, &e.protocol) && e.protocol != "TCP" && e.protocol != "UDP" &&
            e.protocol != "SCTP") {
          Error(p, "protocol '" + e.protocol + "': TCP, UDP or SCTP");
        }
      } else if (k == "port") {
        if (v.IsScalar() && v.Tag() == "?" && !v.Scalar().empty() &&
            std::isdigit(static_cast<unsigned char>(v.Scalar()[0]))) {
          int64_t port = 0;
          if (Integer(v, p, 1, 65535, &port)) {
            e.kind = PortEntry::kNumber;
            e.lo = e.hi = static_cast<uint16_t>(port);
          }
        } else if (v.IsScalar()) {
          e.name = v.Scalar();
          e.kind = PortEntry::kNamed;
          if (!PortName(e.name)) {
            Error(p, "'" + e.name +
                         "' is neither a port number nor a port name (at most 15 lower-case "
                         "letters, digits and '-', with a letter)");
          }
        } else {
          Error(p, "expected a port number or name");
        }
      } else {
        int64_t value = 0;
        if (Integer(v, p, 1, 65535, &value)) end = value;
      }
    }
    if (end) {
      if (e.kind != PortEntry::kNumber) {
        Error(at,
              "endPort needs a numeric port (the API server refuses it with a named port "
              "or none)");
      } else if (*end < e.lo) {
        Error(at, "endPort " + std::to_string(*end) + " is below port " + std::to_string(e.lo));
      } else {
        e.hi = static_cast<uint16_t>(*end);
      }
    }
    if (errors_ > before) return std::nullopt;
    return e;
  }

  void ReadRules(const YAML::Node& n, const Place& at, bool ingress, std::vector<Rule>* out) {
    static const std::set<std::string> kIngress = {"from", "ports"};
    static const std::set<std::string> kEgress = {"to", "ports"};
    if (!n.IsSequence()) {
      Error(at, "expected a list of rules");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      const Place rp = At(at, std::to_string(i), n[i]);
      Rule rule;
      rule.place = rp;
      std::vector<std::pair<std::string, YAML::Node>> members;
      if (!n[i].IsNull() && !Members(n[i], rp, ingress ? &kIngress : &kEgress, &members)) continue;
      for (const auto& [k, v] : members) {
        const Place p = At(rp, k, v);
        if (!v.IsSequence()) {
          Error(p, "expected a list");
          continue;
        }
        for (size_t j = 0; j < v.size(); ++j) {
          const Place ep = At(p, std::to_string(j), v[j]);
          if (k == "ports") {
            if (auto e = ReadPort(v[j], ep)) rule.ports.push_back(*e);
          } else if (auto peer = ReadPeer(v[j], ep)) {
            rule.peers.push_back(*peer);
          }
        }
        if (k != "ports" && v.size() > 0) rule.all_peers = false;
      }
      out->push_back(std::move(rule));
    }
  }

  void ReadPolicy(const YAML::Node& n, const Place& at) {
    static const std::set<std::string> kTop = {"apiVersion", "kind", "metadata", "spec", "status"};
    static const std::set<std::string> kSpec = {"podSelector", "ingress", "egress", "policyTypes"};
    std::vector<std::pair<std::string, YAML::Node>> members;
    const size_t before = errors_;
    if (!Members(n, at, &kTop, &members)) return;
    Policy policy;
    policy.place = at;
    policy.ns = "default";
    bool has_types = false, has_egress = false, has_name = false;
    for (const auto& [k, v] : members) {
      const Place p = At(at, k, v);
      if (k == "apiVersion") {
        std::string api;
        if (String(v, p, &api) && api != "networking.k8s.io/v1") {
          Error(p, "apiVersion '" + api + "': only networking.k8s.io/v1 NetworkPolicy is read");
        }
      } else if (k == "metadata") {
        std::vector<std::pair<std::string, YAML::Node>> meta;
        if (!Members(v, p, nullptr, &meta)) continue;
        for (const auto& [mk, mv] : meta) {
          const Place mp = At(p, mk, mv);
          if (mk == "name") {
            has_name = String(mv, mp, &policy.name);
          } else if (mk == "namespace") {
            String(mv, mp, &policy.ns);
          }
        }
      } else if (k == "spec") {
        std::vector<std::pair<std::string, YAML::Node>> spec;
        if (!Members(v, p, &kSpec, &spec)) continue;
        for (const auto& [sk, sv] : spec) {
          const Place sp = At(p, sk, sv);
          if (sk == "podSelector") {
            if (auto s = ReadSelector(sv, sp)) policy.pod_selector = *s;
          } else if (sk == "ingress") {
            ReadRules(sv, sp, true, &policy.ingress_rules);
          } else if (sk == "egress") {
            // Defaulting (SetDefaults_NetworkPolicy): Egress when the list
            // has a rule; `egress: []` alone does not make it one.
            has_egress = sv.IsSequence() && sv.size() > 0;
            ReadRules(sv, sp, false, &policy.egress_rules);
          } else {
            if (!sv.IsSequence()) {
              Error(sp, "expected a list");
              continue;
            }
            for (size_t i = 0; i < sv.size(); ++i) {
              std::string type;
              const Place tp = At(sp, std::to_string(i), sv[i]);
              if (!String(sv[i], tp, &type)) continue;
              if (type == "Ingress") {
                policy.ingress = true;
              } else if (type == "Egress") {
                policy.egress = true;
              } else {
                Error(tp, "policy type '" + type + "': Ingress or Egress");
              }
              has_types = true;
            }
          }
        }
      }
    }
    if (!has_name) Error(at, "a NetworkPolicy needs metadata.name");
    if (!has_types) {
      policy.ingress = true;
      policy.egress = has_egress;
    }
    if (errors_ > before) return;
    policies_.push_back(std::move(policy));
  }

  // One document, or the items of a List.
  void ReadObject(const YAML::Node& n, const Place& at, int depth) {
    if (n.IsNull()) return;
    if (!n.IsMap()) {
      Error(at, "expected a Kubernetes object (a mapping)");
      return;
    }
    std::string kind, api;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) continue;
      if (kv.first.Scalar() == "kind") kind = kv.second.Scalar();
      if (kv.first.Scalar() == "apiVersion") api = kv.second.Scalar();
    }
    if ((kind == "List" || kind == "NetworkPolicyList") && depth == 0) {
      const YAML::Node items = Child(n, "items");
      if (!items.IsDefined() || items.IsNull()) return;
      const Place ip = At(at, "items", items);
      if (!items.IsSequence()) {
        Error(ip, "expected a list of objects");
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        ReadObject(items[i], At(ip, std::to_string(i), items[i]), depth + 1);
      }
      return;
    }
    if (kind == "NetworkPolicy" && api.rfind("networking.k8s.io/", 0) == 0) {
      ReadPolicy(n, at);
      return;
    }
    static const std::set<std::string> kDecides = {
        "NetworkPolicy",        "GlobalNetworkPolicy",
        "CiliumNetworkPolicy",  "CiliumClusterwideNetworkPolicy",
        "AdminNetworkPolicy",   "BaselineAdminNetworkPolicy",
        "ClusterNetworkPolicy", "AuthorizationPolicy"};
    if (kDecides.count(kind)) {
      Error(at, kind + " (" + api +
                    ") also decides traffic and is not a Kubernetes NetworkPolicy: importing "
                    "the rest without it would not be the cluster's answer; give only "
                    "networking.k8s.io/v1 NetworkPolicy objects");
      return;
    }
    Warn(at, "a " + (kind.empty() ? std::string("object without kind") : kind) +
                 " is not a NetworkPolicy: ignored");
  }

  // Every document of `input` (at most `max_bytes`), each passed to
  // `read` with its place.
  template <typename Read>
  void ReadStream(const ImportInput& input, size_t max_bytes, const char* what, Read read) {
    if (input.text.size() > max_bytes) {
      Error({input.path, "", 0, 0}, "larger than " + std::to_string(max_bytes >> 20) + " MiB");
      return;
    }
    std::vector<YAML::Node> docs;
    try {
      docs = LoadYamlDocuments(input.text);
    } catch (const YAML::Exception& e) {
      Error({input.path, "", Line(e.mark), Column(e.mark)},
            std::string("not valid ") + what + ": " + e.msg);
      return;
    }
    for (const YAML::Node& doc : docs) {
      read(doc, Place{input.path, "", Line(doc.Mark()), Column(doc.Mark())});
    }
  }

  void ReadPolicies(const ImportInput& input) {
    ReadStream(input, kMaxBytes, "YAML",
               [&](const YAML::Node& doc, const Place& at) { ReadObject(doc, at, 0); });
  }

  // ---- the cluster snapshot -------------------------------------------

  // status.ONE (an address) and status.MANY (a list of {ip}), each address
  // once, in that order.
  void ReadAddresses(const YAML::Node& status, const Place& at, const char* one, const char* many,
                     std::vector<IpPrefix>* out) {
    std::vector<std::pair<std::string, Place>> texts;
    const YAML::Node single = Child(status, one);
    if (single.IsDefined() && !single.IsNull()) {
      std::string ip;
      const Place p = At(at, one, single);
      if (String(single, p, &ip)) texts.push_back({ip, p});
    }
    const YAML::Node list = Child(status, many);
    if (list.IsSequence()) {
      const Place lp = At(at, many, list);
      for (size_t i = 0; i < list.size(); ++i) {
        const YAML::Node ip = list[i].IsMap() ? Child(list[i], "ip") : YAML::Node();
        std::string text;
        const Place p = At(At(lp, std::to_string(i), list[i]), "ip", ip);
        if (ip.IsDefined() && String(ip, p, &text)) texts.push_back({text, p});
      }
    }
    for (const auto& [text, p] : texts) {
      std::string error;
      std::optional<IpPrefix> addr =
          text.find('/') == std::string::npos ? ParseIpOrCidr(text, &error) : std::nullopt;
      if (!addr) {
        Error(p, "'" + text + "' is not an IP address");
        continue;
      }
      if (std::find(out->begin(), out->end(), *addr) == out->end()) out->push_back(*addr);
    }
  }

  void ReadPod(const YAML::Node& n, const Place& at) {
    Pod pod;
    const YAML::Node meta = Child(n, "metadata"), spec = Child(n, "spec"),
                     status = Child(n, "status");
    const Place mp = At(at, "metadata", meta);
    if (!meta.IsMap() ||
        !String(Child(meta, "name"), At(mp, "name", Child(meta, "name")), &pod.name)) {
      Error(at, "a Pod without metadata.name");
      return;
    }
    if (!Child(meta, "namespace").IsDefined()) {
      Error(mp, "pod " + pod.name + " has no metadata.namespace (list pods with -A)");
      return;
    }
    String(Child(meta, "namespace"), At(mp, "namespace", Child(meta, "namespace")), &pod.ns);
    if (Child(meta, "labels").IsDefined() && !Child(meta, "labels").IsNull())
      ReadLabels(Child(meta, "labels"), At(mp, "labels", Child(meta, "labels")), &pod.labels,
                 false);
    if (spec.IsMap()) {
      const Place sp = At(at, "spec", spec);
      if (Child(spec, "hostNetwork").IsDefined() && !Child(spec, "hostNetwork").IsNull())
        Bool(Child(spec, "hostNetwork"), At(sp, "hostNetwork", Child(spec, "hostNetwork")),
             &pod.host_network);
      const YAML::Node containers = Child(spec, "containers");
      if (containers.IsSequence()) {
        const Place cp = At(sp, "containers", containers);
        for (size_t i = 0; i < containers.size(); ++i) {
          const YAML::Node ports =
              containers[i].IsMap() ? Child(containers[i], "ports") : YAML::Node();
          if (!ports.IsSequence()) continue;
          const Place pp = At(At(cp, std::to_string(i), containers[i]), "ports", ports);
          for (size_t j = 0; j < ports.size(); ++j) {
            const Place ep = At(pp, std::to_string(j), ports[j]);
            if (!ports[j].IsMap()) {
              Error(ep, "expected a container port");
              continue;
            }
            ContainerPort cport;
            cport.protocol = "TCP";
            int64_t number = 0;
            const YAML::Node cnum = Child(ports[j], "containerPort");
            if (!Integer(cnum, At(ep, "containerPort", cnum), 1, 65535, &number)) continue;
            cport.port = static_cast<uint16_t>(number);
            if (Child(ports[j], "name").IsDefined() && !Child(ports[j], "name").IsNull())
              String(Child(ports[j], "name"), At(ep, "name", Child(ports[j], "name")), &cport.name);
            if (Child(ports[j], "protocol").IsDefined() && !Child(ports[j], "protocol").IsNull())
              String(Child(ports[j], "protocol"), At(ep, "protocol", Child(ports[j], "protocol")),
                     &cport.protocol);
            pod.ports.push_back(cport);
          }
        }
      }
    }
    if (status.IsMap()) {
      const Place stp = At(at, "status", status);
      if (Child(status, "phase").IsDefined() && !Child(status, "phase").IsNull())
        String(Child(status, "phase"), At(stp, "phase", Child(status, "phase")), &pod.phase);
      ReadAddresses(status, stp, "podIP", "podIPs", &pod.ips);
      ReadAddresses(status, stp, "hostIP", "hostIPs", &pod.host_ips);
    }
    pods_.push_back(std::move(pod));
  }

  void ReadClusterObject(const YAML::Node& n, const Place& at, int depth) {
    if (n.IsNull()) return;
    if (!n.IsMap()) {
      Error(at, "expected a Kubernetes object (a mapping)");
      return;
    }
    const YAML::Node kind_node = Child(n, "kind");
    const std::string kind = kind_node.IsScalar() ? kind_node.Scalar() : "";
    if (kind == "List" && depth == 0) {
      const YAML::Node items = Child(n, "items");
      if (!items.IsDefined() || items.IsNull()) return;
      const Place ip = At(at, "items", items);
      if (!items.IsSequence()) {
        Error(ip, "expected a list of objects");
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        ReadClusterObject(items[i], At(ip, std::to_string(i), items[i]), depth + 1);
      }
      return;
    }
    if (kind == "Pod") {
      ReadPod(n, at);
      return;
    }
    if (kind == "Namespace") {
      const YAML::Node meta = Child(n, "metadata");
      const Place mp = At(at, "metadata", meta);
      std::string name;
      if (!meta.IsMap() ||
          !String(Child(meta, "name"), At(mp, "name", Child(meta, "name")), &name)) {
        Error(at, "a Namespace without metadata.name");
        return;
      }
      Labels labels;
      if (Child(meta, "labels").IsDefined() && !Child(meta, "labels").IsNull())
        ReadLabels(Child(meta, "labels"), At(mp, "labels", Child(meta, "labels")), &labels, false);
      // The API server sets it on every namespace (since 1.21).
      labels.emplace("kubernetes.io/metadata.name", name);
      if (!namespaces_.emplace(name, labels).second) Error(at, "namespace " + name + " twice");
      return;
    }
    Warn(at, "a " + (kind.empty() ? std::string("object without kind") : kind) +
                 " in the snapshot: only Namespace and Pod objects are read; ignored");
  }

  void ReadCluster() {
    const ImportInput& c = options_.cluster;
    ReadStream(c, 4 * kMaxBytes, "JSON or YAML",
               [&](const YAML::Node& doc, const Place& at) { ReadClusterObject(doc, at, 0); });
    std::set<std::pair<std::string, std::string>> seen;
    for (const Pod& p : pods_) {
      if (!seen.insert({p.ns, p.name}).second) {
        Error({c.path, "", 0, 0}, "pod " + p.Id() + " twice in the snapshot");
      }
      if (!namespaces_.count(p.ns)) {
        Error({c.path, "", 0, 0},
              "pod " + p.Id() + " is in namespace '" + p.ns +
                  "', which the snapshot does not list: namespaceSelectors need every "
                  "namespace's labels (`kubectl get namespaces,pods -A -o json`)");
        namespaces_.emplace(p.ns, Labels{{"kubernetes.io/metadata.name", p.ns}});
      }
    }
  }

  // ---- deciding --------------------------------------------------------

  // One address (or every address) a rule lets the pod talk with, and the
  // pod that owns it, for named ports.
  struct Target {
    bool any = false;
    IpPrefix addr;
    std::string comment;
    const Pod* owner = nullptr;
    bool named_only = false;  // only the rule's named ports apply (egress)
  };

  struct Written {
    std::vector<std::string> comments;  // above the lines
    std::vector<std::string> lines;
  };

  std::vector<const Pod*> SelectedPods(const Peer& peer, const std::string& policy_ns) const {
    std::vector<const Pod*> out;
    for (const Pod& p : pods_) {
      if (!p.Addressable()) continue;
      if (peer.namespaces) {
        if (!peer.namespaces->Matches(namespaces_.at(p.ns))) continue;
      } else if (p.ns != policy_ns) {
        continue;
      }
      if (peer.pods && !peer.pods->Matches(p.labels)) continue;
      out.push_back(&p);
    }
    return out;
  }

  static std::string PortsText(const std::vector<std::pair<uint16_t, uint16_t>>& ranges) {
    std::string out;
    for (const auto& [lo, hi] : ranges) {
      out += (out.empty() ? "" : ", ") + std::to_string(lo);
      if (hi != lo) out += "-" + std::to_string(hi);
    }
    return out;
  }

  // The ports of `proto` that `rule` opens towards `target`; nullopt:
  // every port; an empty list: none.
  std::optional<std::vector<std::pair<uint16_t, uint16_t>>> Ports(const Rule& rule,
                                                                  const std::string& proto,
                                                                  const Target& target,
                                                                  bool ingress) {
    std::vector<std::pair<uint16_t, uint16_t>> out;
    if (rule.ports.empty()) {
      if (target.named_only) return out;
      return std::nullopt;
    }
    for (const PortEntry& e : rule.ports) {
      if (e.protocol != proto) continue;
      if (e.kind == PortEntry::kNamed) {
        const Pod* owner = ingress ? pod_ : target.owner;
        if (!owner) continue;
        for (const ContainerPort& c : owner->ports) {
          if (c.name == e.name && c.protocol == proto) out.push_back({c.port, c.port});
        }
        continue;
      }
      if (target.named_only) continue;
      if (e.kind == PortEntry::kAll) return std::nullopt;
      out.push_back({e.lo, e.hi});
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  void Decide(bool ingress) {
    const char* dir = ingress ? "ingress" : "egress";
    std::vector<const Policy*> selecting;
    for (const Policy& p : policies_) {
      if (p.ns != pod_->ns || !(ingress ? p.ingress : p.egress)) continue;
      if (p.pod_selector.Matches(pod_->labels)) selecting.push_back(&p);
    }
    (ingress ? ingress_by_ : egress_by_) = selecting;
    std::vector<Written>& out = ingress ? ingress_ : egress_;
    if (selecting.empty()) {
      out.push_back({{"not isolated for " + std::string(dir) +
                      ": no NetworkPolicy selects the pod, so every flow is allowed"},
                     {ingress ? "allow ingress from any" : "allow to any"}});
      return;
    }
    const std::string verb = ingress ? "allow ingress " : "allow ";
    const std::string toward = ingress ? " from " : " to ";
    out.push_back({{"inside the pod: NetworkPolicy never sees its loopback traffic"},
                   {ingress ? "allow ingress from loopback" : "allow to loopback"}});
    // The documentation: "a pod cannot block access to itself", and
    // "traffic to and from the node where a Pod is running is always
    // allowed".
    for (int host = 0; host < 2; ++host) {
      Written w;
      for (const IpPrefix& ip : host ? pod_->host_ips : pod_->ips) {
        w.lines.push_back(std::string(ingress ? "allow ingress from " : "allow to ") +
                          FormatPrefix(ip));
      }
      if (w.lines.empty()) continue;
      w.comments.push_back(host ? "the pod's node (status.hostIP): always allowed"
                                : "the pod itself: a pod cannot block access to itself");
      out.push_back(std::move(w));
    }
    for (const Policy* policy : selecting) {
      const std::vector<Rule>& rules = ingress ? policy->ingress_rules : policy->egress_rules;
      if (rules.empty()) {
        out.push_back({{policy->ns + "/" + policy->name + " (" + PlaceText(policy->place) +
                        "): isolates the pod for " + dir + ", allows nothing"},
                       {}});
      }
      for (size_t r = 0; r < rules.size(); ++r) {
        const Rule& rule = rules[r];
        Written w;
        w.comments.push_back(policy->ns + "/" + policy->name + " " + dir + "[" + std::to_string(r) +
                             "] (" + PlaceText(rule.place) + ")");
        for (const PortEntry& e : rule.ports) {
          if (e.protocol == "SCTP") {
            Warn(e.place,
                 "SCTP is not allowed: a Ward policy never grants SCTP (narrower than "
                 "the cluster)");
          }
        }
        bool named = false;
        for (const PortEntry& e : rule.ports) named = named || e.kind == PortEntry::kNamed;
        std::vector<Target> targets;
        auto add_pods_with_named = [&](const std::string& why, auto&& inside) {
          if (ingress || !named) return;
          for (const Pod& p : pods_) {
            if (!p.Addressable()) continue;
            for (const IpPrefix& ip : p.ips) {
              if (inside(ip))
                targets.push_back({false, ip, p.Id() + " (named ports, " + why + ")", &p, true});
            }
          }
        };
        if (rule.all_peers) {
          targets.push_back({true, {}, "every peer", nullptr, false});
          add_pods_with_named("every peer", [](const IpPrefix&) { return true; });
        }
        for (const Peer& peer : rule.peers) {
          if (peer.ip_block) {
            std::vector<IpPrefix> blocks, gaps = peer.except;
            // Ward folds IPv4-mapped IPv6 addresses into IPv4 (an IPv6
            // rule over ::ffff:0:0/96 would grant IPv4 addresses); an IPv6
            // ipBlock never matches an IPv4 packet, so that part is cut.
            std::string unused;
            if (peer.cidr.v6) gaps.push_back(*ParseIpOrCidr("::ffff:0:0/96", &unused));
            Subtract(peer.cidr, gaps, &blocks);
            std::string what = "ipBlock " + FormatPrefix(peer.cidr);
            if (!peer.except.empty()) {
              what += " except ";
              for (size_t i = 0; i < peer.except.size(); ++i)
                what += (i ? ", " : "") + FormatPrefix(peer.except[i]);
            }
            for (const IpPrefix& b : blocks) targets.push_back({false, b, what, nullptr, false});
            add_pods_with_named(what, [&](const IpPrefix& ip) { return InBlock(peer, ip); });
            continue;
          }
          const std::vector<const Pod*> selected = SelectedPods(peer, policy->ns);
          if (selected.empty()) {
            std::string what = "pods";
            if (peer.namespaces) what += " in namespaces " + peer.namespaces->Text();
            if (!peer.namespaces) what += " of namespace " + policy->ns;
            if (peer.pods) what += " matching " + peer.pods->Text();
            w.comments.push_back("peer " + peer.place.pointer + " (" + what +
                                 ") selects no pod with an address");
          }
          for (const Pod* p : selected) {
            for (const IpPrefix& ip : p->ips) targets.push_back({false, ip, p->Id(), p, false});
          }
        }
        // One line per protocol, ports and comment: the addresses of an
        // ipBlock (or of one pod) together.
        struct Entry {
          std::string head, addresses, tail, comment;
        };
        std::vector<Entry> entries;
        std::set<std::string> seen;
        for (const char* proto : {"TCP", "UDP"}) {
          for (const Target& t : targets) {
            auto ports = Ports(rule, proto, t, ingress);
            if (ports && ports->empty()) continue;
            const std::string head = verb + (proto[0] == 'T' ? "tcp" : "udp") + toward;
            const std::string address = t.any ? "any" : FormatPrefix(t.addr);
            const std::string tail = ports ? " port " + PortsText(*ports) : "";
            if (!seen.insert(head + address + tail).second) continue;
            if (!entries.empty() && entries.back().head == head && entries.back().tail == tail &&
                entries.back().comment == t.comment) {
              entries.back().addresses += ", " + address;
            } else {
              entries.push_back({head, address, tail, t.comment});
            }
            if (++lines_ > kMaxLines) {
              Error(rule.place, "the policies make more than " + std::to_string(kMaxLines) +
                                    " rules for this pod");
              return;
            }
          }
        }
        for (const Entry& e : entries) {
          w.lines.push_back(e.head + e.addresses + e.tail + "  // " + CommentText(e.comment));
        }
        if (w.lines.empty()) w.comments.push_back("allows nothing here");
        out.push_back(std::move(w));
      }
    }
  }

  std::string Write() const {
    std::string out = "ward 1\n\n";
    std::string files;
    for (size_t i = 0; i < options_.files.size(); ++i) {
      files += (i ? ", " : "") + options_.files[i].path;
    }
    out += "// Imported by `ward import --from networkpolicy` from " + CommentText(files) + ":\n";
    std::string ips;
    for (const IpPrefix& ip : pod_->ips) ips += (ips.empty() ? "" : ", ") + FormatPrefix(ip);
    out += "// the effective policy of pod " + CommentText(pod_->Id()) +
           (ips.empty() ? "" : " (" + ips + ")") + ", in the cluster that " +
           CommentText(options_.cluster.path) + " describes.\n";
    for (int d = 0; d < 2; ++d) {
      const auto& by = d == 0 ? ingress_by_ : egress_by_;
      std::string line = d == 0 ? "// Ingress: " : "// Egress: ";
      if (by.empty()) {
        line += "not isolated (no policy selects the pod).";
      } else {
        line += "isolated by ";
        for (size_t i = 0; i < by.size(); ++i)
          line += (i ? ", " : "") + by[i]->ns + "/" + by[i]->name;
        line += ".";
      }
      out += CommentText(line) + "\n";
    }
    if (!ingress_by_.empty() || !egress_by_.empty()) {
      out +=
          "// An isolated direction allows only what some rule allows; NetworkPolicy cannot "
          "allow\n// ICMP, so it is refused there. Each pod a selector names is written as "
          "its\n// addresses in the snapshot: a pod started later is not among them.\n";
    }
    if (!warnings_.empty()) {
      out += "//\n// Not translated (warnings):\n";
      for (const std::string& w : warnings_) out += "// - " + CommentText(w) + "\n";
    }
    out += "\npolicy " + options_.name + " {\n";
    out += "  network {\n";
    bool first = true;
    for (const auto* list : {&ingress_, &egress_}) {
      for (const Written& w : *list) {
        if (!first) out += "\n";
        first = false;
        for (const std::string& c : w.comments) out += "    // " + CommentText(c) + "\n";
        for (const std::string& l : w.lines) out += "    " + l + "\n";
      }
    }
    out += "  }\n";
    out += "}\n";
    return out;
  }

  const ImportOptions& options_;
  std::vector<ImportDiagnostic>* diagnostics_;
  size_t errors_ = 0, lines_ = 0;
  std::vector<std::string> warnings_;
  std::map<std::string, Labels> namespaces_;
  std::vector<Pod> pods_;
  std::vector<Policy> policies_;
  const Pod* pod_ = nullptr;
  std::vector<const Policy*> ingress_by_, egress_by_;
  std::vector<Written> ingress_, egress_;
};

}  // namespace

ImportResult ImportNetworkPolicy(std::string_view first, const ImportOptions& options) {
  ImportResult result;
  ImportOptions copy;
  const ImportOptions* use = &options;
  if (options.files.empty()) {
    // A caller with one file (the fuzzer, a test) passes it as `first`.
    copy = options;
    copy.files.push_back(
        {options.path.empty() ? options.source : options.path, std::string(first)});
    use = &copy;
  }
  try {
    result.ok = Importer(*use, &result.diagnostics).Run(&result.text);
  } catch (const YAML::Exception& e) {
    // Every node is asked what it is before it is read; this is the last
    // line, so that a question missed fails closed instead of aborting.
    result.ok = false;
    result.text.clear();
    result.diagnostics.push_back({Severity::kError, "", "cannot read the input: " + e.msg,
                                  Line(e.mark), Column(e.mark), use->files.front().path});
  }
  return result;
}

}  // namespace ward::importers
