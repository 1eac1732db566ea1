// What every importer returns: Ward source text, or why there is none.
// Importers read another format and write Ward; they depend on language/
// only (facts about syscalls, constants), never on the compiler.
#pragma once

#include <string>
#include <vector>

#include "importers/ward_writer.h"
#include "language/diagnostics.h"

namespace ward::importers {

struct ImportDiagnostic {
  Severity severity = Severity::kError;
  // Where in the input: a JSON pointer ("/syscalls/3/args/0"), or empty for
  // the input as a whole.
  std::string where;
  std::string message;
  // Line and column in the input (1-based), when the reader knows them
  // (YAML); 0 otherwise.
  size_t line = 0;
  size_t column = 0;
};

struct ImportResult {
  bool ok = false;   // false: at least one error, and `text` must be ignored
  std::string text;  // the Ward file
  std::vector<ImportDiagnostic> diagnostics;
  // The input's place behind each conditional rule of `text`, so that an
  // error the lowering finds at a rule is reported where the input has it.
  std::vector<RuleOrigin> origins;
};

}  // namespace ward::importers
