#include "enforcers/linux/nftables_listing.h"

#include <arpa/inet.h>

namespace ward::enforce::nftables_listing {
namespace {

using ir::V4;

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

}  // namespace

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

// ---- the table as listed ---------------------------------------------------------

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

// ---- decoding the lookup rules ----------------------------------------------------

std::optional<Match> AsMatch(const json& x) {
  if (!x.is_object() || !x.contains("match")) return std::nullopt;
  const json& m = x["match"];
  if (m.value("op", "") != "==" || !m.contains("left") || !m.contains("right")) {
    return std::nullopt;
  }
  return Match{m["left"], m["right"]};
}

namespace {

bool IsPayload(const json& j, const std::string& protocol, const std::string& field) {
  return j == json{{"payload", {{"protocol", protocol}, {"field", field}}}};
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

}  // namespace

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

}  // namespace ward::enforce::nftables_listing
