// `ward completion bash|zsh|fish`: shell completion scripts generated from
// the command tree (cli/command_tree.h), so that they know every command,
// every option and the fixed values an option takes (-t targets, --format,
// --from formats) as the build that prints them.
#pragma once

#include <string>

#include "cli/command_tree.h"

namespace ward::cli {

// The script for `shell` ("bash", "zsh" or "fish"), for the program `ward`.
std::string CompletionScript(const CommandNode& tree, const std::string& shell);

}  // namespace ward::cli
