// How a path pattern matches a path, as the language defines it
// (reference.md, "filesystem"): `*` is a non-empty run of characters
// within one component, `**` zero or more components, and a pattern
// matches a path when it matches the path or one of its ancestors. Here,
// under language/, so that the compiler's IR and the importers (which
// depend on language/ only) decide with one definition.
#pragma once

#include <string>
#include <vector>

namespace ward {

// The components of a path: "/a//b/" gives {"a", "b"}; "~/x" {"~", "x"}.
std::vector<std::string> PathComponents(const std::string& path);

// Whether one path component matches a pattern component, where `*` is any
// run of characters other than '/' (components are never empty).
bool ComponentMatches(const std::string& pattern, const std::string& name);

// Whether `pattern` matches `path` or one of its ancestors.
bool PatternMatchesPathOrAncestor(const std::string& pattern, const std::string& path);

}  // namespace ward
