// The run's own mount namespace (part of step 3 of `ward run`), a second
// filesystem layer under Landlock for what Landlock does not see. In order:
//
//   hidden     Ward's own state (BPF pins, caches, run records) is covered by
//              an empty read-only tmpfs, whatever the policy grants: no run
//              can open a pinned link to detach it, or write a cached filter
//              another run will load.
//   read-only  every mount is made read-only (mount_setattr, recursive), then
//              the paths the policy lets the workload write are bound over
//              themselves read-write. Landlock has no right for metadata: a
//              workload that is root in the host's user namespace owns root's
//              files and could chmod, chown or touch them anywhere; on a
//              read-only mount it gets EROFS.
//   denies     a `deny write` of an existing path inside a writable tree is
//              a read-only bind of that path over itself: exact (EROFS;
//              moving or removing it fails with EBUSY), so the Landlock
//              ruleset can grant the tree whole (without it, git could not
//              even create `.git/index.lock` under a policy that protects
//              `.git/hooks`). A granted unix socket path is bound the same
//              way, so the workload cannot replace it with a link to another
//              socket.
//   pinned     the directories between a writable tree's root and such a
//              path are bound over themselves: a mount point cannot be
//              renamed, so the workload cannot move the protected path's
//              parent aside and put its own in its place.
//
// Two halves: PlanMounts in the supervisor, ApplyMounts in the child before
// Landlock (which forbids mounting afterwards).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/filesystem.h"
#include "compiler/network.h"

namespace ward::enforce {

struct MountPlan {
  std::vector<std::string> hidden;
  bool read_only_root = true;  // false when the policy lets the workload write "/"
  std::vector<std::string> writable;
  std::vector<std::string> read_only;  // denied paths and unix sockets
  std::vector<std::string> pinned;
};

// Takes the `deny write` patterns it turns into read-only binds out of
// `rules` (the copy the Landlock ruleset is built from): every literal
// pattern whose path exists now as a directory or regular file, with no
// symbolic link on the way, inside a writable tree, with no `allow write`
// below it. Returns those paths.
std::vector<std::string> PlanDenyMounts(ir::FileRules& rules,
                                        const std::optional<std::string>& home);

// Completes the plan: `writable` from the Landlock grants with the write
// right, `hidden` from the candidate paths that exist, the granted unix
// socket paths, and the pinned directories (judged with the policy's own
// `rules`). False with *error when a granted socket does not exist yet in a
// folder the workload may write (nothing to bind: the grant could be
// redirected).
bool PlanMounts(const ir::FileRules& rules, const std::optional<std::string>& home,
                const std::vector<ir::UnixRule>& unix_rules,
                const std::vector<std::string>& writable_grants,
                const std::vector<std::string>& hide, MountPlan* plan, std::string* error);

struct MountFailure {
  const char* step = nullptr;  // "unshare(CLONE_NEWNS)", "mount --bind", ...
  int error = 0;
};

// In the child with CAP_SYS_ADMIN, before Landlock; makes no allocation.
bool ApplyMounts(const MountPlan& plan, MountFailure* failure);

// One line per mount, for `ward run --dry-run`.
std::string DescribeMounts(const MountPlan& plan);

}  // namespace ward::enforce
