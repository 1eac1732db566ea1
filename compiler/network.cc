#include "compiler/network.h"

#include <dlfcn.h>
#include <idn2.h>

#include <algorithm>
#include <cctype>

namespace ward::ir {

// ---- PortSet --------------------------------------------------------------

PortSet::PortSet(std::vector<std::pair<uint16_t, uint16_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  for (const auto& r : ranges) {
    if (!ranges_.empty() && r.first <= static_cast<uint32_t>(ranges_.back().second) + 1) {
      ranges_.back().second = std::max(ranges_.back().second, r.second);
    } else {
      ranges_.push_back(r);
    }
  }
}

bool PortSet::Contains(uint16_t port) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), port,
                             [](uint16_t p, const auto& r) { return p < r.first; });
  return it != ranges_.begin() && port <= std::prev(it)->second;
}

PortSet PortSet::Union(const PortSet& other) const {
  std::vector<std::pair<uint16_t, uint16_t>> all = ranges_;
  all.insert(all.end(), other.ranges_.begin(), other.ranges_.end());
  return PortSet(std::move(all));
}

PortSet PortSet::Minus(const PortSet& other) const {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  for (auto [lo, hi] : ranges_) {
    uint32_t cur = lo;
    for (auto [olo, ohi] : other.ranges_) {
      if (ohi < cur || olo > hi) continue;
      if (olo > cur) out.push_back({static_cast<uint16_t>(cur), static_cast<uint16_t>(olo - 1)});
      cur = static_cast<uint32_t>(ohi) + 1;
      if (cur > hi) break;
    }
    if (cur <= hi) out.push_back({static_cast<uint16_t>(cur), hi});
  }
  return PortSet(std::move(out));
}

std::string PortSet::ToString() const {
  std::string s;
  for (auto [lo, hi] : ranges_) {
    if (!s.empty()) s += ",";
    s += std::to_string(lo);
    if (hi != lo) s += "-" + std::to_string(hi);
  }
  return s;
}

// ---- NetDecision ----------------------------------------------------------

bool NetDecision::Allows(Protocol proto, uint16_t port) const {
  switch (proto) {
    case Protocol::kTcp:
      return tcp.Contains(port);
    case Protocol::kUdp:
      return udp.Contains(port);
    case Protocol::kIcmp:
      return icmp;
  }
  return false;
}

NetDecision NetDecision::Union(const NetDecision& o) const {
  return {tcp.Union(o.tcp), udp.Union(o.udp), icmp || o.icmp};
}

NetDecision NetDecision::Minus(const NetDecision& o) const {
  return {tcp.Minus(o.tcp), udp.Minus(o.udp), icmp && !o.icmp};
}

// ---- lowering -------------------------------------------------------------

namespace {

// What one rule names: protocol omitted is tcp, udp and icmp; with ports,
// only tcp and udp (ICMP has no ports, so a rule that names ports does not
// speak about it).
NetDecision WhatRuleNames(const ast::NetRule& r) {
  PortSet ports;
  if (r.raw_ports.empty()) {
    ports = PortSet::All();
  } else {
    std::vector<std::pair<uint16_t, uint16_t>> ranges;
    for (const PortRange& p : r.ports) ranges.push_back({p.lo, p.hi});
    ports = PortSet(std::move(ranges));
  }
  NetDecision d;
  switch (r.protocol) {
    case ast::Protocol::kAll:
      d.tcp = ports;
      d.udp = ports;
      d.icmp = r.raw_ports.empty();
      break;
    case ast::Protocol::kTcp:
      d.tcp = ports;
      break;
    case ast::Protocol::kUdp:
      d.udp = ports;
      break;
    case ast::Protocol::kIcmp:
      d.icmp = true;
      break;
  }
  return d;
}

template <typename A>
struct Event {
  Range<A> range;
  bool allow;
  const NetDecision* what;
};

// Sweeps the rules' ranges into elementary intervals, decides each as the
// union of the allows minus the union of the denies covering it, and merges
// neighbours with equal decisions. The result is canonical: it depends only
// on which addresses get which decision.
template <typename A>
std::vector<Piece<A>> BuildPartition(const std::vector<Event<A>>& events, Range<A> excluded,
                                     const NetDecision& domain_allows) {
  const bool has_excluded = excluded.lo <= excluded.hi;
  std::vector<A> starts = {A{0}};
  auto add_range = [&](Range<A> r) {
    starts.push_back(r.lo);
    if (r.hi != ~A{0}) starts.push_back(r.hi + 1);
  };
  for (const Event<A>& e : events) add_range(e.range);
  if (has_excluded) add_range(excluded);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());

  // Sweep: events enter the active set at their first address and leave it
  // after their last, so each interval looks only at the rules covering it.
  std::vector<const Event<A>*> by_lo;
  for (const Event<A>& e : events) by_lo.push_back(&e);
  std::sort(by_lo.begin(), by_lo.end(),
            [](const Event<A>* a, const Event<A>* b) { return a->range.lo < b->range.lo; });
  std::vector<const Event<A>*> active;
  size_t next_event = 0;
  std::vector<Piece<A>> pieces;
  for (size_t i = 0; i < starts.size(); ++i) {
    A lo = starts[i];
    A hi = i + 1 < starts.size() ? starts[i + 1] - 1 : ~A{0};
    std::erase_if(active, [&](const Event<A>* e) { return e->range.hi < lo; });
    while (next_event < by_lo.size() && by_lo[next_event]->range.lo <= lo) {
      active.push_back(by_lo[next_event++]);
    }
    NetDecision allow, deny;
    if (!has_excluded || lo < excluded.lo || hi > excluded.hi) {
      for (const Event<A>* e : active) {
        NetDecision& into = e->allow ? allow : deny;
        into = into.Union(*e->what);
      }
    }
    Piece<A> piece{{lo, hi}, allow.Minus(deny), deny.Intersect(domain_allows)};
    if (!pieces.empty() && pieces.back().decision == piece.decision &&
        pieces.back().denied == piece.denied) {
      pieces.back().range.hi = hi;
    } else {
      pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

constexpr Range<V6> kMappedBlock = {V6{0xffff} << 32, (V6{0xffff} << 32) | 0xffffffffu};
constexpr Range<V4> kNoV4 = {1, 0};  // lo > hi: nothing excluded

struct Sweep {
  std::vector<Event<V4>> v4;
  std::vector<Event<V6>> v6;
};

void AddPrefix(Sweep& s, const IpPrefix& p, bool allow, const NetDecision* what) {
  if (!p.v6) {
    Range<V4> r = V4Range(p);
    s.v4.push_back({r, allow, what});
    if (!allow) {
      // An IPv4 deny also holds for the NAT64 and IPv4-compatible forms.
      s.v6.push_back({{Nat64V6(r.lo), Nat64V6(r.hi)}, false, what});
      s.v6.push_back({{CompatV6(r.lo), CompatV6(r.hi)}, false, what});
    }
    return;
  }
  Range<V6> r = V6Range(p);
  s.v6.push_back({r, allow, what});
  // The part inside ::ffff:0:0/96 is IPv4, decided in the v4 partition.
  V6 lo = std::max(r.lo, kMappedBlock.lo), hi = std::min(r.hi, kMappedBlock.hi);
  if (lo <= hi) {
    s.v4.push_back({{static_cast<V4>(lo), static_cast<V4>(hi)}, allow, what});
  }
}

// libidn2, loaded the first time a policy names a domain outside ASCII:
// linking it (and its libunistring, which Debian ships no archive of) cost
// every start of every Ward program 0.4 ms. The prototypes come from the
// header, so a changed signature fails the build.
struct Idn2 {
  decltype(&idn2_to_ascii_8z) to_ascii = nullptr;
  decltype(&idn2_free) free = nullptr;
};

const Idn2& LoadIdn2() {
  static const Idn2 api = [] {
    Idn2 a;
    void* lib = dlopen("libidn2.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return a;
    a.to_ascii = reinterpret_cast<decltype(a.to_ascii)>(dlsym(lib, "idn2_to_ascii_8z"));
    a.free = reinterpret_cast<decltype(a.free)>(dlsym(lib, "idn2_free"));
    if (!a.to_ascii || !a.free) a = Idn2{};
    return a;
  }();
  return api;
}

}  // namespace

std::string NormaliseDomain(const std::string& name) {
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!n.empty() && n.back() == '.') n.pop_back();
  bool ascii = std::all_of(n.begin(), n.end(), [](char c) { return (c & 0x80) == 0; });
  if (ascii) return n;
  // Without libidn2 the name stays as written: it then resolves to nothing
  // and matches no query, so its grant allows nothing.
  const Idn2& idn2 = LoadIdn2();
  char* out = nullptr;
  if (idn2.to_ascii && idn2.to_ascii(n.c_str(), &out, IDN2_NONTRANSITIONAL) == IDN2_OK && out) {
    std::string a = out;
    idn2.free(out);
    return a;
  }
  return n;  // the front end validated it; keep it as written
}

NetRules LowerNetwork(const std::vector<const ast::NetworkSection*>& sections) {
  NetRules ir;
  for (const ast::NetworkSection* section : sections) {
    for (const ast::NetRule& r : section->rules) {
      if (r.is_unix) {
        for (const ast::UnixSocket& s : r.sockets) {
          ir.unix_rules.push_back({r.allow, s.abstract, s.name, r.span, {}});
          if (!r.allow) continue;  // denies are applied after all grants
          (s.abstract ? ir.unix_abstract : ir.unix_paths).insert(s.name);
        }
        continue;
      }
      if (r.is_netlink) {
        for (const ast::Name& n : r.netlink) {
          ir.netlink_rules.push_back({r.allow, n.text, r.span});
          if (r.allow) ir.netlink.insert(n.text);
        }
        continue;
      }
      Direction dir =
          r.direction == ast::Direction::kEgress ? Direction::kEgress : Direction::kIngress;
      NetDecision what = WhatRuleNames(r);
      for (const ast::Peer& peer : r.peers)
        ir.rules.push_back({dir, r.allow, what, peer, r.span, {}});
    }
  }
  // Unix and netlink denies override grants, whatever the order.
  for (const NetlinkRule& r : ir.netlink_rules) {
    if (!r.allow) ir.netlink.erase(r.protocol);
  }
  for (const ast::NetworkSection* section : sections) {
    for (const ast::NetRule& r : section->rules) {
      if (!r.is_unix || r.allow) continue;
      for (const ast::UnixSocket& s : r.sockets) {
        (s.abstract ? ir.unix_abstract : ir.unix_paths).erase(s.name);
      }
    }
  }

  Sweep sweep[2];
  for (const FlatRule& f : ir.rules) {
    Sweep& s = sweep[f.direction == Direction::kEgress ? 0 : 1];
    auto& domains = f.direction == Direction::kEgress ? ir.egress_domains : ir.ingress_domains;
    const PeerPrefixes all = AnyPrefixes(), lo = LoopbackPrefixes();
    switch (f.peer.kind) {
      case ast::PeerKind::kAny:
        AddPrefix(s, all.v4, f.allow, &f.what);
        AddPrefix(s, all.v6, f.allow, &f.what);
        break;
      case ast::PeerKind::kLoopback:
        AddPrefix(s, lo.v4, f.allow, &f.what);
        AddPrefix(s, lo.v6, f.allow, &f.what);
        break;
      case ast::PeerKind::kAddress:
        AddPrefix(s, f.peer.prefix, f.allow, &f.what);
        break;
      case ast::PeerKind::kDomain:
      case ast::PeerKind::kWildcardDomain: {
        std::string key = (f.peer.kind == ast::PeerKind::kWildcardDomain ? "*." : "") +
                          NormaliseDomain(f.peer.domain);
        DomainEntry& e = domains[key];
        (f.allow ? e.allow : e.deny) = (f.allow ? e.allow : e.deny).Union(f.what);
        break;
      }
    }
  }
  for (int d = 0; d < 2; ++d) {
    Partition& p = d == 0 ? ir.egress : ir.ingress;
    NetDecision domain_allows;
    for (const auto& [name, entry] : d == 0 ? ir.egress_domains : ir.ingress_domains) {
      domain_allows = domain_allows.Union(entry.allow);
    }
    p.v4 = BuildPartition<V4>(sweep[d].v4, kNoV4, domain_allows);
    p.v6 = BuildPartition<V6>(sweep[d].v6, kMappedBlock, domain_allows);
  }
  ir.BuildIndex();
  return ir;
}

// ---- decisions ------------------------------------------------------------

namespace {

template <typename A>
const Piece<A>& Find(const std::vector<Piece<A>>& pieces, A addr) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), addr,
                             [](A a, const Piece<A>& p) { return a < p.range.lo; });
  return *std::prev(it);
}

}  // namespace

PeerPrefixes AnyPrefixes() {
  PeerPrefixes p;
  p.v6.v6 = true;
  return p;
}

PeerPrefixes LoopbackPrefixes() {
  PeerPrefixes p;
  p.v4.bytes[0] = 127;
  p.v4.length = 8;
  p.v6.v6 = true;
  p.v6.bytes[15] = 1;
  p.v6.length = 128;
  return p;
}

bool DomainMatches(const std::string& pattern, const std::string& name) {
  if (pattern.rfind("*.", 0) != 0) return pattern == name;
  std::string suffix = pattern.substr(1);  // ".example.com"
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kTcp:
      return "tcp";
    case Protocol::kUdp:
      return "udp";
    case Protocol::kIcmp:
      return "icmp";
  }
  return "tcp";
}

bool NetRules::operator==(const NetRules& o) const {
  return egress == o.egress && ingress == o.ingress && egress_domains == o.egress_domains &&
         ingress_domains == o.ingress_domains && unix_paths == o.unix_paths &&
         unix_abstract == o.unix_abstract && netlink == o.netlink;
}

namespace {

// The piece deciding one address: IPv4-mapped IPv6 addresses fold into v4.
template <typename F>
auto WithPiece(const Partition& p, const IpPrefix& addr, F f) {
  if (!addr.v6) return f(Find(p.v4, V4Range(addr).lo));
  V6 a = V6Range(addr).lo;
  if (IsMapped(a)) return f(Find(p.v4, static_cast<V4>(a)));
  return f(Find(p.v6, a));
}

}  // namespace

bool NetRules::Decide(Direction dir, Protocol proto, const IpPrefix& addr, uint16_t port) const {
  const Partition& p = dir == Direction::kEgress ? egress : ingress;
  return WithPiece(p, addr, [&](const auto& piece) { return piece.decision.Allows(proto, port); });
}

bool NetRules::DecideName(Direction dir, Protocol proto, const std::string& name,
                          const IpPrefix* addr, uint16_t port) const {
  const auto& domains = dir == Direction::kEgress ? egress_domains : ingress_domains;
  std::string n = NormaliseDomain(name);
  bool allowed = false, denied = false;
  for (const auto& [pattern, entry] : domains) {
    if (!DomainMatches(pattern, n)) continue;
    allowed |= entry.allow.Allows(proto, port);
    denied |= entry.deny.Allows(proto, port);
  }
  if (addr) {
    const Partition& p = dir == Direction::kEgress ? egress : ingress;
    WithPiece(p, *addr, [&](const auto& piece) {
      allowed |= piece.decision.Allows(proto, port);
      denied |= piece.denied.Allows(proto, port);
      return 0;
    });
  }
  return allowed && !denied;
}

namespace {

template <typename A>
bool In(Range<A> r, A a) {
  return r.lo <= a && a <= r.hi;
}

// Does a rule's address cover `addr`, with the folds the partition applies?
bool PrefixCovers(const IpPrefix& rule, bool deny, const IpPrefix& addr) {
  if (!rule.v6) {
    Range<V4> r = V4Range(rule);
    if (!addr.v6) return In(r, V4Range(addr).lo);
    V6 a = V6Range(addr).lo;
    if (IsMapped(a)) return In(r, static_cast<V4>(a));
    return deny && (In(Range<V6>{Nat64V6(r.lo), Nat64V6(r.hi)}, a) ||
                    In(Range<V6>{CompatV6(r.lo), CompatV6(r.hi)}, a));
  }
  Range<V6> r = V6Range(rule);
  // An IPv4 address is checked in its mapped form, where an IPv6 rule's
  // ::ffff:0:0/96 part folds into IPv4.
  return In(r, addr.v6 ? V6Range(addr).lo : MappedV6(V4Range(addr).lo));
}

}  // namespace

void NetRules::BuildIndex() {
  index_v4_.clear();
  index_v6_.clear();
  unindexed_.clear();
  domain_index_.clear();
  for (size_t i = 0; i < rules.size(); ++i) {
    const FlatRule& f = rules[i];
    if (f.peer.kind == ast::PeerKind::kDomain || f.peer.kind == ast::PeerKind::kWildcardDomain) {
      std::string pattern = (f.peer.kind == ast::PeerKind::kWildcardDomain ? "*." : "") +
                            NormaliseDomain(f.peer.domain);
      domain_index_[pattern].push_back(i);
      continue;
    }
    if (f.peer.kind != ast::PeerKind::kAddress) {
      unindexed_.push_back(i);
      continue;
    }
    if (!f.peer.prefix.v6) {
      Range<V4> r = V4Range(f.peer.prefix);
      index_v4_.push_back({r.lo, r.hi, 0, i});
      // Denies also reach the NAT64 and compatible forms: look those up in v6.
      if (!f.allow) {
        index_v6_.push_back({Nat64V6(r.lo), Nat64V6(r.hi), 0, i});
        index_v6_.push_back({CompatV6(r.lo), CompatV6(r.hi), 0, i});
      }
      continue;
    }
    Range<V6> r = V6Range(f.peer.prefix);
    index_v6_.push_back({r.lo, r.hi, 0, i});
    // The part inside ::ffff:0:0/96 also decides IPv4 addresses.
    V6 lo = std::max(r.lo, kMappedBlock.lo), hi = std::min(r.hi, kMappedBlock.hi);
    if (lo <= hi) index_v4_.push_back({lo & 0xffffffffu, hi & 0xffffffffu, 0, i});
  }
  for (auto* index : {&index_v4_, &index_v6_}) {
    std::sort(index->begin(), index->end(),
              [](const IndexEntry& a, const IndexEntry& b) { return a.lo < b.lo; });
    V6 max_hi = 0;
    for (IndexEntry& e : *index) e.max_hi = max_hi = std::max(max_hi, e.hi);
  }
}

std::vector<const FlatRule*> NetRules::Matching(Direction dir, Protocol proto, const IpPrefix* addr,
                                                const std::string* name, uint16_t port) const {
  std::vector<size_t> candidates = unindexed_;
  const std::string n = name ? NormaliseDomain(*name) : "";
  if (name) {
    // The name itself, then `*.parent` for each parent ("a.b.c": "*.b.c", "*.c").
    auto add = [&](const std::string& key) {
      auto it = domain_index_.find(key);
      if (it != domain_index_.end()) {
        candidates.insert(candidates.end(), it->second.begin(), it->second.end());
      }
    };
    add(n);
    for (size_t dot = n.find('.'); dot != std::string::npos; dot = n.find('.', dot + 1)) {
      add("*" + n.substr(dot));
    }
  }
  if (addr) {
    // IPv4 and IPv4-mapped addresses look in the v4 index, others in v6.
    V6 a = addr->v6 ? V6Range(*addr).lo : V6{V4Range(*addr).lo};
    bool v4 = !addr->v6 || IsMapped(a);
    if (v4) a &= 0xffffffffu;
    const std::vector<IndexEntry>& index = v4 ? index_v4_ : index_v6_;
    auto it = std::upper_bound(index.begin(), index.end(), a,
                               [](V6 x, const IndexEntry& e) { return x < e.lo; });
    while (it != index.begin()) {
      --it;
      if (it->max_hi < a) break;  // no earlier rule reaches this far
      if (it->hi >= a) candidates.push_back(it->rule);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<const FlatRule*> out;
  for (size_t i : candidates) {
    const FlatRule& f = rules[i];
    if (f.direction != dir || !f.what.Allows(proto, port)) continue;
    bool match = false;
    switch (f.peer.kind) {
      case ast::PeerKind::kAny:
        match = true;
        break;
      case ast::PeerKind::kLoopback: {
        const PeerPrefixes lo = LoopbackPrefixes();
        match =
            addr && (PrefixCovers(lo.v4, !f.allow, *addr) || PrefixCovers(lo.v6, !f.allow, *addr));
        break;
      }
      case ast::PeerKind::kAddress:
        match = addr && PrefixCovers(f.peer.prefix, !f.allow, *addr);
        break;
      case ast::PeerKind::kDomain:
      case ast::PeerKind::kWildcardDomain:
        match = name != nullptr;  // found through domain_index_ by the name
        break;
    }
    if (match) out.push_back(&f);
  }
  return out;
}

}  // namespace ward::ir
