#include "backends/ebpf/maps.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "backends/ebpf/bpf/ward_ebpf.h"
#include "compiler/ip.h"

namespace ward::backend::ebpf {
namespace {

using ir::Range;
using ir::V4;
using ir::V6;
using nlohmann::ordered_json;

constexpr Range<V6> kMapped = {V6{0xffff} << 32, (V6{0xffff} << 32) | 0xffffffffu};

// A deny rule's address range in one space, with the folds the partition
// applies (an IPv4 deny also covers the NAT64 and compatible forms; the
// ::ffff:0:0/96 part of an IPv6 rule is IPv4).
template <typename A>
struct Deny {
  Range<A> range;
  uint32_t id;
  const ir::NetDecision* what;
};

struct Denies {
  std::vector<Deny<V4>> v4;
  std::vector<Deny<V6>> v6;
};

void AddDeny(Denies& d, const IpPrefix& p, uint32_t id, const ir::NetDecision* what) {
  if (!p.v6) {
    Range<V4> r = ir::V4Range(p);
    d.v4.push_back({r, id, what});
    d.v6.push_back({{ir::Nat64V6(r.lo), ir::Nat64V6(r.hi)}, id, what});
    d.v6.push_back({{ir::CompatV6(r.lo), ir::CompatV6(r.hi)}, id, what});
    return;
  }
  Range<V6> r = ir::V6Range(p);
  d.v6.push_back({r, id, what});
  V6 lo = std::max(r.lo, kMapped.lo), hi = std::min(r.hi, kMapped.hi);
  if (lo <= hi) d.v4.push_back({{static_cast<V4>(lo), static_cast<V4>(hi)}, id, what});
}

Denies CollectDenies(const ir::NetRules& net, ir::Direction dir) {
  Denies d;
  for (size_t i = 0; i < net.rules.size(); ++i) {
    const ir::FlatRule& f = net.rules[i];
    if (f.direction != dir || f.allow) continue;
    const auto id = static_cast<uint32_t>(i + 1);
    switch (f.peer.kind) {
      case ast::PeerKind::kAny: {
        ir::PeerPrefixes p = ir::AnyPrefixes();
        AddDeny(d, p.v4, id, &f.what);
        AddDeny(d, p.v6, id, &f.what);
        break;
      }
      case ast::PeerKind::kLoopback: {
        ir::PeerPrefixes p = ir::LoopbackPrefixes();
        AddDeny(d, p.v4, id, &f.what);
        AddDeny(d, p.v6, id, &f.what);
        break;
      }
      case ast::PeerKind::kAddress:
        AddDeny(d, f.peer.prefix, id, &f.what);
        break;
      case ast::PeerKind::kDomain:
      case ast::PeerKind::kWildcardDomain:
        break;  // refused in BuildMaps
    }
  }
  return d;
}

// Interns port sets; index 0 is the empty set.
class PortSets {
 public:
  explicit PortSets(std::vector<PortSetSegments>* sets) : sets_(sets) {
    if (sets_->empty()) sets_->push_back({});
    for (size_t i = 0; i < sets_->size(); ++i) index_[(*sets_)[i]] = static_cast<uint16_t>(i);
  }
  // False when the set needs too many segments or there are too many sets.
  bool Intern(const PortSetSegments& segs, uint16_t* id) {
    if (segs.size() > WARD_MAX_SEGMENTS) return false;
    auto it = index_.find(segs);
    if (it != index_.end()) {
      *id = it->second;
      return true;
    }
    if (sets_->size() >= WARD_MAX_PORTSETS) return false;
    *id = static_cast<uint16_t>(sets_->size());
    index_[segs] = *id;
    sets_->push_back(segs);
    return true;
  }

 private:
  std::vector<PortSetSegments>* sets_;
  std::map<PortSetSegments, uint16_t> index_;
};

// The segments of one protocol: the allowed ports, then, in rule order, the
// ports each deny refuses that no earlier segment holds.
template <typename A>
PortSetSegments Segments(const ir::PortSet& allowed, const std::vector<const Deny<A>*>& denies,
                         ir::Protocol proto) {
  PortSetSegments segs;
  for (auto [lo, hi] : allowed.ranges()) segs.push_back({lo, hi, 0, true});
  ir::PortSet covered = allowed;
  for (const Deny<A>* d : denies) {
    const ir::PortSet& ports = proto == ir::Protocol::kTcp ? d->what->tcp : d->what->udp;
    ir::PortSet fresh = ports.Minus(covered);
    for (auto [lo, hi] : fresh.ranges()) segs.push_back({lo, hi, d->id, false});
    covered = covered.Union(fresh);
  }
  std::sort(segs.begin(), segs.end());
  return segs;
}

template <typename A>
bool MakeEntry(const ir::NetDecision& allowed, const std::vector<const Deny<A>*>& denies,
               PortSets& sets, Entry* e) {
  *e = {};
  if (!sets.Intern(Segments(allowed.tcp, denies, ir::Protocol::kTcp), &e->tcp_set)) return false;
  if (!sets.Intern(Segments(allowed.udp, denies, ir::Protocol::kUdp), &e->udp_set)) return false;
  e->icmp_allow = allowed.icmp;
  if (!allowed.icmp) {
    for (const Deny<A>* d : denies) {
      if (d->what->icmp) {
        e->icmp_rule = d->id;
        break;
      }
    }
  }
  return true;
}

template <typename A>
std::vector<const Deny<A>*> Covering(const std::vector<Deny<A>>& denies, A addr) {
  std::vector<const Deny<A>*> out;
  for (const Deny<A>& d : denies) {
    if (d.range.lo <= addr && addr <= d.range.hi) out.push_back(&d);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->id < b->id; });
  return out;
}

void SetAddr(Cidr* c, V4 a) {
  for (int i = 0; i < 4; ++i) c->addr[i] = static_cast<uint8_t>(a >> (24 - 8 * i));
}
void SetAddr(Cidr* c, V6 a) {
  c->v6 = true;
  for (int i = 15; i >= 0; --i) {
    c->addr[i] = static_cast<uint8_t>(a & 0xff);
    a >>= 8;
  }
}

// Where one direction's CIDRs go.
struct CidrOut {
  std::vector<Cidr>* exact;
  std::vector<Cidr>* prefixes;
};

// Splits [lo, hi] into the fewest CIDRs.
template <typename A, int kBits>
void AddCidrs(Range<A> r, const Entry& e, CidrOut out) {
  auto low_bits = [](int k) { return k >= kBits ? ~A{0} : static_cast<A>((A{1} << k) - 1); };
  A lo = r.lo;
  while (true) {
    int k = 0;
    while (k < kBits && (lo & low_bits(k + 1)) == 0 && (lo | low_bits(k + 1)) <= r.hi) ++k;
    Cidr c;
    SetAddr(&c, lo);
    c.length = static_cast<uint8_t>(kBits - k);
    c.entry = e;
    (k == 0 ? out.exact : out.prefixes)->push_back(c);
    A last = lo | low_bits(k);
    if (last >= r.hi) break;
    lo = last + 1;
  }
}

// The partition split further wherever the set of covering denies changes
// (so every CIDR names the right rule in its events), in address order.
template <typename A, int kBits>
bool AddSpace(const std::vector<ir::Piece<A>>& pieces, const std::vector<Deny<A>>& denies,
              PortSets& sets, CidrOut out) {
  std::vector<A> starts;
  for (const ir::Piece<A>& p : pieces) starts.push_back(p.range.lo);
  for (const Deny<A>& d : denies) {
    starts.push_back(d.range.lo);
    if (d.range.hi != ~A{0}) starts.push_back(d.range.hi + 1);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  size_t piece = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    A lo = starts[i];
    A hi = i + 1 < starts.size() ? starts[i + 1] - 1 : ~A{0};
    while (piece + 1 < pieces.size() && pieces[piece + 1].range.lo <= lo) ++piece;
    if constexpr (kBits == 128) {
      if (lo >= kMapped.lo && hi <= kMapped.hi) continue;  // decided as IPv4
    }
    std::vector<const Deny<A>*> cover = Covering(denies, lo);
    const ir::NetDecision& allowed = pieces[piece].decision;
    if (allowed.empty() && cover.empty()) continue;  // a miss refuses, no rule
    Entry e;
    if (!MakeEntry(allowed, cover, sets, &e)) return false;
    AddCidrs<A, kBits>({lo, hi}, e, out);
  }
  return true;
}

// The local ports of one protocol some piece of `ingress` allows, as
// allowed segments; past WARD_MAX_SEGMENTS ranges, the smallest gaps are
// filled (a wider bind check: the packets the socket receives are still
// decided).
PortSetSegments BindSegments(const ir::Partition& ingress, ir::Protocol proto) {
  ir::PortSet ports;
  auto add = [&](const auto& pieces) {
    for (const auto& p : pieces) {
      ports = ports.Union(proto == ir::Protocol::kTcp ? p.decision.tcp : p.decision.udp);
    }
  };
  add(ingress.v4);
  add(ingress.v6);
  std::vector<std::pair<uint16_t, uint16_t>> r = ports.ranges();
  while (r.size() > WARD_MAX_SEGMENTS) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < r.size(); ++i) {
      if (r[i + 1].first - r[i].second < r[best + 1].first - r[best].second) best = i;
    }
    r[best].second = r[best + 1].second;
    r.erase(r.begin() + static_cast<ptrdiff_t>(best) + 1);
  }
  PortSetSegments segs;
  for (auto [lo, hi] : r) segs.push_back({lo, hi, 0, true});
  return segs;
}

// The bind check's entry (MapContents::bind).
bool AddBind(const ir::Partition& ingress, PortSets& sets, Entry* out) {
  *out = {};
  return sets.Intern(BindSegments(ingress, ir::Protocol::kTcp), &out->tcp_set) &&
         sets.Intern(BindSegments(ingress, ir::Protocol::kUdp), &out->udp_set);
}

std::string Hex(const Cidr& c) {
  IpPrefix p;
  p.v6 = c.v6;
  p.bytes = c.addr;
  p.length = c.length;
  return FormatPrefix(p);
}

ordered_json EntryJson(const Cidr& c) {
  ordered_json j;
  j[c.length == (c.v6 ? 128 : 32) ? "addr" : "prefix"] =
      c.length == (c.v6 ? 128 : 32) ? Hex(c).substr(0, Hex(c).find('/')) : Hex(c);
  j["tcp"] = c.entry.tcp_set;
  j["udp"] = c.entry.udp_set;
  j["icmp"] = c.entry.icmp_allow;
  if (c.entry.icmp_rule) j["icmp_rule"] = c.entry.icmp_rule;
  return j;
}

std::string Ports(uint16_t lo, uint16_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

// The unix names the rules name: allowed iff granted (the IR's sets, denies
// already removed), else refused by the first deny naming them.
bool AddUnixNames(const ir::NetRules& net, MapContents* out) {
  std::map<std::pair<bool, std::string>, UnixName> names;
  for (size_t i = 0; i < net.unix_rules.size(); ++i) {
    const ir::UnixRule& u = net.unix_rules[i];
    if (u.name.size() > WARD_UNIX_NAME) continue;  // unreachable by path
    UnixName& n = names[{u.abstract, u.name}];
    n.abstract = u.abstract;
    n.name = u.name;
    n.allow = (u.abstract ? net.unix_abstract : net.unix_paths).count(u.name) > 0;
    if (!u.allow && n.rule == 0) n.rule = UnixRuleId(net, i);
  }
  for (auto& [key, n] : names) {
    if (n.allow) n.rule = 0;
    out->unix_names.push_back(n);
  }
  return out->unix_names.size() <= WARD_MAX_UNIX_NAMES / 2;
}

}  // namespace

uint32_t UnixRuleId(const ir::NetRules& net, size_t index) {
  return static_cast<uint32_t>(net.rules.size() + 1 + index);
}

std::string RuleText(const ir::UnixRule& rule) {
  if (!rule.implicit.empty()) return "implicit rule: " + rule.implicit;
  return std::string(rule.allow ? "allow" : "deny") + " unix \"" + (rule.abstract ? "@" : "") +
         rule.name + "\"";
}

std::string RuleText(const ir::FlatRule& rule) {
  if (!rule.implicit.empty()) return "implicit rule: " + rule.implicit;
  std::string s = rule.allow ? "allow" : "deny";
  if (rule.direction == ir::Direction::kIngress) s += " ingress";
  const ir::NetDecision& w = rule.what;
  const ir::PortSet* ports = nullptr;
  if (!w.tcp.empty() && w.tcp == w.udp) {
    if (!w.icmp) ports = &w.tcp;  // protocol omitted, with ports
  } else if (!w.tcp.empty()) {
    s += " tcp";
    ports = &w.tcp;
  } else if (!w.udp.empty()) {
    s += " udp";
    ports = &w.udp;
  } else if (w.icmp) {
    s += " icmp";
  }
  s += rule.direction == ir::Direction::kIngress ? " from " : " to ";
  switch (rule.peer.kind) {
    case ast::PeerKind::kAny:
      s += "any";
      break;
    case ast::PeerKind::kLoopback:
      s += "loopback";
      break;
    case ast::PeerKind::kAddress:
      s += FormatPrefix(rule.peer.prefix);
      break;
    case ast::PeerKind::kDomain:
      s += "\"" + rule.peer.domain + "\"";
      break;
    case ast::PeerKind::kWildcardDomain:
      s += "\"*." + rule.peer.domain + "\"";
      break;
  }
  if (ports && !(*ports == ir::PortSet::All())) s += " port " + ports->ToString();
  return s;
}

bool BuildMaps(const ir::NetRules& net, MapContents* out, DiagnosticSink& sink) {
  *out = {};
  bool ok = true;
  for (const ir::FlatRule& f : net.rules) {
    bool domain =
        f.peer.kind == ast::PeerKind::kDomain || f.peer.kind == ast::PeerKind::kWildcardDomain;
    if (!f.allow && domain) {
      sink.Error(Code::kCannotExpress, f.span,
                 "a deny by domain cannot be enforced by ebpf: the name's other addresses get "
                 "through",
                 "deny the addresses instead, or use a DNS-aware target");
      ok = false;
    }
  }
  size_t deny_count = 0;
  for (const ir::FlatRule& f : net.rules) deny_count += f.allow ? 0 : 1;
  for (const ir::UnixRule& u : net.unix_rules) deny_count += u.allow ? 0 : 1;
  if (deny_count > WARD_MAX_RULE_TEXTS / 2 ||
      net.rules.size() + net.unix_rules.size() >= WARD_ALLOW) {
    sink.Error(Code::kCannotExpress,
               net.rules.empty() ? net.unix_rules.back().span : net.rules.back().span,
               "ebpf holds at most " + std::to_string(WARD_MAX_RULE_TEXTS / 2) + " deny rules");
    return false;
  }
  if (!ok) return false;
  out->rules.push_back("");
  for (const ir::FlatRule& f : net.rules) out->rules.push_back(f.allow ? "" : RuleText(f));
  for (const ir::UnixRule& u : net.unix_rules) out->rules.push_back(u.allow ? "" : RuleText(u));
  if (!AddUnixNames(net, out)) {
    sink.Error(
        Code::kCannotExpress, net.unix_rules.back().span,
        "ebpf holds at most " + std::to_string(WARD_MAX_UNIX_NAMES / 2) + " unix socket names");
    return false;
  }
  for (const auto& [pattern, entry] : net.egress_domains) {
    if (!entry.allow.empty()) out->domains.push_back({pattern, entry.allow});
  }

  const Denies denies = CollectDenies(net, ir::Direction::kEgress);
  const Denies in_denies = CollectDenies(net, ir::Direction::kIngress);
  PortSets sets(&out->portsets);
  const CidrOut egress{&out->exact, &out->prefixes};
  const CidrOut ingress{&out->ingress_exact, &out->ingress_prefixes};
  if (!AddSpace<V4, 32>(net.egress.v4, denies.v4, sets, egress) ||
      !AddSpace<V6, 128>(net.egress.v6, denies.v6, sets, egress) ||
      !AddSpace<V4, 32>(net.ingress.v4, in_denies.v4, sets, ingress) ||
      !AddSpace<V6, 128>(net.ingress.v6, in_denies.v6, sets, ingress) ||
      !AddBind(net.ingress, sets, &out->bind)) {
    Span at = net.rules.empty() ? Span{} : net.rules.front().span;
    sink.Error(Code::kCannotExpress, at,
               "the policy's ports need more than " + std::to_string(WARD_MAX_SEGMENTS) +
                   " ranges for one address, or more than " + std::to_string(WARD_MAX_PORTSETS) +
                   " distinct port sets");
    return false;
  }
  return true;
}

bool EntryForResolved(const ir::NetRules& net, const IpPrefix& addr,
                      const ir::NetDecision& names_allow, MapContents* maps, Entry* out) {
  Denies denies = CollectDenies(net, ir::Direction::kEgress);
  PortSets sets(&maps->portsets);
  auto find = [](const auto& pieces, auto a) -> const auto& {
    auto it = std::upper_bound(pieces.begin(), pieces.end(), a,
                               [](auto x, const auto& p) { return x < p.range.lo; });
    return *std::prev(it);
  };
  V6 a6 = addr.v6 ? ir::V6Range(addr).lo : 0;
  if (!addr.v6 || ir::IsMapped(a6)) {
    V4 a = addr.v6 ? static_cast<V4>(a6) : ir::V4Range(addr).lo;
    const ir::Piece<V4>& p = find(net.egress.v4, a);
    ir::NetDecision d = p.decision.Union(names_allow.Minus(p.denied));
    return MakeEntry(d, Covering(denies.v4, a), sets, out);
  }
  const ir::Piece<V6>& p = find(net.egress.v6, a6);
  ir::NetDecision d = p.decision.Union(names_allow.Minus(p.denied));
  return MakeEntry(d, Covering(denies.v6, a6), sets, out);
}

std::string MapsToJson(const std::string& policy, const MapContents& maps) {
  ordered_json j;
  j["version"] = 1;
  j["policy"] = policy;
  j["programs"] = {
      {"object", "ward.bpf.o"},
      {"source", "backends/ebpf/bpf/ward.bpf.c"},
      {"layout", "backends/ebpf/bpf/ward_ebpf.h"},
      {"hooks",
       {"cgroup/connect4", "cgroup/connect6", "cgroup/sendmsg4", "cgroup/sendmsg6", "cgroup/bind4",
        "cgroup/bind6", "cgroup/connect_unix", "cgroup/sendmsg_unix", "cgroup/sock_create",
        "cgroup_skb/egress", "cgroup_skb/ingress", "iter/tcp"}},
  };
  j["coverage"] = {{"egress", "ebpf"}, {"ingress", "ebpf"}, {"unix", "ebpf"}};
  ordered_json rules = ordered_json::array();
  for (size_t i = 1; i < maps.rules.size(); ++i) {
    if (!maps.rules[i].empty()) rules.push_back({{"id", i}, {"text", maps.rules[i]}});
  }
  j["rules"] = rules;
  ordered_json sets = ordered_json::array();
  for (size_t i = 0; i < maps.portsets.size(); ++i) {
    ordered_json segs = ordered_json::array();
    for (const Segment& s : maps.portsets[i]) {
      ordered_json seg = {{"ports", Ports(s.lo, s.hi)}, {"allow", s.allow}};
      if (!s.allow) seg["rule"] = s.rule;
      segs.push_back(seg);
    }
    sets.push_back({{"id", i}, {"segments", segs}});
  }
  j["portsets"] = sets;
  for (const char* name : {"v4_exact", "v4_lpm", "v6_exact", "v6_lpm"}) {
    j[name] = ordered_json::array();
  }
  for (const Cidr& c : maps.exact) j[c.v6 ? "v6_exact" : "v4_exact"].push_back(EntryJson(c));
  for (const Cidr& c : maps.prefixes) j[c.v6 ? "v6_lpm" : "v4_lpm"].push_back(EntryJson(c));
  ordered_json in = {{"bind", {{"tcp", maps.bind.tcp_set}, {"udp", maps.bind.udp_set}}}};
  for (const char* name : {"v4_exact", "v4_lpm", "v6_exact", "v6_lpm"}) {
    in[name] = ordered_json::array();
  }
  for (const Cidr& c : maps.ingress_exact)
    in[c.v6 ? "v6_exact" : "v4_exact"].push_back(EntryJson(c));
  for (const Cidr& c : maps.ingress_prefixes)
    in[c.v6 ? "v6_lpm" : "v4_lpm"].push_back(EntryJson(c));
  j["ingress"] = in;
  ordered_json domains = ordered_json::array();
  for (const DomainGrant& d : maps.domains) {
    domains.push_back({{"pattern", d.pattern},
                       {"tcp", d.allow.tcp.ToString()},
                       {"udp", d.allow.udp.ToString()},
                       {"icmp", d.allow.icmp}});
  }
  j["domains"] = domains;
  ordered_json unix_names = ordered_json::array();
  for (const UnixName& u : maps.unix_names) {
    ordered_json n = {{"name", (u.abstract ? "@" : "") + u.name}, {"allow", u.allow}};
    if (!u.allow) n["rule"] = u.rule;
    unix_names.push_back(n);
  }
  j["unix"] = unix_names;
  return j.dump(2) + "\n";
}

}  // namespace ward::backend::ebpf
