// `ward ir`: the IR as stable JSON (documented in compiler/README.md):
// sorted, versioned, provenance as "file:line:col" strings.
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/policy.h"

namespace ward::ir {

inline constexpr int kIrJsonVersion = 1;

nlohmann::ordered_json ToJson(const Policy& policy, const SourceManager& sources);

// "file:line:col" for a span.
std::string Where(const SourceManager& sources, Span span);

}  // namespace ward::ir
