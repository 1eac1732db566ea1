// The explicit table of backends and profiles (`ward compile -t help`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"

namespace ward::backend {

// Every backend built into this binary, in a fixed order.
const std::vector<const Backend*>& AllBackends();
const Backend* FindBackend(std::string_view name);

// A profile promises the whole policy: unenforced sections are errors
// unless `--partial`.
struct Profile {
  std::string_view name;
  std::string_view description;
  std::vector<std::string_view> backends;
};
const std::vector<Profile>& AllProfiles();
const Profile* FindProfile(std::string_view name);

}  // namespace ward::backend
