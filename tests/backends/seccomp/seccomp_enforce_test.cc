// [root] The seccomp backend's filters loaded into this kernel in forked
// children (tests/backends/seccomp/child.h), each call checked twice: through
// the cBPF interpreter and for real. Every refusal has a positive control:
// the same call without the filter, or under a policy that allows it,
// reaches the kernel.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <iostream>

#include "tests/backends/seccomp/child.h"
#include "tests/backends/seccomp/seccomp_fixture.h"

#include "tests/root_guard.h"
namespace ward::test {
namespace {

// Without root these tests cannot run: exit 77 (CTest: skipped) first.
WARD_SKIP_UNLESS_ROOT("the seccomp enforcement tests");

using Kind = ir::SysAction::Kind;
namespace sc = backend::seccomp;

const ir::SysAction kAllow{Kind::kAllow, 0}, kKill{Kind::kKill, 0};
ir::SysAction Errno(int e) { return {Kind::kErrno, e}; }

constexpr uint64_t kAfInet = AF_INET, kAfPacket = AF_PACKET, kBit32 = uint64_t{1} << 32;

// The x86_64 program of a policy written in the test.
struct Policy {
  std::unique_ptr<Compiled> compiled;
  std::string bpf;
  Arch arch;

  explicit Policy(const std::string& source, Arch a = Arch::kX86_64)
      : compiled(CompileSeccomp(source)), bpf(Bpf(*compiled, a)), arch(a) {}

  // What the interpreter answers for the call.
  ir::SysAction Interpret(long nr, const Args& args = {}) const {
    const cbpf::Outcome o =
        test::Interpret(Interpreter(bpf, arch), arch, static_cast<uint32_t>(nr), args);
    REQUIRE(o.error.empty());
    const auto a = ActionOfRet(o.ret);
    REQUIRE(a.has_value());
    return *a;
  }

  CallResult Call(long nr, const Args& args = {}) const {
    std::array<long, 6> a;
    for (int i = 0; i < 6; ++i) a[i] = static_cast<long>(args[i]);
    return test::Call(bpf, nr, a);
  }
};

// The call without any filter.
CallResult Unfiltered(long nr, const Args& args = {}) {
  std::array<long, 6> a;
  for (int i = 0; i < 6; ++i) a[i] = static_cast<long>(args[i]);
  return test::Call("", nr, a);
}

// The child ran the call and left normally, and `expectation` (a member
// expression of CallResult) holds.
#define CHECK_CALL(result, expectation)                                            \
  do {                                                                             \
    const CallResult r_ = (result);                                                \
    INFO(r_.status.Describe() << ", returned " << r_.ret << ", errno " << r_.err); \
    CHECK((r_.status.exited && r_.status.code == 0 && r_.expectation));            \
  } while (0)

// i386 `int 0x80` from this 64-bit process: a call of the x86 ABI.
long Int80(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
  long ret;
  asm volatile("int $0x80"
               : "=a"(ret)
               : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d)
               : "memory", "r8", "r9", "r10", "r11");
  return ret;
}

// An x32 call: the x86_64 `syscall` instruction with the x32 bit.
long X32(long nr) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(0x40000000L | nr) : "rcx", "r11", "memory");
  return ret;
}

constexpr long kI386ExitGroup = 252, kI386Getpid = 20, kI386Socketcall = 102, kI386Ipc = 117,
               kI386Socket = 359;

// Memory below 4 GiB, for pointers passed to i386 calls.
long* Low() {
  static long* page = static_cast<long*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0));
  return page;
}

}  // namespace

// ---- actions --------------------------------------------------------------------

TEST_CASE("allow and log: the call runs", "[root]") {
  for (const char* action : {"allow", "log"}) {
    Policy p(std::string("policy p { syscalls { default errno EPERM \n allow exit_group \n ") +
             action + " getppid } }");
    CHECK(p.Interpret(SYS_getppid).kind ==
          (std::string(action) == "log" ? Kind::kLog : Kind::kAllow));
    CHECK_CALL(p.Call(SYS_getppid), Returned(getpid()));
    CHECK(p.Interpret(SYS_getpid) == Errno(1));
    CHECK_CALL(p.Call(SYS_getpid), Failed(EPERM));
  }
}

TEST_CASE("errno N: the call fails with exactly that errno", "[root]") {
  CHECK_CALL(Unfiltered(SYS_getppid), Returned(getpid()));  // the positive control
  for (int e : {EPERM, EACCES, ENOSYS, EXDEV, 1000, 4095}) {
    Policy p("policy p { syscalls { default allow \n errno " + std::to_string(e) + " getppid } }");
    CHECK(p.Interpret(SYS_getppid) == Errno(e));
    CHECK_CALL(p.Call(SYS_getppid), Failed(e));
    CHECK_CALL(p.Call(SYS_getpid), ret > 0);
  }
}

namespace {

void OnSigsys(int sig, siginfo_t* info, void*) {
  long* v = SharedPage()->values;
  v[0] = sig;
  v[1] = info->si_code;
  v[2] = info->si_errno;
  v[3] = info->si_syscall;
  v[4] = static_cast<long>(info->si_arch);
  syscall(SYS_exit_group, 7);
}

int TrapBody() {
  struct sigaction sa {};
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSYS, &sa, nullptr);
  syscall(SYS_getppid);
  return 0;  // not trapped
}

}  // namespace

TEST_CASE("trap: SIGSYS with the call's number, architecture and si_errno 0", "[root]") {
  Policy p("policy p { syscalls { default allow \n trap getppid } }");
  CHECK(p.Interpret(SYS_getppid) == ir::SysAction{Kind::kTrap, 0});
  const ChildStatus s = RunChild(p.bpf, TrapBody);
  INFO(s.Describe());
  CHECK((s.exited && s.code == 7));
  const long* v = SharedPage()->values;
  CHECK(v[0] == SIGSYS);
  CHECK(v[1] == 1);  // SYS_SECCOMP
  CHECK(v[2] == 0);
  CHECK(v[3] == SYS_getppid);
  CHECK(v[4] == static_cast<long>(sc::AuditArch(Arch::kX86_64)));
  // Positive control: under an allowing policy the same body is not trapped.
  Policy allow("policy p { syscalls { default allow } }");
  const ChildStatus a = RunChild(allow.bpf, TrapBody);
  CHECK((a.exited && a.code == 0));
}

namespace {

void* CallGetppid(void*) {
  syscall(SYS_getppid);
  SharedPage()->values[2] = 1;  // survived the call
  return nullptr;
}

// A second thread makes the call; the main thread joins it and exits 42.
int ThreadBody() {
  pthread_t t;
  if (pthread_create(&t, nullptr, CallGetppid, nullptr) != 0) return 3;
  pthread_join(t, nullptr);
  SharedPage()->values[3] = 1;
  return 42;
}

}  // namespace

TEST_CASE("kill-thread ends the calling thread only; kill ends the process", "[root]") {
  Policy thread("policy p { syscalls { default allow \n kill-thread getppid } }");
  CHECK(thread.Interpret(SYS_getppid) == ir::SysAction{Kind::kKillThread, 0});
  ChildStatus s = RunChild(thread.bpf, ThreadBody);
  INFO(s.Describe());
  CHECK((s.exited && s.code == 42));
  CHECK(SharedPage()->values[2] == 0);  // the thread died in the call
  CHECK(SharedPage()->values[3] == 1);  // the process went on

  Policy process("policy p { syscalls { default allow \n kill getppid } }");
  CHECK(process.Interpret(SYS_getppid) == kKill);
  s = RunChild(process.bpf, ThreadBody);
  INFO(s.Describe());
  CHECK((!s.exited && s.signal == SIGSYS && !s.core_dumped));
  CHECK(SharedPage()->values[3] == 0);
  CHECK(process.Call(SYS_getppid).KilledBySigsys());

  // Positive control: the same body under an allowing policy.
  Policy allow("policy p { syscalls { default allow } }");
  s = RunChild(allow.bpf, ThreadBody);
  CHECK((s.exited && s.code == 42 && SharedPage()->values[2] == 1));
}

TEST_CASE("notify: ENOSYS without a listener; with one, the supervisor answers", "[root]") {
  Policy p("policy p { syscalls { default allow \n notify getppid } }");
  CHECK(p.Interpret(SYS_getppid) == ir::SysAction{Kind::kNotify, 0});
  CHECK_CALL(p.Call(SYS_getppid), Failed(ENOSYS));

  // The child installs the filter with a listener and supervises a
  // grandchild (which inherits the filter): the first getppid is answered
  // EXDEV, the second is let through.
  enforce::SeccompLoad options;
  options.new_listener = true;
  const ChildStatus s = RunChild(
      p.bpf,
      [] {
        long* v = SharedPage()->values;
        const int fd = static_cast<int>(v[63]);
        const pid_t worker = static_cast<pid_t>(syscall(SYS_fork));
        if (worker == 0) {
          errno = 0;
          v[10] = syscall(SYS_getppid);
          v[11] = errno;
          v[12] = syscall(SYS_getppid);
          syscall(SYS_exit_group, 0);
        }
        for (int i = 0; i < 2; ++i) {
          seccomp_notif req{};
          if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return 10 + i;
          v[20 + i] = req.data.nr;
          v[22 + i] = req.pid;
          seccomp_notif_resp resp{};
          resp.id = req.id;
          if (i == 0) {
            resp.error = -EXDEV;
          } else {
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
          }
          if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0) return 12 + i;
        }
        int status = 0;
        syscall(SYS_wait4, worker, &status, 0, nullptr);
        v[30] = worker;
        return 0;
      },
      options);
  INFO(s.Describe());
  REQUIRE((s.exited && s.code == 0));
  const long* v = SharedPage()->values;
  CHECK(v[20] == SYS_getppid);
  CHECK(v[21] == SYS_getppid);
  CHECK(v[22] == v[30]);
  CHECK(v[10] == -1);
  CHECK(v[11] == EXDEV);
  CHECK(v[12] > 0);  // the supervisor's pid: the real call ran
  CHECK(v[12] != getpid());
}

// ---- conditions -------------------------------------------------------------------

TEST_CASE("every condition operator, on signed, unsigned and 64-bit parameters", "[root]") {
  // lseek(unsigned int fd, off_t offset, unsigned int whence): fd -1 is
  // EBADF when the call reaches the kernel (the positive control), EXDEV
  // when the filter refuses it.
  struct Case {
    const char* condition;
    Args refused;
    Args reaches;
  };
  const uint64_t kFd = 0xffffffff;
  const Case cases[] = {
      {"arg1 == -5", {kFd, static_cast<uint64_t>(-5)}, {kFd, 5}},
      {"arg1 != 7", {kFd, 8}, {kFd, 7}},
      {"arg1 < -1", {kFd, static_cast<uint64_t>(-2)}, {kFd, static_cast<uint64_t>(-1)}},
      {"arg1 < -1", {kFd, 0x8000000000000000}, {kFd, 0x7fffffffffffffff}},
      {"arg1 <= 0", {kFd, 0}, {kFd, 1}},
      {"arg1 > 0x100000000", {kFd, 0x100000001}, {kFd, 0x100000000}},
      {"arg1 > 0x100000000", {kFd, 0x7fffffffffffffff}, {kFd, static_cast<uint64_t>(-1)}},
      {"arg1 >= 0x100000000", {kFd, 0x100000000}, {kFd, 0xffffffff}},
      {"arg2 & 0xf0 == 0x30", {kFd, 0, 0x35}, {kFd, 0, 0x45}},
      {"arg2 & 0xf0 == 0x30", {kFd, 0, 0x100000035}, {kFd, 0, 0x300000000}},
      {"arg2 in [1, 4]", {kFd, 0, 4}, {kFd, 0, 3}},
      {"arg2 in [1, 4]", {kFd, 0, 0xffffffff00000001}, {kFd, 0, 0x100000000}},
      {"arg2 not in [0, 1, 2]", {kFd, 0, 3}, {kFd, 0, 2}},
      {"arg0 not in [0xffffffff]", {0x7ffffff0}, {0x1ffffffff}},
      {"arg2 < 3 and arg1 >= 10", {kFd, 10, 2}, {kFd, 9, 2}},
  };
  for (const Case& c : cases) {
    INFO(c.condition);
    Policy p(std::string("policy p { syscalls { default allow \n errno EXDEV lseek if ") +
             c.condition + " } }");
    CHECK(p.Interpret(SYS_lseek, c.refused) == Errno(EXDEV));
    CHECK_CALL(p.Call(SYS_lseek, c.refused), Failed(EXDEV));
    CHECK(p.Interpret(SYS_lseek, c.reaches) == kAllow);
    CHECK_CALL(p.Call(SYS_lseek, c.reaches), Failed(EBADF));
  }
}

// ---- the libseccomp pitfalls, in the kernel ------------------------------------------

TEST_CASE("pitfall: an unconditional allow and a conditional kill on one syscall", "[root]") {
  Policy p(R"(policy p { syscalls {
    default errno EPERM
    allow exit_group
    allow socket
    kill socket if arg0 == AF_PACKET } })");
  CHECK(p.Interpret(SYS_socket, {kAfPacket, SOCK_RAW}) == kKill);
  CHECK(p.Call(SYS_socket, {kAfPacket, SOCK_RAW}).KilledBySigsys());
  CHECK_CALL(Unfiltered(SYS_socket, {kAfPacket, SOCK_RAW}), ret >= 0);
  CHECK(p.Interpret(SYS_socket, {kAfInet, SOCK_DGRAM}) == kAllow);
  CHECK_CALL(p.Call(SYS_socket, {kAfInet, SOCK_DGRAM}), ret >= 0);
}

TEST_CASE("pitfall: a conditional errno equal to the default errno", "[root]") {
  Policy p(R"(policy p { syscalls {
    default errno EPERM
    allow exit_group
    allow socket
    errno EPERM socket if arg0 == AF_PACKET } })");
  CHECK(p.Interpret(SYS_socket, {kAfPacket, SOCK_RAW}) == Errno(EPERM));
  CHECK_CALL(p.Call(SYS_socket, {kAfPacket, SOCK_RAW}), Failed(EPERM));
  CHECK_CALL(p.Call(SYS_socket, {kAfInet, SOCK_DGRAM}), ret >= 0);
  CHECK_CALL(Unfiltered(SYS_socket, {kAfPacket, SOCK_RAW}), ret >= 0);
}

TEST_CASE("pitfall: overlapping conditional rules, most restrictive first", "[root]") {
  Policy p(R"(policy p { syscalls {
    default allow
    errno EACCES socket if arg0 == AF_PACKET
    errno EACCES socket if arg1 == SOCK_RAW
    kill socket if arg0 == AF_PACKET and arg2 == 0x300
    trap socket if arg1 == SOCK_DGRAM and arg0 == AF_PACKET } })");
  const Args both = {kAfPacket, SOCK_RAW, 0x300};
  CHECK(p.Interpret(SYS_socket, both) == kKill);
  CHECK(p.Call(SYS_socket, both).KilledBySigsys());
  CHECK(p.Interpret(SYS_socket, {kAfPacket, SOCK_RAW, 0}) == Errno(EACCES));
  CHECK_CALL(p.Call(SYS_socket, {kAfPacket, SOCK_RAW, 0}), Failed(EACCES));
  CHECK_CALL(p.Call(SYS_socket, {kAfInet, SOCK_RAW, 0}), Failed(EACCES));
  CHECK(p.Interpret(SYS_socket, {kAfPacket, SOCK_DGRAM}) == ir::SysAction{Kind::kTrap, 0});
  CHECK(p.Call(SYS_socket, {kAfPacket, SOCK_DGRAM}).KilledBySigsys());  // SIGSYS, no handler
  CHECK_CALL(p.Call(SYS_socket, {kAfInet, SOCK_DGRAM}), ret >= 0);
  CHECK_CALL(Unfiltered(SYS_socket, both), ret >= 0);  // htons(ETH_P_ALL): a real packet socket
}

TEST_CASE("pitfall: high bits on an int argument cannot slip past a deny or an allow", "[root]") {
  // The kernel reads socket's int family from the low 32 bits: with bit 32
  // set, AF_PACKET is still AF_PACKET (the positive control shows it).
  const Args packet_high = {kAfPacket | kBit32, SOCK_RAW};
  CHECK_CALL(Unfiltered(SYS_socket, packet_high), ret >= 0);
  Policy deny("policy p { syscalls { default allow \n kill socket if arg0 == AF_PACKET } }");
  CHECK(deny.Interpret(SYS_socket, packet_high) == kKill);
  CHECK(deny.Call(SYS_socket, packet_high).KilledBySigsys());
  CHECK(deny.Call(SYS_socket, {kAfPacket | 0xffffffff00000000, SOCK_RAW}).KilledBySigsys());
  CHECK_CALL(deny.Call(SYS_socket, {kAfInet | kBit32, SOCK_DGRAM}), ret >= 0);
  // An allow matches the same way: the family the kernel uses decides.
  Policy allow(R"(policy p { syscalls {
    default errno EPERM
    allow exit_group
    allow socket if arg0 == AF_INET } })");
  CHECK(allow.Interpret(SYS_socket, {kAfInet | kBit32, SOCK_DGRAM}) == kAllow);
  CHECK_CALL(allow.Call(SYS_socket, {kAfInet | kBit32, SOCK_DGRAM}), ret >= 0);
  CHECK_CALL(allow.Call(SYS_socket, packet_high), Failed(EPERM));
}

// ---- other ABIs -------------------------------------------------------------------------

TEST_CASE("x32: death by SIGSYS under the filter, ENOSYS without (x32 is off here)", "[root]") {
  Policy p("policy p { syscalls { default allow } }");
  CHECK(p.Interpret(0x40000000 | SYS_getpid) == kKill);
  const ChildStatus unfiltered = RunChild("", [] {
    SharedPage()->values[0] = X32(SYS_getpid);
    return 0;
  });
  CHECK((unfiltered.exited && unfiltered.code == 0));
  CHECK(SharedPage()->values[0] == -ENOSYS);
  const ChildStatus s = RunChild(p.bpf, [] {
    SharedPage()->values[0] = X32(SYS_getpid);
    return 0;
  });
  INFO(s.Describe());
  CHECK((!s.exited && s.signal == SIGSYS && !s.core_dumped));
}

TEST_CASE("i386 int 0x80: death by SIGSYS under the x86_64 filter, which allows getpid", "[root]") {
  Policy p("policy p { syscalls { default errno EPERM \n allow getpid, exit_group } }");
  CHECK(p.Interpret(SYS_getpid) == kAllow);
  const ChildStatus unfiltered = RunChild("", [] {
    SharedPage()->values[0] = Int80(kI386Getpid);
    SharedPage()->values[1] = syscall(SYS_getpid);
    return 0;
  });
  CHECK((unfiltered.exited && unfiltered.code == 0));
  CHECK(SharedPage()->values[0] == SharedPage()->values[1]);
  const ChildStatus s = RunChild(p.bpf, [] {
    SharedPage()->values[1] = syscall(SYS_getpid);
    SharedPage()->values[0] = Int80(kI386Getpid);
    return 0;
  });
  INFO(s.Describe());
  CHECK((!s.exited && s.signal == SIGSYS && !s.core_dumped));
  CHECK(SharedPage()->values[1] > 0);  // the native call before it ran
}

// ---- bypass classes ----------------------------------------------------------------------

TEST_CASE("io_uring: refused unless a rule names it", "[root]") {
  static io_uring_params params;
  const Args args = {1, reinterpret_cast<uint64_t>(&params)};
  CHECK_CALL(Unfiltered(SYS_io_uring_setup, args), ret >= 0);
  Policy open_default("policy p { syscalls { default allow } }");
  CHECK(open_default.Interpret(SYS_io_uring_setup, args) == Errno(ENOSYS));
  CHECK_CALL(open_default.Call(SYS_io_uring_setup, args), Failed(ENOSYS));
  Policy group("policy p { syscalls { default errno EPERM \n allow @system-service } }");
  CHECK_CALL(group.Call(SYS_io_uring_setup, args), Failed(EPERM));
  CHECK_CALL(group.Call(SYS_io_uring_enter, {0}), Failed(EPERM));
  Policy named(R"(policy p { syscalls {
    default errno EPERM
    allow @system-service
    allow io_uring_setup } })");
  CHECK(named.Interpret(SYS_io_uring_setup, args) == kAllow);
  CHECK_CALL(named.Call(SYS_io_uring_setup, args), ret >= 0);
}

namespace {

// clone3 or clone from the child; the new process leaves at once.
int Clone3Body() {
  clone_args ca{};
  ca.exit_signal = SIGCHLD;
  errno = 0;
  const long r = syscall(SYS_clone3, &ca, sizeof ca);
  if (r == 0) syscall(SYS_exit_group, 0);
  SharedPage()->values[0] = r;
  SharedPage()->values[1] = r < 0 ? errno : 0;
  return 0;
}

int CloneBody(unsigned long flags) {
  errno = 0;
  const long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (r == 0) syscall(SYS_exit_group, 0);
  SharedPage()->values[0] = r;
  SharedPage()->values[1] = r < 0 ? errno : 0;
  return 0;
}

}  // namespace

TEST_CASE("clone3 answers ENOSYS where clone's flags are filtered", "[root]") {
  Policy plain("policy p { syscalls { default errno EPERM \n allow @system-service } }");
  CHECK(plain.Interpret(SYS_clone3) == kAllow);
  CHECK((RunChild(plain.bpf, Clone3Body).exited && SharedPage()->values[0] > 0));
  Policy filtered(R"(policy p { syscalls {
    default errno EPERM
    allow @system-service
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER } })");
  CHECK(filtered.Interpret(SYS_clone3) == Errno(ENOSYS));
  CHECK(RunChild(filtered.bpf, Clone3Body).exited);
  CHECK(SharedPage()->values[0] == -1);
  CHECK(SharedPage()->values[1] == ENOSYS);
  // clone itself: flags checked.
  CHECK(
      (RunChild(filtered.bpf, [] { return CloneBody(0); }).exited && SharedPage()->values[0] > 0));
  CHECK(RunChild(filtered.bpf, [] { return CloneBody(CLONE_NEWUSER); }).exited);
  CHECK(SharedPage()->values[1] == EPERM);
  CHECK((RunChild("", [] { return CloneBody(CLONE_NEWUSER); }).exited &&
         SharedPage()->values[0] > 0));
}

namespace {

// Runs i386 calls under an x86 filter: nothing of the x86_64 ABI may run
// after it is installed (it would kill), so the body leaves with i386
// exit_group.
ChildStatus RunI386(const std::string& bpf, long (*body)()) {
  return RunChild(bpf, [body] {
    SharedPage()->values[0] = body();
    Int80(kI386ExitGroup, 0);
    return 99;  // not reached
  });
}

long SocketcallInet() {
  // socketcall's arguments: 32-bit words on i386.
  unsigned int* words = reinterpret_cast<unsigned int*>(Low());
  words[0] = AF_INET;
  words[1] = SOCK_DGRAM;
  words[2] = 0;
  return Int80(kI386Socketcall, 1 /* SYS_SOCKET */, reinterpret_cast<long>(words));
}

long SocketInet() { return Int80(kI386Socket, AF_INET, SOCK_DGRAM, 0); }
long SocketPacket() { return Int80(kI386Socket, AF_PACKET, SOCK_RAW, 0); }
long IpcSemget() { return Int80(kI386Ipc, 2 /* SEMGET */, IPC_PRIVATE, 1, IPC_CREAT | 0600); }

}  // namespace

TEST_CASE("socketcall and ipc (i386, through int 0x80) are closed when their calls are filtered",
          "[root]") {
  REQUIRE(Low() != MAP_FAILED);
  REQUIRE(reinterpret_cast<uintptr_t>(Low()) < 0x100000000);
  Policy open_net(
      "policy p { syscalls { arch x86 \n default errno EPERM \n allow exit_group, @network-io } }",
      Arch::kX86);
  CHECK(open_net.Interpret(kI386Socketcall, {1}) == kAllow);
  CHECK((RunI386(open_net.bpf, SocketcallInet).exited && SharedPage()->values[0] >= 0));
  Policy filtered(R"(policy p { syscalls {
    arch x86
    default errno EPERM
    allow exit_group, @network-io
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6] } })",
                  Arch::kX86);
  CHECK(filtered.Interpret(kI386Socketcall, {1}) == Errno(EPERM));
  CHECK(RunI386(filtered.bpf, SocketcallInet).exited);
  CHECK(SharedPage()->values[0] == -EPERM);
  CHECK((RunI386(filtered.bpf, SocketInet).exited && SharedPage()->values[0] >= 0));
  CHECK(RunI386(filtered.bpf, SocketPacket).exited);
  CHECK(SharedPage()->values[0] == -EAFNOSUPPORT);
  CHECK((RunI386("", SocketPacket).exited && SharedPage()->values[0] >= 0));
  // A native call under the x86 filter is another architecture: killed.
  CHECK(filtered.Call(SYS_getpid).KilledBySigsys());

  Policy open_ipc(
      "policy p { syscalls { arch x86 \n default errno EPERM \n allow exit_group, @ipc } }",
      Arch::kX86);
  CHECK((RunI386(open_ipc.bpf, IpcSemget).exited && SharedPage()->values[0] >= 0));
  semctl(static_cast<int>(SharedPage()->values[0]), 0, IPC_RMID);
  Policy closed_ipc(R"(policy p { syscalls {
    arch x86
    default errno EPERM
    allow exit_group, @ipc
    kill shmat } })",
                    Arch::kX86);
  CHECK(closed_ipc.Interpret(kI386Ipc, {2}) == Errno(EPERM));
  CHECK(RunI386(closed_ipc.bpf, IpcSemget).exited);
  CHECK(SharedPage()->values[0] == -EPERM);
}

// ---- the interpreter's load checks agree with the kernel's -------------------------------

TEST_CASE("cbpf: programs the interpreter refuses, the kernel refuses", "[root]") {
  auto insn = [](uint16_t code, uint8_t jt, uint8_t jf, uint32_t k) {
    std::string b(8, '\0');
    b[0] = static_cast<char>(code & 0xff);
    b[1] = static_cast<char>(code >> 8);
    b[2] = static_cast<char>(jt);
    b[3] = static_cast<char>(jf);
    for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<char>(k >> (8 * i));
    return b;
  };
  const std::string ret_allow = insn(0x06, 0, 0, 0x7fff0000);
  const std::pair<const char*, std::string> programs[] = {
      {"ok", insn(0x20, 0, 0, 0) + ret_allow},
      {"unaligned load", insn(0x20, 0, 0, 2) + ret_allow},
      {"load past seccomp_data", insn(0x20, 0, 0, 64) + ret_allow},
      {"halfword load", insn(0x28, 0, 0, 0) + ret_allow},
      {"jump past the end", insn(0x15, 5, 0, 0) + ret_allow},
      {"no RET last", ret_allow + insn(0x20, 0, 0, 0)},
      {"scratch read before written", insn(0x60, 0, 0, 0) + ret_allow},
      {"scratch written first", insn(0x02, 0, 0, 1) + insn(0x60, 0, 0, 1) + ret_allow},
      {"constant division by 0", insn(0x34, 0, 0, 0) + ret_allow},
      {"shift by 32", insn(0x64, 0, 0, 32) + ret_allow},
      {"MOD (not in seccomp's list)", insn(0x94, 0, 0, 3) + ret_allow},
  };
  for (const auto& [name, bytes] : programs) {
    INFO(name);
    cbpf::Program p;
    std::string error;
    const bool interpreter = cbpf::Load(bytes, false, &p, &error);
    const ChildStatus s = RunChild(bytes, [] { return 0; });
    CHECK(interpreter == (s.exited && s.code == 0));
    CHECK((s.exited && (s.code == 0 || s.code == kLoadFailed)));
  }
  std::string error;
  CHECK_FALSE(enforce::LoadSeccompFilter("1234567", {}, nullptr, &error));
  CHECK(error == "seccomp: not a BPF program of 1 to 4096 instructions (7 bytes)");
}

// ---- syscalls newer than libseccomp's table --------------------------------------

// mseal (462, Linux 6.10) is past libseccomp 2.5.4's table: the filter
// carries the kernel's number, given to libseccomp raw on this (native)
// architecture.
TEST_CASE("a syscall libseccomp does not know is allowed or refused by its number", "[root]") {
  constexpr long kMseal = 462;
  const Args bad_flags = {0, 0, 1, 0, 0, 0};  // flags mseal does not know
  // The positive control: this kernel has mseal, and refuses the flags.
  CHECK_CALL(Unfiltered(kMseal, bad_flags), Failed(EINVAL));

  Policy allowed(
      "policy p { syscalls { default errno EACCES \n allow exit_group \n allow mseal \n"
      " allow getpid } }");
  CHECK(allowed.Interpret(kMseal) == kAllow);
  CHECK_CALL(allowed.Call(kMseal, bad_flags), Failed(EINVAL));  // the kernel's own answer
  CHECK_CALL(allowed.Call(SYS_getpid), ret > 0);
  CHECK_CALL(allowed.Call(SYS_getppid), Failed(EACCES));

  Policy denied("policy p { syscalls { default allow \n errno EPERM mseal } }");
  CHECK(denied.Interpret(kMseal) == Errno(EPERM));
  CHECK_CALL(denied.Call(kMseal, bad_flags), Failed(EPERM));
  CHECK_CALL(denied.Call(SYS_getpid), ret > 0);
  CHECK_CALL(denied.Call(SYS_getppid), Returned(getpid()));
}

}  // namespace ward::test
