// Random network sections for the property and differential tests, written
// as Ward source, that contain the awkward cases on purpose: two rules of
// opposite verdicts that overlap (a deny inside an allow and the reverse,
// equal CIDRs, `any`, `loopback`, IPv4-mapped, NAT64 and IPv4-compatible
// forms, IPv6 blocks over the mapped space, port ranges overlapping in
// part, an omitted protocol against tcp/udp/icmp, egress against ingress),
// placed in one policy in either order or across `extends` (base and
// derived either way round, a chain of two bases, a base reached twice),
// with the policies in either order in the file and the pair's peers and
// ports split across plain lists, `[...]` and `let`s.
//
// Beside the text, every case carries the rules its target policy reaches
// as plain data, and Reference() decides a probe from those by the letter
// of language/reference.md § network: the oracle shares nothing with
// compiler/ (not even the parser). Each test keeps its own way of asking
// the IR or the enforcer; all of them share this generator.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace ward::test::net {

using Rng = std::mt19937_64;

// The addresses and ports a test can probe: rules name blocks inside
// v4_base/(32 - v4_bits) and v6_base/(128 - v6_bits) (the low bits vary,
// at most 16), 127.0.0.0/8, ::1, the mapped and NAT64 forms of the IPv4
// block, and only `ports` (sorted; servers listen on them), or for ingress
// `ingress_ports` when given.
struct Universe {
  std::string v4_base = "10.200.0.0";
  int v4_bits = 10;
  std::string v6_base = "fd00:200::";
  int v6_bits = 10;
  std::vector<uint16_t> ports;
  std::vector<uint16_t> ingress_ports;  // the local ports of ingress; empty: `ports`
  // Probes in both directions; without, fewer rules are ingress (some
  // still are: they must decide nothing outgoing).
  bool ingress_probes = true;
  bool nat64_probes = true;        // probes to 64:ff9b::a.b.c.d
  bool compat_probes = true;       // probes to ::a.b.c.d
  bool near_mapped_probes = true;  // probes to ::fffe:a.b.c.d (beside the mapped block)
  bool icmp_mapped = true;         // ICMP probes to ::ffff:a.b.c.d
  bool icmp_ingress = true;        // ICMP probes inwards
};

struct Addr {
  bool v6 = false;
  std::array<uint8_t, 16> b{};  // IPv4 in b[0..3]
  std::string Text() const;
  bool operator==(const Addr&) const = default;
};

struct Prefix {
  Addr net;
  int length = 0;
};

enum class PeerKind { kAny, kLoopback, kPrefix };
struct Peer {
  PeerKind kind = PeerKind::kAny;
  Prefix prefix;
  std::string Text() const;
};

enum class Proto { kOmitted, kTcp, kUdp, kIcmp };
const char* ProtoName(Proto p);  // "", "tcp", "udp", "icmp"

struct Rule {
  bool allow = true;
  bool ingress = false;
  Proto proto = Proto::kOmitted;
  std::vector<Peer> peers;
  std::vector<std::pair<uint16_t, uint16_t>> ports;  // empty: every port
};

// One flow: proto kTcp, kUdp or kIcmp (port 0).
struct Probe {
  bool ingress = false;
  Proto proto = Proto::kTcp;
  Addr addr;
  uint16_t port = 0;
  std::string Describe() const;  // "egress tcp 10.200.1.2 port 443"
};

struct Case {
  std::string text;  // the file; the policy to compile is `target`
  std::string target;
  std::string shape;        // which awkward case and where, for failure reports
  std::vector<Rule> rules;  // every rule `target` reaches (its own and its bases')
  // The awkward pair's edges (empty without one): the first and last
  // address of each block it names and their neighbours, in every form the
  // universe probes; the ports where its ranges begin and end and their
  // neighbours; its directions.
  std::vector<Addr> focus_addrs;
  std::vector<uint16_t> focus_ports;
  std::vector<bool> focus_ingress;
};

// Allowed iff some allow rule matches and no deny does (language/reference.md
// § network), each rule read as written (network_reference.cc).
bool Reference(const std::vector<Rule>& rules, const Probe& p);

// Case `index` of a run: three in four hold an awkward pair, the kind
// cycling with the index so that indexes 0-13 already hold every kind
// (there are eleven), placed and ordered at random, beside 0-5 random
// rules; the fourth holds 1-8 random rules only. `target` names the policy
// to compile.
Case RandomCase(Rng& rng, const Universe& u, int index, const std::string& target = "diff");

// A probe anywhere in the universe (both families, loopback, the mapped
// and, as the universe allows, NAT64, compatible and ::fffe: forms).
Probe RandomProbe(Rng& rng, const Universe& u);

// A probe of `c`: half of them at the awkward pair's edges, when it has one.
Probe CaseProbe(Rng& rng, const Universe& u, const Case& c);

}  // namespace ward::test::net
