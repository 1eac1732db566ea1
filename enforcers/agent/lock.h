// The lock that makes wardd the one writer of its state folder, as the
// programs that are not wardd see it: `ward apply` and `ward remove` refuse
// to change the host behind a wardd that holds the default folder. No
// protobuf, no gRPC: ward-cli links this alone (ward_agent_lock).
#pragma once

#include <cstdint>
#include <string>

namespace ward::agent {

// The lock file in the state folder; it holds the pid of the wardd that
// holds it (flock, exclusive).
inline constexpr char kAgentLockFile[] = "wardd.lock";
// The default state folder (AgentOptions::state_dir).
inline constexpr char kDefaultStateDir[] = "/var/lib/ward";

// The pid a lock file holds, or 0.
int64_t ReadLockPid(int fd);

// Whether an agent holds the lock of `state_dir` now; *holder: its pid
// when known.
bool AgentHolds(const std::string& state_dir, int64_t* holder);

}  // namespace ward::agent
