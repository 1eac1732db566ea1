// ward-remote's commands (push, and remove, status, diff with --host), their
// flags registered on a CLI11 app in one place for two programs: ward-remote,
// which runs them (cli/remote.cc), and ward-cli, which only describes them
// (`ward help push`, `ward completion`, did-you-mean: cli/command_tree.h)
// and so links none of gRPC.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "cli/fleet.h"
#include "cli/output.h"
#include "cli/scope_flags.h"

namespace ward::cli {

struct RemoteFlags {
  FleetFlags fleet;
  std::string ca, cert, key;
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  std::string target = "nftables";
  ScopeFlags scope;
  std::string fail_on;
  OutputFlags output;
  std::string sign_key;
  std::optional<uint64_t> sequence;
  std::string valid_for;
  std::string record_heads;
};

// What each command runs; each returns the exit code.
struct RemoteRunners {
  int (*push)(const RemoteFlags&);
  int (*remove)(const RemoteFlags&);
  int (*status)(const RemoteFlags&);
  int (*diff)(const RemoteFlags&);
};

// Adds push, remove, status and diff to `app`. With `runners` null the
// commands get no callback: a tree to describe, not to run.
void AddRemoteCommands(CLI::App& app, const RemoteRunners* runners, int* exit_code);

}  // namespace ward::cli
