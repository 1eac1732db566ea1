// DNS answers with their TTLs, for the address-based enforcers (nftables,
// eBPF) that turn a policy's domain grants into timed address entries
// (backends/nftables/README.md § Domains). Queries go through glibc's
// libresolv (res_nquery: no search list, no /etc/hosts), A and AAAA, and
// take only the records on the CNAME chain from the name asked.
//
// Trust: the answers decide which addresses a grant opens, so they are only
// as good as the resolver path (the host's configured resolver, or the
// servers named in DnsOptions). No DNSSEC validation is done here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ip.h"

namespace ward::enforce {

struct DnsOptions {
  // IPv4 server addresses ("10.0.0.53"); empty: /etc/resolv.conf.
  std::vector<std::string> servers;
  uint16_t port = 53;
  // Every answer's TTL is clamped to [ttl_floor, ttl_cap] seconds: a floor
  // so a TTL of 0 does not make the enforcer re-resolve without pause, a
  // cap so an address is never trusted longer than that without asking
  // again.
  uint32_t ttl_floor = 30;
  uint32_t ttl_cap = 3600;
  int timeout_seconds = 2;  // per try
  int attempts = 2;
};

struct DnsAnswer {
  IpPrefix address;  // a /32 or /128
  uint32_t ttl = 0;  // clamped; the smallest TTL on the chain that led to it
};

// Resolves A and AAAA records of `name` (a normalised domain, no wildcard).
// A name that does not exist, or has no such records, gives no answers and
// true; a failure to get an answer at all (timeout, SERVFAIL, refused,
// malformed reply) gives false and *error. When only one of the two queries
// fails and the other has records, those are the answers, true, and *error
// says what failed (the caller warns: the other family stays denied);
// otherwise *error is empty on true. Answers are sorted, without duplicates
// (the smallest TTL kept).
bool ResolveName(const std::string& name, const DnsOptions& options,
                 std::vector<DnsAnswer>* answers, std::string* error);

}  // namespace ward::enforce
