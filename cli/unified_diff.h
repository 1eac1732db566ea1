// A unified diff between two texts (`ward fmt --diff`), in the format
// `diff -u` writes and `patch` applies: `--- OLD` / `+++ NEW` headers, every
// hunk with `context` unchanged lines around its changes, hunks whose
// context would touch merged, `@@ -start,count +start,count @@` ranges as
// GNU diff gives them (count 1 omitted; an empty range starts at the line
// before it), `\ No newline at end of file` after a last line without one.
#pragma once

#include <string>

namespace ward::cli {

// Empty when the texts are equal. The line diff is a longest common
// subsequence where the changed middle part (after the common prefix and
// suffix) is at most kMaxDiffCells lines × lines, else the middle part
// replaced whole: still a correct diff, only longer.
std::string UnifiedDiff(const std::string& old_name, const std::string& new_name,
                        const std::string& before, const std::string& after, size_t context = 3);

inline constexpr size_t kMaxDiffCells = 4'000'000;

}  // namespace ward::cli
