// Addresses as integers, for interval arithmetic over the v4 and v6 spaces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "language/literals.h"

namespace ward::ir {

using V4 = uint32_t;
using V6 = unsigned __int128;

// The address range a prefix covers.
template <typename A>
struct Range {
  A lo = 0;
  A hi = 0;
  bool operator==(const Range&) const = default;
};

Range<V4> V4Range(const IpPrefix& p);
Range<V6> V6Range(const IpPrefix& p);

// ::ffff:0:0/96, 64:ff9b::/96 and ::/96: where an IPv4 address also lives.
V6 MappedV6(V4 a);
V6 Nat64V6(V4 a);
V6 CompatV6(V4 a);
bool IsMapped(V6 a);  // in ::ffff:0:0/96

std::string FormatV4(V4 a);
std::string FormatV6(V6 a);

// The fewest CIDRs that cover exactly [lo, hi], in order.
std::vector<std::string> V4Cidrs(Range<V4> r);
std::vector<std::string> V6Cidrs(Range<V6> r);

}  // namespace ward::ir
