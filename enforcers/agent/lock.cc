#include "enforcers/agent/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ward::agent {

// The pid a lock file holds, or 0.
int64_t ReadLockPid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  return std::strtoll(buf, nullptr, 10);
}

bool AgentHolds(const std::string& state_dir, int64_t* holder) {
  *holder = 0;
  const int dfd = open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) return false;
  const int fd = openat(dfd, kAgentLockFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close(dfd);
  if (fd < 0) return false;
  bool held = false;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    held = errno == EWOULDBLOCK;
    if (held) *holder = ReadLockPid(fd);
  } else {
    flock(fd, LOCK_UN);
  }
  close(fd);
  return held;
}

}  // namespace ward::agent
