// No sandbox reaches wardd (issue 20, "Reaching the agent from a sandbox"):
// its unix sockets and TCP listeners are refused to every policy by
// implicit rules, which `ward explain` and `ward diff` show as such.
//
// The default socket, /run/ward/agent/agent.sock, is refused always, whether
// an agent runs or not: no policy can grant it. The listeners of a running
// agent (its other sockets, its TCP ports) come from the endpoints file it
// publishes beside its default socket (kAgentEndpointsFile) when it holds
// the default state folder, or from its own options for what it applies.
//
// Rules added (each with FlatRule::implicit / UnixRule::implicit saying why):
// - a unix socket path: its grant is withdrawn (a deny that overrides any
//   `allow unix` of that exact name; grants are exact names, so no other
//   spelling of the path is granted either);
// - a TCP listener on ADDRESS:PORT: egress tcp to ADDRESS port PORT denied,
//   and, for a wildcard address (0.0.0.0, ::), to every address (the host
//   answers on all of its addresses), over whatever the policy grants.
// nftables sees no unix sockets: under an nftables scope the default socket
// relies on its permissions (root's, 0600, in a 0700 folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::ir {

inline constexpr char kDefaultAgentSocket[] = "/run/ward/agent/agent.sock";
inline constexpr char kAgentEndpointsFile[] = "/run/ward/agent/endpoints.json";

struct AgentEndpoints {
  std::vector<std::string> unix_paths;  // absolute
  struct Tcp {
    std::string address;  // "127.0.0.1", "::", "0.0.0.0"
    uint16_t port = 0;
    bool operator==(const Tcp&) const = default;
  };
  std::vector<Tcp> tcp;
  bool operator==(const AgentEndpoints&) const = default;
};

// The default socket alone.
AgentEndpoints DefaultAgentEndpoints();

// The endpoints file: {"version": 1, "unix": [...], "tcp": [{"address", "port"}]}.
std::string EndpointsToJson(const AgentEndpoints& endpoints);
std::optional<AgentEndpoints> EndpointsFromJson(const std::string& text, std::string* error);

// The endpoints this host's agent publishes, with the default socket always
// among them. The file is trusted only when it is a regular file of root's
// that only root may write, in root's folder; otherwise (or absent) the
// default socket alone.
AgentEndpoints HostAgentEndpoints();

// Adds the implicit rules above to `policy`'s network section. Idempotent.
// false and *error when an address is not an IP address.
bool GuardAgentEndpoints(Policy* policy, const AgentEndpoints& endpoints, std::string* error);

}  // namespace ward::ir
