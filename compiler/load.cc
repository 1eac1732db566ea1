#include "compiler/load.h"

#include <filesystem>

namespace ward::ir {

std::unique_ptr<LoadedPolicy> LoadPolicyFile(const std::string& file,
                                             const std::optional<std::string>& policy,
                                             const std::string& std_dir, LoadStatus* status,
                                             std::string* error) {
  FrontendOptions options;
  options.std_dir = std_dir;
  return LoadPolicyFile(file, policy, options, status, error);
}

std::unique_ptr<LoadedPolicy> LoadPolicyFile(const std::string& file,
                                             const std::optional<std::string>& policy,
                                             const FrontendOptions& options, LoadStatus* status,
                                             std::string* error) {
  auto loaded = std::make_unique<LoadedPolicy>();
  std::error_code ec;
  if (!options.memory_files.count(file) && !std::filesystem::is_regular_file(file, ec)) {
    *error = file + ": no such file";
    *status = LoadStatus::kNoFile;
    return loaded;
  }
  loaded->program = RunFrontend({file}, options, loaded->sources, loaded->sink);
  if (loaded->sink.has_errors()) {
    *status =
        loaded->program.std_syscalls == kNoFile ? LoadStatus::kNoStdlib : LoadStatus::kPolicyErrors;
    return loaded;
  }
  std::vector<const ast::Policy*> chosen = SelectPolicies(loaded->program, policy, error);
  if (chosen.empty()) {
    *error = file + ": " + *error;
    *status = LoadStatus::kNoSuchPolicy;
    return loaded;
  }
  loaded->ir = Lower(loaded->program, *chosen[0], loaded->sink);
  *status = loaded->sink.has_errors() ? LoadStatus::kPolicyErrors : LoadStatus::kOk;
  return loaded;
}

}  // namespace ward::ir
