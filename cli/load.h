// Shared by the subcommands that work on one policy (ir, explain, diff):
// run the front end on a file, print its diagnostics, pick the policy, and
// lower it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cli/output.h"
#include "compiler/policy.h"

namespace ward::cli {

struct LoadedPolicy {
  SourceManager sources;
  DiagnosticSink sink;
  Program program;
  ir::Policy ir;
};

// Returns nullptr after printing why (diagnostics or a usage error);
// `*exit_code` is then kFound (policy errors) or kUsage.
std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code);

// Lower-case hex SHA-256 of `bytes` ("" if OpenSSL fails).
std::string Sha256(const std::string& bytes);

}  // namespace ward::cli
