// Shared by the subcommands that work on one policy (ir, explain, diff,
// compile, apply, run): the loader (compiler/load.h), with its diagnostics
// printed and its failure turned into an exit code.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backends/bundle.h"
#include "cli/output.h"
#include "compiler/load.h"

namespace ward::cli {

using backend::Sha256;
using ir::LoadedPolicy;

// Returns nullptr after printing why (diagnostics or a usage error);
// `*exit_code` is then kFound (policy errors) or kUsage.
std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code);

}  // namespace ward::cli
