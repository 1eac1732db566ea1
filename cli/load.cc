#include "cli/load.h"

#include <iostream>

namespace ward::cli {

std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code) {
  ir::LoadStatus status = ir::LoadStatus::kOk;
  std::string error;
  auto loaded = ir::LoadPolicyFile(file, policy, std_dir, &status, &error);
  switch (status) {
    case ir::LoadStatus::kOk:
      return loaded;
    case ir::LoadStatus::kNoFile:
    case ir::LoadStatus::kNoSuchPolicy:
      std::cerr << "ward: " << error << "\n";
      *exit_code = kUsage;
      return nullptr;
    case ir::LoadStatus::kNoStdlib:
    case ir::LoadStatus::kPolicyErrors: {
      // Diagnostics are the failure here: always as text on stderr.
      OutputFlags text = output;
      text.format = "text";
      PrintDiagnostics(loaded->sources, loaded->sink, text);
      *exit_code = status == ir::LoadStatus::kNoStdlib ? kUsage : kFound;
      return nullptr;
    }
  }
  return nullptr;
}

std::unique_ptr<LoadedPolicy> LoadPolicyForReport(const std::string& file,
                                                  const std::optional<std::string>& policy,
                                                  const std::string& std_dir,
                                                  const OutputFlags& output, const Json& doc,
                                                  int* exit_code) {
  if (output.format != "json") return LoadPolicy(file, policy, std_dir, output, exit_code);
  ir::LoadStatus status = ir::LoadStatus::kOk;
  std::string error;
  auto loaded = ir::LoadPolicyFile(file, policy, std_dir, &status, &error);
  switch (status) {
    case ir::LoadStatus::kOk:
      return loaded;
    case ir::LoadStatus::kNoFile:
    case ir::LoadStatus::kNoSuchPolicy:
      std::cerr << "ward: " << error << "\n";
      *exit_code = kUsage;
      return nullptr;
    case ir::LoadStatus::kNoStdlib:
    case ir::LoadStatus::kPolicyErrors:
      PrintJsonDocument(doc, &loaded->sources, &loaded->sink);
      *exit_code = status == ir::LoadStatus::kNoStdlib ? kUsage : kFound;
      return nullptr;
  }
  return nullptr;
}

}  // namespace ward::cli
