// The front end's first stage: text to AST. Validates UTF-8, bounds size and
// nesting, runs the ANTLR lexer and parser (never printing, never throwing),
// and reports at most one syntax diagnostic per file.
#pragma once

#include <optional>

#include "language/ast.h"
#include "language/diagnostics.h"
#include "language/source.h"

namespace ward {

inline constexpr size_t kMaxFileBytes = 16u << 20;
inline constexpr int kMaxNesting = 64;

// Parses one file already added to `sources`. On a syntax error, reports it
// and returns nullopt.
std::optional<ast::File> ParseFile(const SourceManager& sources, FileId id, DiagnosticSink& sink);

}  // namespace ward
