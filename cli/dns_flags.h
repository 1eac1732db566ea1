// The resolver flags `ward apply` and `ward run` share (domain grants).
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>

#include "enforcers/linux/dns.h"

namespace ward::cli {

inline void AddDnsFlags(CLI::App* cmd, enforce::DnsOptions* dns) {
  cmd->add_option("--dns-server", dns->servers,
                  "IPv4 DNS server for domain grants (repeatable; default: /etc/resolv.conf)");
  cmd->add_option("--dns-port", dns->port, "the DNS servers' port");
  cmd->add_option("--ttl-floor", dns->ttl_floor, "shortest time an answer is trusted (seconds)");
  cmd->add_option("--ttl-cap", dns->ttl_cap, "longest time an answer is trusted (seconds)");
}

// False, after saying why on stderr, when the TTL bounds make no sense.
inline bool CheckDnsFlags(const char* command, const enforce::DnsOptions& dns) {
  if (dns.ttl_floor == 0 || dns.ttl_cap < dns.ttl_floor) {
    std::cerr << "ward " << command << ": need 0 < --ttl-floor <= --ttl-cap\n";
    return false;
  }
  return true;
}

}  // namespace ward::cli
