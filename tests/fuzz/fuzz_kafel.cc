// libFuzzer target for the kafel importer (importers/kafel/): one input
// is one kafel policy, imported as `ward import --from kafel` imports it
// (its `#include`s looked for in a folder that does not exist). Beyond the
// sanitizers, it checks the importer's
// promises: a refusal has at least one error and every diagnostic a
// message; an accepted file gives the same text twice, and that text
// passes the front end and the lowering (checked_import.h) without an
// internal error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/checked_import.h"
#include "importers/kafel/kafel.h"

namespace {

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ward_fuzz_kafel: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  ward::importers::ImportOptions options;
  options.name = "fuzzed";
  options.source = "fuzzed.policy";
  options.from = "kafel";
  options.path = "/nonexistent/ward-fuzz/fuzzed.policy";
  ward::importers::CheckedImport checked;
  checked.result = ward::importers::ImportKafel(input, options);
  size_t errors = 0;
  for (const ward::importers::ImportDiagnostic& d : checked.result.diagnostics) {
    if (d.message.empty()) Fail("a diagnostic without a message", input);
    errors += d.severity == ward::Severity::kError;
  }
  if (!checked.result.ok) {
    if (errors == 0) Fail("refused without an error", input);
    return 0;
  }
  if (errors != 0) Fail("accepted with an error", input);
  if (ward::importers::ImportKafel(input, options).text != checked.result.text) {
    Fail("the same input gave other text", input);
  }
  ward::importers::CheckImport(WARD_FUZZ_STD_DIR, &checked);
  if (checked.internal_error || !checked.result.ok) {
    Fail("the imported text does not check",
         checked.result.text + "\n" +
             ward::RenderText(checked.sources, checked.sink, ward::RenderOptions{}));
  }
  return 0;
}
