// Runs the whole front end on policies held in memory and returns what a
// test asserts on: the rendered diagnostics (text without colour, and JSON)
// and the checked program.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "language/check.h"

namespace ward::test {

struct FrontendResult {
  SourceManager sources;
  DiagnosticSink sink;
  Program program;
  std::string text;  // RenderText, no colour
  std::string json;  // RenderJson

  // The first policy of the main file (most tests define one).
  const ast::Policy& policy(size_t index = 0) const;
  // The codes of every diagnostic, in order, e.g. "W1003 W1010".
  std::string codes() const;
};

// Checks `source` as the file "test.ward"; `extra` adds more files by name
// (for imports). The standard library is the repository's policies/std.
std::unique_ptr<FrontendResult> CheckSource(const std::string& source,
                                            const std::map<std::string, std::string>& extra = {});

// Reads a file under tests/ (e.g. "language/testdata/x.json").
std::string ReadTestFile(const std::string& relative);
// Compares `actual` with the golden file; with UPDATE_GOLDENS=1 rewrites it.
bool MatchesGolden(const std::string& relative, const std::string& actual);

}  // namespace ward::test
