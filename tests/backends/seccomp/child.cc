#include "tests/backends/seccomp/child.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ward::test {

std::string ChildStatus::Describe() const {
  if (exited) return "exited with " + std::to_string(code);
  return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")" +
         (core_dumped ? ", core dumped" : "");
}

Shared* SharedPage() {
  static Shared* page = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  return page;
}

namespace {

// Leaves with the raw exit_group call: not even _exit(), which a sanitizer
// intercepts to run its own exit path (sigaltstack, mmap, ...) under the
// filter. Inlined, and not [[noreturn]]: ASan precedes every call of a
// function that cannot return (declared so, or found so by the compiler)
// with __asan_handle_no_return, which calls sigaltstack, and a filter
// refusing that makes ASan exit with 1 (seen at -Og, where the call was no
// longer inlined). __builtin_trap is not instrumented.
[[gnu::always_inline]] inline void ExitNow(int code) {
  syscall(SYS_exit_group, code);
  __builtin_trap();
}

}  // namespace

ChildStatus RunChild(const std::string& bpf, const std::function<int()>& body,
                     const enforce::SeccompLoad& options) {
  std::memset(SharedPage(), 0, sizeof(Shared));
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_DUMPABLE, 0);
    const rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
    if (!bpf.empty()) {
      std::string error;
      int listener = -1;
      if (!enforce::LoadSeccompFilter(bpf, options, &listener, &error)) ExitNow(kLoadFailed);
      SharedPage()->values[63] = listener;
    }
    ExitNow(body());
  }
  ChildStatus s;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return s;
  s.exited = WIFEXITED(status);
  s.code = s.exited ? WEXITSTATUS(status) : -1;
  s.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  s.core_dumped = WIFSIGNALED(status) && WCOREDUMP(status);
  return s;
}

bool CallResult::KilledBySigsys() const {
  return !status.exited && status.signal == SIGSYS && !status.core_dumped;
}

CallResult Call(const std::string& bpf, long nr, std::array<long, 6> args) {
  CallResult r;
  r.status = RunChild(bpf, [&] {
    errno = 0;
    const long ret = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
    SharedPage()->values[0] = ret;
    SharedPage()->values[1] = ret == -1 ? errno : 0;
    return 0;
  });
  r.ret = SharedPage()->values[0];
  r.err = static_cast<int>(SharedPage()->values[1]);
  return r;
}

}  // namespace ward::test
