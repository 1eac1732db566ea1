// `ward learn`'s draft: a policy text from what one run did (recorder.h),
// granting what its base does not, with the paths collapsed to trees by the
// rules below, addresses named by the DNS answers the run received, and the
// syscalls beyond the base. Everything is sorted: the same records give the
// same bytes.
//
// Collapsing (README.md, § Collapsing), in order, for each path and right:
//   1. what the base already grants is left out;
//   2. /proc/PID/... and /proc/PID/task/TID/... become /proc/self/...
//      and /proc/thread-self/..., /dev/pts/N becomes /dev/pts;
//   3. under the working directory: the working directory (unless it is
//      `/`, a home directory or above one);
//   4. under /tmp, /var/tmp or /dev/shm: that directory;
//   5. under an interpreter's library folder (a component python3,
//      python3.N, site-packages, dist-packages, node_modules, perl5, gems):
//      that folder;
//   6. elsewhere: a directory that holds three or more of the paths (or
//      was listed) is granted whole, if it is at least two levels deep and
//      is no home directory nor above one; else each path on its own.
// What is executed is granted read and exec (Landlock checks an execve's
// open as a read). An entry created, deleted or renamed needs write on its
// directory; a path
// that no longer exists is granted through its nearest existing directory
// under the same limits, else left out with a note.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "enforcers/learn/recorder.h"

namespace ward::learn {

struct DraftOptions {
  std::string cwd;                   // the run's working directory
  std::set<std::string> homes;       // home directories (never collapsed to or above)
  const ir::Policy* base = nullptr;  // what is granted already (linux-base, or --merge's)
  std::optional<std::string> home;   // `~` for the base's patterns
};

// The rule lines of each section (without indentation), and notes: what the
// draft leaves out and why, as comment lines.
struct Draft {
  std::vector<std::string> filesystem, network;
  std::set<std::string> syscalls;  // to allow
  std::string arch;                // `arch` to pin (the machine's), or none
  std::vector<std::string> notes;
  // The section's lines: `allow a, b, c`.
  std::vector<std::string> SyscallLines() const;
};

Draft MakeDraft(const Records& records, const DraftOptions& options);

// The machine's architecture, as `arch` names it ("x86_64").
std::string MachineArchName();

// Checks the draft's own IR (`draft`, the draft compiled) against the
// syscalls recorded: a call it still refuses (a refusing rule of the base
// that no allow lifts, as linux-base's `errno EPERM clone if arg0 &
// CLONE_NEWUSER ...`) becomes a note naming the call and its action.
// Returns those calls.
std::vector<std::string> StillRefused(const Records& records, const ir::Policy& draft, Draft* d);

// A whole file: `ward 1`, the import of std/linux.ward, and `policy NAME
// extends linux-base { ... }` with `header` lines as comments on top and the
// draft's notes above the sections.
std::string DraftFile(const std::string& name, const std::vector<std::string>& header,
                      const Draft& draft);

// The sections of `draft` added to a policy's text: each rule line inserted
// before the closing `}` of the policy's own section of that kind (its span
// in `text`, [begin, end)), or a new section before the policy's closing
// `}`. Spans are byte offsets into `text`; a missing section has begin ==
// end == 0.
struct PolicySpans {
  size_t policy_end = 0;  // one past the policy's closing `}`
  size_t filesystem[2] = {0, 0}, network[2] = {0, 0}, syscalls[2] = {0, 0};
};
std::string MergeInto(const std::string& text, const PolicySpans& spans, const Draft& draft);

// Quoted as a Ward string; nullopt when the path cannot be written as a
// literal path (a `*`, which is a glob, or `${`).
std::optional<std::string> QuotePath(const std::string& path);

}  // namespace ward::learn
