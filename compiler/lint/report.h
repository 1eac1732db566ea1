// Lint findings rendered for people (text), programs (JSON) and code
// scanning (SARIF 2.1.0). Front-end diagnostics of the same run are included
// in JSON and SARIF (their W/B code as the rule), so one document says
// everything.
#pragma once

#include <string>
#include <vector>

#include "compiler/lint/lint.h"

namespace ward::lint {

struct ReportOptions {
  bool color = false;
  // SARIF artifact URIs are made relative to this folder (the repository
  // root or the current directory); files outside it get absolute file: URIs.
  std::string base_dir;
  std::string tool_version;
};

// `file:line:col: warning L2101 default-allow: message`, the source line
// with `^~~~`, related spans, `= hint:` and `= fix:`. Suppressed findings are
// left out (JSON and SARIF list them).
std::string RenderFindingsText(const SourceManager& sources, const std::vector<Finding>& findings,
                               const ReportOptions& options);
// Version 1, documented in compiler/lint/README.md.
std::string RenderFindingsJson(const SourceManager& sources, const DiagnosticSink& diagnostics,
                               const std::vector<Finding>& findings);
std::string RenderFindingsSarif(const SourceManager& sources, const DiagnosticSink& diagnostics,
                                const std::vector<Finding>& findings, const ReportOptions& options);

}  // namespace ward::lint
