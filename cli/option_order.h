// Options before or after FILE mean the same (../shared/design/cli.md):
// `ward compile -t oci p.ward -o out` is `ward compile p.ward -o out -t oci`.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

namespace ward::cli {

// Makes every named option of `app` and its subcommands, at any depth, take
// one value per occurrence: CLI11 lets an option that collects a list
// (`--arg`, `--host`, `--resolve`, ...) take every word up to the next
// option, FILE included; repeat the option for several values instead.
// Positional arguments are left as they are, and so are the subcommands
// named in `except` (`run`: its command after `--` has rules of its own,
// cli/run.cc). Call after every subcommand is registered.
void OneValuePerOption(CLI::App& app, const std::set<std::string>& except = {});

}  // namespace ward::cli
