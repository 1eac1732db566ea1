// Runs code in a forked child under a seccomp filter, for the enforcement
// tests. The child turns core dumps off (PR_SET_DUMPABLE 0, RLIMIT_CORE 0),
// installs the filter with enforcers/linux/seccomp, runs the body (which
// must use raw syscall() only) and leaves with the raw exit_group call:
// nothing of libc's or a sanitizer's exit path (ASan intercepts _exit())
// runs under the filter.
#pragma once

#include <array>
#include <functional>
#include <string>

#include "enforcers/linux/seccomp.h"

namespace ward::test {

struct ChildStatus {
  bool exited = false;  // else killed by `signal`
  int code = -1;
  int signal = 0;
  bool core_dumped = false;
  std::string Describe() const;
};

// The exit code of a child whose filter could not be installed.
inline constexpr int kLoadFailed = 120;

// A page shared with the child, for values it reports.
struct Shared {
  long values[64];
};
Shared* SharedPage();  // zeroed before each RunChild

// Forks; the child installs `bpf` (none when empty), runs `body` and exits
// with its result. The parent waits.
ChildStatus RunChild(const std::string& bpf, const std::function<int()>& body,
                     const enforce::SeccompLoad& options = {});

// One raw syscall in a child under `bpf`: values[0] = its result, values[1]
// = errno (0 on success).
struct CallResult {
  ChildStatus status;
  long ret = 0;
  int err = 0;
  bool Returned(long value) const { return status.exited && status.code == 0 && ret == value; }
  bool Failed(int errno_value) const {
    return status.exited && status.code == 0 && ret == -1 && err == errno_value;
  }
  bool KilledBySigsys() const;
};
CallResult Call(const std::string& bpf, long nr, std::array<long, 6> args = {});

}  // namespace ward::test
