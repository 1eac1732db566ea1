// Applies a Landlock ruleset (backends/landlock) to the calling process:
// step 3 of `ward run` ("filesystem: Landlock, with ~ resolved for the run's
// user"). Two halves, as nsjail does it:
//
//   PrepareLandlock  checks the kernel's ABI, creates the ruleset, resolves
//                    the filesystem patterns on this host (backends/landlock/
//                    walk.h: every path opened with O_PATH|O_NOFOLLOW from the
//                    root down, one component at a time, so no symlink,
//                    wherever it was planted, is ever followed) and adds the
//                    rules. It
//                    allocates; run it in the supervisor before fork (the
//                    ruleset fd is inherited) or in a single-threaded child.
//   ApplyLandlock    sets no_new_privs (unless told not to) and calls
//                    landlock_restrict_self. No allocation: safe in a forked
//                    child right before exec. It restricts the calling thread
//                    (and what it forks or execs), so call it while the child
//                    has one thread.
//
// Rules are resolved at apply time, before the workload runs: a path that
// does not exist then is not granted, entries created later in a partially
// granted directory are not granted (Losses), and nothing the workload does
// can redirect a rule. Fail closed: any error, and nothing is restricted;
// the caller must not start the workload.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/landlock/ruleset.h"
#include "backends/landlock/walk.h"

namespace ward::enforce {

struct LandlockOptions {
  // Replaces `~` in patterns: the home of the run's user (required when the
  // policy has `~` patterns).
  std::optional<std::string> home;
  // The kernel's ABI; 0 asks the kernel. Tests set a lower one to check the
  // refusal.
  int abi = 0;
  // ward run with its eBPF egress layer attached: also grant connecting to
  // the ports the policy allows to some addresses only (the eBPF layer
  // holds the address part). Off: those ports are denied.
  bool egress_checked_by_address = false;
  // ABI 7: keep logging denials to the audit log after execve.
  bool log_new_exec = false;
  // Set PR_SET_NO_NEW_PRIVS in ApplyLandlock (the kernel requires it, or
  // CAP_SYS_ADMIN). ward run's process step sets it anyway; setting it twice
  // is harmless.
  bool set_no_new_privs = true;
  // At most this many nodes visited while resolving patterns.
  size_t max_nodes = 200000;
};

struct PreparedLandlock {
  int ruleset_fd = -1;  // close-on-exec; ApplyLandlock closes it
  int abi = 0;          // the kernel's (or the simulated) ABI
  uint32_t restrict_flags = 0;
  std::vector<backend::landlock::Grant> grants;  // what the rules grant
  std::vector<backend::landlock::Loss> losses;   // towards deny: tell the user
  size_t port_rules = 0;
};

// On failure returns false with *error "landlock: STEP: why" (STEP: abi,
// create_ruleset, resolve, add_rule PATH, add_rule port P); no fd is left open.
bool PrepareLandlock(const backend::landlock::Ruleset& ruleset, const LandlockOptions& options,
                     PreparedLandlock* out, std::string* error);

// The failing step, for ApplyLandlock (static strings, no allocation).
struct LandlockFailure {
  const char* step = nullptr;  // "no_new_privs", "restrict_self"
  int error = 0;               // errno
};
bool ApplyLandlock(PreparedLandlock& prepared, const LandlockOptions& options,
                   LandlockFailure* failure);

// Closes the ruleset fd of a prepared ruleset that is not applied.
void ReleaseLandlock(PreparedLandlock& prepared);

// The kernel's Landlock ABI (0: Landlock disabled or absent, *error says why).
int LandlockAbi(std::string* error);

// One line per grant and loss, for `ward run --dry-run` and tests:
// "grant /usr read,exec", "lost /home/u write: partially granted ...".
std::string DescribeLandlock(const PreparedLandlock& prepared);

}  // namespace ward::enforce
