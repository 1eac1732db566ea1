// `ward compile -t process`: `<policy>.process.json`, what `ward run` and
// `ward apply` consume for no_new_privileges, capabilities, user, the
// environment allowlist, rlimits and cgroup limits. The format is versioned
// and documented in backends/process/README.md.
#pragma once

#include <nlohmann/json.hpp>

#include "backends/backend.h"

namespace ward::backend {

const Backend& ProcessBackend();

namespace process {

// The format version written as "version"; bumped on any incompatible change.
inline constexpr int kProcessJsonVersion = 1;

// The document itself (README.md § Format).
nlohmann::ordered_json ProcessJson(const ir::Policy& policy);

}  // namespace process
}  // namespace ward::backend
