// What every importer returns: Ward source text, or why there is none.
// Importers read another format and write Ward; they depend on language/
// only (facts about syscalls, constants), never on the compiler.
#pragma once

#include <string>
#include <vector>

#include "language/diagnostics.h"

namespace ward::importers {

struct ImportDiagnostic {
  Severity severity = Severity::kError;
  // Where in the input: a JSON pointer ("/syscalls/3/args/0"), or empty for
  // the input as a whole.
  std::string where;
  std::string message;
};

struct ImportResult {
  bool ok = false;   // false: at least one error, and `text` must be ignored
  std::string text;  // the Ward file
  std::vector<ImportDiagnostic> diagnostics;
};

}  // namespace ward::importers
