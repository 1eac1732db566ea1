#include "tests/network_cases.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

namespace ward::test::net {
namespace {

int Pick(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
bool Coin(Rng& rng, int n) { return Pick(rng, 0, n - 1) == 0; }  // one chance in n

Addr Parse(const std::string& text) {
  Addr a;
  a.v6 = text.find(':') != std::string::npos;
  if (inet_pton(a.v6 ? AF_INET6 : AF_INET, text.c_str(), a.b.data()) != 1) {
    throw std::invalid_argument("network_cases: not an address: " + text);
  }
  return a;
}

// The low 32 bits (all of an IPv4 address), as a number.
uint32_t Low(const Addr& a) {
  const uint8_t* p = a.b.data() + (a.v6 ? 12 : 0);
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

Addr WithLow(Addr a, uint32_t v) {
  uint8_t* p = a.b.data() + (a.v6 ? 12 : 0);
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
  return a;
}

int Bits(const Addr& a) { return a.v6 ? 128 : 32; }

const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
const uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
const uint8_t kCompat[12] = {};
// Beside the mapped block: ::fffe:a.b.c.d, which only an IPv6 rule covers.
const uint8_t kNearMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe};

// An IPv4 address (or block) in an IPv6 form: kMapped, kNat64 or kCompat.
Addr InForm(const Addr& v4, const uint8_t (&form)[12]) {
  Addr a;
  a.v6 = true;
  std::memcpy(a.b.data(), form, 12);
  std::memcpy(a.b.data() + 12, v4.b.data(), 4);
  return a;
}

Prefix InForm(const Prefix& v4, const uint8_t (&form)[12]) {
  return {InForm(v4.net, form), v4.length + 96};
}

bool InPrefix(const uint8_t* addr, const uint8_t* net, int length) {
  for (int bit = 0; bit < length; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((addr[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

// ---- the universe ----------------------------------------------------------

Addr Base(const Universe& u, bool v6) { return Parse(v6 ? u.v6_base : u.v4_base); }
int UBits(const Universe& u, bool v6) { return v6 ? u.v6_bits : u.v4_bits; }

Addr Host(Rng& rng, const Universe& u, bool v6) {
  const Addr base = Base(u, v6);
  return WithLow(base, Low(base) + static_cast<uint32_t>(Pick(rng, 0, (1 << UBits(u, v6)) - 1)));
}

// The block of 2^host_bits addresses holding `a`.
Prefix Around(const Addr& a, int host_bits) {
  const uint32_t mask = host_bits >= 32 ? 0 : ~uint32_t{0} << host_bits;
  return {WithLow(a, Low(a) & mask), Bits(a) - host_bits};
}

Prefix RandomBlock(Rng& rng, const Universe& u, bool v6, int min_host_bits, int max_host_bits) {
  return Around(Host(rng, u, v6), Pick(rng, min_host_bits, max_host_bits));
}

// A block inside `outer` (itself only when it is one address).
Prefix Inside(Rng& rng, const Prefix& outer) {
  const int outer_host = Bits(outer.net) - outer.length;
  if (outer_host == 0) return outer;
  const int host = Pick(rng, 0, outer_host - 1);
  const uint32_t span = outer_host >= 32 ? ~uint32_t{0} : (uint32_t{1} << outer_host) - 1;
  return Around(WithLow(outer.net, Low(outer.net) + (static_cast<uint32_t>(rng()) & span)), host);
}

Peer PrefixPeer(const Prefix& p) {
  Peer peer;
  peer.kind = PeerKind::kPrefix;
  peer.prefix = p;
  return peer;
}

Peer KindPeer(PeerKind kind) {
  Peer peer;
  peer.kind = kind;
  return peer;
}

const std::vector<uint16_t>& PortsOf(const Universe& u, bool ingress) {
  return ingress && !u.ingress_ports.empty() ? u.ingress_ports : u.ports;
}

uint16_t RandomPort(Rng& rng, const Universe& u, bool ingress) {
  const auto& ports = PortsOf(u, ingress);
  return ports[Pick(rng, 0, static_cast<int>(ports.size()) - 1)];
}

// A range between two of the universe's ports (or one of them).
std::pair<uint16_t, uint16_t> RandomRange(Rng& rng, const Universe& u, bool ingress) {
  const auto& ports = PortsOf(u, ingress);
  const int n = static_cast<int>(ports.size());
  const int a = Pick(rng, 0, n - 1);
  const int b = Coin(rng, 3) ? Pick(rng, a, n - 1) : a;
  return {ports[a], ports[b]};
}

std::vector<std::pair<uint16_t, uint16_t>> RandomPorts(Rng& rng, const Universe& u, bool ingress) {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  for (int i = Pick(rng, 1, 3); i > 0; --i) out.push_back(RandomRange(rng, u, ingress));
  return out;
}

Proto RandomProto(Rng& rng) { return static_cast<Proto>(Pick(rng, 0, 3)); }

// An IPv6 block over or beside the mapped space (::ffff:0:0/96).
Peer AroundMappedPeer(Rng& rng) {
  static const char* const kNets[] = {"::ffff:0:0", "::ffff:0:0", "::ffff:128.0.0.0",
                                      "::",         "::fffe:0:0", "::ffff:0:0"};
  static const int kLengths[] = {95, 97, 97, 80, 96, 96};
  const int i = Pick(rng, 0, 5);
  return PrefixPeer({Parse(kNets[i]), kLengths[i]});
}

// Any peer of the universe, as the rules write them.
Peer RandomPeer(Rng& rng, const Universe& u) {
  const int kind = Pick(rng, 0, 11);
  if (kind == 0) return KindPeer(PeerKind::kAny);
  if (kind == 1) return KindPeer(PeerKind::kLoopback);
  // Now and then a block larger than the universe (a /16 around the IPv4 one).
  const bool v6 = kind >= 8;
  const int max = UBits(u, v6);
  const Prefix p = Coin(rng, 6) ? RandomBlock(rng, u, v6, max, std::min(max + 6, 32))
                                : RandomBlock(rng, u, v6, 0, max);
  if (kind == 2) return PrefixPeer(InForm(p, kMapped));
  if (kind == 3) return PrefixPeer(InForm(p, kNat64));
  if (kind == 11 && Coin(rng, 2)) return AroundMappedPeer(rng);
  return PrefixPeer(p);
}

Rule RandomRule(Rng& rng, const Universe& u) {
  Rule r;
  r.allow = !Coin(rng, 3);
  r.ingress = Coin(rng, u.ingress_probes ? 5 : 10);
  r.proto = RandomProto(rng);
  for (int i = Pick(rng, 1, 2); i > 0; --i) r.peers.push_back(RandomPeer(rng, u));
  if (r.proto != Proto::kIcmp && !Coin(rng, 3)) r.ports = RandomPorts(rng, u, r.ingress);
  return r;
}

// ---- the awkward pairs -------------------------------------------------------

struct Pair {
  Rule a, b;
  std::string kind;
};

// Both rules' direction, where they share one.
bool PairIngress(Rng& rng, const Universe& u) { return Coin(rng, u.ingress_probes ? 4 : 8); }

// The two rules' protocols and ports: mostly the same, sometimes not, with
// ports only where the protocol takes them.
void SharedProtoPorts(Rng& rng, const Universe& u, Rule* a, Rule* b) {
  a->proto = RandomProto(rng);
  b->proto = Coin(rng, 4) ? RandomProto(rng) : a->proto;
  const int ports = Pick(rng, 0, 3);  // none, same, a only, b only
  const auto list = RandomPorts(rng, u, a->ingress);
  if (a->proto != Proto::kIcmp && (ports == 1 || ports == 2)) a->ports = list;
  if (b->proto != Proto::kIcmp && (ports == 1 || ports == 3)) {
    // The same list where both name the same ports (directions may differ).
    b->ports =
        PortsOf(u, a->ingress) == PortsOf(u, b->ingress) ? list : RandomPorts(rng, u, b->ingress);
  }
}

Pair Nested(Rng& rng, const Universe& u, bool outer_allows) {
  const bool v6 = Coin(rng, 3);
  const Prefix outer = RandomBlock(rng, u, v6, 1, UBits(u, v6));
  Pair p;
  p.kind = outer_allows ? "deny inside allow" : "allow inside deny";
  p.a.peers = {PrefixPeer(outer)};
  p.b.peers = {PrefixPeer(Inside(rng, outer))};
  p.a.allow = outer_allows;
  p.b.allow = !outer_allows;
  return p;
}

Pair Equal(Rng& rng, const Universe& u) {
  const bool v6 = Coin(rng, 3);
  const Prefix block = RandomBlock(rng, u, v6, 0, UBits(u, v6));
  Pair p;
  p.kind = "equal blocks, both verdicts";
  p.a.peers = p.b.peers = {PrefixPeer(block)};
  p.a.allow = true;
  p.b.allow = false;
  return p;
}

Pair WholeSpace(Rng& rng, const Universe& u) {
  Pair p;
  p.kind = "the whole space";
  const int whole = Pick(rng, 0, 3);
  Peer all = KindPeer(PeerKind::kAny);
  if (whole == 1) all = PrefixPeer({Addr{}, 0});  // 0.0.0.0/0: IPv4 (and mapped) only
  if (whole == 2) all = PrefixPeer({Parse("::"), 0});
  const bool v6 = whole != 1 && Coin(rng, 3);
  p.a.peers = {all};
  p.b.peers = {PrefixPeer(RandomBlock(rng, u, v6, 0, UBits(u, v6)))};
  p.a.allow = !Coin(rng, 3);
  p.b.allow = !p.a.allow;
  return p;
}

Pair Loopback(Rng& rng, const Universe& u) {
  Pair p;
  p.kind = "loopback";
  static const char* const kInside[] = {"127.0.0.1", "127.0.0.0", "::1", "127.0.0.0"};
  static const int kLengths[] = {32, 8, 128, 24};
  const int i = Pick(rng, 0, 3);
  const Peer lo = KindPeer(PeerKind::kLoopback),
             part = PrefixPeer({Parse(kInside[i]), kLengths[i]});
  switch (Pick(rng, 0, 3)) {
    case 0:  // allow loopback, deny a part of it
      p.a.peers = {lo};
      p.b.peers = {part};
      break;
    case 1:  // allow any, deny loopback
      p.a.peers = {KindPeer(PeerKind::kAny)};
      p.b.peers = {lo};
      break;
    case 2:  // allow a part, deny loopback
      p.a.peers = {part};
      p.b.peers = {lo};
      break;
    default: {  // deny loopback beside an allow of the universe
      const bool v6 = Coin(rng, 2);
      p.a.peers = {PrefixPeer(RandomBlock(rng, u, v6, 0, UBits(u, v6))), part};
      p.b.peers = {lo};
      break;
    }
  }
  p.a.allow = true;
  p.b.allow = false;
  return p;
}

Pair Mapped(Rng& rng, const Universe& u) {
  const Prefix outer = RandomBlock(rng, u, false, 0, u.v4_bits);
  const Prefix inner = Coin(rng, 3) ? outer : Inside(rng, outer);
  Pair p;
  p.kind = "IPv4 against IPv4-mapped";
  // One of the two in its mapped form.
  const bool map_outer = Coin(rng, 2);
  p.a.peers = {PrefixPeer(map_outer ? InForm(outer, kMapped) : outer)};
  p.b.peers = {PrefixPeer(map_outer ? inner : InForm(inner, kMapped))};
  p.a.allow = Coin(rng, 2);
  p.b.allow = !p.a.allow;
  return p;
}

Pair Nat64(Rng& rng, const Universe& u) {
  const Prefix outer = RandomBlock(rng, u, false, 0, u.v4_bits);
  const Prefix inner = Coin(rng, 3) ? outer : Inside(rng, outer);
  const Prefix all_nat64 = {Parse("64:ff9b::"), 96}, all_compat = {Parse("::"), 96};
  Pair p;
  p.kind = "IPv4 against NAT64 and compatible";
  switch (Pick(rng, 0, 4)) {
    case 0:  // an IPv4 deny holds for the NAT64 form of what an allow grants
      p.a.peers = {KindPeer(PeerKind::kAny)};
      p.b.peers = {PrefixPeer(inner)};
      break;
    case 1:
      p.a.peers = {PrefixPeer(InForm(outer, kNat64))};
      p.b.peers = {PrefixPeer(inner)};
      break;
    case 2:  // an IPv4 allow grants no NAT64 form; a NAT64 deny no IPv4 address
      p.a.peers = {PrefixPeer(outer)};
      p.b.peers = {PrefixPeer(Coin(rng, 2) ? all_nat64 : InForm(inner, kNat64))};
      break;
    case 3:
      p.a.peers = {PrefixPeer(all_nat64)};
      p.b.peers = {PrefixPeer(inner)};
      break;
    default:  // the IPv4-compatible form
      p.a.peers = {PrefixPeer(Coin(rng, 2) ? all_compat : InForm(outer, kCompat))};
      p.b.peers = {PrefixPeer(inner)};
      break;
  }
  p.a.allow = true;
  p.b.allow = false;
  return p;
}

// Port ranges that overlap in part (a-c against b-d, a < b <= c < d), or a
// port inside a range; the protocols take ports.
Pair Ports(Rng& rng, const Universe& u) {
  const bool v6 = Coin(rng, 3);
  const Prefix block = RandomBlock(rng, u, v6, 0, UBits(u, v6));
  Pair p;
  p.kind = "ports overlapping in part";
  p.a.ingress = p.b.ingress = PairIngress(rng, u);
  p.a.peers = {PrefixPeer(block)};
  p.b.peers = {Coin(rng, 3) ? PrefixPeer(Inside(rng, block)) : PrefixPeer(block)};
  static const Proto kWithPorts[] = {Proto::kOmitted, Proto::kTcp, Proto::kUdp};
  p.a.proto = kWithPorts[Pick(rng, 0, 2)];
  p.b.proto = Coin(rng, 3) ? kWithPorts[Pick(rng, 0, 2)] : p.a.proto;
  const auto& ports = PortsOf(u, p.a.ingress);
  const int n = static_cast<int>(ports.size());
  std::vector<int> at;
  for (int i = 0; i < 4; ++i) at.push_back(Pick(rng, 0, n - 1));
  std::sort(at.begin(), at.end());
  if (Coin(rng, 3)) {  // one port inside a range
    p.a.ports = {{ports[at[0]], ports[at[3]]}};
    p.b.ports = {{ports[at[1]], ports[at[1]]}};
  } else {
    p.a.ports = {{ports[at[0]], ports[at[2]]}};
    p.b.ports = {{ports[at[1]], ports[at[3]]}};
  }
  if (Coin(rng, 3)) p.a.ports.push_back(RandomRange(rng, u, p.a.ingress));  // one more in the list
  p.a.allow = !Coin(rng, 4);
  p.b.allow = !p.a.allow;
  return p;
}

Pair Protocols(Rng& rng, const Universe& u) {
  const bool v6 = Coin(rng, 3);
  const Prefix block = RandomBlock(rng, u, v6, 0, UBits(u, v6));
  Pair p;
  p.kind = "protocol omitted against one protocol";
  p.a.ingress = p.b.ingress = PairIngress(rng, u);
  p.a.peers = {PrefixPeer(block)};
  p.b.peers = {Coin(rng, 2) ? PrefixPeer(block) : PrefixPeer(Inside(rng, block))};
  p.a.proto = Proto::kOmitted;
  p.b.proto = static_cast<Proto>(Pick(rng, 1, 3));
  if (Coin(rng, 3)) p.a.ports = RandomPorts(rng, u, p.a.ingress);
  if (p.b.proto != Proto::kIcmp && Coin(rng, 3)) p.b.ports = RandomPorts(rng, u, p.b.ingress);
  p.a.allow = Coin(rng, 2);
  p.b.allow = !p.a.allow;
  return p;
}

Pair Directions(Rng& rng, const Universe& u) {
  const bool v6 = Coin(rng, 3);
  const Prefix block = RandomBlock(rng, u, v6, 0, UBits(u, v6));
  Pair p;
  p.kind = "egress against ingress";
  p.a.peers = {Coin(rng, 4) ? KindPeer(PeerKind::kAny) : PrefixPeer(block)};
  p.b.peers = {PrefixPeer(block)};
  p.a.ingress = Coin(rng, 2);
  p.b.ingress = !p.a.ingress;
  SharedProtoPorts(rng, u, &p.a, &p.b);
  p.a.allow = Coin(rng, 2);
  p.b.allow = !p.a.allow;
  return p;
}

// IPv6 blocks over (or beside) the mapped space, which covers IPv4 through
// the mapped form, against an IPv4 block of the other verdict.
Pair AroundMapped(Rng& rng, const Universe& u) {
  Pair p;
  p.kind = "an IPv6 block over the mapped space";
  p.a.peers = {AroundMappedPeer(rng)};
  p.b.peers = {Coin(rng, 4) ? KindPeer(PeerKind::kAny)
                            : PrefixPeer(RandomBlock(rng, u, false, 0, u.v4_bits))};
  p.a.allow = Coin(rng, 2);
  p.b.allow = !p.a.allow;
  return p;
}

constexpr int kKinds = 11;

Pair AwkwardPair(Rng& rng, const Universe& u, int kind) {
  Pair p;
  switch (kind) {
    case 0:
      p = Nested(rng, u, true);
      break;
    case 1:
      p = Nested(rng, u, false);
      break;
    case 2:
      p = Equal(rng, u);
      break;
    case 3:
      p = WholeSpace(rng, u);
      break;
    case 4:
      p = Loopback(rng, u);
      break;
    case 5:
      p = Mapped(rng, u);
      break;
    case 6:
      p = Nat64(rng, u);
      break;
    case 7:
      return Ports(rng, u);
    case 8:
      return Protocols(rng, u);
    case 9:
      return Directions(rng, u);
    default:
      p = AroundMapped(rng, u);
      break;
  }
  p.a.ingress = p.b.ingress = PairIngress(rng, u);
  SharedProtoPorts(rng, u, &p.a, &p.b);
  // Now and then the pair's verdicts the other way round.
  if (kind >= 2 && Coin(rng, 4)) std::swap(p.a.allow, p.b.allow);
  return p;
}

// ---- the pair's edges --------------------------------------------------------

bool InUniverse(const Universe& u, const Addr& a) {
  const Addr base = Base(u, a.v6);
  return InPrefix(a.b.data(), base.b.data(), Bits(a) - UBits(u, a.v6));
}

// The IPv4 block an IPv6 form (mapped, NAT64, compatible) stands for.
bool AsV4(const Prefix& p, Prefix* v4) {
  if (!p.net.v6 || p.length < 96) return false;
  for (const auto* form : {&kMapped, &kNat64, &kCompat, &kNearMapped}) {
    if (std::memcmp(p.net.b.data(), *form, 12) == 0) {
      v4->net = Addr{};
      std::memcpy(v4->net.b.data(), p.net.b.data() + 12, 4);
      v4->length = p.length - 96;
      return true;
    }
  }
  return false;
}

void AddEdges(Rng& rng, const Universe& u, const Peer& peer, std::vector<Addr>* out) {
  if (peer.kind == PeerKind::kAny) {
    out->push_back(Host(rng, u, false));
    out->push_back(Host(rng, u, true));
    out->push_back(Parse("127.0.0.1"));
    out->push_back(Parse("::1"));
    return;
  }
  if (peer.kind == PeerKind::kLoopback) {
    for (const char* a : {"127.0.0.1", "127.0.0.2", "127.1.2.3", "::1"}) {
      out->push_back(Parse(a));
    }
    out->push_back(Host(rng, u, false));  // just outside
    return;
  }
  Prefix p = peer.prefix, v4;
  if (p.net == Parse("::1")) {
    out->push_back(p.net);
    return;
  }
  if (AsV4(p, &v4)) p = v4;
  if (p.length == 0) {  // 0.0.0.0/0, ::/0
    out->push_back(Host(rng, u, p.net.v6));
    return;
  }
  if (p.net.v6 && p.length < 96) {  // wider than an IPv4 form: over the mapped space?
    out->push_back(Host(rng, u, false));
    out->push_back(InForm(Host(rng, u, false), kNearMapped));
    return;
  }
  const int host = Bits(p.net) - p.length;
  const uint32_t span = host >= 32 ? ~uint32_t{0} : (uint32_t{1} << host) - 1;
  const uint32_t first = Low(p.net), last = first + span;
  for (uint32_t x : {first, last, first - 1, last + 1}) {
    const Addr a = WithLow(p.net, x);
    // In 127.0.0.0/8, neither its first address nor its broadcast: no
    // connection reaches those.
    const bool loopback =
        !a.v6 && a.b[0] == 127 && (x & 0xffffff) != 0 && (x & 0xffffff) != 0xffffff;
    if (InUniverse(u, a) || loopback) out->push_back(a);
  }
}

// Every form the universe probes of the IPv4 addresses among `addrs`.
std::vector<Addr> WithForms(const Universe& u, const std::vector<Addr>& addrs) {
  std::vector<Addr> out;
  for (const Addr& a : addrs) {
    out.push_back(a);
    if (a.v6) continue;
    out.push_back(InForm(a, kMapped));
    if (u.nat64_probes) out.push_back(InForm(a, kNat64));
    if (u.compat_probes) out.push_back(InForm(a, kCompat));
    if (u.near_mapped_probes) out.push_back(InForm(a, kNearMapped));
  }
  return out;
}

std::vector<uint16_t> PortEdges(Rng& rng, const Universe& u, const Pair& p) {
  std::vector<uint16_t> out;
  auto neighbours = [&](const std::vector<uint16_t>& ports, uint16_t port) {
    const auto it = std::lower_bound(ports.begin(), ports.end(), port);
    if (it != ports.begin()) out.push_back(*(it - 1));
    out.push_back(port);
    if (it != ports.end() && it + 1 != ports.end()) out.push_back(*(it + 1));
  };
  for (const Rule* r : {&p.a, &p.b}) {
    for (auto [lo, hi] : r->ports) {
      neighbours(PortsOf(u, r->ingress), lo);
      neighbours(PortsOf(u, r->ingress), hi);
    }
    out.push_back(RandomPort(rng, u, r->ingress));
  }
  return out;
}

// ---- the file ----------------------------------------------------------------

// Renders value lists the ways the language allows: `a, b`, `[a, b]`,
// `[a], b`, or through a `let` (declared at the top of the file).
class Lists {
 public:
  Lists(Rng& rng, bool split) : rng_(rng), split_(split) {}
  std::string Render(const std::vector<std::string>& items) {
    std::string joined;
    for (size_t i = 0; i < items.size(); ++i) joined += (i ? ", " : "") + items[i];
    if (!split_) return joined;
    switch (Pick(rng_, 0, 3)) {
      case 0:
        return joined;
      case 1:
        return "[" + joined + "]";
      case 2: {
        std::string out = "[" + items[0] + "]";
        for (size_t i = 1; i < items.size(); ++i) out += ", " + items[i];
        return out;
      }
      default: {
        const std::string name = "v" + std::to_string(count_++);
        lets_ += "let " + name + " = [" + joined + "]\n";
        return Coin(rng_, 2) ? name : "[" + name + "]";
      }
    }
  }
  const std::string& lets() const { return lets_; }
  void set_split(bool split) { split_ = split; }

 private:
  Rng& rng_;
  bool split_;
  int count_ = 0;
  std::string lets_;
};

std::string RuleText(const Rule& r, Lists& lists) {
  std::string s = r.allow ? "allow" : "deny";
  if (r.ingress) s += " ingress";
  if (r.proto != Proto::kOmitted) s += std::string(" ") + ProtoName(r.proto);
  s += r.ingress ? " from " : " to ";
  std::vector<std::string> peers, ports;
  for (const Peer& p : r.peers) peers.push_back(p.Text());
  s += lists.Render(peers);
  for (auto [lo, hi] : r.ports) {
    ports.push_back(lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi));
  }
  if (!ports.empty()) s += (ports.size() == 1 ? " port " : " ports ") + lists.Render(ports);
  return s;
}

struct PolicyDraft {
  std::string name;
  std::vector<std::string> extends;
  bool abstract = false;
  std::vector<std::pair<Rule, bool>> rules;  // the rule, split across lists
};

// The layouts of the pair: where rules a and b go.
enum Placement { kSameAB, kSameBA, kBaseA, kBaseB, kChain, kDiamond, kPlacements };

std::vector<PolicyDraft> Drafts(Placement placement) {
  switch (placement) {
    case kSameAB:
    case kSameBA:
      return {{"diff", {}, false, {}}};
    case kBaseA:
    case kBaseB:
      return {{"b0", {}, true, {}}, {"diff", {"b0"}, false, {}}};
    case kChain:
      return {{"b0", {}, true, {}}, {"b1", {"b0"}, true, {}}, {"diff", {"b1"}, false, {}}};
    case kPlacements:
    case kDiamond:
      break;
  }
  return {{"b0", {}, true, {}},
          {"l", {"b0"}, true, {}},
          {"r", {"b0"}, false, {}},
          {"diff", {"l", "r"}, false, {}}};
}

const char* const kPlacementNames[] = {"one policy, first rule first",
                                       "one policy, second rule first",
                                       "base first rule, derived second",
                                       "base second rule, derived first",
                                       "chain of two bases",
                                       "base reached twice (diamond)"};

}  // namespace

std::string Addr::Text() const {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(v6 ? AF_INET6 : AF_INET, b.data(), buf, sizeof buf);
  return buf;
}

std::string Peer::Text() const {
  switch (kind) {
    case PeerKind::kAny:
      return "any";
    case PeerKind::kLoopback:
      return "loopback";
    case PeerKind::kPrefix:
      break;
  }
  std::string s = prefix.net.Text();
  return prefix.length == Bits(prefix.net) ? s : s + "/" + std::to_string(prefix.length);
}

const char* ProtoName(Proto p) {
  switch (p) {
    case Proto::kOmitted:
      return "";
    case Proto::kTcp:
      return "tcp";
    case Proto::kUdp:
      return "udp";
    case Proto::kIcmp:
      return "icmp";
  }
  return "";
}

std::string Probe::Describe() const {
  return std::string(ingress ? "ingress " : "egress ") + ProtoName(proto) + " " + addr.Text() +
         " port " + std::to_string(port);
}

// ---- cases and probes -----------------------------------------------------------

Case RandomCase(Rng& rng, const Universe& u, int index, const std::string& target) {
  constexpr int max_filler = 5;
  Case c;
  c.target = target;
  const bool awkward = index % 4 != 3;
  const int k = index / 4 * 3 + index % 4;  // the index among the awkward cases
  const Placement placement = static_cast<Placement>(Pick(rng, 0, kPlacements - 1));
  std::vector<PolicyDraft> drafts = Drafts(awkward ? placement : Coin(rng, 2) ? kSameAB : kBaseA);
  drafts.back().name = target;  // "diff" in Drafts()
  auto draft = [&](std::string name) -> PolicyDraft& {
    if (name == "diff") name = target;
    for (PolicyDraft& d : drafts) {
      if (d.name == name) return d;
    }
    return drafts.back();
  };
  if (awkward) {
    Pair p = AwkwardPair(rng, u, k % kKinds);
    const bool split = Coin(rng, 2);
    // Sometimes one more peer in the pair's lists (a decoy beside it).
    if (Coin(rng, 4)) p.b.peers.insert(p.b.peers.begin() + Pick(rng, 0, 1), RandomPeer(rng, u));
    const std::string other = Coin(rng, 2) ? "diff" : drafts.size() > 2 ? drafts[1].name : "diff";
    switch (placement) {
      case kSameAB:
        draft("diff").rules = {{p.a, split}, {p.b, split}};
        break;
      case kSameBA:
        draft("diff").rules = {{p.b, split}, {p.a, split}};
        break;
      case kBaseA:
        draft("b0").rules = {{p.a, split}};
        draft("diff").rules = {{p.b, split}};
        break;
      case kBaseB:
        draft("b0").rules = {{p.b, split}};
        draft("diff").rules = {{p.a, split}};
        break;
      case kChain:
      case kDiamond:
      case kPlacements: {
        // The base the chain (or the diamond) reaches first holds one of
        // the pair, a policy further down the other.
        const std::string down = placement == kDiamond
                                     ? std::vector<std::string>{"l", "r", "diff"}[Pick(rng, 0, 2)]
                                     : other;
        const bool a_first = Coin(rng, 2);
        draft("b0").rules = {{a_first ? p.a : p.b, split}};
        draft(down).rules.push_back({a_first ? p.b : p.a, split});
        break;
      }
    }
    c.shape = p.kind + "; " + kPlacementNames[placement];
    std::vector<Addr> edges;
    for (const Rule* r : {&p.a, &p.b}) {
      for (const Peer& peer : r->peers) AddEdges(rng, u, peer, &edges);
    }
    c.focus_addrs = WithForms(u, edges);
    c.focus_ports = PortEdges(rng, u, p);
    c.focus_ingress = {p.a.ingress, p.b.ingress};
  } else {
    c.shape = "random rules only";
  }
  // The random rules, anywhere along the chain, at random places.
  for (int i = Pick(rng, awkward ? 0 : 1, awkward ? max_filler : max_filler + 3); i > 0; --i) {
    auto& rules = drafts[Pick(rng, 0, static_cast<int>(drafts.size()) - 1)].rules;
    rules.insert(rules.begin() + Pick(rng, 0, static_cast<int>(rules.size())),
                 {RandomRule(rng, u), Coin(rng, 4)});
  }
  for (const PolicyDraft& d : drafts) {
    for (const auto& [rule, split] : d.rules) c.rules.push_back(rule);
  }
  // A policy the target does not reach, which would change its decisions.
  if (Coin(rng, 3)) {
    PolicyDraft decoy{"decoy", {drafts.front().name}, Coin(rng, 2), {}};
    Rule any;
    any.peers = {KindPeer(PeerKind::kAny)};
    decoy.rules.push_back({any, false});
    if (!c.rules.empty()) {
      Rule flipped = c.rules[Pick(rng, 0, static_cast<int>(c.rules.size()) - 1)];
      flipped.allow = !flipped.allow;
      decoy.rules.push_back({flipped, false});
    }
    drafts.insert(drafts.begin() + Pick(rng, 0, static_cast<int>(drafts.size())), decoy);
  }
  // The file: bases first, derived first, or shuffled.
  const int order = Pick(rng, 0, 2);
  if (order == 1) std::reverse(drafts.begin(), drafts.end());
  if (order == 2) std::shuffle(drafts.begin(), drafts.end(), rng);
  c.shape += order == 0   ? "; bases first in the file"
             : order == 1 ? "; derived first in the file"
                          : "; policies shuffled in the file";
  Lists lists(rng, false);
  std::string body;
  for (const PolicyDraft& d : drafts) {
    body += d.abstract ? "abstract policy " : "policy ";
    body += d.name;
    for (size_t i = 0; i < d.extends.size(); ++i) body += (i ? ", " : " extends ") + d.extends[i];
    body += " {\n";
    if (!d.rules.empty() || Coin(rng, 2)) {
      body += "  network {\n";
      for (const auto& [rule, split] : d.rules) {
        lists.set_split(split);
        body += "    " + RuleText(rule, lists) + "\n";
      }
      body += "  }\n";
    }
    body += "}\n";
  }
  c.text = lists.lets() + body;
  return c;
}

namespace {

bool IcmpProbes(const Universe& u, const Probe& p) {
  if (p.ingress && !u.icmp_ingress) return false;
  return u.icmp_mapped || !p.addr.v6 || std::memcmp(p.addr.b.data(), kMapped, 12) != 0;
}

}  // namespace

Probe RandomProbe(Rng& rng, const Universe& u) {
  Probe p;
  p.ingress = u.ingress_probes && Coin(rng, 4);
  const int proto = Pick(rng, 0, 9);
  p.proto = proto < 5 ? Proto::kTcp : proto < 8 ? Proto::kUdp : Proto::kIcmp;
  const int family = Pick(rng, 0, 19);
  if (family < 10) {
    p.addr = Host(rng, u, false);
  } else if (family < 16) {
    p.addr = Host(rng, u, true);
  } else if (family < 18) {
    p.addr = InForm(Host(rng, u, false), kMapped);
  } else if (family == 18) {
    p.addr = Parse(Coin(rng, 2) ? "127.0.0.1" : "::1");
  } else {
    // One of the other IPv6 forms of an IPv4 address the universe probes.
    std::vector<const uint8_t(*)[12]> forms;
    if (u.nat64_probes) forms.push_back(&kNat64);
    if (u.compat_probes) forms.push_back(&kCompat);
    if (u.near_mapped_probes) forms.push_back(&kNearMapped);
    p.addr = Host(rng, u, false);
    if (!forms.empty()) {
      p.addr = InForm(p.addr, *forms[Pick(rng, 0, static_cast<int>(forms.size()) - 1)]);
    }
  }
  if (p.proto == Proto::kIcmp && !IcmpProbes(u, p)) p.proto = Proto::kTcp;
  p.port = p.proto == Proto::kIcmp ? 0 : RandomPort(rng, u, p.ingress);
  return p;
}

Probe CaseProbe(Rng& rng, const Universe& u, const Case& c) {
  if (c.focus_addrs.empty() || Coin(rng, 2)) return RandomProbe(rng, u);
  Probe p;
  p.addr = c.focus_addrs[Pick(rng, 0, static_cast<int>(c.focus_addrs.size()) - 1)];
  p.ingress = u.ingress_probes && c.focus_ingress[Pick(rng, 0, 1)];
  // ICMP less often than at random: a refused ICMPv6 echo costs a live
  // test a wait for a reply that does not come.
  const int proto = Pick(rng, 0, 5);
  p.proto = proto < 3 ? Proto::kTcp : proto < 5 ? Proto::kUdp : Proto::kIcmp;
  if (p.proto == Proto::kIcmp && !IcmpProbes(u, p)) p.proto = Proto::kUdp;
  if (p.proto != Proto::kIcmp) {
    // An edge of this direction's ports.
    const auto& ports = PortsOf(u, p.ingress);
    std::vector<uint16_t> edges;
    for (uint16_t port : c.focus_ports) {
      if (std::binary_search(ports.begin(), ports.end(), port)) edges.push_back(port);
    }
    p.port = edges.empty() ? RandomPort(rng, u, p.ingress)
                           : edges[Pick(rng, 0, static_cast<int>(edges.size()) - 1)];
  }
  return p;
}

}  // namespace ward::test::net
