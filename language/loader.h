// The front end's second stage: reads the files named on the command line and
// everything they import (relative paths and `std/`), parsing each once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "language/ast.h"
#include "language/diagnostics.h"
#include "language/source.h"

namespace ward {

struct FrontendOptions {
  std::string std_dir;  // --std; empty: $WARD_STD, then beside the binary
  // Files served from memory instead of the disk, by normalised path (tests,
  // the fuzzer, and later the agent's bundles). Relative keys resolve
  // relative imports among themselves.
  std::map<std::string, std::string> memory_files;
};

// All files of one run. `files` is indexed by FileId; a file that failed to
// parse has no AST.
struct Program {
  std::vector<std::optional<ast::File>> files;
  std::vector<FileId> roots;      // the files named by the user, in order
  FileId std_syscalls = kNoFile;  // std/syscalls.ward, always loaded
  std::string std_dir;            // where std/ resolved

  const ast::File* file(FileId id) const {
    return id < files.size() && files[id] ? &*files[id] : nullptr;
  }
};

// Finds the standard library: `options.std_dir`, `$WARD_STD`, then
// `share/ward/std` of the tree the running binary is in (bin/ward or
// libexec/ward/ward-cli). Empty when none exists.
std::string FindStdDir(const FrontendOptions& options);

// Loads and parses `paths` with their imports. Import errors (missing files,
// cycles) are reported at the `import` that caused them.
Program LoadProgram(const std::vector<std::string>& paths, const FrontendOptions& options,
                    SourceManager& sources, DiagnosticSink& sink);

}  // namespace ward
