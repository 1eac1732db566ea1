// The front end's third stage: name resolution and type checks over a loaded
// Program. Fills the AST's "checked" fields; reports W1xxx diagnostics.
#pragma once

#include "language/diagnostics.h"
#include "language/loader.h"

namespace ward {

void CheckProgram(Program& program, const SourceManager& sources, DiagnosticSink& sink);

// Load + check: the whole front end. `sink.has_errors()` tells whether the
// program may go on to lowering.
Program RunFrontend(const std::vector<std::string>& paths, const FrontendOptions& options,
                    SourceManager& sources, DiagnosticSink& sink);

}  // namespace ward
