// `ward fmt`: the one canonical layout of a policy file (the rules are in
// language/README.md, § Formatting). Works from the token stream, comments
// included (they are on the lexer's hidden channel), and the parse tree; only
// whitespace and optional commas ever change.
#pragma once

#include <optional>
#include <string>

#include "language/diagnostics.h"
#include "language/source.h"

namespace ward {

// Lines are filled up to this many columns (characters) before they wrap.
inline constexpr int kFormatWidth = 80;

// The canonical text of a file already added to `sources`. A file that does
// not parse gets its syntax diagnostic in `sink` (exactly as ParseFile
// reports it) and nullopt. The result is checked before it is returned: it
// must lex to the same tokens (commas aside) and the same comments and parse
// again; if not (a formatter bug), that is reported and nullopt returned, so
// a caller never writes a text that could mean something else.
std::optional<std::string> FormatFile(const SourceManager& sources, FileId id,
                                      DiagnosticSink& sink);

}  // namespace ward
