// The SBPL profile of one policy (README.md): `(version 1)`, `(deny
// default)`, the startup list, the filesystem rules ordered so that SBPL's
// "the last matching rule decides" gives the IR's most-specific-wins with
// deny-over-allow, and the network grants SBPL can name. Pure: no files,
// no clock; same IR and home, same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace ward::backend::seatbelt {

struct Profile {
  std::string text;
  std::vector<Section> enforced;
};

// Fails (false, errors in `sink`) when the profile cannot hold the policy
// even approximately: `~` patterns without a home, domain grants without
// `target seatbelt { proxy_port N }`, a path SBPL strings cannot carry.
// What it leaves out (towards deny) is a B3002 warning that lists it. A
// deny whose `**` directories could be renamed out of it (README.md,
// "Renames and links") fails too, unless `partial`: then nothing under the
// `**`'s root can be renamed or deleted, with a warning.
bool RenderProfile(const ir::Policy& policy, const std::optional<std::string>& home, bool partial,
                   Profile* out, DiagnosticSink& sink);

// The SBPL regular expression for a glob pattern (absolute, `~` already
// expanded): the pattern or anything under what it matches.
std::string PatternRegex(const std::string& pattern);

}  // namespace ward::backend::seatbelt
