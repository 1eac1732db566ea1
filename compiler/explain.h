// `ward explain`: one decision of a policy and the rules behind it. A
// library over the IR so that the agent can answer the same questions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::ir {

struct Explanation {
  std::string decision;     // "allow", "deny", or a syscall action
  std::string query;        // the question, restated: "egress tcp 10.0.0.1 port 443"
  std::vector<Span> rules;  // the deciding rules; empty when by default
  std::vector<std::string> notes;
  bool by_default() const { return rules.empty(); }
};

struct FlowQuery {
  Direction direction = Direction::kEgress;
  Protocol protocol = Protocol::kTcp;
  std::string host;  // a name, an IPv4 address, or an IPv6 address (no brackets)
  uint16_t port = 0;
  std::map<std::string, std::string> resolve;  // name -> address (--resolve)
};

// Errors in the query (a bad address) come back in *error.
std::optional<Explanation> ExplainFlow(const Policy& policy, const FlowQuery& query,
                                       std::string* error);
Explanation ExplainUnix(const Policy& policy, const std::string& target);
// `home` is required when the policy has `~` rules (*error says so).
std::optional<Explanation> ExplainPath(const Policy& policy, const std::string& path, FsRight right,
                                       const std::optional<std::string>& home, std::string* error);

}  // namespace ward::ir
