// Installs a compiled seccomp filter (the seccomp backend's `.bpf`
// artifact) on the calling thread, or on every thread of the process with
// `tsync`. Used by the tests now and by `ward run` as its last step before
// exec. Fails closed: on any error nothing is installed and the caller must
// not go on to run the workload.
#pragma once

#include <string>
#include <string_view>

namespace ward::enforce {

struct SeccompLoad {
  // SECCOMP_FILTER_FLAG_TSYNC: every thread of the process, or fail.
  bool tsync = false;
  // SECCOMP_FILTER_FLAG_NEW_LISTENER: return a user-notification fd (for
  // `notify` rules); with tsync, TSYNC_ESRCH is added as the kernel requires.
  bool new_listener = false;
  // SECCOMP_FILTER_FLAG_LOG: log every action but allow to the audit log.
  bool log = false;
};

// `program` holds struct sock_filter[] in the machine's byte order, as the
// backend wrote it for this architecture. The kernel requires
// no_new_privileges or CAP_SYS_ADMIN; this function sets neither (the
// process step does). On success returns true and, with new_listener, sets
// *listener_fd (close-on-exec). On failure returns false with *error naming
// what failed and why.
bool LoadSeccompFilter(std::string_view program, const SeccompLoad& options, int* listener_fd,
                       std::string* error);

}  // namespace ward::enforce
