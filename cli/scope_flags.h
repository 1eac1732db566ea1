// The scope flags `ward apply` and `ward push` share: exactly one of a
// cgroup v2, a user or an interface.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

namespace ward::cli {

struct ScopeFlags {
  std::optional<std::string> cgroup;
  std::optional<int64_t> uid;
  std::optional<std::string> interface;
};

inline void AddScopeFlags(CLI::App* cmd, ScopeFlags* scope) {
  cmd->add_option("--cgroup", scope->cgroup, "a cgroup v2 (absolute, or relative to the v2 mount)");
  cmd->add_option("--uid", scope->uid, "a user id (its sockets)");
  cmd->add_option("--interface", scope->interface, "an interface, such as a VM's tap");
}

// False, after saying why on stderr, unless exactly one scope names
// something that can be one.
inline bool CheckScopeFlags(const char* command, const ScopeFlags& scope) {
  const int scopes = scope.cgroup.has_value() + scope.uid.has_value() + scope.interface.has_value();
  if (scopes != 1) {
    std::cerr << "ward " << command
              << ": name exactly one scope: --cgroup PATH, --uid UID or --interface IF\n";
    return false;
  }
  if (scope.uid && (*scope.uid < 0 || *scope.uid > 0xfffffffeLL)) {
    std::cerr << "ward " << command << ": --uid " << *scope.uid << " is not a user id\n";
    return false;
  }
  return true;
}

}  // namespace ward::cli
