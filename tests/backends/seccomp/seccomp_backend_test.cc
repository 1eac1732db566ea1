// The seccomp backend without the kernel: artifacts, determinism,
// diagnostics, and what the exported programs answer, through the cBPF
// interpreter. The libseccomp pitfalls are shown twice: what libseccomp
// does with the naive rules, and that Ward's filter does what the IR says.
// seccomp_enforce_test.cc loads the same filters into the kernel.
#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "backends/seccomp/filter.h"
#include "backends/seccomp/seccomp_backend.h"
#include "tests/backends/seccomp/seccomp_fixture.h"

namespace ward::test {
namespace {

using Kind = ir::SysAction::Kind;
namespace sc = backend::seccomp;

constexpr uint32_t kGetppid = 110, kSocket = 41, kClone = 56, kClone3 = 435, kIoUringSetup = 425;
constexpr uint64_t kAfInet = 2, kAfPacket = 17, kBit32 = uint64_t{1} << 32;
constexpr uint32_t kX32 = 0x40000000;

const ir::SysAction kAllow{Kind::kAllow, 0}, kKill{Kind::kKill, 0};
ir::SysAction Errno(int e) { return {Kind::kErrno, e}; }

// The action the x86_64 filter of `c` gives a call.
ir::SysAction Run(const Compiled& c, uint32_t nr, const Args& args = {},
                  Arch arch = Arch::kX86_64) {
  const cbpf::Outcome o = Interpret(Interpreter(Bpf(c, arch), arch), arch, nr, args);
  INFO(o.error);
  REQUIRE(o.error.empty());
  const auto a = ActionOfRet(o.ret);
  INFO("ret " << std::hex << o.ret);
  REQUIRE(a.has_value());
  return *a;
}

// A filter built with libseccomp directly, the way the pitfalls arise.
class Raw {
 public:
  explicit Raw(uint32_t default_action) : ctx_(seccomp_init(default_action)) {
    seccomp_attr_set(ctx_, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  }
  ~Raw() { seccomp_release(ctx_); }
  scmp_filter_ctx ctx() { return ctx_; }
  cbpf::Program Program() {
    const int fd = memfd_create("raw", 0);
    REQUIRE(seccomp_export_bpf(ctx_, fd) == 0);
    std::string bytes(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
    REQUIRE(pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    close(fd);
    return Interpreter(bytes, Arch::kX86_64);
  }

 private:
  scmp_filter_ctx ctx_;
};

uint32_t RawRet(Raw& raw, uint32_t nr, const Args& args) {
  return Interpret(raw.Program(), Arch::kX86_64, nr, args).ret;
}

}  // namespace

TEST_CASE("artifacts: a .bpf and a .pfc per effective architecture, the same bytes every time") {
  const std::string source = R"(policy svc { syscalls {
    arch aarch64, x86_64, x86
    default errno EPERM
    allow @system-service
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
  } })";
  auto a = CompileSeccomp(source);
  auto b = CompileSeccomp(source);
  std::vector<std::string> paths;
  for (const backend::Artifact& art : a->result.artifacts) paths.push_back(art.path);
  CHECK(paths == std::vector<std::string>{"svc.x86_64.bpf", "svc.x86_64.pfc", "svc.x86.bpf",
                                          "svc.x86.pfc", "svc.aarch64.bpf", "svc.aarch64.pfc"});
  REQUIRE(a->result.artifacts.size() == b->result.artifacts.size());
  for (size_t i = 0; i < a->result.artifacts.size(); ++i) {
    CHECK(a->result.artifacts[i].bytes == b->result.artifacts[i].bytes);
  }
  CHECK(a->result.enforced == std::vector<backend::Section>{backend::Section::kSyscalls});
  CHECK(a->Diagnostics().empty());
  for (Arch arch : {Arch::kX86_64, Arch::kX86, Arch::kAarch64}) {
    const std::string& bpf = Bpf(*a, arch);
    CHECK(bpf.size() % 8 == 0);
    CHECK(bpf.size() / 8 <= sc::kMaxInstructions);
    Interpreter(bpf, arch);  // passes the kernel's load-time checks
    const std::string& pfc = a->Artifact("." + std::string(ArchName(arch)) + ".pfc");
    CHECK(pfc.find("# filter for arch " + std::string(ArchName(arch)) + " (" +
                   std::to_string(sc::AuditArch(arch)) + ")") != std::string::npos);
    CHECK(pfc.find("# invalid architecture action\naction KILL_PROCESS;") != std::string::npos);
    CHECK(pfc.find("TRACE") == std::string::npos);
  }
  // The build host does not matter: the filter for x86_64 reads the x86_64
  // numbers (getppid 110), the one for aarch64 its own (getppid 173).
  CHECK(Run(*a, kGetppid) == kAllow);
  CHECK(Run(*a, 173, {}, Arch::kAarch64) == kAllow);
}

TEST_CASE("every action returns its SECCOMP_RET value") {
  const std::pair<const char*, uint32_t> actions[] = {{"allow", SCMP_ACT_ALLOW},
                                                      {"log", SCMP_ACT_LOG},
                                                      {"notify", SCMP_ACT_NOTIFY},
                                                      {"errno EPERM", SCMP_ACT_ERRNO(1)},
                                                      {"errno 4095", SCMP_ACT_ERRNO(4095)},
                                                      {"trap", SCMP_ACT_TRAP},
                                                      {"kill-thread", SCMP_ACT_KILL_THREAD},
                                                      {"kill", SCMP_ACT_KILL_PROCESS}};
  for (const auto& [rule, ret] : actions) {
    for (const char* d : {"allow", "kill", "errno 4095"}) {
      INFO(rule << " under default " << d);
      auto c = CompileSeccomp(std::string("policy p { syscalls { default ") + d + "\n  " + rule +
                              " getppid } }");
      const auto p = Interpreter(Bpf(*c, Arch::kX86_64), Arch::kX86_64);
      CHECK(Interpret(p, Arch::kX86_64, kGetppid).ret == ret);
      CHECK(Interpret(p, Arch::kX86_64, 39).ret == sc::RetValue(c->ir.syscalls.default_action));
      CHECK(sc::RetValue(c->ir.syscalls.default_action) ==
            (std::string(d) == "allow"  ? SCMP_ACT_ALLOW
             : std::string(d) == "kill" ? SCMP_ACT_KILL_PROCESS
                                        : SCMP_ACT_ERRNO(4095)));
    }
  }
  // libseccomp 2.5 refuses errno 4095, which the kernel returns: Ward gives
  // it a stand-in and writes the real action back, in the dump too.
  auto c = CompileSeccomp("policy p { syscalls { default errno 4095 \n errno 4095 read } }");
  CHECK(c->Artifact(".pfc").find("action ERRNO(4095);") != std::string::npos);
}

TEST_CASE("x32 calls and other architectures kill the process, even where the call is allowed") {
  auto c = CompileSeccomp("policy p { syscalls { default allow } }");
  const auto p = Interpreter(Bpf(*c, Arch::kX86_64), Arch::kX86_64);
  CHECK(Interpret(p, Arch::kX86_64, 39).ret == SCMP_ACT_ALLOW);  // getpid
  // The x32 ABI shares AUDIT_ARCH_X86_64; its numbers carry 0x40000000.
  CHECK(Interpret(p, Arch::kX86_64, kX32 | 39).ret == SCMP_ACT_KILL_PROCESS);
  CHECK(Interpret(p, Arch::kX86_64, kX32 | 512).ret == SCMP_ACT_KILL_PROCESS);
  CHECK(Interpret(p, Arch::kX86_64, 0xfffffffe).ret == SCMP_ACT_KILL_PROCESS);
  // -1 is what a tracer leaves when it skips a call: the default.
  CHECK(Interpret(p, Arch::kX86_64, 0xffffffff).ret == SCMP_ACT_ALLOW);
  // i386 `int 0x80` on x86_64, and every other architecture.
  for (Arch other : {Arch::kX86, Arch::kAarch64, Arch::kArm, Arch::kS390x}) {
    CHECK(Interpret(p, Arch::kX86_64, 20, {}, sc::AuditArch(other)).ret == SCMP_ACT_KILL_PROCESS);
  }
  CHECK(Interpret(p, Arch::kX86_64, 39, {}, 0x12345678).ret == SCMP_ACT_KILL_PROCESS);
  // The x86 filter itself has no x32 check: it is for 32-bit processes.
  auto x = CompileSeccomp("policy p { syscalls { arch x86 \n default allow } }");
  const auto px = Interpreter(Bpf(*x, Arch::kX86), Arch::kX86);
  CHECK(Interpret(px, Arch::kX86, 20).ret == SCMP_ACT_ALLOW);
  CHECK(Interpret(px, Arch::kX86, 39, {}, sc::AuditArch(Arch::kX86_64)).ret ==
        SCMP_ACT_KILL_PROCESS);
}

TEST_CASE("unknown and future syscall numbers get the default action") {
  auto c = CompileSeccomp(R"(policy p { syscalls {
    arch x86_64, aarch64
    default errno EPERM
    allow read, write } })");
  for (uint32_t nr : {470u, 999u, 4096u, 0x3fffffffu}) {
    CHECK(Run(*c, nr) == Errno(1));
    CHECK(Run(*c, nr, {}, Arch::kAarch64) == Errno(1));
  }
  CHECK(Run(*c, 0) == kAllow);  // read
  CHECK(Run(*c, 63, {}, Arch::kAarch64) == kAllow);
}

// ---- the libseccomp pitfalls ---------------------------------------------------

TEST_CASE("pitfall: an unconditional allow and a conditional kill on one syscall") {
  // libseccomp takes both rules (rc 0) and enforces only the allow.
  Raw raw(SCMP_ACT_ERRNO(1));
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_ALLOW, kSocket, 0) == 0);
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_KILL_PROCESS, kSocket, 1,
                         SCMP_A0(SCMP_CMP_EQ, kAfPacket)) == 0);
  CHECK(RawRet(raw, kSocket, {kAfPacket}) == SCMP_ACT_ALLOW);
  // Ward gives it the two disjoint regions.
  auto c = CompileSeccomp(R"(policy p { syscalls {
    default errno EPERM
    allow socket
    kill socket if arg0 == AF_PACKET } })");
  CHECK(Run(*c, kSocket, {kAfPacket}) == kKill);
  CHECK(Run(*c, kSocket, {kAfInet}) == kAllow);
  CHECK(Run(*c, kSocket, {kAfPacket | kBit32}) == kKill);
}

TEST_CASE("pitfall: a conditional rule equal to the default errno") {
  // The runc pitfall: libseccomp refuses a rule whose action is the default.
  Raw raw(SCMP_ACT_ERRNO(1));
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_ALLOW, kSocket, 0) == 0);
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_ERRNO(1), kSocket, 1,
                         SCMP_A0(SCMP_CMP_EQ, kAfPacket)) == -EACCES);
  // Ward never gives it such a rule: that region falls to the default.
  auto c = CompileSeccomp(R"(policy p { syscalls {
    default errno EPERM
    allow socket
    errno EPERM socket if arg0 == AF_PACKET } })");
  CHECK(Run(*c, kSocket, {kAfPacket}) == Errno(1));
  CHECK(Run(*c, kSocket, {kAfInet}) == kAllow);
  CHECK(Run(*c, kSocket, {kAfPacket | kBit32}) == Errno(1));
  CHECK(Run(*c, kSocket, {kAfInet | kBit32}) == kAllow);
}

TEST_CASE("pitfall: overlapping conditional rules") {
  // Two conditions that hold together: libseccomp tests arg0 first and
  // keeps arg1's errno where arg0's kill should win.
  Raw raw(SCMP_ACT_ALLOW);
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_KILL_PROCESS, kSocket, 1,
                         SCMP_A0(SCMP_CMP_EQ, kAfPacket)) == 0);
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_ERRNO(1), kSocket, 1, SCMP_A1(SCMP_CMP_EQ, 3)) == 0);
  CHECK(RawRet(raw, kSocket, {kAfPacket, 3}) == SCMP_ACT_ERRNO(1));
  // Ward: the most restrictive where both hold, each alone elsewhere.
  auto c = CompileSeccomp(R"(policy p { syscalls {
    default allow
    kill socket if arg0 == AF_PACKET
    errno EPERM socket if arg1 == 3
    trap socket if arg1 == 5 and arg2 == 0 } })");
  CHECK(Run(*c, kSocket, {kAfPacket, 3}) == kKill);
  CHECK(Run(*c, kSocket, {kAfPacket, 5, 0}) == kKill);
  CHECK(Run(*c, kSocket, {kAfInet, 3}) == Errno(1));
  CHECK(Run(*c, kSocket, {kAfInet, 5, 0}) == ir::SysAction{Kind::kTrap, 0});
  CHECK(Run(*c, kSocket, {kAfInet, 5, 1}) == kAllow);
  CHECK(Run(*c, kSocket, {kAfInet, 2}) == kAllow);
}

TEST_CASE("pitfall: high bits set on an int argument, for deny and allow rules") {
  // SCMP_A0_32 casts the datum but compares 64 bits: bit 32 bypasses a deny.
  Raw raw(SCMP_ACT_ALLOW);
  CHECK(seccomp_rule_add(raw.ctx(), SCMP_ACT_KILL_PROCESS, kSocket, 1,
                         SCMP_A0_32(SCMP_CMP_EQ, kAfPacket)) == 0);
  CHECK(RawRet(raw, kSocket, {kAfPacket}) == SCMP_ACT_KILL_PROCESS);
  CHECK(RawRet(raw, kSocket, {kAfPacket | kBit32}) == SCMP_ACT_ALLOW);
  // Ward compares an int on its low 32 bits, as the kernel reads it.
  auto deny =
      CompileSeccomp("policy p { syscalls { default allow \n kill socket if arg0 == AF_PACKET } }");
  for (uint64_t high : {uint64_t{0}, kBit32, 0xffffffff00000000, uint64_t{1} << 63}) {
    CHECK(Run(*deny, kSocket, {kAfPacket | high}) == kKill);
    CHECK(Run(*deny, kSocket, {kAfInet | high}) == kAllow);
  }
  auto allow = CompileSeccomp(R"(policy p { syscalls {
    default errno EPERM
    allow socket if arg0 in [AF_UNIX, AF_INET] and arg1 < 0 } })");
  for (uint64_t high : {uint64_t{0}, kBit32, 0xffffffff00000000}) {
    CHECK(Run(*allow, kSocket, {kAfInet | high, 0x80000001 | high}) == kAllow);
    CHECK(Run(*allow, kSocket, {kAfInet | high, 1 | high}) == Errno(1));
    CHECK(Run(*allow, kSocket, {kAfPacket | high, 0x80000001}) == Errno(1));
  }
}

TEST_CASE("pitfall: on x86 libseccomp files a socket rule under socketcall too, dropping arg0") {
  // What libseccomp does with `allow socket if arg0 == AF_INET` on x86:
  // socketcall(SYS_SOCKET, ...) is allowed for every family.
  seccomp_api_set(6);
  Raw raw(SCMP_ACT_ERRNO(1));
  REQUIRE(seccomp_arch_remove(raw.ctx(), SCMP_ARCH_NATIVE) == 0);
  REQUIRE(seccomp_arch_add(raw.ctx(), SCMP_ARCH_X86) == 0);
  REQUIRE(seccomp_rule_add(raw.ctx(), SCMP_ACT_ALLOW, seccomp_syscall_resolve_name("socket"), 1,
                           SCMP_A0(SCMP_CMP_EQ, kAfInet)) == 0);
  const int fd = memfd_create("raw", 0);
  REQUIRE(seccomp_export_bpf(raw.ctx(), fd) == 0);
  std::string bytes(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  REQUIRE(pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  close(fd);
  const auto rp = Interpreter(bytes, Arch::kX86);
  constexpr uint32_t kSocketcall = 102, kSocket32 = 359, kSysSocket = 1;
  CHECK(Interpret(rp, Arch::kX86, kSocketcall, {kSysSocket, 0x1000}).ret == SCMP_ACT_ALLOW);
  // Ward: socket is filtered, so socketcall is closed (the default here),
  // whatever libseccomp files under it.
  auto c = CompileSeccomp(R"(policy p { syscalls {
    arch x86
    default errno EPERM
    allow connect
    allow socket if arg0 == AF_INET } })");
  CHECK(Run(*c, kSocketcall, {kSysSocket, 0x1000}, Arch::kX86) == Errno(1));
  CHECK(Run(*c, kSocketcall, {3, 0x1000}, Arch::kX86) == Errno(1));
  CHECK(Run(*c, kSocket32, {kAfInet}, Arch::kX86) == kAllow);
  CHECK(Run(*c, kSocket32, {kAfPacket}, Arch::kX86) == Errno(1));
  CHECK(Run(*c, 362, {}, Arch::kX86) == kAllow);  // connect
  CHECK(c->Artifact(".x86.pfc").find("TRACE") == std::string::npos);
  // Under a default that lets calls run, ENOSYS; ipc likewise.
  auto d = CompileSeccomp(R"(policy p { syscalls {
    arch x86
    default allow
    errno EAFNOSUPPORT socket if arg0 == AF_PACKET
    kill shmat } })");
  CHECK(Run(*d, kSocketcall, {kSysSocket}, Arch::kX86) == Errno(38));
  CHECK(Run(*d, 117, {21}, Arch::kX86) == Errno(38));  // ipc(SHMAT)
  CHECK(Run(*d, 397, {}, Arch::kX86) == kKill);        // shmat
  // Nothing filtered among them: socketcall is decided like the rest.
  auto u = CompileSeccomp(
      "policy p { syscalls { arch x86 \n default errno EPERM \n allow @network-io } }");
  CHECK(Run(*u, kSocketcall, {kSysSocket}, Arch::kX86) == kAllow);
}

// ---- bypass classes ---------------------------------------------------------------

TEST_CASE("bypass classes: closed by default, in the filter") {
  auto c = CompileSeccomp(R"(policy p { syscalls {
    default allow
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER } })");
  CHECK(Run(*c, kIoUringSetup) == Errno(38));
  CHECK(Run(*c, 426) == Errno(38));  // io_uring_enter
  CHECK(Run(*c, 427) == Errno(38));  // io_uring_register
  CHECK(Run(*c, kClone3) == Errno(38));
  CHECK(Run(*c, kClone, {0x11}) == kAllow);
  CHECK(Run(*c, kClone, {0x10000011}) == Errno(1));
  CHECK(c->Diagnostics().empty());
  // Opened by rules naming them.
  auto o = CompileSeccomp(R"(policy p { syscalls {
    default allow
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    allow io_uring_setup, clone3 } })");
  CHECK(Run(*o, kIoUringSetup) == kAllow);
  CHECK(Run(*o, kClone3) == kAllow);
  CHECK(Run(*o, 426) == Errno(38));
}

TEST_CASE("bypass classes: re-opening one is a warning at the rule (B3003)") {
  auto c = CompileSeccomp(R"(policy p { syscalls {
    arch x86_64, x86
    default errno EPERM
    allow @system-service
    allow io_uring_setup, io_uring_enter
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    log clone3
    kill socket if arg0 == AF_PACKET
    allow socketcall, ipc
  } })");
  CHECK(
      c->Diagnostics() ==
      R"(test.ward:5:5: warning[B3003]: this rule re-opens io_uring (io_uring_enter, io_uring_setup), closed by default: the operations io_uring submits are not syscalls, so no seccomp filter sees them
 5 |     allow io_uring_setup, io_uring_enter
   |     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  = hint: keep it only if the workload needs it; without it these calls get errno EPERM
test.ward:7:5: warning[B3003]: this rule re-opens clone3 on x86_64, x86, where clone's flags are filtered: clone3 passes its flags behind a pointer, which no seccomp filter can read
 7 |     log clone3
   |     ^~~~~~~~~~
  = hint: keep it only if the workload needs it; without it these calls get errno ENOSYS
test.ward:9:5: warning[B3003]: this rule re-opens socketcall on x86, where the socket calls are filtered: socketcall passes their arguments behind a pointer, which no seccomp filter can read
 9 |     allow socketcall, ipc
   |     ^~~~~~~~~~~~~~~~~~~~~
  = hint: keep it only if the workload needs it; without it these calls get errno EPERM
)");
  // ipc is not re-opened: no SysV IPC call is filtered, so it is not closed.
  CHECK(Run(*c, 117, {}, Arch::kX86) == kAllow);
  CHECK(Run(*c, 102, {1}, Arch::kX86) == kAllow);
  // A refusal, or a group's allow, is no re-opening.
  auto q = CompileSeccomp(R"(policy p { syscalls {
    default errno EPERM
    allow @system-service
    kill io_uring_setup
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno ENOSYS clone3 } })");
  CHECK(q->Diagnostics().empty());
}

TEST_CASE("rule 1: a direct conditional allow leaves no group grant in the filter") {
  // The trial's bypass: AF_NETLINK (16) was allowed through @network-io.
  constexpr uint32_t kConnect = 42;
  constexpr uint64_t kAfNetlink = 16, kAfUnix = 1, kAfInet6 = 10;
  for (const char* text : {R"(policy p { syscalls { arch x86_64, aarch64
                              default errno EPERM
                              allow @network-io
                              allow socket if arg0 in [AF_UNIX, AF_INET, AF_INET6] } })",
                           R"(abstract policy b { syscalls {
                              allow socket if arg0 in [AF_UNIX, AF_INET, AF_INET6] } }
                            policy p extends b { syscalls { arch x86_64, aarch64
                              default errno EPERM
                              allow @network-io } })"}) {
    INFO(text);
    auto c = CompileSeccomp(text);
    CHECK(Run(*c, kSocket, {kAfNetlink}) == Errno(EPERM));
    CHECK(Run(*c, kSocket, {kAfPacket}) == Errno(EPERM));
    CHECK(Run(*c, kSocket, {kAfInet | kBit32}) == kAllow);  // the kernel reads AF_INET
    for (uint64_t family : {kAfUnix, kAfInet, kAfInet6})
      CHECK(Run(*c, kSocket, {family}) == kAllow);
    CHECK(Run(*c, kConnect) == kAllow);  // the group's other members
    constexpr uint32_t kAarch64Socket = 198;
    CHECK(Run(*c, kAarch64Socket, {kAfNetlink}, Arch::kAarch64) == Errno(EPERM));
    CHECK(Run(*c, kAarch64Socket, {kAfInet6}, Arch::kAarch64) == kAllow);
  }
}

TEST_CASE("an allowed unconditional syscall is decided without reading arguments") {
  // The kernel caches an action per syscall number only when the program
  // reaches it from the architecture and the number alone.
  auto c = CompileSeccomp(R"(policy p { syscalls {
    default errno EPERM
    allow @system-service
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
    errno EPERM ioctl if arg1 == 0x5412 } })");
  const auto p = Interpreter(Bpf(*c, Arch::kX86_64), Arch::kX86_64);
  const auto& per_arch = c->ir.syscalls.syscalls.at(Arch::kX86_64);
  int unconditional = 0;
  for (uint32_t nr = 0; nr < 512; ++nr) {
    const std::string name = SyscallName(Arch::kX86_64, nr);
    auto it = per_arch.find(name);
    const bool conditional = it != per_arch.end() && it->second.size() > 1;
    INFO(name);
    CHECK(Interpret(p, Arch::kX86_64, nr, {~0ull, ~0ull}).read_args == conditional);
    unconditional += !conditional;
  }
  CHECK(unconditional > 450);
}

TEST_CASE("a filter past 4096 instructions is an error, and nothing is written") {
  // Two conditions of != on two 32-bit arguments are 1,024 regions each.
  auto c = CompileWith(backend::SeccompBackend(), R"(policy p { syscalls {
    default allow
    errno EPERM kill if arg0 != 1 and arg1 != 2
    errno EPERM tgkill if arg0 != 3 and arg1 != 4 } })");
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(
      c->Diagnostics() ==
      R"(test.ward:2:5: error[B3002]: the filter for x86_64 has 6448 instructions; the kernel loads at most 4096
 2 |     default allow
   |     ^~~~~~~~~~~~~
)");
}

TEST_CASE("ward run's guard: socket families the language never grants, whatever the upper bits") {
  std::string bpf, error;
  REQUIRE(sc::BuildTerminalGuard({}, &bpf, &error));
  const auto p = Interpreter(bpf, Arch::kX86_64);
  constexpr uint32_t kSocketpair = 53;
  constexpr uint64_t kAfUnix = 1, kAfInet6 = 10, kAfNetlink = 16, kAfVsock = 40, kAfTipc = 30;
  constexpr uint64_t kNetlinkRoute = 0, kNetlinkNetfilter = 12;
  const uint32_t refused = SCMP_ACT_ERRNO(EAFNOSUPPORT);
  // Granted families pass (the policy's own filter decides them).
  for (uint64_t family : {kAfUnix, kAfInet, kAfInet6}) {
    INFO("family " << family);
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {family, 1, 0}).ret == SCMP_ACT_ALLOW);
    CHECK(Interpret(p, Arch::kX86_64, kSocketpair, {family, 1, 0}).ret == SCMP_ACT_ALLOW);
  }
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink, 3, kNetlinkRoute}).ret ==
        SCMP_ACT_ERRNO(EPROTONOSUPPORT));
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink, 3, kNetlinkNetfilter}).ret ==
        SCMP_ACT_ERRNO(EPERM));
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfPacket, 3, 0}).ret == SCMP_ACT_ERRNO(EPERM));
  // Every other family, up to the kernel's last (46) and beyond, is refused,
  // also with bits above the 32 the kernel reads.
  for (uint64_t family = 0; family < 64; ++family) {
    if (family == kAfUnix || family == kAfInet || family == kAfInet6 || family == kAfNetlink ||
        family == kAfPacket) {
      continue;
    }
    INFO("family " << family);
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {family, 1, 0}).ret == refused);
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {family | kBit32, 1, 0}).ret == refused);
    CHECK(Interpret(p, Arch::kX86_64, kSocketpair, {family, 1, 0}).ret == refused);
    CHECK(Interpret(p, Arch::kX86_64, kSocketpair, {family | kBit32, 1, 0}).ret == refused);
  }
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfVsock, 1, 0}).ret == refused);
  CHECK(Interpret(p, Arch::kX86_64, kSocketpair, {kAfTipc, 5, 0}).ret == refused);
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {0xffffffffULL, 1, 0}).ret == refused);
  // Upper bits over a granted family (the kernel would read AF_INET):
  // refused too, at no cost (no C library sets them).
  CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfInet | kBit32, 1, 0}).ret == refused);
}

TEST_CASE("aligned blocks cover a range exactly") {
  using Blocks = std::vector<std::pair<uint32_t, uint32_t>>;
  CHECK(sc::AlignedBlocks(5, 5) == Blocks{{5, 0xffffffff}});
  CHECK(sc::AlignedBlocks(0, 11) == Blocks{{0, 0xfffffff8}, {8, 0xfffffffc}});
  CHECK(sc::AlignedBlocks(0x894c, 0x89ff) == Blocks{{0x894c, 0xfffffffc},
                                                    {0x8950, 0xfffffff0},
                                                    {0x8960, 0xffffffe0},
                                                    {0x8980, 0xffffff80}});
  CHECK(sc::AlignedBlocks(0, 0xffffffff) == Blocks{{0, 0}});
  // Against a plain membership test, over every range in a small space.
  for (uint32_t lo = 0; lo < 40; ++lo) {
    for (uint32_t hi = lo; hi < 40; ++hi) {
      const Blocks blocks = sc::AlignedBlocks(lo, hi);
      for (uint32_t v = 0; v < 64; ++v) {
        int matches = 0;
        for (const auto& [value, mask] : blocks) matches += (v & mask) == value;
        INFO(lo << ".." << hi << " " << v);
        CHECK(matches == (v >= lo && v <= hi ? 1 : 0));
      }
    }
  }
}

// The guard's netlink and interface-ioctl rules, against a reference that
// is the kernel's reading spelled out: the protocol is an int (low 32
// bits), the ioctl request an unsigned int (low 32 bits).
struct GuardReference {
  bool route_granted = false;
  uint32_t Socket(uint64_t family, uint64_t protocol) const {
    if (family != 16) return 0;  // other families: the family test's business
    if (protocol > 31) return SCMP_ACT_ERRNO(EPROTONOSUPPORT);
    if (protocol == 12) return SCMP_ACT_ERRNO(EPERM);  // netfilter
    if (protocol == 0 && route_granted) return SCMP_ACT_ALLOW;
    return SCMP_ACT_ERRNO(EPROTONOSUPPORT);
  }
  uint32_t Ioctl(uint64_t request) const {
    const uint32_t r = static_cast<uint32_t>(request);
    if (r == 0x5412 || r == 0x541c) return SCMP_ACT_ERRNO(EPERM);  // TIOCSTI, TIOCLINUX
    const bool network =
        (r >= 0x8908 && r <= 0x89ff && r != 0x894b) || (r >= 0x8b00 && r <= 0x8bff);
    return network && !route_granted ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_ALLOW;
  }
};

TEST_CASE("ward run's guard: netlink protocols and the interface ioctls, granted or not") {
  constexpr uint32_t kIoctl = 16;
  constexpr uint64_t kAfNetlink = 16, kSiocgifconf = 0x8912, kSiocgifaddr = 0x8915;
  constexpr uint64_t kSiocgstamp = 0x8906, kSiocoutqnsd = 0x894b, kFionread = 0x541b;
  for (const bool granted : {false, true}) {
    INFO("allow netlink route: " << granted);
    std::string bpf, error;
    sc::GuardOptions options;
    options.netlink_route = granted;
    REQUIRE(sc::BuildTerminalGuard(options, &bpf, &error));
    const auto p = Interpreter(bpf, Arch::kX86_64);
    const GuardReference ref{granted};
    for (uint64_t protocol = 0; protocol < 40; ++protocol) {
      for (const uint64_t high : {uint64_t{0}, kBit32, ~uint64_t{0} << 32}) {
        INFO("protocol " << protocol << " high 0x" << std::hex << high);
        // Upper bits set: refused whatever the low 32 (the kernel would read
        // them, no C library sets them).
        const uint32_t expected =
            high ? SCMP_ACT_ERRNO(EPROTONOSUPPORT) : ref.Socket(kAfNetlink, protocol);
        CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink, 3, protocol | high}).ret ==
              expected);
      }
    }
    // Named, for the reader: route as granted, sock_diag (ss), generic,
    // audit, uevents never.
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink, 3, 0}).ret ==
          (granted ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPROTONOSUPPORT)));
    for (const uint64_t never : {4, 16, 9, 15, 2, 6}) {
      CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink, 3, never}).ret ==
            SCMP_ACT_ERRNO(EPROTONOSUPPORT));
    }
    // A netlink family with upper bits is above AF_PACKET: the family test.
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfNetlink | kBit32, 3, 0}).ret ==
          SCMP_ACT_ERRNO(EAFNOSUPPORT));
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfPacket | kBit32, 3, 0}).ret ==
          SCMP_ACT_ERRNO(EAFNOSUPPORT));
    // Other families are not the netlink rules' business.
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfInet, 1, 0}).ret == SCMP_ACT_ALLOW);
    CHECK(Interpret(p, Arch::kX86_64, kSocket, {kAfInet, 2, 4}).ret == SCMP_ACT_ALLOW);
    // Every request in and around the socket ioctls, with and without
    // upper bits (the kernel reads 32).
    for (uint64_t request = 0x8800; request < 0x8d00; ++request) {
      for (const uint64_t high : {uint64_t{0}, kBit32, ~uint64_t{0} << 32}) {
        INFO("request 0x" << std::hex << (request | high));
        CHECK(Interpret(p, Arch::kX86_64, kIoctl, {3, request | high, 0}).ret ==
              ref.Ioctl(request));
      }
    }
    CHECK(Interpret(p, Arch::kX86_64, kIoctl, {3, kSiocgifconf, 0}).ret ==
          (granted ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM)));
    CHECK(Interpret(p, Arch::kX86_64, kIoctl, {3, kSiocgifaddr, 0}).ret ==
          (granted ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM)));
    // The socket's own ioctls stay open either way.
    for (const uint64_t own : {kSiocgstamp, kSiocoutqnsd, kFionread, uint64_t{0x80108906}}) {
      CHECK(Interpret(p, Arch::kX86_64, kIoctl, {3, own, 0}).ret == SCMP_ACT_ALLOW);
    }
    CHECK(Interpret(p, Arch::kX86_64, kIoctl, {3, 0x5412, 0}).ret == SCMP_ACT_ERRNO(EPERM));
  }
}

// mseal is past libseccomp 2.5.4's table. On the build host's architecture
// the filter carries the kernel's number; on another one libseccomp refuses
// a raw number, so an allow is left out (narrower, a warning) and a deny
// that the default would widen is an error naming the syscall and the arch.
TEST_CASE("a syscall libseccomp does not know: by number natively, fail-closed elsewhere") {
  constexpr uint32_t kMseal = 462, kX86Mseal = 462;
  auto native = CompileSeccomp("policy p { syscalls { default errno EACCES \n allow mseal } }");
  CHECK(native->Diagnostics().empty());
  CHECK(Run(*native, kMseal) == kAllow);
  CHECK(Run(*native, kGetppid) == Errno(EACCES));  // the positive control

  auto narrower = CompileWith(backend::SeccompBackend(),
                              "policy p { syscalls { arch x86_64, x86 \n default errno EACCES \n"
                              " allow mseal \n allow getpid } }");
  REQUIRE(narrower->result.ok);
  CHECK_THAT(narrower->Diagnostics(),
             Catch::Contains("warning[B3002]: libseccomp 2.5.4 does not know 'mseal' on x86; its "
                             "rule is left out of that filter"));
  CHECK(Run(*narrower, kMseal) == kAllow);
  CHECK(Run(*narrower, kX86Mseal, {}, Arch::kX86) == Errno(EACCES));
  CHECK(Run(*narrower, 20, {}, Arch::kX86) == kAllow);  // x86 getpid still allowed

  auto wider = CompileWith(backend::SeccompBackend(),
                           "policy p { syscalls { arch x86_64, x86 \n default allow \n"
                           " errno EPERM mseal } }");
  CHECK_FALSE(wider->result.ok);
  CHECK(wider->result.artifacts.empty());
  CHECK_THAT(wider->Diagnostics(),
             Catch::Contains("error[B3002]: libseccomp 2.5.4 does not know 'mseal' on x86 and "
                             "refuses its number there"));
  // The same deny for x86_64 alone compiles.
  auto alone = CompileSeccomp("policy p { syscalls { default allow \n errno EPERM mseal } }");
  CHECK(Run(*alone, kMseal) == Errno(EPERM));
}

}  // namespace ward::test
