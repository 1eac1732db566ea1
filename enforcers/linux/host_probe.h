// What this host's kernel offers each layer of `ward run` and `ward apply`,
// read without changing anything (`ward doctor`, cli/doctor.cc): no mount,
// no sysctl, no program left loaded, no audit setting touched. Each probe
// asks the kernel the way the enforcer itself will (the Landlock ABI call,
// the mount table, libbpf's program-type probes, a libnftables listing).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ward::enforce {

struct SeccompProbe {
  bool filters = false;              // prctl(PR_GET_SECCOMP) answers: CONFIG_SECCOMP_FILTER
  int mode = 0;                      // this process's own mode (2: already filtered)
  int api_level = 0;                 // libseccomp's seccomp_api_get()
  bool flag_log = false;             // SECCOMP_FILTER_FLAG_LOG known to the kernel
  bool flag_listener = false;        // SECCOMP_FILTER_FLAG_NEW_LISTENER (notify rules)
  std::vector<std::string> actions;  // /proc/sys/kernel/seccomp/actions_avail
  std::string error;
};

struct CgroupProbe {
  std::string mount;                     // the cgroup2 mount, "" when none
  bool hybrid = false;                   // v1 hierarchies mounted beside it
  std::vector<std::string> controllers;  // the v2 root's cgroup.controllers
  std::vector<std::string> subtree;      // its cgroup.subtree_control
  std::vector<std::string> v1;           // controllers of the v1 hierarchies
  bool writable = false;                 // the v2 root accepts a new directory (access W_OK)
  std::string error;
};

struct BpfProbe {
  bool built = false;  // this ward has the eBPF enforcer
  // libbpf_probe_bpf_prog_type: 1 supported, 0 not, <0 -errno (EPERM).
  int cgroup_sock_addr = 0, cgroup_sock = 0, cgroup_skb = 0;
  bool btf = false;  // /sys/kernel/btf/vmlinux readable
  // BPF LSM: "active", "inactive", or "unknown" with `lsm_how` saying why.
  std::string lsm = "unknown";
  std::string lsm_how;
};

struct NftablesProbe {
  bool built = false;
  bool lists = false;  // `list tables` in this network namespace succeeded
  std::string error;
};

struct AuditProbe {
  bool readlog = false;  // bound to the read-only multicast group
  std::string readlog_error;
  std::optional<bool> enabled;  // AUDIT_GET: audit enabled host-wide
  uint32_t daemon_pid = 0;      // a registered audit daemon, 0: none
  std::string status_error;
};

struct UsernsProbe {
  long max = -1;         // /proc/sys/user/max_user_namespaces
  bool unshare = false;  // a forked child could unshare(CLONE_NEWUSER)
  std::string error;
};

struct PrivilegeProbe {
  unsigned uid = 0, euid = 0;
  std::vector<std::string> capabilities;  // those of ward's layers held, effective
  std::vector<std::string> lacking;       // those not held
};

struct HostProbe {
  std::string kernel;  // uname release
  std::string machine;
  int landlock_abi = 0;
  std::string landlock_error;
  SeccompProbe seccomp;
  CgroupProbe cgroup;
  BpfProbe bpf;
  NftablesProbe nftables;
  AuditProbe audit;
  UsernsProbe userns;
  PrivilegeProbe privileges;
};

HostProbe ProbeHost();

}  // namespace ward::enforce
