#include "enforcers/linux/host_probe.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "enforcers/linux/enforcer.h"
#include "enforcers/linux/landlock.h"
#ifdef WARD_HAVE_NFTABLES
#include "enforcers/linux/nftables.h"
#endif
#ifdef WARD_HAVE_EBPF
#include <bpf/libbpf.h>
#endif

namespace ward::enforce {
namespace {

std::string ReadFile(const std::string& path, bool* ok = nullptr) {
  std::ifstream in(path);
  if (ok) *ok = static_cast<bool>(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The kernel checks a filter's flags before it reads the program: a NULL
// program gives EFAULT for a known flag and EINVAL for an unknown one, and
// installs nothing.
bool SeccompFlagKnown(unsigned flag) {
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, nullptr) != 0 && errno == EFAULT;
}

SeccompProbe ProbeSeccomp() {
  SeccompProbe p;
  const int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  if (mode < 0) {
    p.error = errno == EINVAL ? "the kernel has no seccomp (CONFIG_SECCOMP)" : std::strerror(errno);
    return p;
  }
  p.mode = mode;
  p.filters = SeccompFlagKnown(0);
  if (!p.filters) p.error = "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)";
  p.api_level = static_cast<int>(seccomp_api_get());
  p.flag_log = SeccompFlagKnown(SECCOMP_FILTER_FLAG_LOG);
  p.flag_listener = SeccompFlagKnown(SECCOMP_FILTER_FLAG_NEW_LISTENER);
  p.actions = Words(ReadFile("/proc/sys/kernel/seccomp/actions_avail"));
  return p;
}

CgroupProbe ProbeCgroup() {
  CgroupProbe p;
  p.mount = CgroupV2Mount(&p.error);
  for (const MountEntry& m : MountTable()) {
    if (m.type != "cgroup") continue;
    p.hybrid = true;
    std::istringstream opts(m.options);
    for (std::string o; std::getline(opts, o, ',');) {
      for (const char* c : {"cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "io", "devices",
                            "freezer", "hugetlb", "net_cls", "net_prio", "perf_event", "rdma"}) {
        if (o == c) p.v1.push_back(o);
      }
    }
  }
  if (p.mount.empty()) return p;
  p.controllers = Words(ReadFile(p.mount + "/cgroup.controllers"));
  p.subtree = Words(ReadFile(p.mount + "/cgroup.subtree_control"));
  p.writable = access(p.mount.c_str(), W_OK) == 0;
  return p;
}

// The kernel's build configuration, when it exposes it (CONFIG_IKCONFIG_PROC).
std::string KernelConfig() {
  gzFile f = gzopen("/proc/config.gz", "rb");
  if (!f) return "";
  std::string text;
  char buf[65536];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

bool ListHas(const std::string& list, const std::string& item) {
  std::istringstream in(list);
  for (std::string w; std::getline(in, w, ',');) {
    if (w == item) return true;
  }
  return false;
}

// Which LSMs run: /sys/kernel/security/lsm says, where securityfs is
// mounted (never mounted here). Else the kernel's choice is inferred from
// its command line (lsm=) and its configuration (CONFIG_LSM).
void ProbeBpfLsm(BpfProbe* p) {
  bool ok = false;
  const std::string lsm = ReadFile("/sys/kernel/security/lsm", &ok);
  if (ok) {
    const std::vector<std::string> words = Words(lsm);
    p->lsm = !words.empty() && ListHas(words[0], "bpf") ? "active" : "inactive";
    p->lsm_how = "/sys/kernel/security/lsm";
    return;
  }
  const std::string config = KernelConfig();
  std::string cmdline_lsm;
  bool cmdline_has = false;
  for (const std::string& w : Words(ReadFile("/proc/cmdline"))) {
    if (w == "--") break;
    if (w.rfind("lsm=", 0) == 0) {
      cmdline_has = true;
      cmdline_lsm = w.substr(4);
    }
  }
  if (config.empty()) {
    p->lsm_how = "/sys/kernel/security is not mounted and /proc/config.gz is absent";
    return;
  }
  if (config.find("\nCONFIG_BPF_LSM=y\n") == std::string::npos) {
    p->lsm = "inactive";
    p->lsm_how = "the kernel is built without CONFIG_BPF_LSM";
    return;
  }
  if (cmdline_has) {
    p->lsm = ListHas(cmdline_lsm, "bpf") ? "active" : "inactive";
    p->lsm_how = "inferred: lsm= on the kernel command line; /sys/kernel/security not mounted";
    return;
  }
  const size_t at = config.find("\nCONFIG_LSM=\"");
  if (at == std::string::npos) {
    p->lsm_how = "/proc/config.gz has no CONFIG_LSM";
    return;
  }
  const size_t start = at + 13;
  const std::string list = config.substr(start, config.find('"', start) - start);
  p->lsm = ListHas(list, "bpf") ? "active" : "inactive";
  p->lsm_how = std::string("inferred: CONFIG_LSM ") + (p->lsm == "active" ? "lists" : "lacks") +
               " bpf, no lsm= on the kernel command line; /sys/kernel/security not mounted";
}

BpfProbe ProbeBpf() {
  BpfProbe p;
#ifdef WARD_HAVE_EBPF
  p.built = true;
  // Without the capability the kernel refuses every load (EPERM), whatever
  // it supports: not worth asking.
  if (!HasCapability(CAP_BPF) && !HasCapability(CAP_SYS_ADMIN)) {
    p.cgroup_sock_addr = p.cgroup_sock = p.cgroup_skb = -EPERM;
    p.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
    ProbeBpfLsm(&p);
    return p;
  }
  p.cgroup_sock_addr = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, nullptr);
  p.cgroup_sock = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK, nullptr);
  p.cgroup_skb = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, nullptr);
#endif
  p.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  ProbeBpfLsm(&p);
  return p;
}

NftablesProbe ProbeNftables() {
  NftablesProbe p;
#ifdef WARD_HAVE_NFTABLES
  p.built = true;
  if (!HasCapability(CAP_NET_ADMIN)) {
    // (libnftables would say so on stderr itself.)
    p.error = "listing needs CAP_NET_ADMIN";
    return p;
  }
  std::string output;
  p.lists = RunNft("list tables", false, false, &output, &p.error);
#endif
  return p;
}

// AUDIT_GET on a netlink socket of its own: a read of the status (needs
// CAP_AUDIT_CONTROL), never AUDIT_SET.
void ProbeAuditStatus(AuditProbe* p) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (fd < 0) {
    p->status_error = std::string("socket: ") + std::strerror(errno);
    return;
  }
  timeval timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  nlmsghdr request{};
  request.nlmsg_len = NLMSG_LENGTH(0);
  request.nlmsg_type = AUDIT_GET;
  request.nlmsg_flags = NLM_F_REQUEST;
  request.nlmsg_seq = 1;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, &request, request.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof kernel) < 0) {
    p->status_error = std::string("AUDIT_GET: ") + std::strerror(errno);
    close(fd);
    return;
  }
  alignas(nlmsghdr) char buf[8192];
  for (int tries = 0; tries < 4; ++tries) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      p->status_error = std::string("AUDIT_GET: ") + std::strerror(errno);
      break;
    }
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (!NLMSG_OK(h, static_cast<unsigned>(n))) continue;
    if (h->nlmsg_type == NLMSG_ERROR) {
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (e->error == 0) continue;
      p->status_error = std::string("AUDIT_GET: ") + std::strerror(-e->error);
      break;
    }
    if (h->nlmsg_type == AUDIT_GET && h->nlmsg_len >= NLMSG_LENGTH(sizeof(uint32_t) * 5)) {
      audit_status status{};
      std::memcpy(&status, NLMSG_DATA(h),
                  std::min<size_t>(sizeof status, h->nlmsg_len - NLMSG_LENGTH(0)));
      p->enabled = status.enabled != 0;
      p->daemon_pid = status.pid;
      break;
    }
  }
  close(fd);
}

AuditProbe ProbeAudit() {
  AuditProbe p;
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (fd < 0) {
    p.readlog_error = std::string("socket: ") + std::strerror(errno);
  } else {
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
    p.readlog = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (!p.readlog) p.readlog_error = std::string("bind: ") + std::strerror(errno);
    close(fd);
  }
  ProbeAuditStatus(&p);
  return p;
}

UsernsProbe ProbeUserns() {
  UsernsProbe p;
  bool ok = false;
  const std::string max = ReadFile("/proc/sys/user/max_user_namespaces", &ok);
  if (ok) p.max = std::strtol(max.c_str(), nullptr, 10);
  // In a child: the caller's own namespaces stay as they are.
  const pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    p.error = "fork failed";
    return p;
  }
  p.unshare = WEXITSTATUS(status) == 0;
  if (!p.unshare) p.error = std::strerror(WEXITSTATUS(status));
  return p;
}

PrivilegeProbe ProbePrivileges() {
  PrivilegeProbe p;
  p.uid = getuid();
  p.euid = geteuid();
  // The capabilities ward's layers use: cgroups, namespaces and Landlock
  // without no_new_privs (SYS_ADMIN), nftables (NET_ADMIN), BPF programs
  // (BPF, PERFMON), the read-only audit group (AUDIT_READ), the status of
  // audit (AUDIT_CONTROL), the run's user and capabilities (SETUID, SETGID,
  // SETPCAP).
  const std::pair<int, const char*> caps[] = {{CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
                                              {CAP_NET_ADMIN, "CAP_NET_ADMIN"},
                                              {CAP_BPF, "CAP_BPF"},
                                              {CAP_PERFMON, "CAP_PERFMON"},
                                              {CAP_AUDIT_READ, "CAP_AUDIT_READ"},
                                              {CAP_AUDIT_CONTROL, "CAP_AUDIT_CONTROL"},
                                              {CAP_SETUID, "CAP_SETUID"},
                                              {CAP_SETGID, "CAP_SETGID"},
                                              {CAP_SETPCAP, "CAP_SETPCAP"}};
  for (const auto& [cap, name] : caps) {
    (HasCapability(cap) ? p.capabilities : p.lacking).push_back(name);
  }
  return p;
}

}  // namespace

HostProbe ProbeHost() {
  HostProbe h;
  utsname u{};
  if (uname(&u) == 0) {
    h.kernel = u.release;
    h.machine = u.machine;
  }
  h.landlock_abi = LandlockAbi(&h.landlock_error);
  h.seccomp = ProbeSeccomp();
  h.cgroup = ProbeCgroup();
  h.bpf = ProbeBpf();
  h.nftables = ProbeNftables();
  h.audit = ProbeAudit();
  h.userns = ProbeUserns();
  h.privileges = ProbePrivileges();
  return h;
}

}  // namespace ward::enforce
