// The contents of the ebpf program set's maps for one policy (README.md):
// the egress and ingress partitions split into CIDRs (HASH for /32 and
// /128, LPM tries for the rest), the port sets they point at (shared by
// both directions), the ports an explicit bind() may take, the unix socket
// names, and the rule texts events name. A pure function of the IR; the backend
// serialises it, the enforcer (enforcers/linux/ebpf.cc) loads it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/network.h"
#include "language/diagnostics.h"

namespace ward::backend::ebpf {

struct Segment {
  uint16_t lo = 0, hi = 0;
  uint32_t rule = 0;  // the deny rule refusing these ports (0: none, or allowed)
  bool allow = false;
  auto operator<=>(const Segment&) const = default;
};
using PortSetSegments = std::vector<Segment>;

struct Entry {
  uint16_t tcp_set = 0, udp_set = 0;  // indexes into MapContents::portsets
  bool icmp_allow = false;
  uint32_t icmp_rule = 0;
  bool operator==(const Entry&) const = default;
};

// A CIDR of the partition (address bytes in network order) and its entry.
struct Cidr {
  bool v6 = false;
  std::array<uint8_t, 16> addr{};
  uint8_t length = 0;
  Entry entry;
};

// An allowed domain pattern (egress), resolved by the enforcer at apply time.
struct DomainGrant {
  std::string pattern;  // "example.com"; "*.example.com" cannot be resolved
  ir::NetDecision allow;
};

// A unix socket name a rule names: granted, or refused by a deny rule (a
// deny overrides every allow). Names no rule names are not loaded: a miss
// refuses with "no rule matched".
struct UnixName {
  bool abstract = false;
  std::string name;  // a path, or an abstract name without the '@'
  bool allow = false;
  uint32_t rule = 0;  // !allow: the first deny rule naming it (UnixRuleId)
};

struct MapContents {
  std::vector<PortSetSegments> portsets;  // [0] is the empty set
  std::vector<Cidr> exact;                // egress /32 and /128: the HASH maps
  std::vector<Cidr> prefixes;             // egress: the LPM tries
  std::vector<Cidr> ingress_exact;        // ingress, by remote address; ports are local
  std::vector<Cidr> ingress_prefixes;
  // The local ports some ingress rule allows from some address (tcp_set,
  // udp_set; icmp unused): what an explicit bind() may take.
  Entry bind;
  std::vector<std::string> rules;  // [id]: the rule's text; [0] = ""
  std::vector<DomainGrant> domains;
  std::vector<UnixName> unix_names;  // paths first, each kind sorted
};

// The id events give `net.unix_rules[index]`: unix rules are numbered after
// the address rules (`net.rules`, whose ids are 1-based indexes).
uint32_t UnixRuleId(const ir::NetRules& net, size_t index);

// Builds the maps of `net`'s egress and ingress partitions and unix socket
// rules. Fails (false, B3002 in `sink`) on a deny by domain (either
// direction), a piece whose ports need
// more than WARD_MAX_SEGMENTS segments, more than WARD_MAX_PORTSETS port
// sets, more deny rules than WARD_MAX_RULE_TEXTS / 2, or more unix names
// than WARD_MAX_UNIX_NAMES / 2. `rules` holds the texts of the deny rules
// only (the only ones events name); others are "". A path longer than
// sun_path (108 bytes) is not loaded: no process can connect to it by path.
bool BuildMaps(const ir::NetRules& net, MapContents* out, DiagnosticSink& sink);

// The entry for one address that allowed names resolved to: the address's
// own decision plus what the names allow, minus the denies covering the
// address. New port sets are appended to `maps->portsets`.
bool EntryForResolved(const ir::NetRules& net, const IpPrefix& addr,
                      const ir::NetDecision& names_allow, MapContents* maps, Entry* out);

// The artifact: deterministic JSON (README.md describes it).
std::string MapsToJson(const std::string& policy, const MapContents& maps);

// "deny tcp to 10.0.0.0/8 port 22": one rule as events name it.
std::string RuleText(const ir::FlatRule& rule);
// "deny unix \"/run/docker.sock\"", "allow unix \"@name\"".
std::string RuleText(const ir::UnixRule& rule);

}  // namespace ward::backend::ebpf
