// run_floor: the kernel work of ward run's layers and nothing else, to put a
// floor under bench_run's `ward` figure. One small static program that does,
// with raw system calls and no set-up of its own beyond reading
// /proc/self/cgroup and /proc/mounts, what every layer needs the kernel to
// do for one command, in ward run's order:
//
//   1. cgroup   a v2 directory under <v2>/ward/, and a v1 memory and pids
//               directory next to the caller's own when the v2 root lacks
//               those controllers (this machine), with run_bench.ward's
//               limits; the child is born in the v2 one (clone3
//               CLONE_INTO_CGROUP), moves itself into the v1 ones through
//               `tasks`, and unshares its cgroup namespace;
//   2. network  the 11 cgroup hooks of ward's programs: the programs ward run
//               cached for the policy (opened from their pins, the newest
//               /sys/fs/bpf/ward/cache-*), linked to the v2 directory; the
//               links are not pinned (ward run pins them so that a killed
//               supervisor is cleaned up after);
//   3. landlock a ruleset handling every right of ABI 7 with the 23 grants
//               of run_bench.ward (`ward run --dry-run`), restricted in the
//               child; a mount namespace, private, four empty tmpfs over
//               Ward's state, `/` read-only and the workspace bound
//               read-write;
//   4. process  every capability dropped from every set, no_new_privs,
//               RLIMIT_NOFILE, close_range;
//   5. seccomp  one filter as long as run_bench.ward's (510 instructions);
//
// then execve, and after the command: the links detached, the cgroups
// removed. What ward run does on top (reading its run cache, the records
// that let it clean up after a killed run, pinning, the guard filter, the
// hard-link check, its larger binary) is left out: the gap between this
// and `ward` in bench_run is ward's own cost.
//
//   run_floor [--workspace DIR] -- CMD ARGS...   (root; run ward run once
//                                                 first, for its programs)
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "enforcers/linux/landlock_uapi.h"

namespace {

namespace ll = ward::enforce::landlock_uapi;

[[noreturn]] void Die(const char* step) {
  std::fprintf(stderr, "run_floor: %s: %s\n", step, std::strerror(errno));
  _exit(125);
}

std::string Slurp(const char* path) {
  std::string out;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

bool WriteFile(const std::string& path, const char* value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, value, std::strlen(value)) == static_cast<ssize_t>(std::strlen(value));
  close(fd);
  return ok;
}

// The mount point of a cgroup v2 tree or of the v1 hierarchy with option
// `controller`, from /proc/mounts.
std::string MountOf(const std::string& mounts, const char* type, const char* controller) {
  size_t at = 0;
  while (at < mounts.size()) {
    const size_t end = mounts.find('\n', at);
    const std::string line = mounts.substr(at, end - at);
    at = end == std::string::npos ? mounts.size() : end + 1;
    char dev[256], dir[512], fstype[64], opts[512];
    if (std::sscanf(line.c_str(), "%255s %511s %63s %511s", dev, dir, fstype, opts) != 4) continue;
    if (std::strcmp(fstype, type) != 0) continue;
    if (!controller) return dir;
    const std::string o = std::string(",") + opts + ",";
    if (o.find(std::string(",") + controller + ",") != std::string::npos) return dir;
  }
  return "";
}

// The caller's own cgroup in the v1 hierarchy of `controller`.
std::string OwnV1(const std::string& self, const char* controller) {
  size_t at = 0;
  while (at < self.size()) {
    const size_t end = self.find('\n', at);
    const std::string line = self.substr(at, end - at);
    at = end == std::string::npos ? self.size() : end + 1;
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string o = "," + line.substr(a + 1, b - a - 1) + ",";
    if (o.find(std::string(",") + controller + ",") != std::string::npos) {
      return line.substr(b + 1) == "/" ? "" : line.substr(b + 1);
    }
  }
  return "";
}

// The newest entry of ward run's program cache.
std::string NewestProgramCache() {
  const std::string root = "/sys/fs/bpf/ward";
  DIR* d = opendir(root.c_str());
  if (!d) return "";
  std::string best;
  int64_t best_time = -1;
  while (const dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "cache-", 6) != 0) continue;
    struct stat st;
    // Its object's folder: cache-<key>-<identity>/<object id>/.
    const std::string entry = root + "/" + e->d_name;
    std::string dir;
    if (DIR* sub = opendir(entry.c_str())) {
      while (const dirent* o = readdir(sub)) {
        if (o->d_name[0] != '.') dir = entry + "/" + o->d_name;
      }
      closedir(sub);
    }
    if (stat((dir + "/prog_egress").c_str(), &st) != 0 || stat(entry.c_str(), &st) != 0) continue;
    if (st.st_mtime > best_time) {
      best_time = st.st_mtime;
      best = dir;
    }
  }
  closedir(d);
  return best;
}

long Bpf(int cmd, bpf_attr* attr) { return syscall(SYS_bpf, cmd, attr, sizeof(*attr)); }

struct Hook {
  const char* prog;
  int type;
};
// ward's 11 hooks (enforcers/linux/ebpf.cc); 49 and 50 are the unix ones,
// newer than Debian's headers.
const Hook kHooks[] = {
    {"prog_sock_create", BPF_CGROUP_INET_SOCK_CREATE},
    {"prog_connect4", BPF_CGROUP_INET4_CONNECT},
    {"prog_connect6", BPF_CGROUP_INET6_CONNECT},
    {"prog_sendmsg4", BPF_CGROUP_UDP4_SENDMSG},
    {"prog_sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
    {"prog_bind4", BPF_CGROUP_INET4_BIND},
    {"prog_bind6", BPF_CGROUP_INET6_BIND},
    {"prog_connect_unix", 49},
    {"prog_sendmsg_unix", 50},
    {"prog_egress", BPF_CGROUP_INET_EGRESS},
    {"prog_ingress", BPF_CGROUP_INET_INGRESS},
};

struct Grant {
  const char* path;
  uint64_t rights;
};

}  // namespace

int main(int argc, char** argv) {
  std::string workspace = "/tmp/ward-bench-run";
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--workspace") == 0 && i + 1 < argc) {
      workspace = argv[++i];
    } else {
      std::fprintf(stderr, "usage: run_floor [--workspace DIR] -- CMD ARGS...\n");
      return 2;
    }
  }
  if (i + 1 >= argc) {
    std::fprintf(stderr, "usage: run_floor [--workspace DIR] -- CMD ARGS...\n");
    return 2;
  }
  char** command = argv + i + 1;
  const std::string id = std::to_string(getpid());

  // 1. cgroups.
  const std::string mounts = Slurp("/proc/mounts");
  const std::string self = Slurp("/proc/self/cgroup");
  const std::string v2_root = MountOf(mounts, "cgroup2", nullptr);
  if (v2_root.empty()) Die("no cgroup v2 mount");
  const std::string v2_controllers = Slurp((v2_root + "/cgroup.controllers").c_str());
  mkdir((v2_root + "/ward").c_str(), 0755);
  const std::string v2 = v2_root + "/ward/floor-" + id;
  if (mkdir(v2.c_str(), 0755) != 0) Die("mkdir v2");
  std::vector<std::string> v1_dirs;
  std::vector<int> tasks;
  for (const char* controller : {"memory", "pids"}) {
    if (v2_controllers.find(controller) != std::string::npos) {
      std::fprintf(stderr, "run_floor: v2 controllers not supported here\n");
      return 125;
    }
    const std::string dir =
        MountOf(mounts, "cgroup", controller) + OwnV1(self, controller) + "/ward-floor-" + id;
    if (mkdir(dir.c_str(), 0755) != 0) Die("mkdir v1");
    v1_dirs.push_back(dir);
    const bool ok = std::strcmp(controller, "memory") == 0
                        ? WriteFile(dir + "/memory.limit_in_bytes", "268435456")
                        : WriteFile(dir + "/pids.max", "64");
    if (!ok) Die("limit");
    tasks.push_back(open((dir + "/tasks").c_str(), O_WRONLY | O_CLOEXEC));
    if (tasks.back() < 0) Die("open tasks");
  }
  const int cg_fd = open(v2.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd < 0) Die("open v2");

  // 2. network.
  const std::string cache = NewestProgramCache();
  if (cache.empty()) {
    std::fprintf(stderr,
                 "run_floor: no program cache under /sys/fs/bpf/ward (run ward run once)\n");
    return 125;
  }
  std::vector<int> links;
  for (const Hook& h : kHooks) {
    const std::string pin = cache + "/" + h.prog;
    bpf_attr get{};
    get.pathname = reinterpret_cast<uint64_t>(pin.c_str());
    const int prog = static_cast<int>(Bpf(BPF_OBJ_GET, &get));
    if (prog < 0) Die("BPF_OBJ_GET");
    bpf_attr link{};
    link.link_create.prog_fd = static_cast<uint32_t>(prog);
    link.link_create.target_fd = static_cast<uint32_t>(cg_fd);
    link.link_create.attach_type = static_cast<uint32_t>(h.type);
    const int fd = static_cast<int>(Bpf(BPF_LINK_CREATE, &link));
    if (fd < 0) Die("BPF_LINK_CREATE");
    close(prog);
    links.push_back(fd);
  }

  // 3. landlock (prepared here, restricted in the child).
  const uint64_t rx = ll::kAccessFsReadFile | ll::kAccessFsReadDir | ll::kAccessFsExecute;
  const uint64_t r = ll::kAccessFsReadFile | ll::kAccessFsReadDir;
  const uint64_t fs_all = (ll::kAccessFsIoctlDev << 1) - 1;
  const uint64_t rw_file = ll::kAccessFsReadFile | ll::kAccessFsWriteFile | ll::kAccessFsTruncate;
  const Grant grants[] = {
      {"/dev/full", rw_file},
      {"/dev/null", rw_file},
      {"/dev/random", ll::kAccessFsReadFile},
      {"/dev/tty", rw_file},
      {"/dev/urandom", ll::kAccessFsReadFile},
      {"/dev/zero", rw_file},
      {"/etc/alternatives", r},
      {"/etc/ca-certificates", r},
      {"/etc/gai.conf", ll::kAccessFsReadFile},
      {"/etc/group", ll::kAccessFsReadFile},
      {"/etc/host.conf", ll::kAccessFsReadFile},
      {"/etc/hosts", ll::kAccessFsReadFile},
      {"/etc/ld.so.cache", ll::kAccessFsReadFile},
      {"/etc/ld.so.conf", ll::kAccessFsReadFile},
      {"/etc/ld.so.conf.d", r},
      {"/etc/mime.types", ll::kAccessFsReadFile},
      {"/etc/nsswitch.conf", ll::kAccessFsReadFile},
      {"/etc/passwd", ll::kAccessFsReadFile},
      {"/etc/resolv.conf", ll::kAccessFsReadFile},
      {"/etc/ssl", r},
      {"/etc/timezone", ll::kAccessFsReadFile},
      {workspace.c_str(), fs_all},
      {"/usr", rx},
  };
  ll::RulesetAttr attr{fs_all, ll::kAccessNetBindTcp | ll::kAccessNetConnectTcp,
                       ll::kScopeAbstractUnixSocket | ll::kScopeSignal};
  const int ruleset = static_cast<int>(syscall(ll::kSysCreateRuleset, &attr, sizeof attr, 0));
  if (ruleset < 0) Die("landlock_create_ruleset");
  for (const Grant& g : grants) {
    const int fd = open(g.path, O_PATH | O_CLOEXEC);
    if (fd < 0) continue;  // absent here: ward run leaves it out too
    struct stat st;
    fstat(fd, &st);
    ll::PathBeneathAttr rule{S_ISDIR(st.st_mode) ? g.rights : g.rights & ll::kAccessFile, fd};
    if (syscall(ll::kSysAddRule, ruleset, ll::kRulePathBeneath, &rule, 0) != 0) {
      Die("landlock_add_rule");
    }
    close(fd);
  }
  ll::NetPortAttr port{ll::kAccessNetConnectTcp, 8080};
  if (syscall(ll::kSysAddRule, ruleset, ll::kRuleNetPort, &port, 0) != 0) Die("landlock port");

  // 5. seccomp, built ahead: 509 loads and an allow.
  std::vector<sock_filter> filter(509, sock_filter{BPF_LD | BPF_W | BPF_ABS, 0, 0, 0});
  filter.push_back(sock_filter{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW});
  const sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};

  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cg_fd);
  const pid_t child = static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof args));
  if (child < 0) Die("clone3");
  if (child == 0) {
    for (int fd : tasks) {
      if (write(fd, "0", 1) != 1) Die("tasks");
    }
    if (unshare(CLONE_NEWCGROUP) != 0) Die("unshare cgroup");
    if (unshare(CLONE_NEWNS) != 0) Die("unshare mount");
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Die("rprivate");
    for (const char* hide :
         {"/run/ward/runs", "/var/cache/ward/seccomp", "/var/cache/ward/run", "/sys/fs/bpf"}) {
      if (mount("floor", hide, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,mode=000") != 0) {
        Die("tmpfs");
      }
    }
    mount_attr ro{MOUNT_ATTR_RDONLY, 0, 0, 0}, rw{0, MOUNT_ATTR_RDONLY, 0, 0};
    if (syscall(SYS_mount_setattr, -1, "/", AT_RECURSIVE, &ro, sizeof ro) != 0) Die("ro /");
    if (mount(workspace.c_str(), workspace.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      Die("bind workspace");
    }
    if (syscall(SYS_mount_setattr, -1, workspace.c_str(), AT_RECURSIVE, &rw, sizeof rw) != 0) {
      Die("rw workspace");
    }
    const rlimit nofile{256, 256};
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) Die("setrlimit");
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capset, &header, data) != 0) Die("capset");
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) Die("ambient");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Die("no_new_privs");
    if (syscall(ll::kSysRestrictSelf, ruleset, 0) != 0) Die("landlock_restrict_self");
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) Die("close_range");
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) Die("seccomp");
    execvp(command[0], command);
    Die("execve");
  }
  close(ruleset);
  int status = 0;
  if (waitpid(child, &status, 0) != child) Die("waitpid");
  for (int fd : links) close(fd);  // unpinned: detached with their last descriptor
  for (int fd : tasks) close(fd);
  close(cg_fd);
  if (rmdir(v2.c_str()) != 0) Die("rmdir v2");
  for (const std::string& d : v1_dirs) {
    if (rmdir(d.c_str()) != 0) Die("rmdir v1");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
