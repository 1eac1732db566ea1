#include "backends/nftables/ruleset.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace ward::backend::nftables {
namespace {

using json = nlohmann::ordered_json;

// One rendered piece of nft syntax: its text and its JSON.
struct Term {
  std::string text;
  json value;
};

struct Set {
  std::string name;
  std::vector<std::string> types;  // "ipv4_addr", "inet_service"
  bool interval = false;
  bool timeout = false;  // domain sets: elements expire with their DNS TTL
  std::vector<Term> elements;

  // A hash set whose elements are all known when the table is loaded (not a
  // domain set, which `ward apply` refreshes) is declared with its size: the
  // kernel then picks its fixed-size hash, which loads about twice as fast
  // as the resizable one (backends/nftables/README.md, "Load time").
  bool sized() const { return !interval && !timeout && !elements.empty(); }
};

struct Rule {
  std::string text;
  json expr = json::array();
};

struct Chain {
  std::string name;
  std::string hook;  // base chains only
  std::vector<Rule> rules;
};

// ---- terms ------------------------------------------------------------------

template <typename A>
std::string Format(A a) {
  if constexpr (sizeof(A) == 4) {
    return ir::FormatV4(a);
  } else {
    return ir::FormatV6(a);
  }
}

// An address range as nft writes it: one address, a prefix, or lo-hi.
template <typename A>
Term AddressTerm(ir::Range<A> r) {
  if (r.lo == r.hi) return {Format(r.lo), Format(r.lo)};
  const A size_minus_one = r.hi - r.lo;
  const bool prefix = (size_minus_one & (size_minus_one + 1)) == 0 && (r.lo & size_minus_one) == 0;
  if (prefix) {
    int host_bits = 0;
    for (A s = size_minus_one; s != 0; s >>= 1) ++host_bits;
    const int len = static_cast<int>(sizeof(A) * 8) - host_bits;
    if (len > 0) {
      return {Format(r.lo) + "/" + std::to_string(len),
              {{"prefix", {{"addr", Format(r.lo)}, {"len", len}}}}};
    }
  }
  return {Format(r.lo) + "-" + Format(r.hi), {{"range", {Format(r.lo), Format(r.hi)}}}};
}

Term PortTerm(std::pair<uint16_t, uint16_t> p) {
  if (p.first == p.second) return {std::to_string(p.first), p.first};
  return {std::to_string(p.first) + "-" + std::to_string(p.second),
          {{"range", {p.first, p.second}}}};
}

Term Concat(const Term& a, const Term& b) {
  return {a.text + " . " + b.text, {{"concat", {a.value, b.value}}}};
}

Term Match(const std::string& text, json left, json right) {
  return {text,
          {{"match", {{"op", "=="}, {"left", std::move(left)}, {"right", std::move(right)}}}}};
}

json Payload(const std::string& protocol, const std::string& field) {
  return {{"payload", {{"protocol", protocol}, {"field", field}}}};
}

Term CtDirection(bool original) {
  const char* d = original ? "original" : "reply";
  return Match(std::string("ct direction ") + d, {{"ct", {{"key", "direction"}}}}, d);
}

Term CtMark(uint32_t generation) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", generation);
  return Match(std::string("ct mark ") + hex, {{"ct", {{"key", "mark"}}}}, generation);
}

Term L4Proto(const std::string& proto) {
  return Match("meta l4proto " + proto, {{"meta", {{"key", "l4proto"}}}}, proto);
}

Term Verdict(const std::string& kind, const std::string& target = "") {
  if (target.empty()) return {kind, {{kind, nullptr}}};
  return {kind + " " + target, {{kind, {{"target", target}}}}};
}

Rule MakeRule(const std::vector<Term>& terms) {
  Rule r;
  for (const Term& t : terms) {
    r.text += (r.text.empty() ? "" : " ") + t.text;
    r.expr.push_back(t.value);
  }
  return r;
}

std::string ElementsText(const std::vector<Term>& elements, const char* indent) {
  std::string out;
  for (size_t i = 0; i < elements.size(); ++i) {
    out += indent + elements[i].text + (i + 1 < elements.size() ? ",\n" : "\n");
  }
  return out;
}

// ---- the partition as sets --------------------------------------------------

// Which header fields a lookup reads, for one direction of a flow.
struct Orientation {
  bool remote_is_daddr;  // the remote address is the destination
  bool port_is_dport;    // the port the rule names is the destination port
};

struct Family {
  const char* tag;      // "v4"
  const char* payload;  // "ip"
  const char* type;     // "ipv4_addr"
  const char* icmp;     // "icmp"
};
constexpr Family kV4{"v4", "ip", "ipv4_addr", "icmp"};
constexpr Family kV6{"v6", "ip6", "ipv6_addr", "ipv6-icmp"};

// The rule that gives a packet the `verdict` when its remote address (and
// port, for TCP and UDP), read with `o`, is in `set`. proto: 0 tcp, 1 udp,
// 2 icmp.
Rule LookupRule(const Family& family, const Set& set, int proto, Orientation o, const Term& prefix,
                const Term& verdict) {
  const std::string addr_field = o.remote_is_daddr ? "daddr" : "saddr";
  const std::string port_field = o.port_is_dport ? "dport" : "sport";
  if (proto == 2) {
    Term lookup = Match(std::string(family.payload) + " " + addr_field + " @" + set.name,
                        Payload(family.payload, addr_field), "@" + set.name);
    return MakeRule({prefix, L4Proto(family.icmp), lookup, verdict});
  }
  const std::string p = proto == 0 ? "tcp" : "udp";
  Term lookup = Match(std::string(family.payload) + " " + addr_field + " . " + p + " " +
                          port_field + " @" + set.name,
                      {{"concat", {Payload(family.payload, addr_field), Payload(p, port_field)}}},
                      "@" + set.name);
  return MakeRule({prefix, lookup, verdict});
}

// `tcp dport 443`, `tcp dport 8000-8080` or `tcp dport { 22, 443 }`.
Term PortMatch(const std::string& proto, const std::string& field, const ir::PortSet& ports) {
  const auto& ranges = ports.ranges();
  const std::string left = proto + " " + field + " ";
  if (ranges.size() == 1) {
    const Term t = PortTerm(ranges[0]);
    return Match(left + t.text, Payload(proto, field), t.value);
  }
  std::string text = "{ ";
  json set = json::array();
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Term t = PortTerm(ranges[i]);
    text += (i ? ", " : "") + t.text;
    set.push_back(t.value);
  }
  return Match(left + text + " }", Payload(proto, field), {{"set", set}});
}

// The addresses sharing one decision, in a set of addresses alone: one
// element per address instead of one per (address, port range) in the
// concatenations, and half the cost of each element (no concatenation to
// parse and evaluate). Its rules name the ports inline, port first, so a
// packet to another port never reaches the address lookup.
struct Class {
  bool exact = true;  // single addresses (hash set) or ranges (interval set)
  ir::NetDecision decision;
  Set set;
};

// Per direction, family and kind (exact or ranges), the kMaxClasses largest
// groups of at least kClassMin pieces sharing a decision become classes;
// the other pieces stay in the concatenations. The bound keeps a packet's
// cost flat: at most kMaxClasses rules per kind and protocol before the
// concatenation lookups, whatever the number of addresses.
constexpr size_t kMaxClasses = 4;
constexpr size_t kClassMin = 2;

// A decision as a sortable key (the classes' order must not depend on
// anything but the policy).
std::string DecisionKey(const ir::NetDecision& d) {
  std::string k;
  for (const ir::PortSet* ports : {&d.tcp, &d.udp}) {
    for (const auto& [lo, hi] : ports->ranges()) {
      k += std::to_string(lo) + "-" + std::to_string(hi) + ",";
    }
    k += "/";
  }
  return k + (d.icmp ? "icmp" : "");
}

// The sets of one direction and family, and the rules that look them up.
class DirectionSets {
 public:
  DirectionSets(std::string dir, const Family& family) : dir_(std::move(dir)), family_(family) {}

  template <typename A>
  void Add(const std::vector<ir::Piece<A>>& pieces) {
    const std::map<std::pair<bool, std::string>, size_t> class_of = Classify(pieces);
    for (const ir::Piece<A>& p : pieces) {
      if (p.decision.empty()) continue;
      const Term addr = AddressTerm(p.range);
      auto c = class_of.find({p.range.lo == p.range.hi, DecisionKey(p.decision)});
      if (c != class_of.end()) {
        classes_[c->second].set.elements.push_back(addr);
        continue;
      }
      for (int proto = 0; proto < 2; ++proto) {
        const ir::PortSet& ports = proto == 0 ? p.decision.tcp : p.decision.udp;
        for (const auto& range : ports.ranges()) {
          const bool exact = p.range.lo == p.range.hi && range.first == range.second;
          Set& s = ports_[proto][exact ? 0 : 1];
          s.elements.push_back(Concat(addr, PortTerm(range)));
        }
      }
      if (p.decision.icmp) {
        if (p.range.lo == p.range.hi) {
          icmp_[0].elements.push_back(addr);
        } else if (!icmp_ranges_.empty() &&
                   icmp_ranges_hi_ + 1 == static_cast<ir::V6>(p.range.lo)) {
          // Neighbours both allowing ICMP (differing in ports) are one range.
          icmp_ranges_.back().hi = p.range.hi;
          icmp_ranges_hi_ = p.range.hi;
        } else {
          icmp_ranges_.push_back({p.range.lo, p.range.hi});
          icmp_ranges_hi_ = p.range.hi;
        }
      }
    }
    for (const auto& r : icmp_ranges_) {
      icmp_[1].elements.push_back(
          AddressTerm(ir::Range<A>{static_cast<A>(r.lo), static_cast<A>(r.hi)}));
    }
    icmp_ranges_.clear();
    Name();
  }

  void AppendSets(std::vector<Set>& out) const {
    for (const Class& c : classes_) out.push_back(c.set);
    for (const auto& kinds : ports_) {
      for (const Set& s : kinds) {
        if (!s.elements.empty()) out.push_back(s);
      }
    }
    for (const Set& s : icmp_) {
      if (!s.elements.empty()) out.push_back(s);
    }
  }

  // The rules that give a packet matching these sets, read with `o`, the
  // `verdict`; `prefix` goes in front (ct direction).
  void AppendRules(const Term& prefix, Orientation o, const Term& verdict,
                   std::vector<Rule>& out) const {
    const std::string addr_field = o.remote_is_daddr ? "daddr" : "saddr";
    const std::string port_field = o.port_is_dport ? "dport" : "sport";
    for (const Class& c : classes_) {
      const Term lookup = Match(std::string(family_.payload) + " " + addr_field + " @" + c.set.name,
                                Payload(family_.payload, addr_field), "@" + c.set.name);
      if (!c.decision.tcp.empty()) {
        out.push_back(
            MakeRule({prefix, PortMatch("tcp", port_field, c.decision.tcp), lookup, verdict}));
      }
      if (!c.decision.udp.empty()) {
        out.push_back(
            MakeRule({prefix, PortMatch("udp", port_field, c.decision.udp), lookup, verdict}));
      }
      if (c.decision.icmp) out.push_back(LookupRule(family_, c.set, 2, o, prefix, verdict));
    }
    for (int proto = 0; proto < 2; ++proto) {
      for (const Set& s : ports_[proto]) {
        if (!s.elements.empty()) out.push_back(LookupRule(family_, s, proto, o, prefix, verdict));
      }
    }
    for (const Set& s : icmp_) {
      if (!s.elements.empty()) out.push_back(LookupRule(family_, s, 2, o, prefix, verdict));
    }
  }

 private:
  // Chooses the classes (kMaxClasses, kClassMin) and creates their sets:
  // (exact, decision key) -> index in classes_.
  template <typename A>
  std::map<std::pair<bool, std::string>, size_t> Classify(const std::vector<ir::Piece<A>>& pieces) {
    std::map<std::pair<bool, std::string>, std::pair<size_t, const ir::NetDecision*>> groups;
    for (const ir::Piece<A>& p : pieces) {
      if (p.decision.empty()) continue;
      auto& g = groups[{p.range.lo == p.range.hi, DecisionKey(p.decision)}];
      ++g.first;
      g.second = &p.decision;
    }
    std::map<std::pair<bool, std::string>, size_t> chosen;
    for (const bool exact : {true, false}) {
      std::vector<std::pair<size_t, std::string>> ranked;  // (pieces, key)
      for (const auto& [key, g] : groups) {
        if (key.first == exact && g.first >= kClassMin) ranked.push_back({g.first, key.second});
      }
      std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      if (ranked.size() > kMaxClasses) ranked.resize(kMaxClasses);
      for (size_t i = 0; i < ranked.size(); ++i) {
        Class c;
        c.exact = exact;
        c.decision = *groups.at({exact, ranked[i].second}).second;
        c.set.name =
            dir_ + "_" + family_.tag + (exact ? "_exact_c" : "_ranges_c") + std::to_string(i);
        c.set.types = {family_.type};
        c.set.interval = !exact;
        chosen[{exact, ranked[i].second}] = classes_.size();
        classes_.push_back(std::move(c));
      }
    }
    return chosen;
  }

  void Name() {
    const std::string base = dir_ + "_" + family_.tag + "_";
    for (int proto = 0; proto < 2; ++proto) {
      const std::string p = proto == 0 ? "tcp" : "udp";
      ports_[proto][0].name = base + p + "_exact";
      ports_[proto][0].types = {family_.type, "inet_service"};
      ports_[proto][1].name = base + p + "_ranges";
      ports_[proto][1].types = {family_.type, "inet_service"};
      ports_[proto][1].interval = true;
    }
    icmp_[0].name = base + "icmp_exact";
    icmp_[0].types = {family_.type};
    icmp_[1].name = base + "icmp_ranges";
    icmp_[1].types = {family_.type};
    icmp_[1].interval = true;
  }

  std::string dir_;
  Family family_;
  std::vector<Class> classes_;
  Set ports_[2][2];  // [tcp|udp][exact (hash)|ranges (interval)]
  Set icmp_[2];      // [exact|ranges]
  std::vector<ir::Range<ir::V6>> icmp_ranges_;
  ir::V6 icmp_ranges_hi_ = 0;
};

// ---- domains ----------------------------------------------------------------
//
// A direction's domain grants become sets `<dir>_<v4|v6>_dom_<tcp|udp|icmp>`
// with `flags timeout`: `ward apply` fills them with the addresses the names
// resolve to, each element timing out with its (clamped) DNS TTL, so an
// address nobody re-resolved stops being allowed by itself. The denies a
// grant must not override (the IR's Piece::denied) are sets
// `<dir>_denied_<v4|v6>_...`, looked up before the domain sets with `return`
// (refused).

bool Resolvable(const std::string& pattern) { return pattern.rfind("*.", 0) != 0; }

const std::map<std::string, ir::DomainEntry>& Domains(const ir::NetRules& net, ir::Direction d) {
  return d == ir::Direction::kEgress ? net.egress_domains : net.ingress_domains;
}

// What a direction's resolvable grants allow in all: the sets it needs.
ir::NetDecision DomainUnion(const ir::NetRules& net, ir::Direction d) {
  ir::NetDecision u;
  for (const auto& [pattern, entry] : Domains(net, d)) {
    if (Resolvable(pattern)) u = u.Union(entry.allow);
  }
  return u;
}

Term Timed(const Term& t, uint32_t ttl) {
  return {t.text + " timeout " + std::to_string(ttl) + "s",
          {{"elem", {{"val", t.value}, {"timeout", ttl}}}}};
}

using Grants = std::vector<std::pair<ir::NetDecision, uint32_t>>;  // what, TTL

// The resolved addresses of one direction: per address, the grants (and
// TTLs) of the patterns that resolved to it. IPv4-mapped answers are IPv4.
struct Grouped {
  std::map<ir::V4, Grants> v4;
  std::map<ir::V6, Grants> v6;
};

Grouped Group(const ir::NetRules& net, ir::Direction d,
              const std::vector<ResolvedAddress>& resolved) {
  Grouped g;
  for (const ResolvedAddress& r : resolved) {
    if (r.direction != d || !Resolvable(r.pattern)) continue;
    auto it = Domains(net, d).find(r.pattern);
    if (it == Domains(net, d).end() || it->second.allow.empty()) continue;
    if (!r.address.v6) {
      g.v4[ir::V4Range(r.address).lo].push_back({it->second.allow, r.ttl});
    } else if (const ir::V6 a = ir::V6Range(r.address).lo; ir::IsMapped(a)) {
      g.v4[static_cast<ir::V4>(a & 0xffffffffu)].push_back({it->second.allow, r.ttl});
    } else {
      g.v6[a].push_back({it->second.allow, r.ttl});
    }
  }
  return g;
}

// The domain sets of one direction and family.
class DomainSets {
 public:
  DomainSets(const std::string& dir, const Family& family, const ir::NetDecision& allows)
      : family_(family) {
    const std::string base = dir + "_" + family.tag + "_dom_";
    const char* names[3] = {"tcp", "udp", "icmp"};
    for (int proto = 0; proto < 3; ++proto) {
      Set& s = sets_[proto];
      s.name = base + names[proto];
      s.types = {family.type};
      if (proto < 2) s.types.push_back("inet_service");
      s.interval = proto < 2;
      s.timeout = true;
    }
    present_[0] = !allows.tcp.empty();
    present_[1] = !allows.udp.empty();
    present_[2] = allows.icmp;
  }

  template <typename A>
  void Fill(const std::map<A, Grants>& addresses) {
    for (const auto& [addr, grants] : addresses) {
      const Term a = AddressTerm(ir::Range<A>{addr, addr});
      std::set<uint32_t, std::greater<>> ttls;
      for (const auto& g : grants) ttls.insert(g.second);
      for (int proto = 0; proto < 2; ++proto) {
        // Each port gets the longest TTL of the grants allowing it; ports
        // with different TTLs are separate elements (adjacent, never
        // overlapping, as interval sets require).
        ir::PortSet done;
        for (uint32_t ttl : ttls) {
          ir::PortSet ports;
          for (const auto& [what, t] : grants) {
            if (t == ttl) ports = ports.Union(proto == 0 ? what.tcp : what.udp);
          }
          ports = ports.Minus(done);
          for (const auto& range : ports.ranges()) {
            sets_[proto].elements.push_back(Timed(Concat(a, PortTerm(range)), ttl));
          }
          done = done.Union(ports);
        }
      }
      uint32_t icmp_ttl = 0;
      bool icmp = false;
      for (const auto& [what, ttl] : grants) {
        if (!what.icmp) continue;
        icmp = true;
        icmp_ttl = std::max(icmp_ttl, ttl);
      }
      if (icmp) sets_[2].elements.push_back(Timed(a, icmp_ttl));
    }
  }

  void AppendSets(std::vector<Set>& out) const {
    for (int p = 0; p < 3; ++p) {
      if (present_[p]) out.push_back(sets_[p]);
    }
  }

  void AppendRules(const Term& prefix, Orientation o, const Term& verdict,
                   std::vector<Rule>& out) const {
    for (int p = 0; p < 3; ++p) {
      if (present_[p]) out.push_back(LookupRule(family_, sets_[p], p, o, prefix, verdict));
    }
  }

  // Replaces the sets' elements: flush and add, in the caller's transaction.
  void AppendRefresh(const std::string& table, std::string& out) const {
    for (int p = 0; p < 3; ++p) {
      if (!present_[p]) continue;
      out += "flush set inet " + table + " " + sets_[p].name + "\n";
      if (sets_[p].elements.empty()) continue;
      out += "add element inet " + table + " " + sets_[p].name + " {\n" +
             ElementsText(sets_[p].elements, "\t") + "}\n";
    }
  }

 private:
  Family family_;
  Set sets_[3];
  bool present_[3] = {false, false, false};
};

// One direction's domain machinery: the denied sets and the domain sets, per
// family; nothing when the direction has no resolvable grant.
class DirectionDomains {
 public:
  DirectionDomains(const ir::NetRules& net, ir::Direction d,
                   const std::vector<ResolvedAddress>& resolved)
      : dir_(d == ir::Direction::kEgress ? "egress" : "ingress"),
        denied4_(dir_ + "_denied", kV4),
        denied6_(dir_ + "_denied", kV6),
        domains4_(dir_, kV4, DomainUnion(net, d)),
        domains6_(dir_, kV6, DomainUnion(net, d)) {
    active_ = !DomainUnion(net, d).empty();
    if (!active_) return;
    const ir::Partition& part = d == ir::Direction::kEgress ? net.egress : net.ingress;
    denied4_.Add(DeniedPieces(part.v4));
    denied6_.Add(DeniedPieces(part.v6));
    const Grouped g = Group(net, d, resolved);
    domains4_.Fill(g.v4);
    domains6_.Fill(g.v6);
  }

  bool active() const { return active_; }

  void AppendSets(std::vector<Set>& out) const {
    if (!active_) return;
    denied4_.AppendSets(out);
    denied6_.AppendSets(out);
    domains4_.AppendSets(out);
    domains6_.AppendSets(out);
  }

  // Denied first (return: the caller refuses), then the grants.
  void AppendRules(const Term& prefix, Orientation o, std::vector<Rule>& out) const {
    if (!active_) return;
    denied4_.AppendRules(prefix, o, Verdict("return"), out);
    denied6_.AppendRules(prefix, o, Verdict("return"), out);
    domains4_.AppendRules(prefix, o, Verdict("goto", "allow"), out);
    domains6_.AppendRules(prefix, o, Verdict("goto", "allow"), out);
  }

  void AppendRefresh(const std::string& table, std::string& out) const {
    if (!active_) return;
    domains4_.AppendRefresh(table, out);
    domains6_.AppendRefresh(table, out);
  }

 private:
  template <typename A>
  static std::vector<ir::Piece<A>> DeniedPieces(const std::vector<ir::Piece<A>>& pieces) {
    std::vector<ir::Piece<A>> out;
    for (const ir::Piece<A>& p : pieces) {
      if (p.denied.empty()) continue;
      ir::Piece<A> d = p;
      d.decision = p.denied;
      out.push_back(d);
    }
    return out;
  }

  std::string dir_;
  DirectionSets denied4_, denied6_;
  DomainSets domains4_, domains6_;
  bool active_ = false;
};

// ---- rendering --------------------------------------------------------------

void RenderSetText(const Set& s, std::string& out) {
  out += "\tset " + s.name + " {\n\t\ttype ";
  for (size_t i = 0; i < s.types.size(); ++i) out += (i ? " . " : "") + s.types[i];
  out += "\n";
  if (s.interval && s.timeout) {
    out += "\t\tflags interval, timeout\n";
  } else if (s.interval) {
    out += "\t\tflags interval\n";
  } else if (s.timeout) {
    out += "\t\tflags timeout\n";
  }
  if (s.sized()) out += "\t\tsize " + std::to_string(s.elements.size()) + "\n";
  if (s.elements.empty()) {
    out += "\t}\n";
    return;
  }
  out += "\t\telements = {\n";
  out += ElementsText(s.elements, "\t\t\t");
  out += "\t\t}\n\t}\n";
}

void RenderChainText(const Chain& c, std::string& out) {
  out += "\tchain " + c.name + " {\n";
  if (!c.hook.empty()) {
    out += "\t\ttype filter hook " + c.hook + " priority filter; policy accept;\n";
  }
  for (const Rule& r : c.rules) out += "\t\t" + r.text + "\n";
  out += "\t}\n";
}

json TableRef(const std::string& table) { return {{"family", "inet"}, {"name", table}}; }

json SetJson(const std::string& table, const Set& s) {
  json j = {{"family", "inet"}, {"table", table}, {"name", s.name}};
  if (s.types.size() == 1) {
    j["type"] = s.types[0];
  } else {
    j["type"] = s.types;
  }
  json flags = json::array();
  if (s.interval) flags.push_back("interval");
  if (s.timeout) flags.push_back("timeout");
  if (!flags.empty()) j["flags"] = flags;
  if (s.sized()) j["size"] = s.elements.size();
  if (s.elements.empty()) return j;
  json elems = json::array();
  for (const Term& e : s.elements) elems.push_back(e.value);
  j["elem"] = elems;
  return j;
}

std::string ScopeText(const Scope& s) {
  switch (s.kind) {
    case Scope::Kind::kCgroup:
      return "cgroup " + s.cgroup_path;
    case Scope::Kind::kUid:
      return "uid " + std::to_string(s.uid);
    case Scope::Kind::kInterface:
      return "interface " + s.interface;
  }
  return "";
}

Term ScopeMatch(const Scope& s, bool inbound_interface) {
  switch (s.kind) {
    case Scope::Kind::kCgroup:
      return Match(
          "socket cgroupv2 level " + std::to_string(s.cgroup_level) + " \"" + s.cgroup_path + "\"",
          {{"socket", {{"key", "cgroupv2"}, {"level", s.cgroup_level}}}}, s.cgroup_path);
    case Scope::Kind::kUid:
      return Match("meta skuid " + std::to_string(s.uid), {{"meta", {{"key", "skuid"}}}}, s.uid);
    case Scope::Kind::kInterface: {
      const std::string key = inbound_interface ? "iifname" : "oifname";
      return Match(key + " \"" + s.interface + "\"", {{"meta", {{"key", key}}}}, s.interface);
    }
  }
  return {};
}

// The base chains: they send the scope's packets to the policy, or, without
// a scope, dispatch nothing.
std::vector<Chain> BaseChains(const std::optional<Scope>& scope) {
  Chain output{"output", "output", {}}, input{"input", "input", {}},
      forward{"forward", "forward", {}};
  if (scope && scope->kind != Scope::Kind::kInterface) {
    output.rules.push_back(MakeRule({ScopeMatch(*scope, false), Verdict("goto", "egress_reject")}));
    input.rules.push_back(MakeRule({ScopeMatch(*scope, false), Verdict("goto", "ingress_reject")}));
  } else if (scope) {
    // A VM's egress arrives from its tap (input, forward); its ingress
    // leaves towards it (forward, output).
    input.rules.push_back(MakeRule({ScopeMatch(*scope, true), Verdict("goto", "egress_drop")}));
    forward.rules.push_back(MakeRule({ScopeMatch(*scope, true), Verdict("goto", "egress_drop")}));
    forward.rules.push_back(MakeRule({ScopeMatch(*scope, false), Verdict("goto", "ingress_drop")}));
    output.rules.push_back(MakeRule({ScopeMatch(*scope, false), Verdict("goto", "ingress_drop")}));
  }
  return {output, input, forward};
}

bool CheckDomains(const ir::Policy& policy, bool applying, DiagnosticSink& sink) {
  bool ok = true;
  bool noted = false;
  for (const ir::FlatRule& r : policy.network.rules) {
    const bool wildcard = r.peer.kind == ast::PeerKind::kWildcardDomain;
    if (r.peer.kind != ast::PeerKind::kDomain && !wildcard) continue;
    if (!r.allow) {
      sink.Error(Code::kCannotExpress, r.span,
                 "nftables cannot enforce a deny by domain: the name's other addresses get through",
                 "deny the addresses instead, or use a DNS-aware target");
      ok = false;
    } else if (wildcard) {
      sink.Warning(Code::kCannotExpress, r.span,
                   "nftables cannot resolve a wildcard ahead of time: flows to names under it are "
                   "denied unless an address rule allows them",
                   "name the hosts the workload needs");
    } else if (!applying && !noted) {
      sink.Warning(Code::kCannotExpress, r.span,
                   "the compiled table's domain sets are empty: `ward apply` resolves the names "
                   "and fills them (elements time out with their DNS TTL)",
                   "load it with `ward apply`, not `nft -f`, or grant the addresses");
      noted = true;
    }
  }
  return ok;
}

}  // namespace

std::string TableName(const std::string& policy) { return "ward_" + policy; }

bool HasResolvableDomains(const ir::Policy& policy) {
  return !DomainUnion(policy.network, ir::Direction::kEgress).empty() ||
         !DomainUnion(policy.network, ir::Direction::kIngress).empty();
}

std::string DomainRefreshText(const ir::Policy& policy,
                              const std::vector<ResolvedAddress>& resolved) {
  const std::string table = TableName(policy.name);
  std::string out;
  DirectionDomains(policy.network, ir::Direction::kEgress, resolved).AppendRefresh(table, out);
  DirectionDomains(policy.network, ir::Direction::kIngress, resolved).AppendRefresh(table, out);
  return out;
}

std::string RemoveText(const std::string& table) {
  return "table inet " + table + "\ndelete table inet " + table + "\n";
}

bool RenderRuleset(const ir::Policy& policy, const RenderOptions& options, Ruleset* out,
                   DiagnosticSink& sink) {
  if (!CheckDomains(policy, options.scope.has_value(), sink)) return false;
  const ir::NetRules& net = policy.network;
  DirectionSets egress4("egress", kV4), egress6("egress", kV6);
  DirectionSets ingress4("ingress", kV4), ingress6("ingress", kV6);
  egress4.Add(net.egress.v4);
  egress6.Add(net.egress.v6);
  ingress4.Add(net.ingress.v4);
  ingress6.Add(net.ingress.v6);

  const DirectionDomains egress_domains(net, ir::Direction::kEgress, options.resolved);
  const DirectionDomains ingress_domains(net, ir::Direction::kIngress, options.resolved);

  std::vector<Set> sets;
  for (const DirectionSets* d : {&egress4, &egress6, &ingress4, &ingress6}) d->AppendSets(sets);
  egress_domains.AppendSets(sets);
  ingress_domains.AppendSets(sets);

  // `egress`: packets leaving the workload (its flows' first direction, or
  // replies of flows it accepted); `ingress`: packets reaching it.
  // Every packet is looked up: no fast path on the conntrack mark. A mark
  // equal to the generation proves nothing when another Ward table covering
  // the same socket (a uid scope and a cgroup scope), or any other host tool,
  // sets the same small value; a flow another table allowed would pass this
  // one unlooked-up. The mark only records which generation last allowed a
  // flow (and `ward status` reads the generation from `allow`).
  Chain egress{"egress", "", {}};
  // A reset reaching the workload closes a flow and opens none; it is how
  // a refused connect (ours, sent from the output hook) reaches its socket.
  const Term rst{
      "tcp flags & rst == rst",
      {{"match",
        {{"op", "=="}, {"left", {{"&", {Payload("tcp", "flags"), "rst"}}}}, {"right", "rst"}}}}};
  // ICMP errors about a flow conntrack tracks (fragmentation needed, port
  // unreachable) reach the workload: they carry no data and open nothing.
  const Term related = Match("ct state related", {{"ct", {{"key", "state"}}}}, "related");
  Chain ingress{
      "ingress",
      "",
      {MakeRule({rst, Verdict("accept")}), MakeRule({related, L4Proto("icmp"), Verdict("accept")}),
       MakeRule({related, L4Proto("ipv6-icmp"), Verdict("accept")})}};
  const Term original = CtDirection(true), reply = CtDirection(false);
  const Term allow_verdict = Verdict("goto", "allow");
  for (const DirectionSets* d : {&egress4, &egress6}) {
    d->AppendRules(original, {true, true}, allow_verdict, egress.rules);
  }
  for (const DirectionSets* d : {&ingress4, &ingress6}) {
    d->AppendRules(reply, {true, false}, allow_verdict, egress.rules);
    d->AppendRules(original, {false, true}, allow_verdict, ingress.rules);
  }
  for (const DirectionSets* d : {&egress4, &egress6}) {
    d->AppendRules(reply, {false, false}, allow_verdict, ingress.rules);
  }
  // Domain grants after the partition: what a deny refuses is refused
  // (return), then the resolved addresses are looked up.
  egress_domains.AppendRules(original, {true, true}, egress.rules);
  ingress_domains.AppendRules(reply, {true, false}, egress.rules);
  ingress_domains.AppendRules(original, {false, true}, ingress.rules);
  egress_domains.AppendRules(reply, {false, false}, ingress.rules);
  Term set_mark{
      "ct mark set " + CtMark(options.generation).text.substr(8),
      {{"mangle", {{"key", {{"ct", {{"key", "mark"}}}}}, {"value", options.generation}}}}};
  Chain allow{"allow", "", {MakeRule({set_mark, Verdict("accept")})}};
  const Term tcp = L4Proto("tcp");
  const Term reset{"reject with tcp reset", {{"reject", {{"type", "tcp reset"}}}}};
  const Term prohibited{"reject with icmpx admin-prohibited",
                        {{"reject", {{"type", "icmpx"}, {"expr", "admin-prohibited"}}}}};
  // The drop chains (an interface scope: a VM's tap) pass IPv6 neighbour
  // discovery first: without it the VM and the host cannot resolve each
  // other's link-layer address and no IPv6 packet, allowed or not, gets
  // through (conntrack does not track these messages, so no `ct direction`
  // rule would match them). Hop limit 255 is what RFC 4861 requires of them
  // and what no forwarded packet carries.
  const Term nd{
      "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert }",
      {{"match",
        {{"op", "=="},
         {"left", Payload("icmpv6", "type")},
         {"right", {{"set", json::array({"nd-neighbor-solicit", "nd-neighbor-advert"})}}}}}}};
  const Term hop255 = Match("ip6 hoplimit 255", Payload("ip6", "hoplimit"), 255);
  // A drop is silent: the named counters `egress_dropped` and
  // `ingress_dropped` are what it leaves (`nft list counters`).
  std::vector<std::string> counters;
  std::vector<Chain> chains = {egress, ingress, allow};
  for (const char* dir : {"egress", "ingress"}) {
    chains.push_back(
        {std::string(dir) + "_reject",
         "",
         {MakeRule({Verdict("jump", dir)}), MakeRule({tcp, reset}), MakeRule({prohibited})}});
    const std::string counter = std::string(dir) + "_dropped";
    counters.push_back(counter);
    const Term count{"counter name \"" + counter + "\"", {{"counter", counter}}};
    chains.push_back({std::string(dir) + "_drop",
                      "",
                      {MakeRule({nd, hop255, Verdict("accept")}), MakeRule({Verdict("jump", dir)}),
                       MakeRule({count, Verdict("drop")})}});
  }
  for (Chain& c : BaseChains(options.scope)) chains.push_back(std::move(c));

  const std::string table = TableName(policy.name);
  out->table = table;
  out->elements = 0;
  for (const Set& s : sets) out->elements += s.elements.size();

  std::string& text = out->text;
  text = "# ward: policy \"" + policy.name + "\", generation " +
         std::to_string(options.generation) + ", scope " +
         (options.scope ? ScopeText(*options.scope) : std::string("none (ward apply adds it)")) +
         "\n";
  text += RemoveText(table);
  text += "table inet " + table + " {\n";
  for (size_t i = 0; i < sets.size(); ++i) RenderSetText(sets[i], text);
  for (const std::string& c : counters) text += "\tcounter " + c + " {\n\t}\n";
  for (const Chain& c : chains) RenderChainText(c, text);
  text += "}\n";

  if (!options.render_json) return true;
  json cmds = json::array();
  cmds.push_back({{"metainfo", {{"json_schema_version", 1}}}});
  cmds.push_back({{"add", {{"table", TableRef(table)}}}});
  cmds.push_back({{"delete", {{"table", TableRef(table)}}}});
  cmds.push_back({{"add", {{"table", TableRef(table)}}}});
  for (const Set& s : sets) cmds.push_back({{"add", {{"set", SetJson(table, s)}}}});
  for (const std::string& c : counters) {
    cmds.push_back({{"add", {{"counter", {{"family", "inet"}, {"table", table}, {"name", c}}}}}});
  }
  for (const Chain& c : chains) {
    json j = {{"family", "inet"}, {"table", table}, {"name", c.name}};
    if (!c.hook.empty()) {
      j["type"] = "filter";
      j["hook"] = c.hook;
      j["prio"] = 0;
      j["policy"] = "accept";
    }
    cmds.push_back({{"add", {{"chain", j}}}});
  }
  for (const Chain& c : chains) {
    for (const Rule& r : c.rules) {
      cmds.push_back(
          {{"add",
            {{"rule",
              {{"family", "inet"}, {"table", table}, {"chain", c.name}, {"expr", r.expr}}}}}});
    }
  }
  out->json = json{{"nftables", cmds}}.dump(1, '\t') + "\n";
  return true;
}

}  // namespace ward::backend::nftables
