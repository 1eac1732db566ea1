// libFuzzer target for the srt settings importer (importers/srt/): one
// input is one settings file, imported as `ward import --from srt --cwd
// /w/proj` imports it, held to the promises of import_promises.h.
#include <cstdint>
#include <string>

#include "importers/srt/srt.h"
#include "tests/fuzz/import_promises.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ward::importers::ImportOptions options;
  options.name = "fuzzed";
  options.source = "settings.json";
  options.from = "srt";
  options.cwd = "/w/proj";
  ward::fuzz::CheckImportPromises("ward_fuzz_srt",
                                  std::string(reinterpret_cast<const char*>(data), size), options,
                                  ward::importers::ImportSrt, WARD_FUZZ_STD_DIR);
  return 0;
}
