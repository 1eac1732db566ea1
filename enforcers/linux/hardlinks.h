// Other names (hard links) of denied files. Landlock decides by the path
// walked and a read-only bind covers one path: a second name of a denied
// file, planted in a granted tree before the run, would reach the file
// with that tree's grant. language.md wants the object's decision, and
// where the other names lie cannot be known without searching every granted
// tree, so `ward run` refuses to start while a file it protects has another
// name (backends/landlock/README.md, "Hard links").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/landlock/walk.h"

namespace ward::enforce {

struct OtherNamesCheck {
  // Entries searched in all, over every protected tree; beyond it the rest
  // goes unchecked and is reported in `unchecked`.
  size_t budget = 20000;
  size_t searched = 0;
  std::vector<backend::landlock::Loss> unchecked;
};

// `fd`: an O_PATH descriptor of `path` itself (never a symlink's target);
// `rights`: the Ward rights (RightBit) the policy denies there. False with
// *error naming the first file at or below `path`, not a directory or a
// symbolic link, that has more than one name. Symbolic links are never
// followed; the search does not leave the file system `path` is on (a hard
// link never does).
bool CheckOtherNames(int fd, const std::string& path, uint8_t rights, OtherNamesCheck* check,
                     std::string* error);

}  // namespace ward::enforce
