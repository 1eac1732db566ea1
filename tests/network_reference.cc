// The reference of tests/network_cases.h: language/reference.md § network
// read over the rules as generated, on its own (it shares no helper with the
// generator beside the types, and nothing with compiler/).
#include <cstring>

#include "tests/network_cases.h"

namespace ward::test::net {
namespace {

constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
constexpr uint8_t kCompat[12] = {};

bool InPrefix(const uint8_t* addr, const uint8_t* net, int length) {
  for (int bit = 0; bit < length; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((addr[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

// Every rule covers IPv4 and IPv6 as written; an IPv4 rule also the
// IPv4-mapped form, an IPv4 deny also the NAT64 and IPv4-compatible forms;
// an IPv6 rule covers an IPv4 address through its mapped form.
bool Covers(const Prefix& p, const Addr& a, bool deny) {
  if (!p.net.v6) {
    if (!a.v6) return InPrefix(a.b.data(), p.net.b.data(), p.length);
    const bool v4_form = std::memcmp(a.b.data(), kMapped, 12) == 0 ||
                         (deny && (std::memcmp(a.b.data(), kNat64, 12) == 0 ||
                                   std::memcmp(a.b.data(), kCompat, 12) == 0));
    return v4_form && InPrefix(a.b.data() + 12, p.net.b.data(), p.length);
  }
  uint8_t v6[16];
  if (a.v6) {
    std::memcpy(v6, a.b.data(), 16);
  } else {
    std::memcpy(v6, kMapped, 12);
    std::memcpy(v6 + 12, a.b.data(), 4);
  }
  return InPrefix(v6, p.net.b.data(), p.length);
}

// `loopback` is 127.0.0.0/8 and ::1.
bool PeerCovers(const Peer& peer, const Addr& a, bool deny) {
  switch (peer.kind) {
    case PeerKind::kAny:
      return true;
    case PeerKind::kLoopback: {
      Prefix lo4, lo6;
      lo4.net.b[0] = 127;
      lo4.length = 8;
      lo6.net.v6 = true;
      lo6.net.b[15] = 1;
      lo6.length = 128;
      return Covers(lo4, a, deny) || Covers(lo6, a, deny);
    }
    case PeerKind::kPrefix:
      return Covers(peer.prefix, a, deny);
  }
  return false;
}

// Omitted protocol: tcp, udp and icmp; with ports, tcp and udp only.
bool Matches(const Rule& r, const Probe& p) {
  if (r.ingress != p.ingress) return false;
  const bool ports = !r.ports.empty();
  if (r.proto == Proto::kOmitted) {
    if (ports && p.proto == Proto::kIcmp) return false;
  } else if (r.proto != p.proto) {
    return false;
  }
  if (ports && p.proto != Proto::kIcmp) {
    bool in = false;
    for (auto [lo, hi] : r.ports) in |= lo <= p.port && p.port <= hi;
    if (!in) return false;
  }
  for (const Peer& peer : r.peers) {
    if (PeerCovers(peer, p.addr, !r.allow)) return true;
  }
  return false;
}

}  // namespace

// Deny overrides allow; order does not matter; both directions default to deny.
bool Reference(const std::vector<Rule>& rules, const Probe& p) {
  bool allowed = false, denied = false;
  for (const Rule& r : rules) {
    if (Matches(r, p)) (r.allow ? allowed : denied) = true;
  }
  return allowed && !denied;
}

}  // namespace ward::test::net
