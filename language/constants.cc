#include "language/constants.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>

namespace ward {
namespace {

#define WARD_CONSTANT(name) \
  { #name, static_cast < uint64_t>(name) }

const std::map<std::string_view, uint64_t>& Constants() {
  static const std::map<std::string_view, uint64_t> table = {
      WARD_CONSTANT(AF_UNSPEC),
      WARD_CONSTANT(AF_UNIX),
      WARD_CONSTANT(AF_LOCAL),
      WARD_CONSTANT(AF_INET),
      WARD_CONSTANT(AF_INET6),
      WARD_CONSTANT(AF_NETLINK),
      WARD_CONSTANT(AF_PACKET),
      WARD_CONSTANT(AF_KEY),
      WARD_CONSTANT(AF_BLUETOOTH),
      WARD_CONSTANT(AF_VSOCK),
      WARD_CONSTANT(AF_ALG),
      WARD_CONSTANT(AF_XDP),
      WARD_CONSTANT(AF_CAN),
      WARD_CONSTANT(AF_TIPC),
      WARD_CONSTANT(AF_RDS),
      WARD_CONSTANT(AF_APPLETALK),
      WARD_CONSTANT(AF_X25),
      WARD_CONSTANT(AF_AX25),
      WARD_CONSTANT(AF_IPX),
      WARD_CONSTANT(AF_NETROM),
      WARD_CONSTANT(AF_ROSE),
      WARD_CONSTANT(AF_QIPCRTR),
      WARD_CONSTANT(AF_SMC),
      WARD_CONSTANT(AF_MCTP),
      WARD_CONSTANT(SOCK_STREAM),
      WARD_CONSTANT(SOCK_DGRAM),
      WARD_CONSTANT(SOCK_RAW),
      WARD_CONSTANT(SOCK_RDM),
      WARD_CONSTANT(SOCK_SEQPACKET),
      WARD_CONSTANT(SOCK_PACKET),
      WARD_CONSTANT(SOCK_NONBLOCK),
      WARD_CONSTANT(SOCK_CLOEXEC),
      WARD_CONSTANT(IPPROTO_IP),
      WARD_CONSTANT(IPPROTO_ICMP),
      WARD_CONSTANT(IPPROTO_TCP),
      WARD_CONSTANT(IPPROTO_UDP),
      WARD_CONSTANT(IPPROTO_IPV6),
      WARD_CONSTANT(IPPROTO_ICMPV6),
      WARD_CONSTANT(IPPROTO_RAW),
      WARD_CONSTANT(IPPROTO_SCTP),
      WARD_CONSTANT(IPPROTO_UDPLITE),
      WARD_CONSTANT(IPPROTO_MPTCP),
      WARD_CONSTANT(CLONE_VM),
      WARD_CONSTANT(CLONE_FS),
      WARD_CONSTANT(CLONE_FILES),
      WARD_CONSTANT(CLONE_SIGHAND),
      WARD_CONSTANT(CLONE_PIDFD),
      WARD_CONSTANT(CLONE_PTRACE),
      WARD_CONSTANT(CLONE_VFORK),
      WARD_CONSTANT(CLONE_PARENT),
      WARD_CONSTANT(CLONE_THREAD),
      WARD_CONSTANT(CLONE_NEWNS),
      WARD_CONSTANT(CLONE_SYSVSEM),
      WARD_CONSTANT(CLONE_SETTLS),
      WARD_CONSTANT(CLONE_PARENT_SETTID),
      WARD_CONSTANT(CLONE_CHILD_CLEARTID),
      WARD_CONSTANT(CLONE_DETACHED),
      WARD_CONSTANT(CLONE_UNTRACED),
      WARD_CONSTANT(CLONE_CHILD_SETTID),
      WARD_CONSTANT(CLONE_NEWCGROUP),
      WARD_CONSTANT(CLONE_NEWUTS),
      WARD_CONSTANT(CLONE_NEWIPC),
      WARD_CONSTANT(CLONE_NEWUSER),
      WARD_CONSTANT(CLONE_NEWPID),
      WARD_CONSTANT(CLONE_NEWNET),
      WARD_CONSTANT(CLONE_IO),
      WARD_CONSTANT(CLONE_NEWTIME),
      WARD_CONSTANT(PROT_NONE),
      WARD_CONSTANT(PROT_READ),
      WARD_CONSTANT(PROT_WRITE),
      WARD_CONSTANT(PROT_EXEC),
      WARD_CONSTANT(PR_SET_PDEATHSIG),
      WARD_CONSTANT(PR_GET_PDEATHSIG),
      WARD_CONSTANT(PR_GET_DUMPABLE),
      WARD_CONSTANT(PR_SET_DUMPABLE),
      WARD_CONSTANT(PR_SET_NAME),
      WARD_CONSTANT(PR_GET_NAME),
      WARD_CONSTANT(PR_GET_SECCOMP),
      WARD_CONSTANT(PR_SET_SECCOMP),
      WARD_CONSTANT(PR_CAPBSET_READ),
      WARD_CONSTANT(PR_CAPBSET_DROP),
      WARD_CONSTANT(PR_SET_NO_NEW_PRIVS),
      WARD_CONSTANT(PR_GET_NO_NEW_PRIVS),
      WARD_CONSTANT(PR_SET_PTRACER),
      WARD_CONSTANT(PR_SET_MM),
      WARD_CONSTANT(PR_SET_CHILD_SUBREAPER),
      WARD_CONSTANT(PR_GET_CHILD_SUBREAPER),
      WARD_CONSTANT(PR_CAP_AMBIENT),
      WARD_CONSTANT(PR_SET_KEEPCAPS),
      WARD_CONSTANT(PR_GET_KEEPCAPS),
      WARD_CONSTANT(PR_SET_SECUREBITS),
      WARD_CONSTANT(PR_GET_SECUREBITS),
      WARD_CONSTANT(PR_SET_TIMERSLACK),
      WARD_CONSTANT(PR_SET_VMA),
      WARD_CONSTANT(MS_RDONLY),
      WARD_CONSTANT(MS_NOSUID),
      WARD_CONSTANT(MS_NODEV),
      WARD_CONSTANT(MS_NOEXEC),
      WARD_CONSTANT(MS_REMOUNT),
      WARD_CONSTANT(MS_BIND),
      WARD_CONSTANT(MS_MOVE),
      WARD_CONSTANT(MS_REC),
      WARD_CONSTANT(MS_PRIVATE),
      WARD_CONSTANT(MS_SLAVE),
      WARD_CONSTANT(MS_SHARED),
      WARD_CONSTANT(MSG_OOB),
      WARD_CONSTANT(MSG_PEEK),
      WARD_CONSTANT(MSG_DONTWAIT),
      WARD_CONSTANT(MSG_NOSIGNAL),
      WARD_CONSTANT(MSG_MORE),
      WARD_CONSTANT(MSG_ZEROCOPY),
      WARD_CONSTANT(F_DUPFD),
      WARD_CONSTANT(F_GETFD),
      WARD_CONSTANT(F_SETFD),
      WARD_CONSTANT(F_GETFL),
      WARD_CONSTANT(F_SETFL),
      WARD_CONSTANT(F_DUPFD_CLOEXEC),
      WARD_CONSTANT(F_SETOWN),
      WARD_CONSTANT(F_GETOWN),
      WARD_CONSTANT(F_SETSIG),
      WARD_CONSTANT(F_GETSIG),
      WARD_CONSTANT(F_ADD_SEALS),
      WARD_CONSTANT(F_GET_SEALS),
      WARD_CONSTANT(F_SETPIPE_SZ),
      WARD_CONSTANT(F_GETPIPE_SZ),
      WARD_CONSTANT(SIGHUP),
      WARD_CONSTANT(SIGINT),
      WARD_CONSTANT(SIGQUIT),
      WARD_CONSTANT(SIGILL),
      WARD_CONSTANT(SIGTRAP),
      WARD_CONSTANT(SIGABRT),
      WARD_CONSTANT(SIGBUS),
      WARD_CONSTANT(SIGFPE),
      WARD_CONSTANT(SIGKILL),
      WARD_CONSTANT(SIGUSR1),
      WARD_CONSTANT(SIGSEGV),
      WARD_CONSTANT(SIGUSR2),
      WARD_CONSTANT(SIGPIPE),
      WARD_CONSTANT(SIGALRM),
      WARD_CONSTANT(SIGTERM),
      WARD_CONSTANT(SIGCHLD),
      WARD_CONSTANT(SIGCONT),
      WARD_CONSTANT(SIGSTOP),
      WARD_CONSTANT(SIGTSTP),
      WARD_CONSTANT(SIGTTIN),
      WARD_CONSTANT(SIGTTOU),
      WARD_CONSTANT(SIGURG),
      WARD_CONSTANT(SIGXCPU),
      WARD_CONSTANT(SIGXFSZ),
      WARD_CONSTANT(SIGVTALRM),
      WARD_CONSTANT(SIGPROF),
      WARD_CONSTANT(SIGWINCH),
      WARD_CONSTANT(SIGIO),
      WARD_CONSTANT(SIGPWR),
      WARD_CONSTANT(SIGSYS),
      WARD_CONSTANT(PER_LINUX),
      WARD_CONSTANT(PER_LINUX32),
      WARD_CONSTANT(UNAME26),
      WARD_CONSTANT(ADDR_NO_RANDOMIZE),
      WARD_CONSTANT(READ_IMPLIES_EXEC),
      WARD_CONSTANT(ADDR_COMPAT_LAYOUT),
      WARD_CONSTANT(MMAP_PAGE_ZERO),
  };
  return table;
}

const std::map<std::string_view, int>& Capabilities() {
  static const std::map<std::string_view, int> table = {
      WARD_CONSTANT(CAP_CHOWN),
      WARD_CONSTANT(CAP_DAC_OVERRIDE),
      WARD_CONSTANT(CAP_DAC_READ_SEARCH),
      WARD_CONSTANT(CAP_FOWNER),
      WARD_CONSTANT(CAP_FSETID),
      WARD_CONSTANT(CAP_KILL),
      WARD_CONSTANT(CAP_SETGID),
      WARD_CONSTANT(CAP_SETUID),
      WARD_CONSTANT(CAP_SETPCAP),
      WARD_CONSTANT(CAP_LINUX_IMMUTABLE),
      WARD_CONSTANT(CAP_NET_BIND_SERVICE),
      WARD_CONSTANT(CAP_NET_BROADCAST),
      WARD_CONSTANT(CAP_NET_ADMIN),
      WARD_CONSTANT(CAP_NET_RAW),
      WARD_CONSTANT(CAP_IPC_LOCK),
      WARD_CONSTANT(CAP_IPC_OWNER),
      WARD_CONSTANT(CAP_SYS_MODULE),
      WARD_CONSTANT(CAP_SYS_RAWIO),
      WARD_CONSTANT(CAP_SYS_CHROOT),
      WARD_CONSTANT(CAP_SYS_PTRACE),
      WARD_CONSTANT(CAP_SYS_PACCT),
      WARD_CONSTANT(CAP_SYS_ADMIN),
      WARD_CONSTANT(CAP_SYS_BOOT),
      WARD_CONSTANT(CAP_SYS_NICE),
      WARD_CONSTANT(CAP_SYS_RESOURCE),
      WARD_CONSTANT(CAP_SYS_TIME),
      WARD_CONSTANT(CAP_SYS_TTY_CONFIG),
      WARD_CONSTANT(CAP_MKNOD),
      WARD_CONSTANT(CAP_LEASE),
      WARD_CONSTANT(CAP_AUDIT_WRITE),
      WARD_CONSTANT(CAP_AUDIT_CONTROL),
      WARD_CONSTANT(CAP_SETFCAP),
      WARD_CONSTANT(CAP_MAC_OVERRIDE),
      WARD_CONSTANT(CAP_MAC_ADMIN),
      WARD_CONSTANT(CAP_SYSLOG),
      WARD_CONSTANT(CAP_WAKE_ALARM),
      WARD_CONSTANT(CAP_BLOCK_SUSPEND),
      WARD_CONSTANT(CAP_AUDIT_READ),
      WARD_CONSTANT(CAP_PERFMON),
      WARD_CONSTANT(CAP_BPF),
      WARD_CONSTANT(CAP_CHECKPOINT_RESTORE),
  };
  return table;
}

#undef WARD_CONSTANT

template <typename Map>
std::vector<std::string> Keys(const Map& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.emplace_back(k);
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1), prev(b.size() + 1), prev2(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    prev2 = prev;
    prev = row;
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      // An adjacent transposition ("opne" for "open") costs one edit.
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], prev2[j - 2] + 1);
      }
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<uint64_t> LookupConstant(std::string_view name, Arch) {
  auto it = Constants().find(name);
  if (it == Constants().end()) return std::nullopt;
  return it->second;
}

std::optional<int> LookupErrno(std::string_view name) {
  static const std::map<std::string, int, std::less<>> table = [] {
    std::map<std::string, int, std::less<>> t;
    for (int e = 1; e < 4096; ++e) {
      // Aliases (EWOULDBLOCK for EAGAIN) share a number; the first name wins.
      if (const char* n = strerrorname_np(e)) t.emplace(n, e);
    }
    // glibc names each number once; these aliases are just as common.
    t.emplace("EWOULDBLOCK", EWOULDBLOCK);
    t.emplace("EDEADLOCK", EDEADLOCK);
    t.emplace("ENOTSUP", ENOTSUP);
    return t;
  }();
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::optional<int> LookupCapability(std::string_view name) {
  auto it = Capabilities().find(name);
  if (it == Capabilities().end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ConstantNames() { return Keys(Constants()); }
std::vector<std::string> CapabilityNames() { return Keys(Capabilities()); }

std::vector<std::string> ErrnoNames() {
  std::vector<std::string> out;
  for (int e = 1; e < 4096; ++e) {
    if (const char* n = strerrorname_np(e)) out.emplace_back(n);
  }
  return out;
}

std::vector<std::string> ClosestMatches(std::string_view name,
                                        const std::vector<std::string>& candidates) {
  constexpr size_t kMaxShown = 4;
  std::vector<std::string> best;
  size_t best_distance = std::max<size_t>(1, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    if (c.size() > name.size() + best_distance || name.size() > c.size() + best_distance) continue;
    size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best = {c};
      best_distance = d;
    } else if (!best.empty() && d == best_distance &&
               std::find(best.begin(), best.end(), c) == best.end()) {
      // (While none is found, best_distance is one past the largest distance
      // accepted, max(1, length / 3): a tie with it is no match. "1" is not
      // a typo of "to", "if" and "in".)
      best.push_back(c);
    }
  }
  if (best.empty() && name.size() >= 3) {
    for (const std::string& c : candidates) {
      if (c.size() > name.size() && c.compare(0, name.size(), name) == 0 &&
          std::find(best.begin(), best.end(), c) == best.end()) {
        best.push_back(c);
      }
    }
  }
  if (best.size() > kMaxShown) best.resize(kMaxShown);
  return best;
}

std::string ClosestMatch(std::string_view name, const std::vector<std::string>& candidates) {
  std::vector<std::string> all = ClosestMatches(name, candidates);
  return all.empty() ? "" : all.front();
}

std::string DidYouMean(const std::vector<std::string>& matches) {
  if (matches.empty()) return "";
  std::string out = "did you mean ";
  for (size_t i = 0; i < matches.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == matches.size() ? " or " : ", ") + ("'" + matches[i] + "'");
  }
  return out + "?";
}

const std::vector<std::string>& NetlinkProtocolNames() {
  static const std::vector<std::string> kNames = {
      "route",          "usersock", "firewall",      "sock_diag", "nflog",     "xfrm",   "selinux",
      "iscsi",          "audit",    "fib_lookup",    "connector", "netfilter", "ip6_fw", "dnrtmsg",
      "kobject_uevent", "generic",  "scsitransport", "ecryptfs",  "rdma",      "crypto", "smc",
      "inet_diag"};
  return kNames;
}

}  // namespace ward
