// [root] The seccomp filters of a running process read back
// (enforcers/linux/seccomp_readback.h): a forked child installs two small
// hand-written classic BPF filters with plain prctl(PR_SET_SECCOMP), each
// allowing everything but one syscall; the reader must return both, byte
// for byte, oldest first. Refusals: a reader under seccomp, a process that
// does not exist.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

#include "enforcers/linux/seccomp_readback.h"
#include "tests/root_guard.h"

namespace ward::test {
namespace {

WARD_SKIP_UNLESS_ROOT("the seccomp read-back tests");

// Everything allowed but `nr`, which fails with `err` (x86_64 only: other
// architectures are allowed, which is all a test filter needs).
enforce::CbpfProgram DenyOne(int nr, int err) {
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | static_cast<uint32_t>(err)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
}

// With plain prctl(PR_SET_SECCOMP); `via_seccomp`: with seccomp(2) and a
// flag, as `ward run` installs its filters (enforcers/linux/seccomp.cc).
bool Install(const enforce::CbpfProgram& program, bool via_seccomp = false) {
  sock_fprog prog{static_cast<unsigned short>(program.size()),
                  const_cast<sock_filter*>(program.data())};
  if (via_seccomp) {
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &prog) == 0;
  }
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

std::vector<uint8_t> Bytes(const enforce::CbpfProgram& p) {
  const auto* b = reinterpret_cast<const uint8_t*>(p.data());
  return {b, b + p.size() * sizeof(sock_filter)};
}

// A child that installs `filters` (in order), reports the errnos the
// denied syscalls return, then waits until its pipe closes.
class Child {
 public:
  explicit Child(const std::vector<enforce::CbpfProgram>& filters, bool last_via_seccomp = false) {
    int report[2], hold[2];
    REQUIRE(pipe(report) == 0);
    REQUIRE(pipe(hold) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(report[0]);
      close(hold[1]);
      int result[3] = {0, 0, 0};
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) result[0] = -1;
      for (size_t i = 0; i < filters.size(); ++i) {
        if (!Install(filters[i], last_via_seccomp && i + 1 == filters.size())) result[0] = -1;
      }
      // What the filters do: acct and swapon refused with their errnos.
      errno = 0;
      result[1] = syscall(SYS_acct, nullptr) == -1 ? errno : 0;
      errno = 0;
      result[2] = syscall(SYS_swapon, nullptr, 0) == -1 ? errno : 0;
      if (write(report[1], result, sizeof result) != sizeof result) _exit(2);
      char c;
      while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    close(report[1]);
    close(hold[0]);
    hold_ = hold[1];
    REQUIRE(read(report[0], result_, sizeof result_) == sizeof result_);
    close(report[0]);
  }
  ~Child() {
    close(hold_);
    int status;
    waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }
  const int* result() const { return result_; }

 private:
  pid_t pid_ = -1;
  int hold_ = -1;
  int result_[3] = {0, 0, 0};
};

TEST_CASE("seccomp read-back: two filters, byte for byte, oldest first", "[root]") {
  const std::vector<enforce::CbpfProgram> installed = {DenyOne(SYS_acct, EPERM),
                                                       DenyOne(SYS_swapon, ENOSYS)};
  Child child(installed);
  REQUIRE(child.result()[0] == 0);
  // The filters are in force: each refuses its syscall with its errno.
  CHECK(child.result()[1] == EPERM);
  CHECK(child.result()[2] == ENOSYS);
  std::vector<enforce::CbpfProgram> read;
  std::string error;
  const bool ok = enforce::ReadSeccompFilters(child.pid(), &read, &error);
  INFO(error);
  REQUIRE(ok);
  REQUIRE(read.size() == 2);
  CHECK(Bytes(read[0]) == Bytes(installed[0]));
  CHECK(Bytes(read[1]) == Bytes(installed[1]));
  // Detached: the child goes on (it reads again, and exits when told).
  CHECK(kill(child.pid(), 0) == 0);
  std::vector<enforce::CbpfProgram> again;
  REQUIRE(enforce::ReadSeccompFilters(child.pid(), &again, &error));
  CHECK(again.size() == 2);
}

TEST_CASE("seccomp read-back: a filter installed with seccomp(2) and a flag", "[root]") {
  const std::vector<enforce::CbpfProgram> installed = {DenyOne(SYS_acct, EPERM),
                                                       DenyOne(SYS_swapon, EACCES)};
  Child child(installed, true);
  REQUIRE(child.result()[0] == 0);
  CHECK(child.result()[1] == EPERM);
  CHECK(child.result()[2] == EACCES);
  std::vector<enforce::CbpfProgram> read;
  std::string error;
  const bool ok = enforce::ReadSeccompFilters(child.pid(), &read, &error);
  INFO(error);
  REQUIRE(ok);
  REQUIRE(read.size() == 2);
  CHECK(Bytes(read[0]) == Bytes(installed[0]));
  CHECK(Bytes(read[1]) == Bytes(installed[1]));
}

TEST_CASE("seccomp read-back: a process without filters has none", "[root]") {
  Child child({});
  REQUIRE(child.result()[0] == 0);
  // Control: without the filters both syscalls reach the kernel, which
  // refuses the null arguments (acct(NULL) is allowed for root: 0).
  CHECK(child.result()[1] != EPERM);
  CHECK(child.result()[2] != ENOSYS);
  std::vector<enforce::CbpfProgram> read = {DenyOne(1, 1)};
  std::string error;
  const bool ok = enforce::ReadSeccompFilters(child.pid(), &read, &error);
  INFO(error);
  REQUIRE(ok);
  CHECK(read.empty());
}

TEST_CASE("seccomp read-back: refused under seccomp and for a missing process", "[root]") {
  // The reader itself under a filter: refused before any ptrace call.
  Child target({DenyOne(SYS_acct, EPERM)});
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t reader = fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {
    close(pipe_fds[0]);
    std::string error = "installed";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && Install(DenyOne(SYS_swapon, EPERM))) {
      std::vector<enforce::CbpfProgram> read;
      error = enforce::ReadSeccompFilters(target.pid(), &read, &error) ? "read" : error;
    }
    if (write(pipe_fds[1], error.data(), error.size()) < 0) _exit(2);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[256];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  close(pipe_fds[0]);
  int status;
  waitpid(reader, &status, 0);
  CHECK(message ==
        "this process runs under seccomp (mode 2): the kernel lets only an unfiltered reader see "
        "filters");

  // A pid no process has (the reaped reader's, unless reused at once).
  std::vector<enforce::CbpfProgram> read;
  std::string error;
  CHECK_FALSE(enforce::ReadSeccompFilters(reader, &read, &error));
  CHECK(error == "PTRACE_SEIZE of pid " + std::to_string(reader) + ": No such process");
}

}  // namespace
}  // namespace ward::test
