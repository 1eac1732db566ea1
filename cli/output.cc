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

Json JsonDocument() { return Json{{"version", 1}}; }

void PrintJsonDocument(Json doc, const SourceManager* sources, const DiagnosticSink* sink,
                       const std::string& error) {
  doc["error"] = error.empty() ? Json(nullptr) : Json(error);
  // The diagnostics as RenderJson has them (language/README.md), so that
  // their shape is check's and lint's by construction.
  Json diagnostics = Json::array();
  size_t errors = 0, warnings = 0;
  if (sources && sink) {
    Json rendered = Json::parse(RenderJson(*sources, *sink), nullptr, false);
    if (rendered.is_object()) diagnostics = std::move(rendered["diagnostics"]);
    errors = sink->error_count();
    warnings = sink->warning_count();
  }
  doc["diagnostics"] = std::move(diagnostics);
  doc["errors"] = errors;
  doc["warnings"] = warnings;
  // Invalid UTF-8 (quoted source bytes, odd file names) is replaced, never thrown.
  std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n"
            << std::flush;
}

Json SpanJson(const SourceManager& sources, Span span) {
  if (!span.valid()) return nullptr;
  const Location at = sources.LocationOf(span.file, span.begin);
  return sources.file(span.file).display_path + ":" + std::to_string(at.line) + ":" +
         std::to_string(at.column);
}

}  // namespace ward::cli
