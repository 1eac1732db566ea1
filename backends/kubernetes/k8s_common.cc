#include "backends/kubernetes/k8s_common.h"

#include <algorithm>
#include <regex>

namespace ward::backend::k8s {
namespace {

// ---- YAML -------------------------------------------------------------------

bool PlainKey(const std::string& k) {
  if (k.empty() || !std::isalpha(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  // YAML 1.1 readers take these as booleans or null.
  static const char* const kWords[] = {"y",     "Y",    "n",    "N",    "yes",  "Yes",   "YES",
                                       "no",    "No",   "NO",   "on",   "On",   "ON",    "off",
                                       "Off",   "OFF",  "true", "True", "TRUE", "false", "False",
                                       "FALSE", "null", "Null", "NULL"};
  for (const char* w : kWords) {
    if (k == w) return false;
  }
  return true;
}

std::string Key(const std::string& k) { return PlainKey(k) ? k : ordered_json(k).dump(); }

bool Block(const ordered_json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

std::string Scalar(const ordered_json& v) {
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump();  // strings double-quoted with JSON escapes; numbers, true, false, null
}

void Emit(const ordered_json& v, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) {
      out += pad + Key(k) + ":";
      if (Block(item)) {
        out += "\n";
        Emit(item, item.is_array() ? indent : indent + 2, out);
      } else {
        out += " " + Scalar(item) + "\n";
      }
    }
  } else {
    for (const ordered_json& item : v) {
      if (Block(item)) {
        std::string inner;
        Emit(item, indent + 2, inner);
        // The first line's indentation becomes the dash.
        out += pad + "- " + inner.substr(indent + 2);
      } else {
        out += pad + "- " + Scalar(item) + "\n";
      }
    }
  }
}

// ---- address blocks ---------------------------------------------------------

template <typename A>
constexpr int kBits = static_cast<int>(sizeof(A) * 8);

template <typename A>
std::string Format(A a) {
  if constexpr (sizeof(A) == 4) {
    return ir::FormatV4(a);
  } else {
    return ir::FormatV6(a);
  }
}

template <typename A>
std::vector<std::string> Cidrs(A lo, A hi) {
  if constexpr (sizeof(A) == 4) {
    return ir::V4Cidrs({lo, hi});
  } else {
    return ir::V6Cidrs({lo, hi});
  }
}

// How many CIDRs cover [lo, hi] exactly (as Cidrs() would list them).
template <typename A>
size_t CidrCount(A lo, A hi) {
  size_t n = 0;
  for (;;) {
    A m = 0;  // the block at lo: lo .. lo + m
    for (;;) {
      const A next = static_cast<A>((m << 1) | 1);
      if (next == m || (lo & next) != 0 || next > static_cast<A>(hi - lo)) break;
      m = next;
    }
    ++n;
    if (static_cast<A>(hi - lo) == m) return n;
    lo = static_cast<A>(lo + m + 1);
  }
}

template <typename A>
class Coverer {
 public:
  explicit Coverer(std::vector<ir::Range<A>> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const ir::Range<A>& x, const ir::Range<A>& y) { return x.lo < y.lo; });
    for (const ir::Range<A>& r : ranges) {
      if (!s_.empty() && s_.back().hi != static_cast<A>(~A(0)) && s_.back().hi + 1 >= r.lo) {
        s_.back().hi = std::max(s_.back().hi, r.hi);
      } else {
        s_.push_back(r);
      }
    }
  }

  std::vector<IpBlock> Solve() {
    std::vector<IpBlock> out;
    Solve(0, 0, &out);
    return out;
  }

 private:
  // The blocks for the ranges inside lo/len; returns their cost (strings).
  size_t Solve(A lo, int len, std::vector<IpBlock>* out) {
    const A mask =
        len == 0 ? static_cast<A>(~A(0)) : static_cast<A>((A(1) << (kBits<A> - len)) - 1);
    const A hi = lo | mask;
    auto it = std::lower_bound(s_.begin(), s_.end(), lo,
                               [](const ir::Range<A>& r, A a) { return r.hi < a; });
    std::vector<ir::Range<A>> in;
    for (; it != s_.end() && it->lo <= hi; ++it) {
      in.push_back({std::max(it->lo, lo), std::min(it->hi, hi)});
    }
    if (in.empty()) return 0;
    const std::string cidr = Format(lo) + "/" + std::to_string(len);
    if (in.size() == 1 && in[0].lo == lo && in[0].hi == hi) {
      out->push_back({cidr, {}});
      return 1;
    }
    // The gaps: what an ipBlock of the whole block would list as except.
    std::vector<ir::Range<A>> gaps;
    A cur = lo;
    bool to_end = false;
    for (const ir::Range<A>& r : in) {
      if (r.lo > cur) gaps.push_back({cur, static_cast<A>(r.lo - 1)});
      if (r.hi == hi) {
        to_end = true;
        break;
      }
      cur = static_cast<A>(r.hi + 1);
    }
    if (!to_end) gaps.push_back({cur, hi});
    size_t except_cost = 1;
    for (const ir::Range<A>& g : gaps) except_cost += CidrCount(g.lo, g.hi);

    std::vector<IpBlock> split;
    const A half = static_cast<A>(A(1) << (kBits<A> - len - 1));
    const size_t split_cost = Solve(lo, len + 1, &split) + Solve(lo | half, len + 1, &split);
    if (except_cost < split_cost) {
      IpBlock b{cidr, {}};
      for (const ir::Range<A>& g : gaps) {
        for (std::string& c : Cidrs(g.lo, g.hi)) b.except.push_back(std::move(c));
      }
      out->push_back(std::move(b));
      return except_cost;
    }
    for (IpBlock& b : split) out->push_back(std::move(b));
    return split_cost;
  }

  std::vector<ir::Range<A>> s_;
};

// ---- names and labels ---------------------------------------------------------

bool Dns1123Label(const std::string& s, size_t max) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return !s.empty() && s.size() <= max && std::regex_match(s, re);
}

bool Dns1123Subdomain(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, re);
}

bool LabelName(const std::string& s) {
  static const std::regex re("^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, re);
}

bool LabelKey(const std::string& k) {
  const size_t slash = k.find('/');
  if (slash == std::string::npos) return LabelName(k);
  return Dns1123Subdomain(k.substr(0, slash)) && LabelName(k.substr(slash + 1));
}

bool LabelValue(const std::string& v) { return v.empty() || LabelName(v); }

const ir::TargetSetting* Setting(const ir::Policy& policy, const std::string& target,
                                 const std::string& key) {
  auto t = policy.targets.find(target);
  if (t == policy.targets.end()) return nullptr;
  auto s = t->second.find(key);
  return s == t->second.end() ? nullptr : &s->second;
}

// Whether the partition allows ICMP somewhere in [lo, hi].
template <typename A>
bool IcmpIn(const std::vector<ir::Piece<A>>& pieces, A lo, A hi) {
  for (const auto& piece : pieces) {
    if (piece.decision.icmp && piece.range.hi >= lo && piece.range.lo <= hi) return true;
  }
  return false;
}

// Whether ICMP the rule allows is still allowed by the partition (a deny
// may have taken it all).
bool IcmpSurvives(const ir::Partition& p, const ir::FlatRule& r) {
  switch (r.peer.kind) {
    case ast::PeerKind::kAny:
      return IcmpIn<ir::V4>(p.v4, 0, ~ir::V4(0)) || IcmpIn<ir::V6>(p.v6, 0, ~ir::V6(0));
    case ast::PeerKind::kLoopback:
      return IcmpIn<ir::V4>(p.v4, 0x7f000000u, 0x7fffffffu) || IcmpIn<ir::V6>(p.v6, 1, 1);
    case ast::PeerKind::kAddress:
      if (!r.peer.prefix.v6) {
        const auto range = ir::V4Range(r.peer.prefix);
        return IcmpIn(p.v4, range.lo, range.hi);
      } else {
        const auto range = ir::V6Range(r.peer.prefix);
        if (IcmpIn(p.v6, range.lo, range.hi)) return true;
        // The mapped part of an IPv6 rule is decided by the IPv4 partition.
        const ir::V6 mlo = ir::MappedV6(0), mhi = ir::MappedV6(~ir::V4(0));
        if (range.hi < mlo || range.lo > mhi) return false;
        return IcmpIn<ir::V4>(p.v4, static_cast<ir::V4>(std::max(range.lo, mlo)),
                              static_cast<ir::V4>(std::min(range.hi, mhi)));
      }
    default:
      return false;
  }
}

}  // namespace

std::string ToYaml(const ordered_json& value) {
  if (!Block(value)) return Scalar(value) + "\n";
  std::string out;
  Emit(value, 0, out);
  return out;
}

std::string ToYamlStream(const std::vector<ordered_json>& docs) {
  std::string out;
  for (const ordered_json& d : docs) out += "---\n" + ToYaml(d);
  return out;
}

std::vector<IpBlock> V4Blocks(std::vector<ir::Range<ir::V4>> ranges) {
  return Coverer<ir::V4>(std::move(ranges)).Solve();
}

std::vector<IpBlock> V6Blocks(std::vector<ir::Range<ir::V6>> ranges) {
  return Coverer<ir::V6>(std::move(ranges)).Solve();
}

std::vector<IpBlock> PortGroup::Blocks() const {
  std::vector<IpBlock> out = V4Blocks(v4);
  for (IpBlock& b : V6Blocks(v6)) out.push_back(std::move(b));
  return out;
}

std::vector<PortGroup> GroupByPorts(const ir::Partition& partition, bool denied) {
  std::map<std::pair<std::string, std::string>, PortGroup> groups;
  auto group = [&](const ir::NetDecision& d) -> PortGroup* {
    if (d.tcp.empty() && d.udp.empty()) return nullptr;
    PortGroup& g = groups[{d.tcp.ToString(), d.udp.ToString()}];
    g.tcp = d.tcp;
    g.udp = d.udp;
    return &g;
  };
  for (const auto& p : partition.v4) {
    if (PortGroup* g = group(denied ? p.denied : p.decision)) g->v4.push_back(p.range);
  }
  for (const auto& p : partition.v6) {
    if (PortGroup* g = group(denied ? p.denied : p.decision)) g->v6.push_back(p.range);
  }
  std::vector<PortGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

bool ResolvePlacement(const ir::Policy& policy, const std::string& target,
                      const std::string& selector_key, DiagnosticSink& sink, Placement* out) {
  bool ok = true;
  std::string name = policy.name;
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_') c = '-';
  }
  // The longest suffix added is "-default-deny" (13 characters).
  if (!Dns1123Label(name, 63 - 13)) {
    sink.Error(Code::kCannotExpress, {},
               "the policy name '" + policy.name +
                   "' does not make a Kubernetes object name (lower-case letters, digits and "
                   "'-', at most 50 characters)");
    ok = false;
  }
  out->name = name;

  const ir::TargetSetting* ns = Setting(policy, target, "namespace");
  if (!ns) ns = Setting(policy, "kubernetes", "namespace");
  if (ns) {
    if (!Dns1123Label(ns->value, 63)) {
      sink.Error(Code::kCannotExpress, ns->span,
                 "'" + ns->value + "' is not a Kubernetes namespace name");
      ok = false;
    }
    out->namespace_ = ns->value;
  }

  const ir::TargetSetting* sel = Setting(policy, target, selector_key);
  if (!sel && target != "kubernetes") sel = Setting(policy, "kubernetes", "pod_selector");
  if (sel) {
    if (sel->labels.empty()) {
      sink.Error(Code::kCannotExpress, sel->span,
                 "an empty selector would select every pod in the namespace",
                 "name the labels of the pods this policy is for");
      ok = false;
    }
    for (const auto& [k, v] : sel->labels) {
      if (!LabelKey(k) || !LabelValue(v)) {
        sink.Error(Code::kCannotExpress, sel->span,
                   "'" + k + "=" + v + "' is not a Kubernetes label (key: [prefix/]name, " +
                       "value: up to 63 letters, digits, '-', '_', '.')");
        ok = false;
      }
    }
    out->labels = sel->labels;
  } else {
    std::string value = policy.name;
    if (!LabelValue(value)) value = name;
    out->labels = {{kPolicyLabel, value}};
  }
  return ok;
}

void WarnIcmp(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink) {
  for (ir::Direction dir : {ir::Direction::kEgress, ir::Direction::kIngress}) {
    const ir::Partition& p = dir == ir::Direction::kEgress ? net.egress : net.ingress;
    for (const ir::FlatRule& r : net.rules) {
      if (r.direction != dir || !r.allow || !r.what.icmp || !IcmpSurvives(p, r)) continue;
      // Domain grants are not address pieces: their ICMP has its own message.
      sink.Warning(Code::kCannotExpress, r.span,
                   target + " cannot express ICMP: the ICMP this rule allows is left out (its " +
                       "TCP and UDP grants, if any, are kept)",
                   "deny-only approximation: ping and other ICMP to these peers fail");
    }
  }
}

void WarnLoopback(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink) {
  const ir::NetDecision all{ir::PortSet::All(), ir::PortSet::All(), true};
  const ir::Range<ir::V4> lo4{0x7f000000u, 0x7fffffffu};
  const ir::V6 lo6 = 1;
  bool limited = false;
  for (const ir::Partition* p : {&net.egress, &net.ingress}) {
    for (const auto& piece : p->v4) {
      if (piece.range.hi >= lo4.lo && piece.range.lo <= lo4.hi && !(piece.decision == all)) {
        limited = true;
      }
    }
    for (const auto& piece : p->v6) {
      if (piece.range.lo <= lo6 && lo6 <= piece.range.hi && !(piece.decision == all))
        limited = true;
    }
  }
  if (!limited) return;
  sink.Warning(Code::kCannotExpress, {},
               target + " does not see traffic inside the pod: the policy's limits on loopback " +
                   "(127.0.0.0/8, ::1) are not enforced by this target",
               "loopback in a pod reaches only the pod's own containers: keep services that must "
               "stay out of reach out of the pod");
}

void WarnUnix(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink) {
  if (net.unix_rules.empty()) return;
  sink.Warning(Code::kCannotExpress, net.unix_rules.front().span,
               target + " does not see unix sockets: these rules are not enforced by it");
}

bool RefuseDomainDenies(const ir::NetRules& net, const std::string& target, DiagnosticSink& sink) {
  bool ok = true;
  for (const ir::FlatRule& r : net.rules) {
    const bool domain =
        r.peer.kind == ast::PeerKind::kDomain || r.peer.kind == ast::PeerKind::kWildcardDomain;
    if (!domain || r.allow) continue;
    sink.Error(Code::kCannotExpress, r.span,
               target + " cannot enforce a deny by domain: the name's addresses stay reachable " +
                   "through the policy's other grants",
               "deny the addresses instead");
    ok = false;
  }
  return ok;
}

void AppendPorts(const ir::PortSet& ports, const char* protocol, bool port_as_string,
                 ordered_json* out) {
  for (const auto& [lo, hi] : ports.ranges()) {
    ordered_json p;
    if (port_as_string) {
      p["port"] = std::to_string(lo);
    } else {
      p["port"] = lo;
    }
    if (hi != lo) p["endPort"] = hi;
    p["protocol"] = protocol;
    out->push_back(std::move(p));
  }
}

}  // namespace ward::backend::k8s
