// libFuzzer target for the kafel importer (importers/kafel/): one input is
// one kafel policy, imported as `ward import --from kafel` imports it (its
// `#include`s looked for in a folder that does not exist), held to the
// promises of import_promises.h.
#include <cstdint>
#include <string>

#include "importers/kafel/kafel.h"
#include "tests/fuzz/import_promises.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ward::importers::ImportOptions options;
  options.name = "fuzzed";
  options.source = "fuzzed.policy";
  options.from = "kafel";
  options.path = "/nonexistent/ward-fuzz/fuzzed.policy";
  ward::fuzz::CheckImportPromises("ward_fuzz_kafel",
                                  std::string(reinterpret_cast<const char*>(data), size), options,
                                  ward::importers::ImportKafel, WARD_FUZZ_STD_DIR);
  return 0;
}
