// What an enforcer's resolver answered for a domain grant (enforcers/linux/
// dns.h), in the vocabulary backends render from: the address-based targets
// (nftables, eBPF) turn these into address entries that expire with the
// answer's TTL. Not part of the IR: answers are facts of one host and moment.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/network.h"
#include "language/literals.h"

namespace ward::backend {

struct ResolvedAddress {
  ir::Direction direction = ir::Direction::kEgress;
  std::string pattern;  // the grant's key in the IR ("api.example.com")
  IpPrefix address;     // a /32 or /128 (IPv4-mapped IPv6 counts as IPv4)
  uint32_t ttl = 0;     // seconds the address may be trusted (clamped TTL)
  bool operator==(const ResolvedAddress&) const = default;
};

}  // namespace ward::backend
