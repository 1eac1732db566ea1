#include "cli/output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace ward::cli {

bool UseColor(const OutputFlags& flags, int fd) {
  if (flags.color == "always") return true;
  if (flags.color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return isatty(fd) == 1;
}

void PrintDiagnostics(const SourceManager& sources, const DiagnosticSink& sink,
                      const OutputFlags& flags) {
  if (flags.format == "json") {
    std::cout << RenderJson(sources, sink);
    return;
  }
  RenderOptions options;
  options.color = UseColor(flags, STDERR_FILENO);
  std::cerr << RenderText(sources, sink, options);
}

bool ExpandPolicyPaths(const std::vector<std::string>& args, std::vector<std::string>* out) {
  namespace fs = std::filesystem;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      if (!fs::exists(arg, ec)) {
        std::cerr << "ward: " << arg << ": no such file or directory\n";
        return false;
      }
      out->push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(arg, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".ward") {
        found.push_back(it->path().string());
      }
    }
    if (ec) {
      std::cerr << "ward: " << arg << ": " << ec.message() << "\n";
      return false;
    }
    std::sort(found.begin(), found.end());
    out->insert(out->end(), found.begin(), found.end());
  }
  return true;
}

}  // namespace ward::cli
