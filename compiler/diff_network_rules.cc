// `ward diff`, network provenance: which source rules stand behind a line.
// Rules are indexed once per policy: address rules by range (with the
// IPv4-mapped, NAT64 and IPv4-compatible forms the partition gives them),
// domain rules by pattern.
#include <algorithm>
#include <unordered_map>

#include "compiler/diff_internal.h"

namespace ward::ir::diff_internal {
namespace {

// A source rule with the address ranges its peer covers, placed as the
// partition places them (network.h): an IPv6 rule's ::ffff:0:0/96 part also
// in IPv4, an IPv4 deny also at its NAT64 and IPv4-compatible forms.
struct IndexedRule {
  const FlatRule* rule = nullptr;
  std::vector<Range<V4>> v4;
  std::vector<Range<V6>> v6;
  std::string domain;  // the normalised pattern of a domain peer
};

void AddPrefixRanges(const IpPrefix& p, bool deny, IndexedRule* out) {
  if (!p.v6) {
    Range<V4> r = V4Range(p);
    out->v4.push_back(r);
    if (deny) {
      out->v6.push_back({Nat64V6(r.lo), Nat64V6(r.hi)});
      out->v6.push_back({CompatV6(r.lo), CompatV6(r.hi)});
    }
    return;
  }
  Range<V6> r = V6Range(p);
  out->v6.push_back(r);
  V6 lo = std::max(r.lo, MappedV6(0)), hi = std::min(r.hi, MappedV6(~V4{0}));
  if (lo <= hi) out->v4.push_back({static_cast<V4>(lo), static_cast<V4>(hi)});
}

IndexedRule Index(const FlatRule& f) {
  IndexedRule out;
  out.rule = &f;
  const PeerPrefixes all = AnyPrefixes(), lo = LoopbackPrefixes();
  switch (f.peer.kind) {
    case ast::PeerKind::kAny:
      AddPrefixRanges(all.v4, !f.allow, &out);
      AddPrefixRanges(all.v6, !f.allow, &out);
      break;
    case ast::PeerKind::kLoopback:
      AddPrefixRanges(lo.v4, !f.allow, &out);
      AddPrefixRanges(lo.v6, !f.allow, &out);
      break;
    case ast::PeerKind::kAddress:
      AddPrefixRanges(f.peer.prefix, !f.allow, &out);
      break;
    case ast::PeerKind::kDomain:
      out.domain = NormaliseDomain(f.peer.domain);
      break;
    case ast::PeerKind::kWildcardDomain:
      out.domain = "*." + NormaliseDomain(f.peer.domain);
      break;
  }
  return out;
}

bool PortsOverlap(const PortSet& a, const PortSet& b) {
  auto i = a.ranges().begin(), j = b.ranges().begin();
  while (i != a.ranges().end() && j != b.ranges().end()) {
    if (i->second < j->first) {
      ++i;
    } else if (j->second < i->first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

// Whether a rule names some of the line's protocol and ports.
bool Speaks(const NetDecision& what, const NetLine& l) {
  switch (l.proto) {
    case Protocol::kTcp:
      return PortsOverlap(what.tcp, l.what.tcp);
    case Protocol::kUdp:
      return PortsOverlap(what.udp, l.what.udp);
    case Protocol::kIcmp:
      return what.icmp;
  }
  return false;
}

// Address ranges of rules, for finding those that meet a range: narrow
// ranges sorted by their first address (a lookup scans from the query's
// start less the widest narrow range), wide ones (`any`, /8s) checked always.
template <typename A>
class AddressIndex {
 public:
  explicit AddressIndex(A wide) : wide_(wide) {}

  void Add(Range<A> r, size_t rule) {
    (r.hi - r.lo > wide_ ? wide_items_ : narrow_).push_back({r, rule});
  }

  void Finish() {
    std::sort(narrow_.begin(), narrow_.end(),
              [](const Item& a, const Item& b) { return a.range.lo < b.range.lo; });
    for (const Item& i : narrow_) span_ = std::max<A>(span_, i.range.hi - i.range.lo);
  }

  template <typename F>
  void ForEach(Range<A> q, F f) const {
    for (const Item& i : wide_items_) {
      if (i.range.lo <= q.hi && q.lo <= i.range.hi) f(i.rule);
    }
    A from = q.lo >= span_ ? q.lo - span_ : A{0};
    auto it = std::lower_bound(narrow_.begin(), narrow_.end(), from,
                               [](const Item& i, A a) { return i.range.lo < a; });
    for (; it != narrow_.end() && it->range.lo <= q.hi; ++it) {
      if (q.lo <= it->range.hi) f(it->rule);
    }
  }

 private:
  struct Item {
    Range<A> range;
    size_t rule;
  };
  A wide_;
  A span_ = 0;
  std::vector<Item> narrow_, wide_items_;
};

// The rules behind a line: by address for address lines, by name for name
// lines, both for resolved-name lines.

}  // namespace

std::vector<std::string> PatternsMatching(const std::string& name) {
  std::vector<std::string> out = {name};
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    std::string pattern = "*" + name.substr(dot);
    if (DomainMatches(pattern, name)) out.push_back(std::move(pattern));
  }
  return out;
}

struct NetRuleIndex::Impl {
  std::vector<const FlatRule*> rules;  // address rules
  AddressIndex<V4> v4{V4{1} << 16};
  AddressIndex<V6> v6{V6{1} << 80};
  std::unordered_map<std::string, std::vector<const FlatRule*>> by_name;
};

NetRuleIndex::NetRuleIndex(const NetRules& net) : impl_(std::make_unique<Impl>()) {
  for (const FlatRule& f : net.rules) {
    IndexedRule r = Index(f);
    if (!r.domain.empty()) {
      impl_->by_name[r.domain].push_back(&f);
      continue;
    }
    for (Range<V4> x : r.v4) impl_->v4.Add(x, impl_->rules.size());
    for (Range<V6> x : r.v6) impl_->v6.Add(x, impl_->rules.size());
    impl_->rules.push_back(&f);
  }
  impl_->v4.Finish();
  impl_->v6.Finish();
}

NetRuleIndex::~NetRuleIndex() = default;

std::vector<Span> NetRuleIndex::Cite(const NetLine& l, bool allow) const {
  std::vector<Span> out;
  auto take = [&](const FlatRule& f) {
    // (an implicit rule has no source to cite: compiler/agent_guard.h)
    if (f.allow == allow && f.direction == l.dir && Speaks(f.what, l) && f.implicit.empty())
      out.push_back(f.span);
  };
  for (Range<V4> r : l.v4) impl_->v4.ForEach(r, [&](size_t i) { take(*impl_->rules[i]); });
  for (Range<V6> r : l.v6) impl_->v6.ForEach(r, [&](size_t i) { take(*impl_->rules[i]); });
  for (const std::string& probe : l.probes) {
    for (const std::string& key : PatternsMatching(probe)) {
      auto it = impl_->by_name.find(key);
      if (it == impl_->by_name.end()) continue;
      for (const FlatRule* f : it->second) take(*f);
    }
  }
  SortSpans(&out);
  return out;
}

}  // namespace ward::ir::diff_internal
