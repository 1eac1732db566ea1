// The output of `ward diff`, for `ward diff OLD NEW` (cli/diff.cc) and
// `ward diff --host` (cli/remote.cc): the same lines, the same JSON.
#pragma once

#include <string>
#include <vector>

#include "compiler/diff.h"
#include "language/source.h"

namespace ward::cli {

// JSON: {"version": 1, "changes": [...]}, plus "not_enforced": the
// sections a host does not enforce for the policy (--host), when any.
void PrintDiffJson(const ir::DiffResult& result, const SourceManager& before,
                   const SourceManager& after, const std::vector<std::string>& not_enforced);
// Text: a line per change, then the rules behind it ("no changes" when
// none). A side without sources (an IR read back from a host) cites none.
void PrintDiffText(const ir::DiffResult& result, const SourceManager& before,
                   const SourceManager& after, bool color);
// --fail-on: "widen" (any widening), "any" (any change), "" (never).
bool DiffFails(const ir::DiffResult& result, const std::string& fail_on);

}  // namespace ward::cli
