#include "cli/load.h"

#include <openssl/evp.h>

#include <filesystem>
#include <iostream>

#include "language/check.h"

namespace ward::cli {

std::string Sha256(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    return "";
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    std::cerr << "ward: " << file << ": no such file\n";
    *exit_code = kUsage;
    return nullptr;
  }
  auto loaded = std::make_unique<LoadedPolicy>();
  FrontendOptions options;
  options.std_dir = std_dir;
  loaded->program = RunFrontend({file}, options, loaded->sources, loaded->sink);
  if (loaded->sink.has_errors()) {
    // Diagnostics are the failure here: always as text on stderr.
    OutputFlags text = output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, loaded->sink, text);
    *exit_code = loaded->program.std_syscalls == kNoFile ? kUsage : kFound;
    return nullptr;
  }
  std::string error;
  std::vector<const ast::Policy*> chosen = ir::SelectPolicies(loaded->program, policy, &error);
  if (chosen.empty()) {
    std::cerr << "ward: " << file << ": " << error << "\n";
    *exit_code = kUsage;
    return nullptr;
  }
  loaded->ir = ir::Lower(loaded->program, *chosen[0], loaded->sink);
  if (loaded->sink.has_errors()) {
    OutputFlags text = output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, loaded->sink, text);
    *exit_code = kFound;
    return nullptr;
  }
  return loaded;
}

}  // namespace ward::cli
