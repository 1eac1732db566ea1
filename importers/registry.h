// The formats `ward import --from` reads: one line each in registry.cc. A
// new format is a folder of its own under importers/ (as srt/ is) and one
// line there.
#pragma once

#include <string_view>
#include <vector>

#include "importers/import.h"

namespace ward::importers {

struct ImportFormat {
  const char* name;     // the --from value
  const char* summary;  // one line, for --help and the README
  ImportResult (*import)(std::string_view input, const ImportOptions& options);
  bool needs_cwd;  // --cwd DIR is required
  // More than one input file is accepted (ImportOptions::files has them
  // all); otherwise exactly one.
  bool many_files = false;
};

const std::vector<ImportFormat>& ImportFormats();
// The format named `name`, or nullptr.
const ImportFormat* FindImportFormat(std::string_view name);

}  // namespace ward::importers
