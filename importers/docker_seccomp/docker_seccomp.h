// `ward import --from docker-seccomp`: a Docker/OCI seccomp profile to Ward
// source text with the same meaning (importers/README.md says how each
// field maps). The meaning is what Docker, runc and libseccomp 2.5 enforce,
// including where libseccomp departs from the obvious reading: an
// unconditional rule overrides the conditional ones of its syscall, the
// first of two unconditional rules wins, a rule with the default action is
// skipped, an entry that names one argument twice is the union of its
// comparisons, and comparisons read the whole register.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "importers/import.h"

namespace ward::importers {

// The Docker and SPO importers read name, source, from, capabilities and
// kernel (importers/import.h).
using DockerImportOptions = ImportOptions;

ImportResult ImportDockerSeccomp(std::string_view json, const DockerImportOptions& options);

// "5.10" or "6.1.0" (a suffix after the numbers is ignored); nullopt if it
// does not start with MAJOR.MINOR.
std::optional<std::array<uint64_t, 3>> ParseKernelVersion(std::string_view text);

// A policy name from a file name: its stem with every character Ward does
// not allow in a name replaced by '-', prefixed so that it starts with a
// letter ("docker-default.json" -> "docker-default").
std::string PolicyNameFromPath(std::string_view path);

}  // namespace ward::importers
