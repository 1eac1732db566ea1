// The loader `ward compile`, `ward push` and every command that works on
// one policy file share: the front end on a file, the policy chosen, and
// its IR. Prints nothing: the caller prints `sink` (cli/load.h does).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compiler/policy.h"
#include "language/check.h"

namespace ward::ir {

struct LoadedPolicy {
  SourceManager sources;
  DiagnosticSink sink;
  Program program;
  Policy ir;
};

enum class LoadStatus {
  kOk,
  kNoFile,        // the file is not there (*error says so)
  kNoStdlib,      // the standard library is missing: a setup problem (in sink)
  kPolicyErrors,  // the front end or the lowering reported errors (in sink)
  kNoSuchPolicy,  // the file holds no policy of that name, or several (*error)
};

// Loads `file`, picks `policy` (or the file's only one) and lowers it. The
// result always holds the sources and the sink (diagnostics to print),
// whatever the status; `ir` is meaningful with kOk only.
std::unique_ptr<LoadedPolicy> LoadPolicyFile(const std::string& file,
                                             const std::optional<std::string>& policy,
                                             const std::string& std_dir, LoadStatus* status,
                                             std::string* error);
// The same with the front end's options: `file` may be one of
// `options.memory_files` (standard input, cli/load.h).
std::unique_ptr<LoadedPolicy> LoadPolicyFile(const std::string& file,
                                             const std::optional<std::string>& policy,
                                             const FrontendOptions& options, LoadStatus* status,
                                             std::string* error);

}  // namespace ward::ir
