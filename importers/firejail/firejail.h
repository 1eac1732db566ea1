// `ward import --from firejail`: a firejail 0.9.72 profile (the version
// Debian 12 ships), its include chain resolved as firejail resolves it, to a
// Ward policy (importers/README.md, "--from firejail", has every command and
// its translation; importers/notes/firejail.md the facts with their sources).
#pragma once

#include <string>
#include <string_view>

#include "importers/import.h"

namespace ward::importers {

// Where includes are looked for, beyond `options`: firejail's own folder
// (SYSCONFDIR) and whether an include may name a path (`include /x/y`,
// `include ${HOME}/z`). The fuzzer reads includes from a fixed folder only.
struct FirejailEnvironment {
  std::string system_dir = "/etc/firejail";
  bool paths_allowed = true;
};

// `options.path` is the profile's path (empty: standard input), whose
// folder is searched last for an include named without a '/';
// `options.include_dirs` are searched first (where firejail looks in
// ~/.config/firejail), then /etc/firejail. `options.home` (absolute) is what
// `${HOME}` and `~` stand for; empty: Ward's own `~`, the home folder of the
// user the policy runs as, decided when it is applied.
ImportResult ImportFirejail(std::string_view text, const ImportOptions& options);
ImportResult ImportFirejailIn(std::string_view text, const ImportOptions& options,
                              const FirejailEnvironment& environment);

}  // namespace ward::importers
