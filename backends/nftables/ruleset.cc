#include "backends/nftables/ruleset.h"

#include <cstdio>
#include <nlohmann/json.hpp>

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
  std::vector<Term> elements;
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

// The sets of one direction and family, and the rules that look them up.
class DirectionSets {
 public:
  DirectionSets(std::string dir, const Family& family) : dir_(std::move(dir)), family_(family) {}

  template <typename A>
  void Add(const std::vector<ir::Piece<A>>& pieces) {
    for (const ir::Piece<A>& p : pieces) {
      const Term addr = AddressTerm(p.range);
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
    for (const auto& kinds : ports_) {
      for (const Set& s : kinds) {
        if (!s.elements.empty()) out.push_back(s);
      }
    }
    for (const Set& s : icmp_) {
      if (!s.elements.empty()) out.push_back(s);
    }
  }

  // The rules that send a packet matching these sets, read with `o`, to
  // `target`; `prefix` goes in front (ct direction).
  void AppendRules(const Term& prefix, Orientation o, const std::string& target,
                   std::vector<Rule>& out) const {
    const std::string addr_field = o.remote_is_daddr ? "daddr" : "saddr";
    const std::string port_field = o.port_is_dport ? "dport" : "sport";
    for (int proto = 0; proto < 2; ++proto) {
      const std::string p = proto == 0 ? "tcp" : "udp";
      for (const Set& s : ports_[proto]) {
        if (s.elements.empty()) continue;
        Term lookup =
            Match(std::string(family_.payload) + " " + addr_field + " . " + p + " " + port_field +
                      " @" + s.name,
                  {{"concat", {Payload(family_.payload, addr_field), Payload(p, port_field)}}},
                  "@" + s.name);
        out.push_back(MakeRule({prefix, lookup, Verdict("goto", target)}));
      }
    }
    for (const Set& s : icmp_) {
      if (s.elements.empty()) continue;
      Term lookup = Match(std::string(family_.payload) + " " + addr_field + " @" + s.name,
                          Payload(family_.payload, addr_field), "@" + s.name);
      out.push_back(MakeRule({prefix, L4Proto(family_.icmp), lookup, Verdict("goto", target)}));
    }
  }

 private:
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
  Set ports_[2][2];  // [tcp|udp][exact (hash)|ranges (interval)]
  Set icmp_[2];      // [exact|ranges]
  std::vector<ir::Range<ir::V6>> icmp_ranges_;
  ir::V6 icmp_ranges_hi_ = 0;
};

// ---- rendering --------------------------------------------------------------

void RenderSetText(const Set& s, std::string& out) {
  out += "\tset " + s.name + " {\n\t\ttype ";
  for (size_t i = 0; i < s.types.size(); ++i) out += (i ? " . " : "") + s.types[i];
  out += "\n";
  if (s.interval) out += "\t\tflags interval\n";
  out += "\t\telements = {\n";
  for (size_t i = 0; i < s.elements.size(); ++i) {
    out += "\t\t\t" + s.elements[i].text + (i + 1 < s.elements.size() ? ",\n" : "\n");
  }
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
  if (s.interval) j["flags"] = {"interval"};
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

bool CheckDomains(const ir::Policy& policy, DiagnosticSink& sink) {
  bool ok = true;
  bool warned = false;
  for (const ir::FlatRule& r : policy.network.rules) {
    const bool domain =
        r.peer.kind == ast::PeerKind::kDomain || r.peer.kind == ast::PeerKind::kWildcardDomain;
    if (!domain) continue;
    if (!r.allow) {
      sink.Error(Code::kCannotExpress, r.span,
                 "nftables cannot enforce a deny by domain: the name's other addresses get through",
                 "deny the addresses instead, or use a DNS-aware target");
      ok = false;
    } else if (!warned) {
      sink.Warning(Code::kCannotExpress, r.span,
                   "nftables does not enforce domain grants yet (no name is resolved into the "
                   "table): flows to this name are denied unless an address rule allows them");
      warned = true;
    }
  }
  return ok;
}

}  // namespace

std::string TableName(const std::string& policy) { return "ward_" + policy; }

std::string RemoveText(const std::string& table) {
  return "table inet " + table + "\ndelete table inet " + table + "\n";
}

bool RenderRuleset(const ir::Policy& policy, const RenderOptions& options, Ruleset* out,
                   DiagnosticSink& sink) {
  if (!CheckDomains(policy, sink)) return false;
  const ir::NetRules& net = policy.network;
  DirectionSets egress4("egress", kV4), egress6("egress", kV6);
  DirectionSets ingress4("ingress", kV4), ingress6("ingress", kV6);
  egress4.Add(net.egress.v4);
  egress6.Add(net.egress.v6);
  ingress4.Add(net.ingress.v4);
  ingress6.Add(net.ingress.v6);

  std::vector<Set> sets;
  for (const DirectionSets* d : {&egress4, &egress6, &ingress4, &ingress6}) d->AppendSets(sets);

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
  for (const DirectionSets* d : {&egress4, &egress6}) {
    d->AppendRules(original, {true, true}, "allow", egress.rules);
  }
  for (const DirectionSets* d : {&ingress4, &ingress6}) {
    d->AppendRules(reply, {true, false}, "allow", egress.rules);
    d->AppendRules(original, {false, true}, "allow", ingress.rules);
  }
  for (const DirectionSets* d : {&egress4, &egress6}) {
    d->AppendRules(reply, {false, false}, "allow", ingress.rules);
  }
  Term set_mark{
      "ct mark set " + CtMark(options.generation).text.substr(8),
      {{"mangle", {{"key", {{"ct", {{"key", "mark"}}}}}, {"value", options.generation}}}}};
  Chain allow{"allow", "", {MakeRule({set_mark, Verdict("accept")})}};
  const Term tcp = L4Proto("tcp");
  const Term reset{"reject with tcp reset", {{"reject", {{"type", "tcp reset"}}}}};
  const Term prohibited{"reject with icmpx admin-prohibited",
                        {{"reject", {{"type", "icmpx"}, {"expr", "admin-prohibited"}}}}};
  std::vector<Chain> chains = {egress, ingress, allow};
  for (const char* dir : {"egress", "ingress"}) {
    chains.push_back(
        {std::string(dir) + "_reject",
         "",
         {MakeRule({Verdict("jump", dir)}), MakeRule({tcp, reset}), MakeRule({prohibited})}});
    chains.push_back({std::string(dir) + "_drop",
                      "",
                      {MakeRule({Verdict("jump", dir)}), MakeRule({Verdict("drop")})}});
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
  for (const Chain& c : chains) RenderChainText(c, text);
  text += "}\n";

  json cmds = json::array();
  cmds.push_back({{"metainfo", {{"json_schema_version", 1}}}});
  cmds.push_back({{"add", {{"table", TableRef(table)}}}});
  cmds.push_back({{"delete", {{"table", TableRef(table)}}}});
  cmds.push_back({{"add", {{"table", TableRef(table)}}}});
  for (const Set& s : sets) cmds.push_back({{"add", {{"set", SetJson(table, s)}}}});
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
