#include "compiler/explain.h"

namespace ward::ir {
namespace {

const char* ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kTcp:
      return "tcp";
    case Protocol::kUdp:
      return "udp";
    case Protocol::kIcmp:
      return "icmp";
  }
  return "tcp";
}

void Cite(Explanation& e, const std::vector<const FlatRule*>& rules, bool allow) {
  for (const FlatRule* r : rules) {
    if (r->allow == allow) e.rules.push_back(r->span);
  }
}

}  // namespace

std::optional<Explanation> ExplainFlow(const Policy& policy, const FlowQuery& q,
                                       std::string* error) {
  Explanation e;
  std::string where = q.host;
  std::optional<IpPrefix> addr;
  std::optional<std::string> name;
  std::string parse_error;
  if (auto ip = ParseIpOrCidr(q.host, &parse_error); ip && q.host.find('/') == std::string::npos) {
    addr = *ip;
  } else {
    name = q.host;
    if (auto it = q.resolve.find(NormaliseDomain(q.host)); it != q.resolve.end()) {
      auto resolved = ParseIpOrCidr(it->second, &parse_error);
      if (!resolved || it->second.find('/') != std::string::npos) {
        *error = "--resolve " + it->first + "=" + it->second + ": not an address";
        return std::nullopt;
      }
      addr = *resolved;
      where += " (" + it->second + ")";
    } else {
      e.notes.push_back("'" + q.host +
                        "' was not resolved: only domain rules were consulted (give --resolve " +
                        q.host + "=IP to add the address rules)");
    }
  }
  e.query = std::string(q.direction == Direction::kEgress ? "egress " : "ingress ") +
            ProtocolName(q.protocol) + (q.direction == Direction::kEgress ? " to " : " from ") +
            where + (q.protocol == Protocol::kIcmp ? "" : " port " + std::to_string(q.port));
  bool allowed = name ? policy.network.DecideName(q.direction, q.protocol, *name,
                                                  addr ? &*addr : nullptr, q.port)
                      : policy.network.Decide(q.direction, q.protocol, *addr, q.port);
  std::vector<const FlatRule*> matching = policy.network.Matching(
      q.direction, q.protocol, addr ? &*addr : nullptr, name ? &*name : nullptr, q.port);
  e.decision = allowed ? "allow" : "deny";
  // Allowed: the allows that matched. Denied: the denies that matched, or,
  // when none did, no rule (the default).
  Cite(e, matching, allowed);
  return e;
}

Explanation ExplainUnix(const Policy& policy, const std::string& target) {
  Explanation e;
  bool abstract = !target.empty() && target[0] == '@';
  std::string key = abstract ? target.substr(1) : target;
  const auto& granted = abstract ? policy.network.unix_abstract : policy.network.unix_paths;
  bool allowed = granted.count(key) > 0;
  e.query = "connect unix " + target;
  e.decision = allowed ? "allow" : "deny";
  for (const UnixRule& r : policy.network.unix_rules) {
    if (r.abstract == abstract && r.name == key && r.allow == allowed) e.rules.push_back(r.span);
  }
  if (!allowed && e.rules.empty()) {
    e.notes.push_back("sockets the workload creates itself stay reachable");
  }
  return e;
}

std::optional<Explanation> ExplainPath(const Policy& policy, const std::string& path, FsRight right,
                                       const std::optional<std::string>& home, std::string* error) {
  if (policy.filesystem.NeedsHome() && !home) {
    *error = "the policy has rules under ~: give --home DIR";
    return std::nullopt;
  }
  if (path.empty() || path[0] != '/') {
    *error = "--path must be absolute";
    return std::nullopt;
  }
  static const char* kRights[] = {"read", "write", "exec"};
  Explanation e;
  FsDecision d = policy.filesystem.Decide(path, right, home);
  e.query = std::string(kRights[static_cast<size_t>(right)]) + " " + path;
  e.decision = d.allow ? "allow" : "deny";
  e.rules = d.rules;
  if (!d.pattern.empty()) e.notes.push_back("most specific pattern: " + d.pattern);
  return e;
}

}  // namespace ward::ir
