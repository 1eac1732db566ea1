#include "backends/seccomp/filter.h"

#include <linux/filter.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace ward::backend::seccomp {
namespace {

// Actions libseccomp refuses, given to it as stand-ins (Ward never emits
// TRACE) whose RETs become the real action after export: the default in
// the one rule that must have it (a multiplexer's, below; libseccomp
// refuses a rule equal to the default), and errno 4095, which the kernel
// returns (MAX_ERRNO) but libseccomp 2.5 refuses.
constexpr uint32_t kDefaultStandIn = SCMP_ACT_TRACE(0xffff);
constexpr uint32_t kErrno4095StandIn = SCMP_ACT_TRACE(0xfffe);
constexpr uint32_t kErrno4095 = SCMP_ACT_ERRNO(4095);

uint32_t LibAction(uint32_t action) { return action == kErrno4095 ? kErrno4095StandIn : action; }

std::string PfcText(uint32_t stand_in) {
  return "action TRACE(" + std::to_string(stand_in & 0xffff) + ");";
}

// libseccomp checks actions and attributes against the running kernel
// unless an API level is set; level 6 (all of 2.5.4's) keeps the output
// independent of the build host. Loading is the enforcer's job, not
// libseccomp's, so nothing relies on the probe.
void FixApiLevel() {
  static std::once_flag once;
  std::call_once(once, [] { seccomp_api_set(6); });
}

bool BigEndian(Arch arch) { return arch == Arch::kS390x; }

// libseccomp's rule API takes a syscall in the build host's numbering (a
// pseudo-number where the host lacks it) and translates it to each filter's
// architecture by name; a target-architecture number would be misread.
int ApiNumber(const std::string& name) { return seccomp_syscall_resolve_name(name.c_str()); }

uint32_t Read(const std::string& bytes, size_t at, int size, bool big) {
  uint32_t v = 0;
  for (int i = 0; i < size; ++i) {
    const uint32_t byte = static_cast<unsigned char>(bytes[at + i]);
    v |= byte << (8 * (big ? size - 1 - i : i));
  }
  return v;
}

void Write32(std::string& bytes, size_t at, uint32_t v, bool big) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(v >> (8 * (big ? 3 - i : i)));
}

// Reads what libseccomp exports through a memory file (2.5 exports to a
// file descriptor only).
bool Export(scmp_filter_ctx ctx, bool pfc, std::string* out, int* error) {
  const int fd = memfd_create("ward-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return false;
  }
  const int rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
  bool ok = rc == 0 && lseek(fd, 0, SEEK_SET) == 0;
  *error = rc < 0 ? -rc : errno;
  char buf[8192];
  for (ssize_t n; ok && (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      *error = errno;
      ok = false;
      break;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ok;
}

class Builder {
 public:
  Builder(const ir::SyscallRules& rules, Arch arch, DiagnosticSink& sink)
      : rules_(rules), arch_(arch), sink_(sink), default_(RetValue(rules.default_action)) {
    auto per_arch = rules.syscalls.find(arch);
    if (per_arch != rules.syscalls.end()) syscalls_ = &per_arch->second;
  }

  ~Builder() {
    if (ctx_) seccomp_release(ctx_);
  }

  bool Run(Filter* out) {
    FixApiLevel();
    ctx_ = seccomp_init(LibAction(default_));
    if (!ctx_) return Fail({}, "libseccomp refused the default action");
    if (!SetUp() || !AddMultiplexers() || !AddRegions()) return false;
    int error = 0;
    if (!Export(ctx_, false, &out->bpf, &error) || !Export(ctx_, true, &out->pfc, &error)) {
      return Fail({}, "libseccomp could not export the filter: " + std::string(strerror(error)));
    }
    return Finish(out);
  }

 private:
  bool SetUp() {
    const uint32_t token = AuditArch(arch_);
    int rc = 0;
    // One architecture per filter: every other one, x32 included (libseccomp
    // checks nr >= 0x40000000 on x86_64), takes the bad-arch action, which
    // kills the process rather than libseccomp's default thread.
    if (token != seccomp_arch_native()) {
      // Native first: one filter holds architectures of one byte order only.
      rc = seccomp_arch_remove(ctx_, SCMP_ARCH_NATIVE);
      if (rc == 0) rc = seccomp_arch_add(ctx_, token);
    }
    if (rc == 0) rc = seccomp_attr_set(ctx_, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    // A binary tree over syscall numbers: ~10 comparisons to reach any of
    // ~350 syscalls instead of a linear scan.
    if (rc == 0) rc = seccomp_attr_set(ctx_, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    // The real errno when an export write fails, not -ECANCELED.
    if (rc == 0) rc = seccomp_attr_set(ctx_, SCMP_FLTATR_API_SYSRAWRC, 1);
    if (rc != 0)
      return Fail({}, "libseccomp: cannot set up the filter: " + std::string(strerror(-rc)));
    return true;
  }

  const std::vector<ir::Region>* RegionsOf(const std::string& name) const {
    if (!syscalls_) return nullptr;
    auto it = syscalls_->find(name);
    return it == syscalls_->end() ? nullptr : &it->second;
  }

  // libseccomp files a rule on a socket or SysV IPC call (socket, semget,
  // ...) on x86, ppc64le and s390x under the multiplexer too, as
  // `socketcall(SYS_SOCKET, ...)`, dropping the rule's arg0 test: `allow
  // socket if arg0 == AF_INET` would allow socketcall(SYS_SOCKET) for any
  // family. An unconditional rule for a syscall overrides every conditional
  // one libseccomp holds for it, before or after, so the multiplexer gets
  // its own (unconditional, see the IR's closure) action as a rule of its
  // own, even when that is the default.
  bool AddMultiplexers() {
    for (ir::Bypass bypass : {ir::Bypass::kSocketcall, ir::Bypass::kIpc}) {
      const std::string mux(ir::BypassName(bypass));
      if (!SyscallNumber(arch_, mux)) continue;
      bool filed_under_mux = false;
      for (const std::string& call : ir::MultiplexedCalls(bypass)) {
        filed_under_mux |= SyscallNumber(arch_, call) && RegionsOf(call);
      }
      if (!filed_under_mux) continue;
      const std::vector<ir::Region>* regions = RegionsOf(mux);
      if (regions && (regions->size() != 1 || !regions->front().tests.empty())) {
        return Fail(regions->front().rules.empty() ? Span{} : regions->front().rules.front(),
                    "on " + std::string(ArchName(arch_)) + ", libseccomp merges the rules of " +
                        "the calls '" + mux + "' multiplexes into its own, so its arguments " +
                        "cannot be filtered there");
      }
      uint32_t action = regions ? RetValue(regions->front().action) : default_;
      action = action == default_ ? kDefaultStandIn : LibAction(action);
      const int rc = seccomp_rule_add_array(ctx_, action, ApiNumber(mux), 0, nullptr);
      if (rc != 0) return Refused(mux, regions ? &regions->front() : nullptr, rc);
      added_.push_back(mux);
    }
    return true;
  }

  // One rule per region; regions with the default action are left to the
  // default (libseccomp refuses them). The regions are disjoint, so the
  // order libseccomp tests them in (by argument, then value, whatever the
  // order they come in) cannot change a verdict.
  bool AddRegions() {
    if (!syscalls_) return true;
    for (const auto& [name, regions] : *syscalls_) {
      if (std::find(added_.begin(), added_.end(), name) != added_.end()) continue;
      int nr = ApiNumber(name);
      const bool by_number = !LibseccompKnows(arch_, name);
      if (by_number) {
        // Newer than libseccomp's table: it takes the kernel's number as
        // is on the build host's own architecture, and refuses a raw
        // number (EFAULT) on any other, where it cannot translate one.
        const std::optional<int> kernel_nr = SyscallNumber(arch_, name);
        if (!kernel_nr) continue;  // not a syscall of this architecture
        if (AuditArch(arch_) != seccomp_arch_native()) {
          if (!LeaveOut(name, regions)) return false;
          continue;
        }
        nr = *kernel_nr;
      }
      for (const ir::Region& r : regions) {
        const uint32_t action = RetValue(r.action);
        if (action == default_) continue;
        std::vector<scmp_arg_cmp> cmps;
        for (const ir::ArgTest& t : r.tests) {
          cmps.push_back({static_cast<unsigned>(t.arg), SCMP_CMP_MASKED_EQ, t.mask, t.value});
        }
        const int rc = seccomp_rule_add_array(ctx_, LibAction(action), nr,
                                              static_cast<unsigned>(cmps.size()), cmps.data());
        if (rc != 0) return Refused(name, &r, rc);
      }
    }
    return true;
  }

  // How hard an action refuses: leaving a rule out gives its syscall the
  // default, which is narrower only when the default refuses at least as
  // hard as the rule.
  static int Strictness(uint32_t action) {
    switch (action & 0xffff0000U) {  // the action, without its data
      case SCMP_ACT_ALLOW:
        return 0;
      case SCMP_ACT_LOG:
        return 1;
      case SCMP_ACT_NOTIFY:
        return 2;
      case SCMP_ACT_KILL_THREAD:
        return 4;
      case SCMP_ACT_KILL_PROCESS:
        return 5;
      default:  // errno, trap
        return 3;
    }
  }

  // A syscall libseccomp cannot emit on this (not the build host's)
  // architecture. Leaving out its rules is narrower when each one permits
  // more than the default (an allow under a kill default): that is a
  // warning. A rule that refuses more than the default (a deny under an
  // allow default) would be widened by its omission: that is an error.
  bool LeaveOut(const std::string& name, const std::vector<ir::Region>& regions) {
    const std::string where = "'" + name + "' on " + std::string(ArchName(arch_));
    const ir::Region* first = nullptr;
    for (const ir::Region& r : regions) {
      const uint32_t action = RetValue(r.action);
      if (action == default_) continue;
      const Span span = r.rules.empty() ? rules_.default_span : r.rules.front();
      if (Strictness(action) > Strictness(default_)) {
        return Fail(span, "libseccomp " + LibVersion() + " does not know " + where +
                              " and refuses its number there (only the build host's " +
                              "architecture takes raw numbers); leaving the rule out " +
                              "would give it the weaker default action");
      }
      if (!first) first = &r;
    }
    if (first) {
      sink_.Warning(Code::kCannotExpress,
                    first->rules.empty() ? rules_.default_span : first->rules.front(),
                    "libseccomp " + LibVersion() + " does not know " + where +
                        "; its rule is left out of that filter, so the default action " +
                        "applies there (narrower)");
    }
    return true;
  }

  static std::string LibVersion() {
    const scmp_version* v = seccomp_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->micro);
  }

  // The stand-ins become the actions they stand for; the size is checked.
  bool Finish(Filter* out) {
    const bool big = BigEndian(arch_);
    if (out->bpf.empty() || out->bpf.size() % sizeof(sock_filter) != 0) {
      return Fail({}, "libseccomp exported a malformed filter");
    }
    const std::pair<uint32_t, uint32_t> stand_ins[] = {{kDefaultStandIn, default_},
                                                       {kErrno4095StandIn, kErrno4095}};
    const std::set<uint32_t> expected = ExpectedReturns();
    const size_t count = out->bpf.size() / sizeof(sock_filter);
    for (size_t i = 0; i < count; ++i) {
      const size_t at = i * sizeof(sock_filter);
      if (Read(out->bpf, at, 2, big) != (BPF_RET | BPF_K)) continue;
      uint32_t k = Read(out->bpf, at + 4, 4, big);
      // libseccomp 2.5.4 (and 2.6.1) converts the byte order twice in the
      // RETs it copies next to far jumps (gen_bpf.c,
      // _gen_bpf_build_jmp_ret), so a big-endian filter built on a
      // little-endian host (s390x here) can hold 0x80 for 0x80000000. No
      // two distinct return values are each other's byte swap.
      if (!expected.count(k) && expected.count(__builtin_bswap32(k))) k = __builtin_bswap32(k);
      if (!expected.count(k)) {
        return Fail({}, "libseccomp emitted an unexpected return value 0x" + Hex(k) + " for " +
                            std::string(ArchName(arch_)));
      }
      for (const auto& [stand_in, real] : stand_ins) {
        if (k == stand_in) k = real;
      }
      Write32(out->bpf, at + 4, k, big);
    }
    PatchPfc(&out->pfc);
    if (count > kMaxInstructions) {
      return Fail(rules_.default_span, "the filter for " + std::string(ArchName(arch_)) + " has " +
                                           std::to_string(count) +
                                           " instructions; the kernel loads at most " +
                                           std::to_string(kMaxInstructions));
    }
    return true;
  }

  // Every value a RET of this filter may hold, stand-ins included.
  std::set<uint32_t> ExpectedReturns() const {
    std::set<uint32_t> out = {default_, LibAction(default_), SCMP_ACT_KILL_PROCESS,
                              kDefaultStandIn};
    if (syscalls_) {
      for (const auto& [name, regions] : *syscalls_) {
        for (const ir::Region& r : regions) {
          out.insert(RetValue(r.action));
          out.insert(LibAction(RetValue(r.action)));
        }
      }
    }
    return out;
  }

  static std::string Hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", v);
    return buf;
  }

  // The dump says what the program does: the default's stand-in becomes the
  // default's line (itself possibly errno 4095's stand-in, replaced next).
  static void PatchPfc(std::string* pfc) {
    static const std::string kMarker = "# default action\n";
    const size_t at = pfc->rfind(kMarker);
    if (at == std::string::npos) return;
    const size_t begin = pfc->find("action ", at);
    const std::string default_line = pfc->substr(begin, pfc->find('\n', begin) - begin);
    Replace(pfc, PfcText(kDefaultStandIn), default_line);
    Replace(pfc, PfcText(kErrno4095StandIn), "action ERRNO(4095);");
  }

  static void Replace(std::string* text, const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = text->find(from, p)) != std::string::npos; p += to.size()) {
      text->replace(p, from.size(), to);
    }
  }

  bool Refused(const std::string& name, const ir::Region* region, int rc) {
    const Span span =
        region && !region->rules.empty() ? region->rules.front() : rules_.default_span;
    return Fail(span, "libseccomp refused the rule for '" + name + "' on " +
                          std::string(ArchName(arch_)) + ": " + strerror(-rc));
  }

  bool Fail(Span span, const std::string& message) {
    sink_.Error(Code::kCannotExpress, span, message);
    return false;
  }

  const ir::SyscallRules& rules_;
  const Arch arch_;
  DiagnosticSink& sink_;
  const uint32_t default_;
  const std::map<std::string, std::vector<ir::Region>>* syscalls_ = nullptr;
  scmp_filter_ctx ctx_ = nullptr;
  std::vector<std::string> added_;  // multiplexers given their rule first
};

// The socket ioctls ward run's guard refuses without `allow netlink route`
// (linux/sockios.h, linux/wireless.h), inclusive.
constexpr std::pair<uint32_t, uint32_t> kNetworkIoctls[] = {
    {0x8908, 0x894a}, {0x894c, 0x89ff}, {0x8b00, 0x8bff}};

// socket(AF_NETLINK, type, protocol): NETLINK_ROUTE passes when granted,
// NETLINK_NETFILTER is refused with EPERM (the host's firewall, even under
// a policy that keeps CAP_NET_ADMIN), every other protocol with
// EPROTONOSUPPORT, as from a kernel that lacks it: NETLINK_SOCK_DIAG (the
// host's sockets, as ss lists them), NETLINK_GENERIC (nl80211, ethtool,
// tcp_metrics: the host's devices and peers), NETLINK_USERSOCK (messages
// to the host's processes), NETLINK_KOBJECT_UEVENT, NETLINK_XFRM,
// NETLINK_AUDIT (libaudit's callers take EPROTONOSUPPORT as "no audit in
// this kernel" and go on; EPERM would make them abort) and the rest. The
// family is compared on all 64 bits (upper bits set: above AF_PACKET,
// refused before), the protocol (an int) on the low 32 bits; anything
// above the kernel's last protocol (31) on all 64, so a protocol with
// upper bits set is refused whatever the low ones, NETLINK_ROUTE and
// NETLINK_NETFILTER included (no C library sets them).
template <typename Add>
void AddNetlinkRules(const GuardOptions& options, const Add& add2) {
  constexpr uint32_t kLastProtocol = 31;  // MAX_LINKS - 1
  const scmp_arg_cmp netlink = SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0);
  // All 64 bits, so that it and the last rule never overlap.
  add2(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), netlink,
       SCMP_A2(SCMP_CMP_EQ, NETLINK_NETFILTER, 0));
  const uint32_t first = options.netlink_route ? NETLINK_ROUTE + 1 : NETLINK_ROUTE;
  for (const auto& [lo, hi] : {std::pair<uint32_t, uint32_t>{first, NETLINK_NETFILTER - 1},
                               {NETLINK_NETFILTER + 1, kLastProtocol}}) {
    for (const auto& [value, mask] : AlignedBlocks(lo, hi)) {
      add2(SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), netlink,
           SCMP_A2(SCMP_CMP_MASKED_EQ, mask, value));
    }
  }
  add2(SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), netlink,
       SCMP_A2(SCMP_CMP_GT, kLastProtocol, 0));
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> AlignedBlocks(uint32_t lo, uint32_t hi) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint64_t at = lo; at <= hi;) {
    uint64_t size = 1;
    // The largest block aligned at `at` that ends within [lo, hi].
    while (size < (1ULL << 32) && at % (size * 2) == 0 && at + size * 2 - 1 <= hi) size *= 2;
    out.push_back({static_cast<uint32_t>(at), static_cast<uint32_t>(~(size - 1))});
    at += size;
  }
  return out;
}

uint32_t AuditArch(Arch arch) {
  return seccomp_arch_resolve_name(std::string(ArchName(arch)).c_str());
}

uint32_t RetValue(const ir::SysAction& action) {
  switch (action.kind) {
    case ir::SysAction::Kind::kAllow:
      return SCMP_ACT_ALLOW;
    case ir::SysAction::Kind::kLog:
      return SCMP_ACT_LOG;
    case ir::SysAction::Kind::kNotify:
      return SCMP_ACT_NOTIFY;
    case ir::SysAction::Kind::kErrno:
      return SCMP_ACT_ERRNO(static_cast<uint32_t>(action.errno_value));
    case ir::SysAction::Kind::kTrap:
      return SCMP_ACT_TRAP;
    case ir::SysAction::Kind::kKillThread:
      return SCMP_ACT_KILL_THREAD;
    case ir::SysAction::Kind::kKill:
      return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

bool BuildTerminalGuard(const GuardOptions& options, std::string* bpf, std::string* error) {
  FixApiLevel();
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    *error = "libseccomp refused the default action";
    return false;
  }
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  auto add = [&](uint32_t action, int nr, unsigned count, scmp_arg_cmp cmp) {
    if (rc == 0)
      rc = count ? seccomp_rule_add(ctx, action, nr, 1, cmp) : seccomp_rule_add(ctx, action, nr, 0);
  };
  auto add2 = [&](uint32_t action, int nr, scmp_arg_cmp a, scmp_arg_cmp b) {
    if (rc == 0) rc = seccomp_rule_add(ctx, action, nr, 2, a, b);
  };
  // ioctl's command and the modes are unsigned ints: the kernel ignores the
  // upper half.
  for (const unsigned long cmd : {TIOCSTI, TIOCLINUX}) {
    add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, cmd));
  }
  // clone3 takes its flags in memory seccomp cannot read, CLONE_INTO_CGROUP
  // among them (a way out of the run's cgroup); ENOSYS makes libc fall back
  // to clone, whose flags the policy's filter sees.
  add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, {});
  // The network section grants IP and unix sockets only, and the network
  // layers (eBPF's cgroup hooks, nftables) see nothing else: any other
  // family (AF_VSOCK to the hypervisor's host, TIPC, RDS, CAN, Bluetooth,
  // ...) would be a way out no rule decides. Refused as the kernel refuses
  // a family it lacks. The family is an int: the kernel reads the lower 32
  // bits, so each value is compared masked, and anything above netlink (16)
  // is refused whatever its upper bits (packet, 17, with EPERM below).
  for (const int nr : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
    for (unsigned family = 0; family < AF_NETLINK; ++family) {
      if (family == AF_UNIX || family == AF_INET || family == AF_INET6) continue;
      add(SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, family));
    }
    if (nr == SCMP_SYS(socketpair)) {
      add(SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, SCMP_A0(SCMP_CMP_GT, AF_NETLINK, 0));
    }
  }
  add(SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_GT, AF_PACKET, 0));
  // Packet sockets see and forge every frame of the host's interfaces; the
  // language never grants them. (Compared on all 64 bits, as netlink
  // below: with upper bits set the family is above AF_PACKET, refused by
  // the rule above, so no two rules overlap.)
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET, 0));
  AddNetlinkRules(options, add2);
  // The socket ioctls of the interface, route, ARP and device families
  // (SIOCGIFCONF, SIOCGIFADDR, SIOCGIFHWADDR, SIOCGARP, SIOCETHTOOL, ...,
  // and their setters) work on any socket, unix ones included, and read
  // the host's network as NETLINK_ROUTE does: refused with it. Left open:
  // the socket's own (0x8901-0x8907: owner, SIOCATMARK, SIOCGSTAMP) and
  // SIOCOUTQNSD (0x894b).
  if (!options.netlink_route) {
    for (const auto& [lo, hi] : kNetworkIoctls) {
      for (const auto& [value, mask] : AlignedBlocks(lo, hi)) {
        add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, mask, value));
      }
    }
  }
  // A setuid or setgid bit set by the workload (root in the host's user
  // namespace) on a file it can write would hand root to whoever runs the
  // file later, outside the sandbox.
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(chmod), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 06000, 06000));
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(chmod), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 06000, 04000));
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(chmod), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 06000, 02000));
  for (int nr : {SCMP_SYS(fchmod)}) {
    for (unsigned v : {06000u, 04000u, 02000u}) {
      add(SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 06000, v));
    }
  }
  // fchmodat2 (Linux 6.6) is newer than libseccomp 2.5.4: by number, which
  // every architecture shares for syscalls added since 5.1.
  int fchmodat2 = seccomp_syscall_resolve_name("fchmodat2");
  if (fchmodat2 == __NR_SCMP_ERROR) fchmodat2 = 452;
  for (int nr : {SCMP_SYS(fchmodat), fchmodat2}) {
    for (unsigned v : {06000u, 04000u, 02000u}) {
      add(SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, 06000, v));
    }
  }
  int export_error = 0;
  const bool ok = rc == 0 && Export(ctx, false, bpf, &export_error);
  seccomp_release(ctx);
  if (!ok) {
    *error = std::string("libseccomp: ") + strerror(rc != 0 ? -rc : export_error);
    return false;
  }
  return true;
}

bool BuildFilter(const ir::SyscallRules& rules, Arch arch, Filter* out, DiagnosticSink& sink) {
  Builder builder(rules, arch, sink);
  return builder.Run(out);
}

}  // namespace ward::backend::seccomp
