// libFuzzer target for the firejail profile importer (importers/firejail/):
// one input is one profile, imported as `ward import --from firejail --home
// /home/u` imports it, but with includes resolved in a fixed folder only
// (tests/importers/testdata/firejail/fuzz: no path includes, at most 16
// levels, as firejail), held to the promises of import_promises.h.
#include <cstdint>
#include <string>

#include "importers/firejail/firejail.h"
#include "tests/fuzz/import_promises.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ward::importers::ImportOptions options;
  options.name = "fuzzed";
  options.source = "fuzzed.profile";
  options.from = "firejail";
  options.path = WARD_FUZZ_FIREJAIL_DIR "/fuzzed.profile";
  options.home = "/home/u";
  ward::importers::FirejailEnvironment environment;
  environment.system_dir = WARD_FUZZ_FIREJAIL_DIR;
  environment.paths_allowed = false;
  auto import = [&](std::string_view text, const ward::importers::ImportOptions& o) {
    return ward::importers::ImportFirejailIn(text, o, environment);
  };
  ward::fuzz::CheckImportPromises("ward_fuzz_firejail",
                                  std::string(reinterpret_cast<const char*>(data), size), options,
                                  import, WARD_FUZZ_STD_DIR);
  return 0;
}
