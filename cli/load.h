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

// As LoadPolicy, for a command whose --format is json: a policy that does
// not load because of its diagnostics (errors, no standard library) is
// reported as the command's JSON document, `doc` ended by PrintJsonDocument,
// on stdout, not as text on stderr. Text, and a missing file or policy,
// as LoadPolicy.
std::unique_ptr<LoadedPolicy> LoadPolicyForReport(const std::string& file,
                                                  const std::optional<std::string>& policy,
                                                  const std::string& std_dir,
                                                  const OutputFlags& output, const Json& doc,
                                                  int* exit_code);

}  // namespace ward::cli
