// `ward import --from kafel`: a kafel policy (google/kafel, the seccomp
// policy language of nsjail) to a Ward policy for x86_64 that decides every
// call as kafel's filter does (importers/README.md, "--from kafel"):
// kafel's first-match order is kept by giving each rule only the calls no
// earlier rule matched, and each comparison is evaluated at kafel's width
// (the low 32 bits, or all 64 when an argument is 8 bytes or a constant
// needs them).
#pragma once

#include <string_view>

#include "importers/import.h"

namespace ward::importers {

// `options.path` (the input's path; empty: standard input) and
// `options.include_dirs` say where `#include "x"` is looked for: the
// including file's folder first, then each include dir, in order.
ImportResult ImportKafel(std::string_view text, const ImportOptions& options);

}  // namespace ward::importers
