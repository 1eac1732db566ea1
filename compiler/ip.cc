#include "compiler/ip.h"

#include <arpa/inet.h>

namespace ward::ir {
namespace {

template <typename A, int kBits>
Range<A> RangeOf(A value, int length) {
  // The host bits; length 0 covers everything (A{1} << kBits would be
  // undefined, so it is never computed).
  A host = length >= kBits ? A{0}
           : length == 0   ? ~A{0}
                           : static_cast<A>((A{1} << (kBits - length)) - 1);
  return {static_cast<A>(value & ~host), static_cast<A>(value | host)};
}

template <typename A, int kBits, typename Format>
std::vector<std::string> Cidrs(Range<A> r, Format format) {
  auto low_bits = [](int k) { return k >= kBits ? ~A{0} : static_cast<A>((A{1} << k) - 1); };
  std::vector<std::string> out;
  A lo = r.lo;
  while (true) {
    // The largest aligned block of 2^k addresses that starts at lo and ends
    // within hi.
    int k = 0;
    while (k < kBits && (lo & low_bits(k + 1)) == 0 && (lo | low_bits(k + 1)) <= r.hi) ++k;
    out.push_back(format(lo) + "/" + std::to_string(kBits - k));
    A last = lo | low_bits(k);
    if (last >= r.hi) break;
    lo = last + 1;
  }
  return out;
}

}  // namespace

Range<V4> V4Range(const IpPrefix& p) {
  V4 v = (V4{p.bytes[0]} << 24) | (V4{p.bytes[1]} << 16) | (V4{p.bytes[2]} << 8) | p.bytes[3];
  return RangeOf<V4, 32>(v, p.length);
}

Range<V6> V6Range(const IpPrefix& p) {
  V6 v = 0;
  for (uint8_t b : p.bytes) v = (v << 8) | b;
  return RangeOf<V6, 128>(v, p.length);
}

V6 MappedV6(V4 a) { return (V6{0xffff} << 32) | a; }
V6 Nat64V6(V4 a) { return (V6{0x0064ff9b} << 96) | a; }
V6 CompatV6(V4 a) { return V6{a}; }
bool IsMapped(V6 a) { return (a >> 32) == V6{0xffff}; }

std::string FormatV4(V4 a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::string FormatV6(V6 a) {
  uint8_t bytes[16];
  for (int i = 15; i >= 0; --i) {
    bytes[i] = static_cast<uint8_t>(a & 0xff);
    a >>= 8;
  }
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes, buf, sizeof buf);
  return buf;
}

std::vector<std::string> V4Cidrs(Range<V4> r) { return Cidrs<V4, 32>(r, FormatV4); }
std::vector<std::string> V6Cidrs(Range<V6> r) { return Cidrs<V6, 128>(r, FormatV6); }

}  // namespace ward::ir
