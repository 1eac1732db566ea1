#include "enforcers/linux/seccomp_readback.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace ward::enforce {
namespace {

// The calling process's seccomp mode (/proc/self/status "Seccomp:"): 0
// none, 1 strict, 2 filter; -1 when unreadable.
int SeccompMode(const std::string& process) {
  std::ifstream status("/proc/" + process + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Reads index 0, 1, ... of a stopped tracee until ENOENT.
bool ReadAll(pid_t pid, std::vector<CbpfProgram>* filters, std::string* error) {
  for (unsigned long index = 0;; ++index) {
    const long count = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, index, nullptr);
    if (count < 0 && errno == ENOENT) return true;
    // EINVAL at index 0: the process is not in filter mode.
    if (count < 0 && errno == EINVAL && index == 0) {
      const int mode = SeccompMode(std::to_string(pid));
      if (mode == 0) return true;
      *error = "pid " + std::to_string(pid) + " is in seccomp mode " + std::to_string(mode) +
               ", which has no filters to read";
      return false;
    }
    if (count < 0) {
      *error = Errno(
          "PTRACE_SECCOMP_GET_FILTER " + std::to_string(index) + " of pid " + std::to_string(pid),
          errno);
      if (errno == EMEDIUMTYPE) *error += " (a filter that was not installed as classic BPF)";
      return false;
    }
    CbpfProgram program(static_cast<size_t>(count));
    const long got = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, index, program.data());
    if (got != count) {
      *error = got < 0 ? Errno("PTRACE_SECCOMP_GET_FILTER " + std::to_string(index), errno)
                       : "filter " + std::to_string(index) + " changed size while read";
      return false;
    }
    filters->push_back(std::move(program));
  }
}

}  // namespace

bool ReadSeccompFilters(pid_t pid, std::vector<CbpfProgram>* filters, std::string* error) {
  filters->clear();
  const int mode = SeccompMode("self");
  if (mode != 0) {
    *error = mode < 0 ? "cannot read this process's seccomp mode (/proc/self/status)"
                      : "this process runs under seccomp (mode " + std::to_string(mode) +
                            "): the kernel lets only an unfiltered reader see filters";
    return false;
  }
  if (ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) {
    *error = Errno("PTRACE_SEIZE of pid " + std::to_string(pid), errno);
    return false;
  }
  bool ok = false;
  int pass_signal = 0;
  int status = 0;
  if (ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) != 0) {
    *error = Errno("PTRACE_INTERRUPT of pid " + std::to_string(pid), errno);
  } else {
    pid_t w;
    while ((w = waitpid(pid, &status, __WALL)) < 0 && errno == EINTR) {
    }
    if (w < 0) {
      *error = Errno("waiting for pid " + std::to_string(pid) + " to stop", errno);
    } else if (!WIFSTOPPED(status)) {
      *error = "pid " + std::to_string(pid) + " exited while being read";
      return false;  // nothing left to detach from
    } else {
      // A signal that arrived before our interrupt is handed back on detach.
      if (status >> 16 != PTRACE_EVENT_STOP) pass_signal = WSTOPSIG(status);
      ok = ReadAll(pid, filters, error);
    }
  }
  if (ptrace(PTRACE_DETACH, pid, nullptr,
             reinterpret_cast<void*>(static_cast<long>(pass_signal))) != 0 &&
      ok) {
    *error = Errno("PTRACE_DETACH of pid " + std::to_string(pid), errno);
    ok = false;
  }
  if (!ok) filters->clear();
  return ok;
}

}  // namespace ward::enforce
