// Drift, nftables half (drift.h): the policy's table listed through
// libnftables JSON, compared with what the desired IR renders for the same
// scope, and decoded back into an ir::NetRules.
//
// The decoding is the renderer's inverse (backends/nftables/ruleset.cc) for
// what it emits: the lookup rules of the `egress` and `ingress` chains (set
// lookups, classes with inline ports, ICMP), the elements of the sets they
// name, and the fixed rules (the scope's dispatch, the reject or drop
// chains, `allow`). Each flow has two legs: its original direction (the
// packets of whoever opened it) and its reply; a rule the renderer emits
// belongs to exactly one. The live decision for an address is
//   (original ∩ reply) ∪ (original − desired)
// so a gain is judged by what the opener's packets may now do (a datagram
// that gets out is a gain even if no answer comes back), and a loss by
// either leg (a flow whose replies are refused is lost).
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "backends/nftables/ruleset.h"
#include "enforcers/linux/drift.h"
#include "enforcers/linux/nftables.h"

namespace ward::enforce {
namespace {

using json = nlohmann::json;
namespace nft = backend::nftables;
using ir::V4;
using ir::V6;

constexpr const char* kNftCgroupRoot = "/sys/fs/cgroup";
constexpr int kOriginal = 0, kReply = 1;

// ---- reading values ----------------------------------------------------------

bool ParseAddress(const std::string& text, bool v6, V6* out) {
  unsigned char b[16];
  if (inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), b) != 1) return false;
  V6 a = 0;
  for (int i = 0; i < (v6 ? 16 : 4); ++i) a = (a << 8) | b[i];
  *out = a;
  return true;
}

// An address term as libnftables lists it: one address, a prefix or a range.
bool ParseAddressTerm(const json& t, bool v6, V6* lo, V6* hi) {
  if (t.is_string()) {
    if (!ParseAddress(t.get<std::string>(), v6, lo)) return false;
    *hi = *lo;
    return true;
  }
  if (t.is_object() && t.contains("prefix")) {
    const json& p = t["prefix"];
    if (!p.contains("addr") || !p["addr"].is_string() || !p.contains("len") ||
        !p["len"].is_number_unsigned()) {
      return false;
    }
    const int bits = v6 ? 128 : 32;
    const int len = p["len"].get<int>();
    if (len > bits || !ParseAddress(p["addr"].get<std::string>(), v6, lo)) return false;
    const V6 host = len == 0 ? (v6 ? ~V6{0} : V6{~V4{0}}) : ((V6{1} << (bits - len)) - 1);
    *lo &= ~host & (v6 ? ~V6{0} : V6{~V4{0}});
    *hi = *lo | host;
    return true;
  }
  if (t.is_object() && t.contains("range") && t["range"].is_array() && t["range"].size() == 2 &&
      t["range"][0].is_string() && t["range"][1].is_string()) {
    return ParseAddress(t["range"][0].get<std::string>(), v6, lo) &&
           ParseAddress(t["range"][1].get<std::string>(), v6, hi) && *lo <= *hi;
  }
  return false;
}

bool ParsePortTerm(const json& t, uint16_t* lo, uint16_t* hi) {
  auto one = [](const json& v, uint16_t* p) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > 65535) return false;
    *p = static_cast<uint16_t>(v.get<uint64_t>());
    return true;
  };
  if (t.is_number_unsigned()) return one(t, lo) && one(t, hi);
  return t.is_object() && t.contains("range") && t["range"].is_array() && t["range"].size() == 2 &&
         one(t["range"][0], lo) && one(t["range"][1], hi) && *lo <= *hi;
}

// One set element: an address range, with a port range when the set is a
// concatenation (address . port).
struct Elem {
  V6 lo = 0, hi = 0;  // an IPv4 set's addresses in the low 32 bits
  uint16_t plo = 0, phi = 0;
};

// A listed element without what expires: `{"elem": {"val": X, "timeout":
// ..., "expires": ...}}` is X.
const json& ElemValue(const json& e) {
  if (e.is_object() && e.contains("elem") && e["elem"].is_object() && e["elem"].contains("val")) {
    return e["elem"]["val"];
  }
  return e;
}

bool ParseElem(const json& raw, bool v6, bool concat, Elem* out) {
  const json& e = ElemValue(raw);
  if (!concat) return ParseAddressTerm(e, v6, &out->lo, &out->hi);
  if (!e.is_object() || !e.contains("concat") || !e["concat"].is_array() ||
      e["concat"].size() != 2) {
    return false;
  }
  return ParseAddressTerm(e["concat"][0], v6, &out->lo, &out->hi) &&
         ParsePortTerm(e["concat"][1], &out->plo, &out->phi);
}

// ---- the names the renderer gives its sets ------------------------------------

struct SetName {
  ir::Direction dir = ir::Direction::kEgress;
  bool denied = false;  // `<dir>_denied_...`: what denies refuse under domain grants
  bool domain = false;  // `<dir>_<fam>_dom_<proto>`: resolved addresses
  bool v6 = false;
  bool klass = false;    // `exact_c<k>`/`ranges_c<k>`: addresses, ports in the rule
  ir::Protocol proto{};  // when not a class
};

std::optional<SetName> ParseSetName(const std::string& name) {
  SetName n;
  std::string rest;
  if (name.rfind("egress_", 0) == 0) {
    rest = name.substr(7);
  } else if (name.rfind("ingress_", 0) == 0) {
    n.dir = ir::Direction::kIngress;
    rest = name.substr(8);
  } else {
    return std::nullopt;
  }
  if (rest.rfind("denied_", 0) == 0) {
    n.denied = true;
    rest = rest.substr(7);
  }
  if (rest.rfind("v4_", 0) != 0 && rest.rfind("v6_", 0) != 0) return std::nullopt;
  n.v6 = rest[1] == '6';
  rest = rest.substr(3);
  static const std::map<std::string, std::pair<ir::Protocol, bool>> kKinds = {
      {"tcp_exact", {ir::Protocol::kTcp, false}},   {"tcp_ranges", {ir::Protocol::kTcp, false}},
      {"udp_exact", {ir::Protocol::kUdp, false}},   {"udp_ranges", {ir::Protocol::kUdp, false}},
      {"icmp_exact", {ir::Protocol::kIcmp, false}}, {"icmp_ranges", {ir::Protocol::kIcmp, false}},
      {"dom_tcp", {ir::Protocol::kTcp, true}},      {"dom_udp", {ir::Protocol::kUdp, true}},
      {"dom_icmp", {ir::Protocol::kIcmp, true}}};
  if (auto it = kKinds.find(rest); it != kKinds.end()) {
    n.proto = it->second.first;
    n.domain = it->second.second;
    if (n.domain && n.denied) return std::nullopt;
    return n;
  }
  for (const char* k : {"exact_c", "ranges_c"}) {
    const std::string p = k;
    if (rest.rfind(p, 0) == 0 && rest.size() > p.size() &&
        rest.find_first_not_of("0123456789", p.size()) == std::string::npos) {
      n.klass = true;
      return n;
    }
  }
  return std::nullopt;
}

struct LiveSet {
  std::optional<SetName> name;
  bool concat = false;
  bool parsed = true;  // every element understood
  std::vector<Elem> elems;
};

// ---- normalisation -------------------------------------------------------------

// The cgroup id a listed `socket cgroupv2` value stands for: libnftables
// prints the path under /sys/fs/cgroup when it finds one, else the id.
uint64_t CgroupIdOf(const json& right) {
  if (right.is_number_unsigned()) return right.get<uint64_t>();
  if (!right.is_string()) return 0;
  struct stat st;
  const std::string path = std::string(kNftCgroupRoot) + "/" + right.get<std::string>();
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// A rule's expressions as one comparable text: `ct state` listed with the
// `in` operator it takes, a cgroup by its id (what the kernel holds; the
// JSON listing leaves out the level, which the text listing shows).
std::string CanonicalExpr(json expr, uint64_t rendered_cgroup_id, bool rendered) {
  for (json& x : expr) {
    if (!x.is_object() || !x.contains("match")) continue;
    json& m = x["match"];
    if (m.value("left", json()) == json{{"ct", {{"key", "state"}}}}) m["op"] = "==";
    if (m.contains("left") && m["left"].is_object() && m["left"].contains("socket")) {
      m["right"] = rendered ? rendered_cgroup_id : CgroupIdOf(m.value("right", json()));
      m["left"]["socket"].erase("level");
    }
  }
  return expr.dump();
}

// Hexadecimal, fixed width: cheaper than address text for 100k elements.
std::string ElemText(const Elem& e, bool concat) {
  char buf[96];
  auto half = [](V6 v, int shift) { return static_cast<unsigned long long>(v >> shift); };
  std::snprintf(buf, sizeof buf, "%016llx%016llx-%016llx%016llx . %u-%u", half(e.lo, 64),
                half(e.lo, 0), half(e.hi, 64), half(e.hi, 0), e.plo, e.phi);
  return concat ? std::string(buf) : std::string(buf, 65);
}

// A set's declaration (without its elements), comparable.
std::string SetDeclaration(const json& s) {
  json d = {{"type", s.value("type", json())}, {"size", s.value("size", json())}};
  std::vector<std::string> flags;
  for (const json& f : s.value("flags", json::array())) {
    if (f.is_string()) flags.push_back(f.get<std::string>());
  }
  std::sort(flags.begin(), flags.end());
  d["flags"] = flags;
  return d.dump();
}

std::string ChainDeclaration(const json& c) {
  json d = json::object();
  for (const char* k : {"type", "hook", "prio", "policy"}) {
    if (c.contains(k)) d[k] = c[k];
  }
  return d.dump();
}

// A table, as the comparison sees it: everything but handles, counter
// values, element expiry, and the domain sets' elements (checked apart).
struct Normal {
  std::map<std::string, std::string> sets;  // name -> declaration + elements
  std::set<std::string> counters;
  std::map<std::string, std::string> chains;              // name -> declaration
  std::map<std::string, std::vector<std::string>> rules;  // chain -> rules in order
  bool operator==(const Normal&) const = default;
};

void AddSet(const json& s, Normal* n) {
  const std::string name = s.value("name", "");
  const std::optional<SetName> sn = ParseSetName(name);
  std::string text = SetDeclaration(s);
  if (!sn || !sn->domain) {
    const bool v6 = s.value("type", json()) == "ipv6_addr" ||
                    (s.value("type", json()).is_array() && s["type"][0] == "ipv6_addr");
    const bool concat = s.value("type", json()).is_array();
    std::vector<std::string> elems;
    for (const json& e : s.value("elem", json::array())) {
      Elem el;
      elems.push_back(ParseElem(e, v6, concat, &el) ? ElemText(el, concat) : ElemValue(e).dump());
    }
    std::sort(elems.begin(), elems.end());
    for (const std::string& e : elems) text += "\n" + e;
  }
  n->sets[name] = text;
}

// ---- the table as listed ---------------------------------------------------------

struct LiveRule {
  std::string chain;
  uint64_t handle = 0;
  json expr;
};

struct Listing {
  std::map<std::string, LiveSet> sets;
  std::map<std::string, json> set_objects;
  std::map<std::string, json> chains;
  std::set<std::string> counters;
  std::vector<LiveRule> rules;
  std::vector<std::string> others;  // maps, quotas, flowtables, ...: described
  uint32_t generation = 0;
};

// The objects of table inet `table` in a ruleset listing; *present says
// whether the table is there.
Listing ReadListing(const json& ruleset, const std::string& table, bool* present) {
  Listing l;
  *present = false;
  for (const json& item : ruleset.value("nftables", json::array())) {
    if (!item.is_object() || item.empty()) continue;
    const std::string kind = item.begin().key();
    const json& o = item.begin().value();
    if (kind == "metainfo" || !o.is_object() || o.value("family", "") != "inet") continue;
    if (kind == "table") {
      *present = *present || o.value("name", "") == table;
      continue;
    }
    if (o.value("table", "") != table) continue;
    const std::string name = o.value("name", "");
    if (kind == "set") {
      LiveSet s;
      s.name = ParseSetName(name);
      const json type = o.value("type", json());
      s.concat = type.is_array();
      const bool v6 = type == "ipv6_addr" || (type.is_array() && type[0] == "ipv6_addr");
      for (const json& e : o.value("elem", json::array())) {
        Elem el;
        if (ParseElem(e, v6, s.concat, &el)) {
          s.elems.push_back(el);
        } else {
          s.parsed = false;
        }
      }
      l.sets[name] = std::move(s);
      l.set_objects[name] = o;
    } else if (kind == "counter") {
      l.counters.insert(name);
    } else if (kind == "chain") {
      l.chains[name] = o;
    } else if (kind == "rule") {
      l.rules.push_back(
          {o.value("chain", ""), o.value("handle", uint64_t{0}), o.value("expr", json::array())});
    } else {
      l.others.push_back(kind + " " + name + " (handle " +
                         std::to_string(o.value("handle", uint64_t{0})) + ")");
    }
  }
  return l;
}

// The desired table, rendered as `ward apply` renders it, in the listing's
// shape.
Normal NormalOfRendered(const json& commands, uint64_t cgroup_id) {
  Normal n;
  bool after_delete = false;
  for (const json& c : commands.value("nftables", json::array())) {
    if (c.contains("delete")) {
      after_delete = true;
      continue;
    }
    if (!after_delete || !c.contains("add")) continue;
    const json& add = c["add"];
    const std::string kind = add.begin().key();
    const json& o = add.begin().value();
    if (kind == "set") {
      AddSet(o, &n);
    } else if (kind == "counter") {
      n.counters.insert(o.value("name", ""));
    } else if (kind == "chain") {
      n.chains[o.value("name", "")] = ChainDeclaration(o);
      n.rules[o.value("name", "")];
    } else if (kind == "rule") {
      n.rules[o.value("chain", "")].push_back(CanonicalExpr(o["expr"], cgroup_id, true));
    }
  }
  return n;
}

Normal NormalOfListing(const Listing& l) {
  Normal n;
  for (const auto& [name, o] : l.set_objects) AddSet(o, &n);
  n.counters = l.counters;
  for (const auto& [name, o] : l.chains) {
    n.chains[name] = ChainDeclaration(o);
    n.rules[name];
  }
  for (const LiveRule& r : l.rules) n.rules[r.chain].push_back(CanonicalExpr(r.expr, 0, false));
  return n;
}

// ---- decoding the lookup rules ----------------------------------------------------

struct Match {
  json left, right;
};

std::optional<Match> AsMatch(const json& x) {
  if (!x.is_object() || !x.contains("match")) return std::nullopt;
  const json& m = x["match"];
  if (m.value("op", "") != "==" || !m.contains("left") || !m.contains("right")) {
    return std::nullopt;
  }
  return Match{m["left"], m["right"]};
}

bool IsPayload(const json& j, const std::string& protocol, const std::string& field) {
  return j == json{{"payload", {{"protocol", protocol}, {"field", field}}}};
}

// What one leg of one direction's flows may do, per family: the
// contributions of the partition's sets, the denied sets and the domain
// sets (addresses widened to V6; an IPv4 leg's in the low 32 bits).
struct Contribution {
  V6 lo, hi;
  ir::NetDecision what;
};
struct LegContributions {
  std::vector<Contribution> part, denied, domain;
  // The domain lookups present, by protocol.
  bool domain_lookup[3] = {false, false, false};
};
// [direction][family v4|v6][leg original|reply]
using Contributions = LegContributions[2][2][2];

int DirIndex(ir::Direction d) { return d == ir::Direction::kEgress ? 0 : 1; }

ir::NetDecision OneProto(ir::Protocol p, uint16_t lo, uint16_t hi) {
  ir::NetDecision d;
  switch (p) {
    case ir::Protocol::kTcp:
      d.tcp = ir::PortSet({{lo, hi}});
      break;
    case ir::Protocol::kUdp:
      d.udp = ir::PortSet({{lo, hi}});
      break;
    case ir::Protocol::kIcmp:
      d.icmp = true;
      break;
  }
  return d;
}

// `tcp dport 443`, `... 8000-8100`, `... { 22, 443 }`: a class rule's ports.
bool InlinePorts(const json& right, ir::PortSet* out) {
  std::vector<std::pair<uint16_t, uint16_t>> ranges;
  auto add = [&](const json& t) {
    uint16_t lo, hi;
    if (!ParsePortTerm(t, &lo, &hi)) return false;
    ranges.push_back({lo, hi});
    return true;
  };
  if (right.is_object() && right.contains("set") && right["set"].is_array()) {
    for (const json& t : right["set"]) {
      if (!add(t)) return false;
    }
  } else if (!add(right)) {
    return false;
  }
  *out = ir::PortSet(ranges);
  return true;
}

// Decodes one rule of `egress` or `ingress` into contributions; false when
// it is not a lookup rule the renderer emits.
bool DecodeLookup(const LiveRule& r, const Listing& l, Contributions& out) {
  const json& e = r.expr;
  if (!e.is_array() || (e.size() != 3 && e.size() != 4)) return false;
  const std::optional<Match> dir = AsMatch(e[0]);
  if (!dir || dir->left != json{{"ct", {{"key", "direction"}}}} || !dir->right.is_string()) {
    return false;
  }
  const std::string d = dir->right.get<std::string>();
  if (d != "original" && d != "reply") return false;
  const bool original = d == "original";
  const bool egress_chain = r.chain == "egress";
  // egress chain: the workload's packets (its flows' original leg, or the
  // replies of flows opened towards it); ingress chain: packets reaching it.
  const ir::Direction flow =
      egress_chain == original ? ir::Direction::kEgress : ir::Direction::kIngress;
  const std::string addr_field = egress_chain ? "daddr" : "saddr";
  const std::string port_field = original ? "dport" : "sport";
  const std::optional<Match> lookup = AsMatch(e[e.size() - 2]);
  if (!lookup || !lookup->right.is_string()) return false;
  const std::string ref = lookup->right.get<std::string>();
  if (ref.size() < 2 || ref[0] != '@') return false;
  auto set = l.sets.find(ref.substr(1));
  if (set == l.sets.end() || !set->second.name || !set->second.parsed) return false;
  const SetName& sn = *set->second.name;
  if (sn.dir != flow) return false;
  const std::string family = sn.v6 ? "ip6" : "ip";
  // The verdict: denied sets return (refused), every other goes to allow.
  const json& verdict = e.back();
  if (sn.denied ? verdict != json{{"return", nullptr}}
                : verdict != json{{"goto", {{"target", "allow"}}}}) {
    return false;
  }
  LegContributions& leg = out[DirIndex(flow)][sn.v6][original ? kOriginal : kReply];
  std::vector<Contribution>& into = sn.denied ? leg.denied : sn.domain ? leg.domain : leg.part;
  if (e.size() == 3) {
    // address . port lookup
    if (sn.klass || sn.proto == ir::Protocol::kIcmp || !set->second.concat) return false;
    const std::string p = sn.proto == ir::Protocol::kTcp ? "tcp" : "udp";
    if (lookup->left != json{{"concat",
                              {json{{"payload", {{"protocol", family}, {"field", addr_field}}}},
                               json{{"payload", {{"protocol", p}, {"field", port_field}}}}}}}) {
      return false;
    }
    for (const Elem& el : set->second.elems) {
      into.push_back({el.lo, el.hi, OneProto(sn.proto, el.plo, el.phi)});
    }
    if (sn.domain) leg.domain_lookup[static_cast<int>(sn.proto)] = true;
    return true;
  }
  if (set->second.concat || !IsPayload(lookup->left, family, addr_field)) return false;
  const std::optional<Match> mid = AsMatch(e[1]);
  if (!mid) return false;
  ir::NetDecision what;
  if (mid->left == json{{"meta", {{"key", "l4proto"}}}}) {
    if (!sn.klass && sn.proto != ir::Protocol::kIcmp) return false;
    if (mid->right != (sn.v6 ? "ipv6-icmp" : "icmp")) return false;
    what.icmp = true;
  } else {
    if (!sn.klass) return false;
    ir::PortSet ports;
    if (IsPayload(mid->left, "tcp", port_field) && InlinePorts(mid->right, &ports)) {
      what.tcp = ports;
    } else if (IsPayload(mid->left, "udp", port_field) && InlinePorts(mid->right, &ports)) {
      what.udp = ports;
    } else {
      return false;
    }
  }
  for (const Elem& el : set->second.elems) into.push_back({el.lo, el.hi, what});
  if (sn.domain) leg.domain_lookup[2] = true;
  return true;
}

// ---- the fixed rules --------------------------------------------------------------

// Which of the renderer's fixed rules (everything but the lookups) the
// table still holds, by chain and position in the rendered chain.
struct Fixed {
  std::map<std::string, std::vector<std::string>> rendered;
  std::map<std::string, std::vector<bool>> present;
  bool Has(const std::string& chain, size_t i) const {
    auto it = present.find(chain);
    return it != present.end() && i < it->second.size() && it->second[i];
  }
};

bool IsLookupChain(const std::string& chain) { return chain == "egress" || chain == "ingress"; }

// ---- the partition ----------------------------------------------------------------

ir::NetDecision Everything() { return {ir::PortSet::All(), ir::PortSet::All(), true}; }

// What passes a chain group whose dispatch or final verdict is gone.
struct Group {
  bool looked_up = true;     // packets reach the lookups and `allow` accepts
  ir::NetDecision passes{};  // accepted whatever the sets say
};

template <typename A>
std::vector<ir::Piece<A>> Rebuild(const std::vector<ir::Piece<A>>& desired,
                                  const LegContributions legs[2], const Group& orig_group,
                                  const Group& reply_group, const ir::NetDecision& domain_union,
                                  bool v6) {
  // Elementary segments: every boundary of the desired pieces and of every
  // contribution, and the IPv4-mapped block (decided by IPv4 packets).
  std::vector<V6> starts = {0};
  auto add_range = [&](V6 lo, V6 hi) {
    starts.push_back(lo);
    if (hi != static_cast<V6>(static_cast<A>(~A{0}))) starts.push_back(hi + 1);
  };
  for (const ir::Piece<A>& p : desired) add_range(p.range.lo, p.range.hi);
  for (int leg = 0; leg < 2; ++leg) {
    for (const auto* v : {&legs[leg].part, &legs[leg].denied, &legs[leg].domain}) {
      for (const Contribution& c : *v) add_range(c.lo, c.hi);
    }
  }
  if (v6) add_range(ir::MappedV6(0), ir::MappedV6(~V4{0}));
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  struct Acc {
    ir::NetDecision part[2], denied[2], domain[2];
  };
  std::vector<Acc> acc(starts.size());
  auto index_of = [&](V6 a) {
    return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), a) - starts.begin() -
                               1);
  };
  for (int leg = 0; leg < 2; ++leg) {
    for (const Contribution& c : legs[leg].part) {
      for (size_t i = index_of(c.lo); i < starts.size() && starts[i] <= c.hi; ++i) {
        acc[i].part[leg] = acc[i].part[leg].Union(c.what);
      }
    }
    for (const Contribution& c : legs[leg].denied) {
      for (size_t i = index_of(c.lo); i < starts.size() && starts[i] <= c.hi; ++i) {
        acc[i].denied[leg] = acc[i].denied[leg].Union(c.what);
      }
    }
    for (const Contribution& c : legs[leg].domain) {
      for (size_t i = index_of(c.lo); i < starts.size() && starts[i] <= c.hi; ++i) {
        acc[i].domain[leg] = acc[i].domain[leg].Union(c.what);
      }
    }
  }
  const Group* groups[2] = {&orig_group, &reply_group};
  std::vector<ir::Piece<A>> out;
  size_t d = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const A lo = static_cast<A>(starts[i]);
    const A hi = i + 1 < starts.size() ? static_cast<A>(starts[i + 1] - 1) : ~A{0};
    while (desired[d].range.hi < lo) ++d;
    ir::NetDecision leg[2];
    for (int g = 0; g < 2; ++g) {
      leg[g] = groups[g]->passes;
      if (!groups[g]->looked_up) continue;
      if (!acc[i].part[g].empty()) leg[g] = leg[g].Union(acc[i].part[g]);
      // A domain set's element beyond what the grants allow (the desired
      // side's domain sets are taken as whatever addresses are live: no DNS
      // query is sent to check them) is a gain, unless a deny refuses it.
      if (!acc[i].domain[g].empty()) {
        leg[g] = leg[g].Union(acc[i].domain[g].Minus(domain_union).Minus(acc[i].denied[g]));
      }
    }
    ir::Piece<A> p;
    p.range = {lo, hi};
    if (!(v6 && ir::IsMapped(static_cast<V6>(lo)))) {
      const ir::NetDecision& want = desired[d].decision;
      // (O ∩ R) ∪ (O − D) is O when both legs agree, the common case.
      p.decision = leg[kOriginal] == leg[kReply]
                       ? leg[kOriginal]
                       : leg[kOriginal].Intersect(leg[kReply]).Union(leg[kOriginal].Minus(want));
      if (orig_group.looked_up) p.denied = acc[i].denied[kOriginal];
    }
    if (!out.empty() && out.back().decision == p.decision && out.back().denied == p.denied) {
      out.back().range.hi = hi;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

// The resolvable domain grants' union for a direction (the renderer's
// domain sets hold what these allow).
ir::NetDecision DomainUnion(const std::map<std::string, ir::DomainEntry>& domains) {
  ir::NetDecision u;
  for (const auto& [pattern, entry] : domains) {
    if (pattern.rfind("*.", 0) != 0) u = u.Union(entry.allow);
  }
  return u;
}

// With no table, the scope is not enforced: every flow allowed.
ir::NetRules Unenforced(const ir::NetRules& desired) {
  ir::NetRules n = desired;
  for (ir::Partition* p : {&n.egress, &n.ingress}) {
    p->v4 = {{{0, ~V4{0}}, Everything(), {}}};
    p->v6 = {{{0, ir::MappedV6(0) - 1}, Everything(), {}},
             {{ir::MappedV6(0), ir::MappedV6(~V4{0})}, {}, {}},
             {{ir::MappedV6(~V4{0}) + 1, ~V6{0}}, Everything(), {}}};
  }
  n.BuildIndex();
  return n;
}

std::optional<nft::Scope> ScopeOf(const Target& target, uint64_t* cgroup_id, std::string* error) {
  nft::Scope scope;
  switch (target.kind) {
    case Target::Kind::kCgroup: {
      std::optional<Cgroup> cgroup = ResolveCgroup(target.cgroup, error);
      if (!cgroup) return std::nullopt;
      scope.kind = nft::Scope::Kind::kCgroup;
      scope.cgroup_path = cgroup->relative;
      scope.cgroup_level = cgroup->level;
      *cgroup_id = cgroup->id;
      break;
    }
    case Target::Kind::kUid:
      scope.kind = nft::Scope::Kind::kUid;
      scope.uid = target.uid;
      break;
    case Target::Kind::kInterface:
      scope.kind = nft::Scope::Kind::kInterface;
      scope.interface = target.interface;
      break;
  }
  return scope;
}

std::string Describe(const LiveRule& r) {
  return "rule in chain " + r.chain + " (handle " + std::to_string(r.handle) +
         ") that Ward does not render: " + r.expr.dump();
}

// Whether a match names this scope: `meta skuid U`, `socket cgroupv2` of
// the cgroup's id, `iifname`/`oifname` of the interface.
bool NamesScope(const json& x, const nft::Scope& scope, uint64_t cgroup_id) {
  if (!x.is_object() || !x.contains("match")) return false;
  const json& m = x["match"];
  const json left = m.value("left", json()), right = m.value("right", json());
  switch (scope.kind) {
    case nft::Scope::Kind::kCgroup:
      return left.is_object() && left.contains("socket") &&
             left["socket"].value("key", "") == "cgroupv2" && CgroupIdOf(right) == cgroup_id;
    case nft::Scope::Kind::kUid:
      return left == json{{"meta", {{"key", "skuid"}}}} && right == scope.uid;
    case nft::Scope::Kind::kInterface:
      return (left == json{{"meta", {{"key", "iifname"}}}} ||
              left == json{{"meta", {{"key", "oifname"}}}}) &&
             right == scope.interface;
  }
  return false;
}

// The rules of other tables (not Ward's: another policy's table is that
// policy's) that name this scope: foreign rules in the policy's scope.
void ForeignInScope(const json& ruleset, const nft::Scope& scope, uint64_t cgroup_id,
                    std::vector<std::string>* out) {
  for (const json& it : ruleset.value("nftables", json::array())) {
    if (!it.is_object() || !it.contains("rule") || !it["rule"].is_object()) continue;
    const json& r = it["rule"];
    const std::string family = r.value("family", ""), table = r.value("table", "");
    if (family == "inet" && table.rfind("ward_", 0) == 0) continue;
    for (const json& x : r.value("expr", json::array())) {
      if (!NamesScope(x, scope, cgroup_id)) continue;
      out->push_back("rule in table " + family + " " + table + ", chain " + r.value("chain", "") +
                     " (handle " + std::to_string(r.value("handle", uint64_t{0})) +
                     ") names this policy's scope: " + r.value("expr", json()).dump());
      break;
    }
  }
}

}  // namespace

bool ReadLiveNftables(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                      LiveState* out, std::string* error) {
  (void)options;  // the domain sets' addresses are taken as they are live: no DNS query
  *out = LiveState{};
  out->live = desired;
  if (!HasCapability(CAP_NET_ADMIN)) {
    *error = "needs CAP_NET_ADMIN to read nftables rules (run as root)";
    return false;
  }
  uint64_t cgroup_id = 0;
  const std::optional<nft::Scope> scope = ScopeOf(target, &cgroup_id, error);
  if (!scope) return false;
  const std::string table = nft::TableName(desired.name);
  // The whole ruleset in one listing: libnftables 1.0.6 fetches every
  // table's sets and elements for any listing command (65 ms beside a
  // table of 10k elements, whatever is asked), so one fetch serves both
  // Ward's table and the other tables' rules naming the same scope.
  std::string text;
  if (!RunNft("list ruleset", false, true, &text, error)) return false;
  const json listed = json::parse(text, nullptr, false);
  if (listed.is_discarded()) {
    *error = "libnftables printed JSON that does not parse";
    return false;
  }
  ForeignInScope(listed, *scope, cgroup_id, &out->unknown);
  const Listing l = ReadListing(listed, table, &out->present);
  if (!out->present) {
    out->live.network = Unenforced(desired.network);
    return true;
  }
  for (const LiveRule& r : l.rules) {
    if (r.chain != "allow") continue;
    for (const json& x : r.expr) {
      if (x.is_object() && x.contains("mangle") && x["mangle"].value("value", json()).is_number()) {
        out->generation = x["mangle"]["value"].get<uint32_t>();
      }
    }
  }
  out->generation = std::max<uint32_t>(out->generation, 1);

  // What `ward apply` renders for this scope at the generation held.
  nft::RenderOptions render;
  render.scope = scope;
  render.generation = out->generation;
  render.render_json = true;
  DiagnosticSink sink;
  nft::Ruleset ruleset;
  if (!nft::RenderRuleset(desired, render, &ruleset, sink)) {
    *error = "the desired policy does not render for nftables";
    return false;
  }
  const json rendered = json::parse(ruleset.json, nullptr, false);
  const Normal want = NormalOfRendered(rendered, cgroup_id);

  // The fixed rules: present or not, and the foreign ones.
  Fixed fixed;
  for (const auto& [chain, rules] : want.rules) {
    if (IsLookupChain(chain)) {
      // The ingress chain's leading fixed rules (resets, related ICMP).
      for (const std::string& r : rules) {
        if (r.find("\"ct\":{\"key\":\"direction\"}") == std::string::npos) {
          fixed.rendered[chain].push_back(r);
        }
      }
    } else {
      fixed.rendered[chain] = rules;
    }
    fixed.present[chain].assign(fixed.rendered[chain].size(), false);
  }
  Contributions contributions;
  for (const LiveRule& r : l.rules) {
    const std::string canon = CanonicalExpr(r.expr, 0, false);
    auto it = fixed.rendered.find(r.chain);
    bool known = false;
    if (it != fixed.rendered.end() && want.chains.count(r.chain)) {
      for (size_t i = 0; i < it->second.size() && !known; ++i) {
        if (it->second[i] == canon && !fixed.present[r.chain][i]) {
          fixed.present[r.chain][i] = true;
          known = true;
        }
      }
    }
    if (!known && IsLookupChain(r.chain)) known = DecodeLookup(r, l, contributions);
    if (!known) out->unknown.push_back(Describe(r));
  }
  for (const auto& [name, o] : l.chains) {
    auto it = want.chains.find(name);
    if (it == want.chains.end()) {
      out->unknown.push_back("chain " + name + " that Ward does not render");
    } else if (it->second != ChainDeclaration(o)) {
      out->unknown.push_back("chain " + name + " declared " + ChainDeclaration(o) +
                             ", Ward renders " + it->second);
    }
  }
  for (const auto& [name, s] : l.sets) {
    if (!s.name) {
      out->unknown.push_back("set " + name + " that Ward does not render");
    } else if (!s.parsed) {
      out->unknown.push_back("set " + name + " holds elements Ward does not render");
    }
  }
  for (const std::string& c : l.counters) {
    if (!want.counters.count(c)) {
      out->unknown.push_back("counter " + c + " that Ward does not render");
    }
  }
  for (const std::string& o : l.others) out->unknown.push_back(o + " that Ward does not render");

  // In sync: the same table but for the domain sets' elements, which must
  // be addresses with what the grants allow.
  Normal have = NormalOfListing(l);
  out->in_sync = have == want && out->unknown.empty();

  // What reaches the lookups. Chain groups: `egress` (the workload's
  // packets) and `ingress` (packets reaching it).
  const bool interface = scope->kind == nft::Scope::Kind::kInterface;
  Group groups[2];  // [egress chain, ingress chain]
  for (int g = 0; g < 2; ++g) {
    const std::string dir = g == 0 ? "egress" : "ingress";
    const std::string entry = dir + (interface ? "_drop" : "_reject");
    bool dispatched = true;
    for (const char* base : {"output", "input", "forward"}) {
      const auto& rules = fixed.rendered[base];
      for (size_t i = 0; i < rules.size(); ++i) {
        if (rules[i].find("\"target\":\"" + entry + "\"") != std::string::npos &&
            !fixed.Has(base, i)) {
          dispatched = false;
        }
      }
    }
    Group& grp = groups[g];
    if (!dispatched) grp.passes = Everything();
    if (interface) {
      grp.looked_up = fixed.Has(entry, 1);
      if (!fixed.Has(entry, 2)) grp.passes = Everything();
    } else {
      grp.looked_up = fixed.Has(entry, 0);
      if (!fixed.Has(entry, 2)) {
        // Without the final reject, only TCP is still refused (by the
        // rule before it), or nothing.
        grp.passes = grp.passes.Union(
            {fixed.Has(entry, 1) ? ir::PortSet() : ir::PortSet::All(), ir::PortSet::All(), true});
      }
    }
    grp.looked_up = grp.looked_up && fixed.Has("allow", 0);
  }

  ir::NetRules& net = out->live.network;
  for (const ir::Direction d : {ir::Direction::kEgress, ir::Direction::kIngress}) {
    const int di = DirIndex(d);
    // The original leg of egress flows goes through the egress chain, its
    // replies through the ingress chain; the other way round for ingress.
    const Group& orig = groups[di];
    const Group& reply = groups[1 - di];
    ir::Partition& part = d == ir::Direction::kEgress ? net.egress : net.ingress;
    std::map<std::string, ir::DomainEntry>& domains =
        d == ir::Direction::kEgress ? net.egress_domains : net.ingress_domains;
    const ir::NetDecision domain_union = DomainUnion(domains);
    part.v4 = Rebuild(part.v4, contributions[di][0], orig, reply, domain_union, false);
    part.v6 = Rebuild(part.v6, contributions[di][1], orig, reply, domain_union, true);
    // A domain grant whose lookups are gone (in either leg, either family)
    // is lost for its protocol; everything passing would still allow it.
    ir::NetDecision lost;
    for (int p = 0; p < 3; ++p) {
      const ir::NetDecision one = OneProto(static_cast<ir::Protocol>(p), 1, 65535);
      if (domain_union.Intersect(one).empty()) continue;
      bool ok = true;
      for (int fam = 0; fam < 2; ++fam) {
        for (int leg = 0; leg < 2; ++leg) {
          const Group& grp = leg == kOriginal ? orig : reply;
          const bool passes = !grp.passes.Intersect(one).empty();
          ok = ok && (passes || (grp.looked_up && contributions[di][fam][leg].domain_lookup[p]));
        }
      }
      if (!ok) lost = lost.Union(one);
    }
    if (!lost.empty()) {
      for (auto& [pattern, entry] : domains) {
        if (pattern.rfind("*.", 0) != 0) entry.allow = entry.allow.Minus(lost);
      }
    }
  }
  net.BuildIndex();
  // Domain sets holding more than the grants allow are out of sync too.
  if (out->in_sync) {
    for (const auto& [name, s] : l.sets) {
      if (!s.name || !s.name->domain) continue;
      const ir::NetDecision u =
          DomainUnion(s.name->dir == ir::Direction::kEgress ? desired.network.egress_domains
                                                            : desired.network.ingress_domains);
      for (const Elem& e : s.elems) {
        if (!OneProto(s.name->proto, e.plo, e.phi).Minus(u).empty()) out->in_sync = false;
      }
    }
  }
  return true;
}

}  // namespace ward::enforce
