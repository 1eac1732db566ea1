// The IR of the network section (architecture.md § The IR is the heart): per
// direction, a disjoint partition of the IPv4 and IPv6 address spaces, each
// piece with the ports it allows per protocol; domain and unix-socket grants
// beside it. Backends consume the partition and never resolve precedence.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/ip.h"
#include "language/ast.h"

namespace ward::ir {

enum class Direction { kEgress, kIngress };
enum class Protocol { kTcp, kUdp, kIcmp };

// Sorted, disjoint, non-adjacent inclusive port ranges.
class PortSet {
 public:
  static PortSet All() { return PortSet({{1, 65535}}); }
  PortSet() = default;
  explicit PortSet(std::vector<std::pair<uint16_t, uint16_t>> ranges);  // normalises

  bool Contains(uint16_t port) const;
  bool empty() const { return ranges_.empty(); }
  PortSet Union(const PortSet& other) const;
  PortSet Minus(const PortSet& other) const;
  const std::vector<std::pair<uint16_t, uint16_t>>& ranges() const { return ranges_; }
  std::string ToString() const;  // "22,443,8000-8100"; "" when empty
  bool operator==(const PortSet&) const = default;

 private:
  std::vector<std::pair<uint16_t, uint16_t>> ranges_;
};

// What a flow to one address may do.
struct NetDecision {
  PortSet tcp;
  PortSet udp;
  bool icmp = false;

  bool Allows(Protocol proto, uint16_t port) const;
  bool empty() const { return tcp.empty() && udp.empty() && !icmp; }
  NetDecision Union(const NetDecision& o) const;
  NetDecision Minus(const NetDecision& o) const;
  NetDecision Intersect(const NetDecision& o) const { return Minus(Minus(o)); }
  bool operator==(const NetDecision&) const = default;
};

template <typename A>
struct Piece {
  Range<A> range;
  NetDecision decision;  // allowed: the allows covering it minus the denies
  // What the denies covering it refuse, where a domain grant could otherwise
  // allow it (a name that resolves here): the denies intersected with the
  // union of the direction's domain allows. Empty without domain allows, so
  // redundant denies do not change the canonical form.
  NetDecision denied;
  bool operator==(const Piece&) const = default;
};

// Covers the whole space, in address order, adjacent pieces differing. The v6
// piece for ::ffff:0:0/96 is always empty: IPv4-mapped addresses are decided
// by the v4 partition (decide() folds them).
struct Partition {
  std::vector<Piece<V4>> v4;
  std::vector<Piece<V6>> v6;
  bool operator==(const Partition&) const = default;
};

// A domain pattern's grants: allowed minus denied, per direction.
struct DomainEntry {
  NetDecision allow;
  NetDecision deny;
  bool operator==(const DomainEntry&) const = default;
};

// One source rule after let expansion, kept for provenance (explain, diff);
// not part of the canonical form.
struct FlatRule {
  Direction direction = Direction::kEgress;
  bool allow = true;
  NetDecision what;  // the protocols and ports the rule names
  ast::Peer peer;
  Span span;
  // An implicit rule no source states (compiler/agent_guard.h): why it is
  // there ("wardd listens on tcp://127.0.0.1:7443"); `span` is then invalid.
  std::string implicit;
};

struct UnixRule {
  bool allow = true;
  bool abstract = false;
  std::string name;
  Span span;
  std::string implicit;  // as FlatRule::implicit
};

// `allow netlink route` (or deny), kept for provenance.
struct NetlinkRule {
  bool allow = true;
  std::string protocol;  // "route"
  Span span;
};

struct NetRules {
  Partition egress;
  Partition ingress;
  // Key: "example.com" or "*.example.com" (normalised).
  std::map<std::string, DomainEntry> egress_domains;
  std::map<std::string, DomainEntry> ingress_domains;
  std::set<std::string> unix_paths;     // granted unix socket paths
  std::set<std::string> unix_abstract;  // granted abstract names (without '@')
  std::vector<FlatRule> rules;          // provenance
  std::vector<UnixRule> unix_rules;     // provenance
  // Granted netlink protocols ("route": the host's interfaces, addresses
  // and routes, which ward run's workload otherwise cannot read).
  std::set<std::string> netlink;
  std::vector<NetlinkRule> netlink_rules;  // provenance

  // Canonical equality: provenance is ignored.
  bool operator==(const NetRules& o) const;

  // The decision for a flow to (or, ingress, from) one address.
  bool Decide(Direction dir, Protocol proto, const IpPrefix& addr, uint16_t port) const;
  // A flow to a name that resolved to `addr` (nullptr: not resolved): some
  // allow must match the name or the address, and no deny either of them.
  bool DecideName(Direction dir, Protocol proto, const std::string& name, const IpPrefix* addr,
                  uint16_t port) const;

  // The source rules that match a flow (for explain): by address (`addr`),
  // by name (`name`), or both; each may be null.
  std::vector<const FlatRule*> Matching(Direction dir, Protocol proto, const IpPrefix* addr,
                                        const std::string* name, uint16_t port) const;

  // Rebuilds the index Matching uses; LowerNetwork calls it.
  void BuildIndex();

 private:
  // Address rules by the first address they cover (a v4 rule also as its
  // mapped v6 range, a v6 rule's mapped part also as v4), with the running
  // maximum of their last address, so a lookup walks back from the address
  // only while some earlier rule can still reach it.
  struct IndexEntry {
    V6 lo, hi, max_hi;
    size_t rule;
  };
  std::vector<IndexEntry> index_v4_;  // v4 addresses widened to V6
  std::vector<IndexEntry> index_v6_;
  std::vector<size_t> unindexed_;  // any, loopback: always checked
  // Domain rules by normalised pattern ("a.b", "*.b"): a name looks up
  // itself and the wildcard of each of its parents.
  std::map<std::string, std::vector<size_t>> domain_index_;
};

// Lowers the pooled network sections of a policy and its bases (bases first).
NetRules LowerNetwork(const std::vector<const ast::NetworkSection*>& sections);

// Lower-cases and strips the trailing dot; IDN labels to punycode.
std::string NormaliseDomain(const std::string& name);
// Whether a normalised name matches a domain pattern: `*.s` matches the names
// strictly under s (never s itself), anything else only itself.
bool DomainMatches(const std::string& pattern, const std::string& name);
const char* ProtocolName(Protocol p);  // "tcp", "udp", "icmp"

// The addresses the peers `any` (0.0.0.0/0, ::/0) and `loopback`
// (127.0.0.0/8, ::1) stand for.
struct PeerPrefixes {
  IpPrefix v4, v6;
};
PeerPrefixes AnyPrefixes();
PeerPrefixes LoopbackPrefixes();

}  // namespace ward::ir
