// What an importer's fuzz target checks beyond the sanitizers (fuzz_srt.cc,
// fuzz_kafel.cc): a refusal has at least one error and every diagnostic a
// message; an accepted input gives the same text twice, and that text passes
// the front end and the lowering (checked_import.h) without an internal
// error. A broken promise prints the input and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/checked_import.h"

namespace ward::fuzz {

template <typename Import>
void CheckImportPromises(const char* target, const std::string& input,
                         const importers::ImportOptions& options, Import import,
                         const std::string& std_dir) {
  auto fail = [&](const char* what, const std::string& detail) {
    std::fprintf(stderr, "%s: %s\n%s\n", target, what, detail.c_str());
    std::abort();
  };
  importers::CheckedImport checked;
  checked.result = import(input, options);
  size_t errors = 0;
  for (const importers::ImportDiagnostic& d : checked.result.diagnostics) {
    if (d.message.empty()) fail("a diagnostic without a message", input);
    errors += d.severity == Severity::kError;
  }
  if (!checked.result.ok) {
    if (errors == 0) fail("refused without an error", input);
    return;
  }
  if (errors != 0) fail("accepted with an error", input);
  if (import(input, options).text != checked.result.text) {
    fail("the same input gave other text", input);
  }
  importers::CheckImport(std_dir, &checked);
  if (checked.internal_error || !checked.result.ok) {
    fail("the imported text does not check",
         checked.result.text + "\n" + RenderText(checked.sources, checked.sink, RenderOptions{}));
  }
}

}  // namespace ward::fuzz
