// `ward import --from srt`: the settings file of srt
// (@anthropic-ai/sandbox-runtime 0.0.83, the file Claude Code's sandbox
// reads, `~/.srt-settings.json`) to a Ward policy that decides as srt does
// (importers/README.md, "--from srt", has every key and its translation).
#pragma once

#include <string_view>

#include "importers/import.h"

namespace ward::importers {

// `options.cwd` (an absolute folder) is where srt would run: relative paths
// and the mandatory write denies are anchored there.
ImportResult ImportSrt(std::string_view json, const ImportOptions& options);

}  // namespace ward::importers
