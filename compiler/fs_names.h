// Small pieces of path and right handling that the filesystem IR, explain,
// diff, lint, the IR's JSON and the filesystem backends (landlock, seatbelt)
// all need: one definition each.
#pragma once

#include <string>
#include <vector>

#include "compiler/filesystem.h"

namespace ward::ir {

// The components of a path: "/a//b/" gives {"a", "b"}.
std::vector<std::string> PathComponents(const std::string& path);

// Whether one path component matches a pattern component, where `*` is any
// run of characters other than '/' (components are never empty).
bool ComponentMatches(const std::string& pattern, const std::string& name);

// "read", "write", "exec": the right as the language writes it.
const char* FsRightName(FsRight right);

}  // namespace ward::ir
