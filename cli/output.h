// Output conventions shared by every subcommand (../shared/design/cli.md):
// colour only on a terminal without NO_COLOR, diagnostics to stderr in text,
// to stdout when they are the result (`--format json`).
#pragma once

#include <nlohmann/json.hpp>
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

// The JSON documents of the commands that report (cli/README.md): one
// emitter, so that every shape has the same envelope. A document starts as
// {"version": 1}, the command adds its own fields, and PrintJsonDocument
// ends it with "error" (null, or the operational failure that stopped the
// command after it read the policy), then "diagnostics", "errors" and
// "warnings" exactly as `ward check --format json` prints them, uncapped.
using Json = nlohmann::ordered_json;
Json JsonDocument();
// `sources` and `sink` may be null (a command that read no policy): no
// diagnostics then.
void PrintJsonDocument(Json doc, const SourceManager* sources, const DiagnosticSink* sink,
                       const std::string& error = "");
// "file:line:col" of a span, as diagnostics and `ward diff` name rules;
// null when the span is invalid (an implicit rule).
Json SpanJson(const SourceManager& sources, Span span);

}  // namespace ward::cli
