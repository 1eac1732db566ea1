// Output conventions shared by every subcommand (../shared/design/cli.md):
// colour only on a terminal without NO_COLOR, diagnostics to stderr in text,
// to stdout when they are the result (`--format json`).
#pragma once

#include <string>
#include <vector>

#include "language/diagnostics.h"

namespace ward::cli {

enum ExitCode { kOk = 0, kFound = 1, kUsage = 2 };

struct OutputFlags {
  std::string format = "text";  // text | json
  std::string color = "auto";   // auto | always | never
};

// Whether to colour a stream (fd 1 or 2) under `flags`.
bool UseColor(const OutputFlags& flags, int fd);

// Prints the sink's diagnostics in the chosen format.
void PrintDiagnostics(const SourceManager& sources, const DiagnosticSink& sink,
                      const OutputFlags& flags);

// Expands folders into the `.ward` files below them, sorted; files are kept
// as given. Returns false (with a message on stderr) for a missing path.
bool ExpandPolicyPaths(const std::vector<std::string>& args, std::vector<std::string>* out);

}  // namespace ward::cli
