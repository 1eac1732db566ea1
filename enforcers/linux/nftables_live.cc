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
#include "enforcers/linux/nftables_listing.h"

namespace ward::enforce {
namespace {

using json = nlohmann::json;
namespace nft = backend::nftables;
using ir::V4;
using ir::V6;

using namespace nftables_listing;

constexpr const char* kNftCgroupRoot = "/sys/fs/cgroup";

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

// The generation `allow` sets (1 when none is read).
uint32_t Generation(const Listing& l) {
  uint32_t generation = 0;
  for (const LiveRule& r : l.rules) {
    if (r.chain != "allow") continue;
    for (const json& x : r.expr) {
      if (x.is_object() && x.contains("mangle") && x["mangle"].value("value", json()).is_number()) {
        generation = x["mangle"]["value"].get<uint32_t>();
      }
    }
  }
  return std::max<uint32_t>(generation, 1);
}

// The renderer's fixed rules (all but the lookups; the ingress chain's
// leading ones: resets, related ICMP), none present yet.
Fixed FixedRules(const Normal& want) {
  Fixed fixed;
  for (const auto& [chain, rules] : want.rules) {
    if (IsLookupChain(chain)) {
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
  return fixed;
}

// Sorts every live rule: a fixed rule (marked present), a lookup (decoded
// into `contributions`), or unknown.
void ReadRules(const Listing& l, const Normal& want, Fixed* fixed, Contributions& contributions,
               std::vector<std::string>* unknown) {
  for (const LiveRule& r : l.rules) {
    const std::string canon = CanonicalExpr(r.expr, 0, false);
    auto it = fixed->rendered.find(r.chain);
    bool known = false;
    if (it != fixed->rendered.end() && want.chains.count(r.chain)) {
      for (size_t i = 0; i < it->second.size() && !known; ++i) {
        if (it->second[i] == canon && !fixed->present[r.chain][i]) {
          fixed->present[r.chain][i] = true;
          known = true;
        }
      }
    }
    if (!known && IsLookupChain(r.chain)) known = DecodeLookup(r, l, contributions);
    if (!known) unknown->push_back(Describe(r));
  }
}

// Chains, sets, counters and other objects the renderer does not produce.
void UnknownObjects(const Listing& l, const Normal& want, std::vector<std::string>* unknown) {
  for (const auto& [name, o] : l.chains) {
    auto it = want.chains.find(name);
    if (it == want.chains.end()) {
      unknown->push_back("chain " + name + " that Ward does not render");
    } else if (it->second != ChainDeclaration(o)) {
      unknown->push_back("chain " + name + " declared " + ChainDeclaration(o) + ", Ward renders " +
                         it->second);
    }
  }
  for (const auto& [name, s] : l.sets) {
    if (!s.name) {
      unknown->push_back("set " + name + " that Ward does not render");
    } else if (!s.parsed) {
      unknown->push_back("set " + name + " holds elements Ward does not render");
    }
  }
  for (const std::string& c : l.counters) {
    if (!want.counters.count(c)) unknown->push_back("counter " + c + " that Ward does not render");
  }
  for (const std::string& o : l.others) unknown->push_back(o + " that Ward does not render");
}

// What reaches the lookups of chain group `dir` (`egress`: the workload's
// packets; `ingress`: packets reaching it), from the fixed rules present.
Group GroupOf(const std::string& dir, const Fixed& fixed, bool interface) {
  const std::string entry = dir + (interface ? "_drop" : "_reject");
  Group g;
  for (const char* base : {"output", "input", "forward"}) {
    auto it = fixed.rendered.find(base);
    if (it == fixed.rendered.end()) continue;
    for (size_t i = 0; i < it->second.size(); ++i) {
      if (it->second[i].find("\"target\":\"" + entry + "\"") != std::string::npos &&
          !fixed.Has(base, i)) {
        g.passes = Everything();  // a hook no longer dispatched
      }
    }
  }
  if (interface) {
    g.looked_up = fixed.Has(entry, 1);
    if (!fixed.Has(entry, 2)) g.passes = Everything();
  } else {
    g.looked_up = fixed.Has(entry, 0);
    if (!fixed.Has(entry, 2)) {
      // Without the final reject, only TCP is still refused (by the rule
      // before it), or nothing.
      g.passes = g.passes.Union(
          {fixed.Has(entry, 1) ? ir::PortSet() : ir::PortSet::All(), ir::PortSet::All(), true});
    }
  }
  g.looked_up = g.looked_up && fixed.Has("allow", 0);
  return g;
}

// A domain grant whose lookups are gone (in either leg, either family) is
// lost for its protocol; a leg letting the protocol through still allows
// it.
void LoseDomains(const LegContributions legs[2][2], const Group& orig, const Group& reply,
                 std::map<std::string, ir::DomainEntry>* domains) {
  const ir::NetDecision domain_union = DomainUnion(*domains);
  ir::NetDecision lost;
  for (int p = 0; p < 3; ++p) {
    const ir::NetDecision one = OneProto(static_cast<ir::Protocol>(p), 1, 65535);
    if (domain_union.Intersect(one).empty()) continue;
    bool ok = true;
    for (int fam = 0; fam < 2; ++fam) {
      for (int leg = 0; leg < 2; ++leg) {
        const Group& grp = leg == kOriginal ? orig : reply;
        const bool passes = !grp.passes.Intersect(one).empty();
        ok = ok && (passes || (grp.looked_up && legs[fam][leg].domain_lookup[p]));
      }
    }
    if (!ok) lost = lost.Union(one);
  }
  if (lost.empty()) return;
  for (auto& [pattern, entry] : *domains) {
    if (pattern.rfind("*.", 0) != 0) entry.allow = entry.allow.Minus(lost);
  }
}

// The network the kernel enforces, from the desired one: partitions
// rebuilt from the live lookups, domain grants less the lookups gone.
void Decode(const Contributions& contributions, const Group groups[2], ir::NetRules* net) {
  for (const ir::Direction d : {ir::Direction::kEgress, ir::Direction::kIngress}) {
    const int di = DirIndex(d);
    // The original leg of egress flows goes through the egress chain, its
    // replies through the ingress chain; the other way round for ingress.
    const Group& orig = groups[di];
    const Group& reply = groups[1 - di];
    ir::Partition& part = d == ir::Direction::kEgress ? net->egress : net->ingress;
    std::map<std::string, ir::DomainEntry>& domains =
        d == ir::Direction::kEgress ? net->egress_domains : net->ingress_domains;
    const ir::NetDecision domain_union = DomainUnion(domains);
    part.v4 = Rebuild(part.v4, contributions[di][0], orig, reply, domain_union, false);
    part.v6 = Rebuild(part.v6, contributions[di][1], orig, reply, domain_union, true);
    LoseDomains(contributions[di], orig, reply, &domains);
  }
  net->BuildIndex();
}

// Whether every domain set's element is an address with ports the grants
// of its direction allow.
bool DomainSetsInSync(const Listing& l, const ir::NetRules& desired) {
  for (const auto& [name, s] : l.sets) {
    if (!s.name || !s.name->domain) continue;
    const ir::NetDecision u = DomainUnion(
        s.name->dir == ir::Direction::kEgress ? desired.egress_domains : desired.ingress_domains);
    for (const Elem& e : s.elems) {
      if (!OneProto(s.name->proto, e.plo, e.phi).Minus(u).empty()) return false;
    }
  }
  return true;
}

bool Read(const ir::Policy& desired, const Target& target, LiveState* out, std::string* error) {
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
  out->generation = Generation(l);

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

  Fixed fixed = FixedRules(want);
  Contributions contributions;
  ReadRules(l, want, &fixed, contributions, &out->unknown);
  UnknownObjects(l, want, &out->unknown);
  // In sync: the same table, the domain sets' elements aside (addresses
  // with what the grants allow).
  out->in_sync =
      out->unknown.empty() && NormalOfListing(l) == want && DomainSetsInSync(l, desired.network);
  const bool interface = scope->kind == nft::Scope::Kind::kInterface;
  const Group groups[2] = {GroupOf("egress", fixed, interface),
                           GroupOf("ingress", fixed, interface)};
  Decode(contributions, groups, &out->live.network);
  return true;
}

}  // namespace

bool ReadLiveNftables(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                      LiveState* out, std::string* error) {
  (void)options;  // the domain sets' addresses are taken as they are live: no DNS query
  *out = LiveState{};
  out->live = desired;
  try {
    return Read(desired, target, out, error);
  } catch (const json::exception& e) {
    // A listing of an unexpected shape (a value where an object was).
    *out = LiveState{};
    *error = std::string("libnftables listed JSON of an unexpected shape: ") + e.what();
    return false;
  }
}

}  // namespace ward::enforce
