// `ward diff`, network section: the lines (compiler/diff.h has their
// formats). Address lines come from overlaying OLD's and NEW's partitions;
// name lines from the domain patterns of both, one class per pattern;
// resolved-name lines from what neither of those states. The rules behind
// each line: diff_network_rules.cc.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "compiler/diff_internal.h"

namespace ward::ir::diff_internal {
namespace {

constexpr Protocol kProtocols[] = {Protocol::kTcp, Protocol::kUdp, Protocol::kIcmp};
constexpr Direction kDirections[] = {Direction::kEgress, Direction::kIngress};

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::kEgress:
      return "egress";
    case Direction::kIngress:
      return "ingress";
  }
  return "egress";
}

// One protocol's part of a decision.
NetDecision Only(const NetDecision& d, Protocol p) {
  NetDecision o;
  switch (p) {
    case Protocol::kTcp:
      o.tcp = d.tcp;
      break;
    case Protocol::kUdp:
      o.udp = d.udp;
      break;
    case Protocol::kIcmp:
      o.icmp = d.icmp;
      break;
  }
  return o;
}

std::string PortsText(const NetDecision& one, Protocol p) {
  switch (p) {
    case Protocol::kTcp:
      return one.tcp == PortSet::All() ? "" : " ports " + one.tcp.ToString();
    case Protocol::kUdp:
      return one.udp == PortSet::All() ? "" : " ports " + one.udp.ToString();
    case Protocol::kIcmp:
      return "";
  }
  return "";
}

void AddRange(NetLine* l, Range<V4> r) { l->v4.push_back(r); }
void AddRange(NetLine* l, Range<V6> r) { l->v6.push_back(r); }

std::string CidrText(const NetLine& l) {
  std::vector<std::string> cidrs;
  for (Range<V4> r : l.v4) {
    for (std::string& c : V4Cidrs(r)) cidrs.push_back(std::move(c));
  }
  for (Range<V6> r : l.v6) {
    for (std::string& c : V6Cidrs(r)) cidrs.push_back(std::move(c));
  }
  return Join(cidrs, ",");
}

std::string LineText(const NetLine& l) {
  std::string s =
      std::string(l.gained ? "+ " : "- ") + DirectionName(l.dir) + " " + ProtocolName(l.proto);
  std::vector<std::string> quoted;
  for (const std::string& p : l.patterns) quoted.push_back(Quote(p));
  if (!quoted.empty()) s += " " + Join(quoted, ",");
  if (!l.v4.empty() || !l.v6.empty()) s += (quoted.empty() ? " " : " at ") + CidrText(l);
  return s + PortsText(l.what, l.proto);
}

// ---- address partitions ---------------------------------------------------

template <typename A>
struct Segment {
  Range<A> range;
  const Piece<A>* before;
  const Piece<A>* after;
  NetDecision gained;  // by address: after minus before
  NetDecision lost;
};

// The common refinement of two partitions of the same space.
template <typename A>
std::vector<Segment<A>> Overlay(const std::vector<Piece<A>>& before,
                                const std::vector<Piece<A>>& after) {
  std::vector<Segment<A>> out;
  size_t i = 0, j = 0;
  A lo = 0;
  while (i < before.size() && j < after.size()) {
    const Piece<A>& a = before[i];
    const Piece<A>& b = after[j];
    A hi = std::min(a.range.hi, b.range.hi);
    Segment<A> s{{lo, hi}, &a, &b, {}, {}};
    if (!(a.decision == b.decision)) {
      s.gained = b.decision.Minus(a.decision);
      s.lost = a.decision.Minus(b.decision);
    }
    out.push_back(std::move(s));
    if (hi == ~A{0}) break;
    if (a.range.hi == hi) ++i;
    if (b.range.hi == hi) ++j;
    lo = hi + 1;
  }
  return out;
}

template <typename A>
struct Run {
  Range<A> range;
  NetDecision what;  // one protocol's change
};

// The maximal runs of contiguous ranges whose change in protocol `p` is the
// same and not empty. `items` are in address order.
template <typename A>
std::vector<Run<A>> Runs(const std::vector<std::pair<Range<A>, NetDecision>>& items, Protocol p) {
  std::vector<Run<A>> out;
  for (const auto& [r, d] : items) {
    NetDecision v = Only(d, p);
    if (v.empty()) continue;
    if (!out.empty() && out.back().range.hi != ~A{0} && out.back().range.hi + 1 == r.lo &&
        out.back().what == v) {
      out.back().range.hi = r.hi;
    } else {
      out.push_back({r, std::move(v)});
    }
  }
  return out;
}

// The IPv4 range whose NAT64 or IPv4-compatible form is `r`, if it is one.
std::optional<Range<V4>> V4Image(Range<V6> r) {
  for (V6 block : {Nat64V6(0), CompatV6(0)}) {
    if ((r.lo >> 32) << 32 == block && (r.hi >> 32) << 32 == block) {
      return Range<V4>{static_cast<V4>(r.lo), static_cast<V4>(r.hi)};
    }
  }
  return std::nullopt;
}

// Address lines of one direction and sign. An IPv6 run that is the NAT64 or
// IPv4-compatible form of an IPv4 run with the same change (an IPv4 deny
// covers both) joins that run's line.
void AddressLines(Direction dir, bool gained, const std::vector<Segment<V4>>& v4,
                  const std::vector<Segment<V6>>& v6, std::vector<NetLine>* out) {
  std::vector<std::pair<Range<V4>, NetDecision>> items4;
  std::vector<std::pair<Range<V6>, NetDecision>> items6;
  for (const Segment<V4>& s : v4) {
    const NetDecision& d = gained ? s.gained : s.lost;
    if (!d.empty()) items4.push_back({s.range, d});
  }
  for (const Segment<V6>& s : v6) {
    const NetDecision& d = gained ? s.gained : s.lost;
    if (!d.empty()) items6.push_back({s.range, d});
  }
  for (Protocol p : kProtocols) {
    NetLine line;
    line.gained = gained;
    line.dir = dir;
    line.proto = p;
    std::map<std::pair<V4, V4>, size_t> by_v4;
    for (const Run<V4>& run : Runs(items4, p)) {
      by_v4[{run.range.lo, run.range.hi}] = out->size();
      line.what = run.what;
      line.v4 = {run.range};
      out->push_back(line);
    }
    line.v4.clear();
    for (const Run<V6>& run : Runs(items6, p)) {
      std::optional<Range<V4>> image = V4Image(run.range);
      auto it = image ? by_v4.find({image->lo, image->hi}) : by_v4.end();
      if (it != by_v4.end() && (*out)[it->second].what == run.what) {
        (*out)[it->second].v6.push_back(run.range);
        continue;
      }
      line.what = run.what;
      line.v6 = {run.range};
      out->push_back(line);
    }
  }
}

// Address order (IPv4 first), then protocol, then gains before losses.
void SortAddressLines(std::vector<NetLine>::iterator begin, std::vector<NetLine>::iterator end) {
  auto key = [](const NetLine& l) {
    bool v4 = !l.v4.empty();
    return std::tuple(!v4, v4 ? V6{l.v4[0].lo} : l.v6[0].lo, static_cast<int>(l.proto), !l.gained);
  };
  std::stable_sort(begin, end, [&](const NetLine& a, const NetLine& b) { return key(a) < key(b); });
}

// ---- names ----------------------------------------------------------------

// The names whose most specific domain pattern (over both policies) is
// `pattern`: an exact name is its own class; `*.s` stands for the names under
// s that no exact or deeper pattern claims. Every name of a class matches the
// same patterns, so one probe decides for all of them.
struct NameClass {
  std::string pattern;
  std::string probe;
  DomainEntry before, after;                  // the entries of every pattern matching the class
  NetDecision by_name_before, by_name_after;  // the address not known
  NetDecision gained, lost;
};

// The grants of every pattern matching a name, united.
DomainEntry Lookup(const std::map<std::string, DomainEntry>& domains, const std::string& name) {
  DomainEntry e;
  for (const std::string& key : PatternsMatching(name)) {
    auto it = domains.find(key);
    if (it == domains.end()) continue;
    e.allow = e.allow.Union(it->second.allow);
    e.deny = e.deny.Union(it->second.deny);
  }
  return e;
}

std::vector<NameClass> NameClasses(const std::map<std::string, DomainEntry>& before,
                                   const std::map<std::string, DomainEntry>& after) {
  std::set<std::string> patterns;
  for (const auto& [k, e] : before) patterns.insert(k);
  for (const auto& [k, e] : after) patterns.insert(k);
  std::vector<NameClass> out;
  for (const std::string& p : patterns) {
    NameClass c;
    c.pattern = p;
    c.probe = p;
    if (p.rfind("*.", 0) == 0) {
      // A label that makes no exact pattern of its own.
      for (int i = 0; c.probe == p || patterns.count(c.probe); ++i) {
        c.probe = (i == 0 ? std::string("x") : "x" + std::to_string(i)) + p.substr(1);
      }
    }
    c.before = Lookup(before, c.probe);
    c.after = Lookup(after, c.probe);
    c.by_name_before = c.before.allow.Minus(c.before.deny);
    c.by_name_after = c.after.allow.Minus(c.after.deny);
    c.gained = c.by_name_after.Minus(c.by_name_before);
    c.lost = c.by_name_before.Minus(c.by_name_after);
    out.push_back(std::move(c));
  }
  return out;
}

void NameLines(Direction dir, const std::vector<NameClass>& classes, std::vector<NetLine>* out) {
  for (const NameClass& c : classes) {
    for (Protocol p : kProtocols) {
      for (bool gained : {true, false}) {
        NetDecision v = Only(gained ? c.gained : c.lost, p);
        if (v.empty()) continue;
        NetLine l;
        l.gained = gained;
        l.dir = dir;
        l.proto = p;
        l.what = v;
        l.patterns = {c.pattern};
        l.probes = {c.probe};
        out->push_back(std::move(l));
      }
    }
  }
}

// A name of class `c` resolved to an address of `piece`: some allow of the
// name or the address, and no deny of either (NetRules::DecideName).
template <typename A>
NetDecision Resolved(const DomainEntry& e, const Piece<A>& piece) {
  return e.allow.Union(piece.decision).Minus(e.deny.Union(piece.denied));
}

// Resolved-name changes of one class that neither the address lines nor the
// name line already state. Only an address deny meeting a domain grant
// (`denied`) or a domain deny can cause one: without either, a resolved
// name is allowed exactly when its name or its address is, so any change
// shows in one of those lines.
template <typename A>
void Residual(const NameClass& c, const std::vector<Segment<A>>& segments, bool gained,
              std::vector<std::pair<Range<A>, NetDecision>>* out) {
  for (const Segment<A>& s : segments) {
    NetDecision b = Resolved(c.before, *s.before), a = Resolved(c.after, *s.after);
    if (a == b) continue;
    NetDecision d = gained ? a.Minus(b).Minus(s.gained).Minus(c.gained)
                           : b.Minus(a).Minus(s.lost).Minus(c.lost);
    if (!d.empty()) out->push_back({s.range, d});
  }
}

// The same for every class whose domain denies did not change and whose
// name decision in both policies is `both`: then only `denied` can change
// a resolved name, and only for what the name is allowed in both, so the
// residual is `both` met with the change of `denied`, less the address
// change.
template <typename A>
void SharedResidual(const NetDecision& both, const std::vector<Segment<A>>& segments, bool gained,
                    std::vector<std::pair<Range<A>, NetDecision>>* out) {
  for (const Segment<A>& s : segments) {
    if (s.before->denied == s.after->denied) continue;
    NetDecision d = gained ? s.before->denied.Minus(s.after->denied).Minus(s.gained)
                           : s.after->denied.Minus(s.before->denied).Minus(s.lost);
    d = d.Intersect(both);
    if (!d.empty()) out->push_back({s.range, d});
  }
}

std::string DecisionKey(const NetDecision& d) {
  return d.tcp.ToString() + "|" + d.udp.ToString() + "|" + (d.icmp ? "icmp" : "");
}

// Collects resolved-name lines; classes whose change is the same over the
// same addresses share one.
class ResolvedLineSet {
 public:
  explicit ResolvedLineSet(Direction dir) : dir_(dir) {}

  void Add(const std::vector<const NameClass*>& classes, bool gained,
           const std::vector<std::pair<Range<V4>, NetDecision>>& items4,
           const std::vector<std::pair<Range<V6>, NetDecision>>& items6) {
    for (Protocol p : kProtocols) {
      std::map<std::string, NetLine> by_change;  // this group's lines, by change
      auto add = [&](const auto& run) {
        NetLine& l = by_change[DecisionKey(run.what)];
        l.gained = gained;
        l.dir = dir_;
        l.proto = p;
        l.what = run.what;
        AddRange(&l, run.range);
      };
      for (const Run<V4>& run : Runs(items4, p)) add(run);
      for (const Run<V6>& run : Runs(items6, p)) add(run);
      for (auto& [change, l] : by_change) {
        auto [it, inserted] = by_text_.emplace(LineText(l), lines_.size());
        if (inserted) lines_.push_back(l);
        for (const NameClass* c : classes) {
          lines_[it->second].patterns.push_back(c->pattern);
          lines_[it->second].probes.push_back(c->probe);
        }
      }
    }
  }

  // In name order, then protocol, gains first.
  void AppendTo(std::vector<NetLine>* out) {
    for (NetLine& l : lines_) {
      std::vector<size_t> order(l.patterns.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return l.patterns[a] < l.patterns[b]; });
      NetLine sorted = l;
      for (size_t i = 0; i < order.size(); ++i) {
        sorted.patterns[i] = l.patterns[order[i]];
        sorted.probes[i] = l.probes[order[i]];
      }
      l = std::move(sorted);
    }
    auto key = [](const NetLine& l) {
      return std::tuple(l.patterns, static_cast<int>(l.proto), !l.gained);
    };
    std::stable_sort(lines_.begin(), lines_.end(),
                     [&](const NetLine& a, const NetLine& b) { return key(a) < key(b); });
    out->insert(out->end(), lines_.begin(), lines_.end());
  }

 private:
  Direction dir_;
  std::map<std::string, size_t> by_text_;  // the line without its names -> line
  std::vector<NetLine> lines_;
};

void ResolvedLines(Direction dir, const std::vector<NameClass>& classes,
                   const std::vector<Segment<V4>>& v4, const std::vector<Segment<V6>>& v6,
                   std::vector<NetLine>* out) {
  ResolvedLineSet set(dir);
  std::map<std::string, std::pair<NetDecision, std::vector<const NameClass*>>> shared;
  for (const NameClass& c : classes) {
    if (c.before.deny == c.after.deny) {
      NetDecision both = c.by_name_before.Intersect(c.by_name_after);
      if (both.empty()) continue;
      auto& group = shared[DecisionKey(both)];
      group.first = both;
      group.second.push_back(&c);
      continue;
    }
    for (bool gained : {true, false}) {
      std::vector<std::pair<Range<V4>, NetDecision>> items4;
      std::vector<std::pair<Range<V6>, NetDecision>> items6;
      Residual(c, v4, gained, &items4);
      Residual(c, v6, gained, &items6);
      set.Add({&c}, gained, items4, items6);
    }
  }
  for (const auto& [key, group] : shared) {
    for (bool gained : {true, false}) {
      std::vector<std::pair<Range<V4>, NetDecision>> items4;
      std::vector<std::pair<Range<V6>, NetDecision>> items6;
      SharedResidual(group.first, v4, gained, &items4);
      SharedResidual(group.first, v6, gained, &items6);
      set.Add(group.second, gained, items4, items6);
    }
  }
  set.AppendTo(out);
}

std::vector<NetLine> DirectionLines(const NetRules& before, const NetRules& after, Direction dir) {
  bool egress = dir == Direction::kEgress;
  const Partition& pb = egress ? before.egress : before.ingress;
  const Partition& pa = egress ? after.egress : after.ingress;
  std::vector<Segment<V4>> v4 = Overlay(pb.v4, pa.v4);
  std::vector<Segment<V6>> v6 = Overlay(pb.v6, pa.v6);
  std::vector<NetLine> lines;
  AddressLines(dir, true, v4, v6, &lines);
  AddressLines(dir, false, v4, v6, &lines);
  SortAddressLines(lines.begin(), lines.end());
  std::vector<NameClass> classes =
      NameClasses(egress ? before.egress_domains : before.ingress_domains,
                  egress ? after.egress_domains : after.ingress_domains);
  NameLines(dir, classes, &lines);
  ResolvedLines(dir, classes, v4, v6, &lines);
  return lines;
}

void UnixLines(const std::set<std::string>& before, const std::set<std::string>& after,
               const NetRules& old_net, const NetRules& new_net, bool abstract,
               std::vector<Change>* out) {
  auto cite = [&](const NetRules& net, const std::string& name, bool allow,
                  std::vector<Span>* spans) {
    for (const UnixRule& r : net.unix_rules) {
      if (r.abstract == abstract && r.name == name && r.allow == allow && r.implicit.empty())
        spans->push_back(r.span);
    }
    SortSpans(spans);
  };
  std::set<std::string> all = before;
  all.insert(after.begin(), after.end());
  for (const std::string& name : all) {
    bool was = before.count(name) > 0, is = after.count(name) > 0;
    if (was == is) continue;
    Change c = MakeChange(
        DiffSection::kNetwork, is ? ChangeKind::kWidened : ChangeKind::kNarrowed,
        std::string(is ? "+ " : "- ") + "unix " + (abstract ? "@" + name : PathText(name)));
    cite(old_net, name, !is, &c.old_rules);
    cite(new_net, name, is, &c.new_rules);
    out->push_back(std::move(c));
  }
}

// `+ netlink route`: the workload may read the host's interfaces,
// addresses and routes (a widening), or no longer.
void NetlinkLines(const NetRules& old_net, const NetRules& new_net, std::vector<Change>* out) {
  auto cite = [](const NetRules& net, const std::string& protocol, bool allow,
                 std::vector<Span>* spans) {
    for (const NetlinkRule& r : net.netlink_rules) {
      if (r.protocol == protocol && r.allow == allow) spans->push_back(r.span);
    }
    SortSpans(spans);
  };
  std::set<std::string> all = old_net.netlink;
  all.insert(new_net.netlink.begin(), new_net.netlink.end());
  for (const std::string& protocol : all) {
    const bool was = old_net.netlink.count(protocol) > 0, is = new_net.netlink.count(protocol) > 0;
    if (was == is) continue;
    Change c = MakeChange(DiffSection::kNetwork, is ? ChangeKind::kWidened : ChangeKind::kNarrowed,
                          std::string(is ? "+ " : "- ") + "netlink " + protocol);
    cite(old_net, protocol, !is, &c.old_rules);
    cite(new_net, protocol, is, &c.new_rules);
    out->push_back(std::move(c));
  }
}

}  // namespace

void DiffNetwork(const NetRules& before, const NetRules& after, std::vector<Change>* out) {
  if (before == after) return;
  NetRuleIndex old_rules(before), new_rules(after);
  for (Direction dir : kDirections) {
    for (const NetLine& l : DirectionLines(before, after, dir)) {
      Change c = MakeChange(DiffSection::kNetwork,
                            l.gained ? ChangeKind::kWidened : ChangeKind::kNarrowed, LineText(l));
      // A gain: the new allows and the old denies; a loss: the old allows
      // and the new denies.
      c.old_rules = old_rules.Cite(l, !l.gained);
      c.new_rules = new_rules.Cite(l, l.gained);
      out->push_back(std::move(c));
    }
  }
  UnixLines(before.unix_paths, after.unix_paths, before, after, false, out);
  UnixLines(before.unix_abstract, after.unix_abstract, before, after, true, out);
  NetlinkLines(before, after, out);
}

}  // namespace ward::ir::diff_internal
