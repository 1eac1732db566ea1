// Read-only bind mounts for `deny write` nested in `allow write` (part of
// step 3 of `ward run`). Landlock can only grant, so on its own a deny inside
// an allowed tree costs the tree's directories along the denied path every
// entry created in them later (the walk's Losses): under a policy that
// protects `.git/hooks` and `.git/config` in a writable checkout, git could
// not even create `.git/index.lock`. When the denied path exists when the run
// starts, a read-only bind mount of it over itself, in the run's own mount
// namespace, enforces the deny exactly (writes fail with EROFS; renaming or
// removing the mount point fails with EBUSY), and the Landlock ruleset can
// grant the enclosing tree whole. A denied path that does not exist yet keeps
// the Landlock approximation (mounting needs something to mount on).
//
// Two halves: PlanReadOnlyMounts (supervisor) picks the paths and takes
// their rules out of the Landlock ruleset; ApplyReadOnlyMounts (child, before
// Landlock) makes the mounts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/filesystem.h"

namespace ward::enforce {

// Picks every literal `deny write` pattern whose path exists now as a
// directory or a regular file (no symbolic link on the way), lies inside a
// tree the policy lets the workload write, and has no `allow write` below
// it; erases those patterns' write rules from `rules` (the Landlock copy),
// and returns the paths.
std::vector<std::string> PlanReadOnlyMounts(ir::FileRules& rules,
                                            const std::optional<std::string>& home);

struct MountFailure {
  const char* step = nullptr;  // "unshare(CLONE_NEWNS)", "mount --make-rprivate", ...
  int error = 0;
};

// A private mount namespace (propagation cut off from the host's), then
// each path bound over itself and remounted read-only, nosuid, nodev. Runs
// in the child with CAP_SYS_ADMIN, before Landlock forbids mounting; no
// allocation. With no paths it does nothing.
bool ApplyReadOnlyMounts(const std::vector<std::string>& paths, MountFailure* failure);

}  // namespace ward::enforce
