#include "enforcers/linux/seccomp.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ward::enforce {
namespace {

// BPF_MAXINSNS: the kernel refuses longer programs.
constexpr size_t kMaxInstructions = 4096;

std::string Hint(int err, const SeccompLoad& options) {
  switch (err) {
    case EACCES:
      return " (the process needs no_new_privileges or CAP_SYS_ADMIN)";
    case EINVAL:
      return " (the kernel's checker refused the program, or a flag is unsupported)";
    case ESRCH:
      return options.tsync ? " (another thread could not be synchronised)" : "";
    case EBUSY:
      return options.new_listener ? " (a listener is already installed)" : "";
    case ENOMEM:
      return " (the filter chain is too long)";
    default:
      return "";
  }
}

}  // namespace

bool LoadSeccompFilter(std::string_view program, const SeccompLoad& options, int* listener_fd,
                       std::string* error) {
  const size_t count = program.size() / sizeof(sock_filter);
  if (program.empty() || program.size() % sizeof(sock_filter) != 0 || count > kMaxInstructions) {
    *error = "seccomp: not a BPF program of 1 to " + std::to_string(kMaxInstructions) +
             " instructions (" + std::to_string(program.size()) + " bytes)";
    return false;
  }
  // A copy: sock_fprog takes a mutable, aligned array.
  std::vector<sock_filter> filter(count);
  std::memcpy(filter.data(), program.data(), program.size());
  sock_fprog prog{static_cast<unsigned short>(count), filter.data()};
  unsigned int flags = 0;
  if (options.tsync) flags |= SECCOMP_FILTER_FLAG_TSYNC;
  if (options.new_listener) flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  if (options.tsync && options.new_listener) flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  if (options.log) flags |= SECCOMP_FILTER_FLAG_LOG;
  const long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0) {
    const int err = errno;
    *error =
        "seccomp: cannot install the filter: " + std::string(strerror(err)) + Hint(err, options);
    return false;
  }
  // Without TSYNC_ESRCH, a positive result names a thread TSYNC could not
  // synchronise; the filter is then not installed.
  if (options.tsync && !options.new_listener && rc > 0) {
    *error = "seccomp: thread " + std::to_string(rc) + " could not be synchronised";
    return false;
  }
  if (options.new_listener && listener_fd) *listener_fd = static_cast<int>(rc);
  return true;
}

}  // namespace ward::enforce
