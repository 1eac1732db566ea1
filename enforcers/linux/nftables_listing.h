// Ward's nftables table as libnftables lists it (JSON), read into values:
// the renderer's sets by name, their elements as address and port ranges,
// the rules, and the lookup rules decoded into what each leg of a flow may
// do. Internal to the nftables half of drift (nftables_live.cc).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/network.h"

namespace ward::enforce::nftables_listing {

using json = nlohmann::json;
using ir::V6;

// One set element: an address range, with a port range when the set is a
// concatenation (address . port).
struct Elem {
  V6 lo = 0, hi = 0;  // an IPv4 set's addresses in the low 32 bits
  uint16_t plo = 0, phi = 0;
};

// A listed element without what expires: `{"elem": {"val": X, "timeout":
// ..., "expires": ...}}` is X.
const json& ElemValue(const json& e);
bool ParseElem(const json& raw, bool v6, bool concat, Elem* out);

// What the renderer's name of a set says.
struct SetName {
  ir::Direction dir = ir::Direction::kEgress;
  bool denied = false;  // `<dir>_denied_...`: what denies refuse under domain grants
  bool domain = false;  // `<dir>_<fam>_dom_<proto>`: resolved addresses
  bool v6 = false;
  bool klass = false;    // `exact_c<k>`/`ranges_c<k>`: addresses, ports in the rule
  ir::Protocol proto{};  // when not a class
};
// Empty for a name the renderer does not give.
std::optional<SetName> ParseSetName(const std::string& name);

struct LiveSet {
  std::optional<SetName> name;
  bool concat = false;
  bool parsed = true;  // every element understood
  std::vector<Elem> elems;
};

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
};

// The objects of table inet `table` in a ruleset listing; *present says
// whether the table is there.
Listing ReadListing(const json& ruleset, const std::string& table, bool* present);

// A `match` with the `==` operator.
struct Match {
  json left, right;
};
std::optional<Match> AsMatch(const json& x);

constexpr int kOriginal = 0, kReply = 1;  // a flow's legs

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

int DirIndex(ir::Direction d);  // egress 0, ingress 1
// One protocol with a port range (ICMP: the ports are ignored).
ir::NetDecision OneProto(ir::Protocol p, uint16_t lo, uint16_t hi);

// Decodes one rule of the `egress` or `ingress` chain into `out`; false
// when it is not a lookup rule the renderer emits (nothing added then).
bool DecodeLookup(const LiveRule& r, const Listing& l, Contributions& out);

}  // namespace ward::enforce::nftables_listing
