// Small pieces of path and right handling that the filesystem IR, explain,
// diff, lint, the IR's JSON and the filesystem backends (landlock, seatbelt)
// all need: one definition each.
#pragma once

#include <string>
#include <vector>

#include "compiler/filesystem.h"
#include "language/path_match.h"

namespace ward::ir {

// PathComponents and ComponentMatches live in language/path_match.h (the
// importers use them too).
using ward::ComponentMatches;
using ward::PathComponents;

// "read", "write", "exec": the right as the language writes it.
const char* FsRightName(FsRight right);

}  // namespace ward::ir
