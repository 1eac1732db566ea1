// escape_probe ATTACK [ARGS...]: performs one attack a sandboxed workload
// could try and prints one line: `ok` when the action succeeded, else
// `errno NAME` (or `timeout` when a network peer did not answer). Exit
// status 0 for ok, 1 otherwise, 2 for a usage error. A seccomp kill is not
// caught: the caller sees the signal.
//
// Standalone on purpose (no Ward code), like any program a workload could
// bring. x86_64 only: the i386 `int 0x80` and x32 attacks are inline asm.
//
// PID arguments: a number, `parent` (getppid(): under `ward run`, the
// supervisor) or `child` (a process this probe forks: a sibling inside the
// same sandbox). One argument given as `-` is read from stdin after
// printing `ready`, for targets that exist only once the run started.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/inet_diag.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/sock_diag.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Read by process_vm_readv and /proc/PID/mem in a forked child: the same
// address in both processes.
volatile char g_marker[16] = "escape-marker";

int Ok() {
  std::puts("ok");
  return 0;
}

int Fail(int err) {
  const char* name = strerrorname_np(err);
  std::printf("errno %s\n", name ? name : std::to_string(err).c_str());
  return 1;
}

int Check(long result) { return result < 0 ? Fail(errno) : Ok(); }

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "escape_probe: %s\n", why);
  std::exit(2);
}

// `-` means: ask the caller (stdin), once the run is up.
std::string Arg(const char* arg) {
  if (std::strcmp(arg, "-") != 0) return arg;
  std::puts("ready");
  std::fflush(stdout);
  char line[4096];
  if (!std::fgets(line, sizeof line, stdin)) Usage("no argument on stdin");
  std::string s = line;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// ---- targets ------------------------------------------------------------------

pid_t g_child = -1;

void KillChild() {
  if (g_child > 0) {
    kill(g_child, SIGKILL);
    waitpid(g_child, nullptr, 0);
  }
}

// A sibling in the same sandbox: sleeps until killed.
pid_t ForkChild() {
  g_child = fork();
  if (g_child == 0) {
    for (;;) pause();
  }
  if (g_child < 0) Usage("fork");
  std::atexit(KillChild);
  return g_child;
}

pid_t Target(const std::string& arg) {
  if (arg == "parent") return getppid();
  if (arg == "child") return ForkChild();
  return static_cast<pid_t>(std::stol(arg));
}

// ---- filesystem ---------------------------------------------------------------

int ReadPath(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(errno);
  char c;
  const ssize_t n = read(fd, &c, 1);
  const int err = errno;
  close(fd);
  return n < 0 ? Fail(err) : Ok();
}

int ReadFd(int fd) {
  char c;
  if (lseek(fd, 0, SEEK_SET) < 0 && errno == EBADF) return Fail(EBADF);
  return Check(read(fd, &c, 1));
}

int OpenPath(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(errno);
  close(fd);
  return Ok();
}

// Replaces DST's contents with SRC's (DST's inode, owner and mode stay).
int Copy(const std::string& src, const std::string& dst) {
  const int in = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Fail(errno);
  char buf[65536];
  const ssize_t n = read(in, buf, sizeof buf);
  close(in);
  if (n < 0) return Fail(errno);
  const int out = open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return Fail(errno);
  const ssize_t w = write(out, buf, static_cast<size_t>(n));
  const int err = errno;
  close(out);
  return w != n ? Fail(w < 0 ? err : EIO) : Ok();
}

// Moves DIR aside and puts a fresh DIR/NAME in its place: the path a
// deny names ends up holding the workload's bytes.
int ReplaceParent(const std::string& dir, const std::string& name) {
  if (rename(dir.c_str(), (dir + "-moved").c_str()) != 0) return Fail(errno);
  if (mkdir(dir.c_str(), 0755) != 0) return Fail(errno);
  return OpenPath(dir + "/" + name, O_WRONLY | O_CREAT | O_TRUNC);
}

// "TYPE:HEX" from name_to_handle_at, opened relative to the cwd's mount.
int OpenByHandle(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) Usage("handle: TYPE:HEX");
  const std::string hex = text.substr(colon + 1);
  std::vector<unsigned char> buf(sizeof(file_handle) + hex.size() / 2);
  auto* h = reinterpret_cast<file_handle*>(buf.data());
  h->handle_type = std::stoi(text.substr(0, colon));
  h->handle_bytes = static_cast<unsigned>(hex.size() / 2);
  for (size_t i = 0; i < h->handle_bytes; ++i) {
    h->f_handle[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  const int fd = open_by_handle_at(AT_FDCWD, h, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(errno);
  char c;
  const ssize_t n = read(fd, &c, 1);
  close(fd);
  return n < 0 ? Fail(errno) : Ok();
}

// ---- processes ----------------------------------------------------------------

// PTRACE_SEIZE has ptrace_attach's permission checks without stopping the
// tracee; exiting detaches.
int Ptrace(pid_t pid) { return Check(ptrace(PTRACE_SEIZE, pid, nullptr, nullptr)); }

// EFAULT would mean the permission check passed (a wrong address only).
int VmRead(pid_t pid, uintptr_t address) {
  char buf[8];
  iovec local{buf, sizeof buf};
  iovec remote{reinterpret_cast<void*>(address), sizeof buf};
  return Check(process_vm_readv(pid, &local, 1, &remote, 1, 0));
}

int ProcMem(pid_t pid, int flags) {
  const std::string path = "/proc/" + std::to_string(pid) + "/mem";
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Fail(errno);
  if (pid == g_child) {
    // The child's copy of g_marker: read it, or write the same bytes back.
    char buf[sizeof g_marker];
    const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(g_marker));
    std::memcpy(buf, const_cast<char*>(g_marker), sizeof buf);
    const ssize_t n =
        flags == O_RDONLY ? pread(fd, buf, sizeof buf, at) : pwrite(fd, buf, sizeof buf, at);
    if (n < 0) return Fail(errno);
  }
  close(fd);
  return Ok();
}

// Another process's descriptor, copied into this one (a live run's
// supervisor holds its cgroup, its BPF objects, the host's namespaces).
int PidfdGetfd(pid_t pid, int target_fd) {
  const long pidfd = syscall(__NR_pidfd_open, pid, 0);
  if (pidfd < 0) return Fail(errno);
  const long fd = syscall(__NR_pidfd_getfd, pidfd, target_fd, 0);
  if (fd < 0) return Fail(errno);
  close(static_cast<int>(fd));
  return Ok();
}

// Signals through a pidfd (the same Landlock scope as kill(2)).
int PidfdSignal(pid_t pid) {
  const long pidfd = syscall(__NR_pidfd_open, pid, 0);
  if (pidfd < 0) return Fail(errno);
  return Check(syscall(__NR_pidfd_send_signal, pidfd, SIGCONT, nullptr, 0));
}

// `ok` when this process holds any capability in any set (bounding and
// ambient included), else `errno EPERM`.
int Caps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(__NR_capget, &header, data) != 0) return Fail(errno);
  for (const auto& d : data) {
    if (d.effective || d.permitted || d.inheritable) return Ok();
  }
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap) == 1) return Ok();
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1) return Ok();
  }
  return Fail(EPERM);
}

// Caps() after an execve of this probe: root regains nothing on exec.
int ExecCaps(const char* self) {
  char* const argv[] = {const_cast<char*>(self), const_cast<char*>("caps"), nullptr};
  execv("/proc/self/exe", argv);
  execv(self, argv);
  return Fail(errno);
}

// Joins another process's network namespace.
int SetnsNet(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(errno);
  return Check(setns(fd, CLONE_NEWNET));
}

// ---- system calls -------------------------------------------------------------

int IoUring() {
  io_uring_params p{};
  const long fd = syscall(__NR_io_uring_setup, 4, &p);
  if (fd < 0) return Fail(errno);
  close(static_cast<int>(fd));
  return Ok();
}

// getpid through the x32 ABI: the x86_64 `syscall` instruction with
// __X32_SYSCALL_BIT set (x32's getpid is 39, as on x86_64).
int X32() {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(0x40000000L | 39) : "rcx", "r11", "memory");
  if (ret < 0) return Fail(static_cast<int>(-ret));
  return ret == getpid() ? Ok() : Fail(EINVAL);
}

// getpid through the i386 ABI: `int 0x80` with i386's number (20).
int I386() {
  long ret;
  asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "r8", "r9", "r10", "r11", "memory");
  if (ret < 0) return Fail(static_cast<int>(-ret));
  return ret == getpid() ? Ok() : Fail(EINVAL);
}

int Clone3WithNamespaces() {
  clone_args args{};
  args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET;
  args.exit_signal = SIGCHLD;
  const long pid = syscall(__NR_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  if (pid < 0) return Fail(errno);
  waitpid(static_cast<pid_t>(pid), nullptr, 0);
  return Ok();
}

int Mount(const std::string& dir) {
  if (mount("escape", dir.c_str(), "tmpfs", 0, "size=64k") != 0) return Fail(errno);
  umount2(dir.c_str(), MNT_DETACH);
  return Ok();
}

int Bpf(int cmd, bpf_attr* attr) {
  return static_cast<int>(syscall(__NR_bpf, cmd, attr, sizeof *attr));
}

int BpfMapCreate() {
  bpf_attr a{};
  a.map_type = BPF_MAP_TYPE_ARRAY;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 1;
  const int fd = Bpf(BPF_MAP_CREATE, &a);
  if (fd < 0) return Fail(errno);
  close(fd);
  return Ok();
}

// Detaches a BPF link named by its pinned path or its id.
int BpfLinkDetach(const std::string& what) {
  bpf_attr a{};
  int fd;
  if (what.find('/') == std::string::npos) {
    a.link_id = static_cast<uint32_t>(std::stoul(what));
    fd = Bpf(BPF_LINK_GET_FD_BY_ID, &a);
  } else {
    a.pathname = reinterpret_cast<uintptr_t>(what.c_str());
    fd = Bpf(BPF_OBJ_GET, &a);
  }
  if (fd < 0) return Fail(errno);
  bpf_attr d{};
  d.link_detach.link_fd = static_cast<uint32_t>(fd);
  return Check(Bpf(BPF_LINK_DETACH, &d));
}

int PerfEventOpen() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  const long fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) return Fail(errno);
  close(static_cast<int>(fd));
  return Ok();
}

int CgroupMove(const std::string& procs) {
  const int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Fail(errno);
  const std::string pid = std::to_string(getpid());
  const ssize_t n = write(fd, pid.data(), pid.size());
  const int err = errno;
  close(fd);
  return n < 0 ? Fail(err) : Ok();
}

// ---- network ------------------------------------------------------------------

struct Address {
  sockaddr_storage sa{};
  socklen_t len = 0;
  int family = AF_INET;
};

Address ParseAddress(const std::string& text, const std::string& port) {
  Address a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.sa);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.sa);
  const uint16_t p = static_cast<uint16_t>(std::stoi(port));
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(p);
    a.len = sizeof *v4;
  } else if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(p);
    a.len = sizeof *v6;
    a.family = AF_INET6;
  } else {
    Usage("bad address");
  }
  return a;
}

int Tcp(const Address& a, int protocol = 0) {
  const int fd = socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, protocol);
  if (fd < 0) return Fail(errno);
  return Check(connect(fd, reinterpret_cast<const sockaddr*>(&a.sa), a.len));
}

// Sent datagrams count once the echo server answered.
int AwaitEcho(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) {
    std::puts("timeout");
    return 1;
  }
  char buf[64];
  return Check(recv(fd, buf, sizeof buf, 0));
}

int UdpSendto(const Address& a) {
  const int fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  if (sendto(fd, "ward", 4, 0, reinterpret_cast<const sockaddr*>(&a.sa), a.len) < 0) {
    return Fail(errno);
  }
  return AwaitEcho(fd);
}

// A child started straight into another cgroup (CLONE_INTO_CGROUP takes
// an O_PATH descriptor, which Landlock does not check), that then sends
// one UDP datagram; its line is the outcome.
int CloneIntoCgroup(const std::string& dir, const std::string& address, const std::string& port) {
  const int cg = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) return Fail(errno);
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cg);
  const long pid = syscall(__NR_clone3, &args, sizeof args);
  if (pid == 0) _exit(UdpSendto(ParseAddress(address, port)));
  if (pid < 0) return Fail(errno);
  int status = 0;
  waitpid(static_cast<pid_t>(pid), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int UdpConnected(const Address& a) {
  const int fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a.sa), a.len) != 0) return Fail(errno);
  if (send(fd, "ward", 4, 0) < 0) return Fail(errno);
  return AwaitEcho(fd);
}

// TCP Fast Open: the connect happens inside sendto(MSG_FASTOPEN), never
// through connect(2).
int TcpFastOpen(const Address& a) {
  const int fd = socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  if (sendto(fd, "ward", 4, MSG_FASTOPEN, reinterpret_cast<const sockaddr*>(&a.sa), a.len) < 0) {
    return Fail(errno);
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, 2000) <= 0) {
    std::puts("timeout");
    return 1;
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err ? Fail(err) : Ok();
}

// Every link ward run pins for a run, detached through its pin in DIR,
// then one UDP datagram: `ok` means it left unfiltered.
int BpfUnfilter(const std::string& dir, const Address& a) {
  for (const char* link : {"link_sock_create", "link_connect4", "link_connect6", "link_sendmsg4",
                           "link_sendmsg6", "link_egress"}) {
    bpf_attr get{};
    const std::string path = dir + "/" + link;
    get.pathname = reinterpret_cast<uintptr_t>(path.c_str());
    const int fd = Bpf(BPF_OBJ_GET, &get);
    if (fd < 0) return Fail(errno);
    bpf_attr d{};
    d.link_detach.link_fd = static_cast<uint32_t>(fd);
    if (Bpf(BPF_LINK_DETACH, &d) != 0) return Fail(errno);
  }
  return UdpSendto(a);
}

int UdpSendmmsg(const Address& a) {
  const int fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  char data[] = "ward";
  iovec iov{data, 4};
  mmsghdr m[2] = {};
  for (mmsghdr& h : m) {
    h.msg_hdr.msg_name = const_cast<sockaddr_storage*>(&a.sa);
    h.msg_hdr.msg_namelen = a.len;
    h.msg_hdr.msg_iov = &iov;
    h.msg_hdr.msg_iovlen = 1;
  }
  if (sendmmsg(fd, m, 2, 0) < 0) return Fail(errno);
  return AwaitEcho(fd);
}

// A path or abstract unix address; returns its length.
socklen_t UnixAddress(const std::string& name, bool abstract, sockaddr_un* a) {
  *a = sockaddr_un{};
  a->sun_family = AF_UNIX;
  if (name.size() + 2 > sizeof a->sun_path) Usage("unix name too long");
  std::memcpy(a->sun_path + (abstract ? 1 : 0), name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + (abstract ? 1 : 0) + name.size() +
                                (abstract ? 0 : 1));
}

int Unix(const std::string& name, bool abstract) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  sockaddr_un a;
  const socklen_t len = UnixAddress(name, abstract, &a);
  return Check(connect(fd, reinterpret_cast<sockaddr*>(&a), len));
}

// One datagram to an unconnected unix datagram socket (sendmsg's unix hook).
int UnixDgram(const std::string& name, bool abstract) {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  sockaddr_un a;
  const socklen_t len = UnixAddress(name, abstract, &a);
  return Check(sendto(fd, "ward", 4, 0, reinterpret_cast<sockaddr*>(&a), len));
}

int Socket(int family, int type, int protocol) {
  const int fd = socket(family, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return Fail(errno);
  close(fd);
  return Ok();
}

// A socket of `family` of the first type it has (stream, datagram,
// seqpacket, raw); the error of the last try.
int SocketOfFamily(int family) {
  int err = 0;
  for (const int type : {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW}) {
    const int fd = socket(family, type | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
      close(fd);
      return Ok();
    }
    err = errno;
  }
  return Fail(err);
}

// ---- the host's network, as seen from inside ----------------------------------

// Sends one netlink dump request and counts the answers of `type` into
// *seen; 0, or the errno that stopped it.
int NetlinkDump(int protocol, const void* request, size_t size, uint16_t type, int* seen) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) return errno;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  int err = 0;
  if (sendto(fd, request, size, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    err = errno;
  }
  alignas(nlmsghdr) char buf[32768];
  for (bool done = err != 0; !done;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      err = errno;
      break;
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE) done = true;
      if (h->nlmsg_type == NLMSG_ERROR) {
        err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
        done = true;
      }
      *seen += h->nlmsg_type == type;
    }
  }
  close(fd);
  return err;
}

// RTM_GETLINK: every interface, as `ip link` lists them.
int RouteDump() {
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.i.ifi_family = AF_UNSPEC;
  int seen = 0;
  const int err = NetlinkDump(NETLINK_ROUTE, &req, sizeof req, RTM_NEWLINK, &seen);
  return err ? Fail(err) : seen > 0 ? Ok() : Fail(ENOENT);
}

// SOCK_DIAG_BY_FAMILY: every TCP socket, IPv4 and IPv6, as `ss -t -a`
// lists them.
int SockDiag() {
  int seen = 0;
  for (const uint8_t family : {AF_INET, AF_INET6}) {
    struct {
      nlmsghdr h;
      inet_diag_req_v2 r;
    } req{};
    req.h.nlmsg_len = sizeof req;
    req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.r.sdiag_family = family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    const int err = NetlinkDump(NETLINK_SOCK_DIAG, &req, sizeof req, SOCK_DIAG_BY_FAMILY, &seen);
    if (err) return Fail(err);
  }
  return seen > 0 ? Ok() : Fail(ENOENT);
}

// ioctl(SIOCGIFCONF) on a socket of `family`: ok when it lists an interface.
int Ifconf(int family) {
  const int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(errno);
  ifreq reqs[16];
  ifconf conf{};
  conf.ifc_len = sizeof reqs;
  conf.ifc_req = reqs;
  const int rc = ioctl(fd, SIOCGIFCONF, &conf);
  const int err = errno;
  close(fd);
  if (rc < 0) return Fail(err);
  return conf.ifc_len > 0 ? Ok() : Fail(ENOENT);
}

// glibc's getifaddrs (NETLINK_ROUTE inside): ok when it lists an address.
int GetIfaddrs() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return Fail(errno);
  const bool any = list != nullptr;
  freeifaddrs(list);
  return any ? Ok() : Fail(ENOENT);
}

// getaddrinfo with AI_ADDRCONFIG (which asks NETLINK_ROUTE which address
// families the host has): ok when the name resolves, else `gai NAME`.
int Resolve(const char* name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(name, "443", &hints, &res);
  if (rc != 0) {
    std::printf("gai %d %s\n", rc, gai_strerror(rc));
    return 1;
  }
  freeaddrinfo(res);
  return Ok();
}

// `nft flush ruleset` by hand: one batch with NFT_MSG_DELTABLE for every
// family (NFPROTO_UNSPEC, no table name), acknowledged.
int NftFlush() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0) return Fail(errno);
  struct Msg {
    nlmsghdr h;
    nfgenmsg g;
  };
  Msg batch[3] = {};
  const uint16_t types[3] = {NFNL_MSG_BATCH_BEGIN, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE,
                             NFNL_MSG_BATCH_END};
  for (uint32_t i = 0; i < 3; ++i) {
    batch[i].h.nlmsg_len = sizeof(Msg);
    batch[i].h.nlmsg_type = types[i];
    batch[i].h.nlmsg_flags = NLM_F_REQUEST | (i == 1 ? NLM_F_ACK : 0);
    batch[i].h.nlmsg_seq = i + 1;
    batch[i].g.nfgen_family = i == 1 ? NFPROTO_UNSPEC : AF_UNSPEC;
    batch[i].g.version = NFNETLINK_V0;
    batch[i].g.res_id = i == 1 ? 0 : htons(NFNL_SUBSYS_NFTABLES);
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, batch, sizeof batch, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return Fail(errno);
  }
  alignas(nlmsghdr) char buf[8192];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n < 0) return Fail(errno);
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type != NLMSG_ERROR) continue;
    const int err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
    return err == 0 ? Ok() : Fail(err);
  }
  return Fail(EPROTO);
}

// ---- dispatch -----------------------------------------------------------------

int Run(int argc, char** argv) {
  const std::string attack = argv[1];
  auto need = [&](int n) {
    if (argc != n + 2) Usage(("attack " + attack + " takes " + std::to_string(n)).c_str());
  };
  // Filesystem.
  if (attack == "read") return need(1), ReadPath(argv[2]);
  if (attack == "read-fd") return need(1), ReadFd(std::atoi(argv[2]));
  if (attack == "write") return need(1), OpenPath(argv[2], O_WRONLY);
  if (attack == "create") return need(1), OpenPath(argv[2], O_WRONLY | O_CREAT | O_EXCL);
  if (attack == "open-trunc") return need(1), OpenPath(argv[2], O_WRONLY | O_TRUNC);
  if (attack == "replace-parent") return need(2), ReplaceParent(argv[2], argv[3]);
  if (attack == "copy") return need(2), Copy(argv[2], argv[3]);
  if (attack == "truncate") return need(1), Check(truncate(argv[2], 0));
  if (attack == "unlink") return need(1), Check(unlink(argv[2]));
  if (attack == "rename") return need(2), Check(rename(argv[2], argv[3]));
  if (attack == "chmod") return need(2), Check(chmod(argv[2], std::stoul(argv[3], nullptr, 8)));
  if (attack == "utime") return need(1), Check(utimensat(AT_FDCWD, argv[2], nullptr, 0));
  if (attack == "link") return need(2), Check(link(argv[2], argv[3]));
  if (attack == "link-read") {
    need(2);
    if (link(argv[2], argv[3]) != 0) return Fail(errno);
    return ReadPath(argv[3]);
  }
  if (attack == "symlink-read" || attack == "symlink-write") {
    need(2);
    if (symlink(argv[2], argv[3]) != 0) return Fail(errno);
    return attack == "symlink-read" ? ReadPath(argv[3]) : OpenPath(argv[3], O_WRONLY | O_TRUNC);
  }
  if (attack == "proc-root") return need(1), ReadPath(std::string("/proc/self/root") + argv[2]);
  if (attack == "proc-pid-root") {
    need(2);
    return ReadPath("/proc/" + std::to_string(Target(argv[2])) + "/root" + argv[3]);
  }
  if (attack == "open-by-handle") return need(1), OpenByHandle(argv[2]);
  // Processes.
  if (attack == "ptrace") return need(1), Ptrace(Target(argv[2]));
  if (attack == "vm-read") {
    if (argc != 3 && argc != 4) Usage("vm-read PID [ADDRESS]");
    const pid_t pid = Target(argv[2]);
    const uintptr_t at = argc == 4        ? std::stoull(argv[3], nullptr, 0)
                         : pid == g_child ? reinterpret_cast<uintptr_t>(g_marker)
                                          : 0x10000;
    return VmRead(pid, at);
  }
  if (attack == "mem-read") return need(1), ProcMem(Target(argv[2]), O_RDONLY);
  if (attack == "mem-write") return need(1), ProcMem(Target(argv[2]), O_WRONLY);
  if (attack == "signal") return need(1), Check(kill(Target(argv[2]), SIGCONT));
  if (attack == "pidfd-getfd") return need(2), PidfdGetfd(Target(argv[2]), std::atoi(argv[3]));
  if (attack == "proc-fd") {
    need(2);
    return OpenPath("/proc/" + std::to_string(Target(argv[2])) + "/fd/" + argv[3],
                    O_RDONLY | O_NONBLOCK);
  }
  if (attack == "pidfd-signal") return need(1), PidfdSignal(Target(argv[2]));
  if (attack == "caps") return need(0), Caps();
  if (attack == "exec-caps") return need(0), ExecCaps(argv[0]);
  if (attack == "setns-net") return need(1), SetnsNet(Target(argv[2]));
  // System calls.
  if (attack == "io-uring") return need(0), IoUring();
  if (attack == "x32") return need(0), X32();
  if (attack == "i386") return need(0), I386();
  if (attack == "unshare-user") return need(0), Check(unshare(CLONE_NEWUSER));
  if (attack == "clone3-ns") return need(0), Clone3WithNamespaces();
  if (attack == "mount") return need(1), Mount(argv[2]);
  if (attack == "umount") return need(1), Check(umount2(argv[2], MNT_DETACH));
  if (attack == "keyctl") {
    need(0);
    return Check(syscall(__NR_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  }
  if (attack == "bpf") return need(0), BpfMapCreate();
  if (attack == "bpf-link-detach") return need(1), BpfLinkDetach(argv[2]);
  if (attack == "perf-event-open") return need(0), PerfEventOpen();
  if (attack == "personality") return need(0), Check(personality(ADDR_NO_RANDOMIZE));
  if (attack == "cgroup-move") return need(1), CgroupMove(argv[2]);
  if (attack == "clone-into-cgroup") return need(3), CloneIntoCgroup(argv[2], argv[3], argv[4]);
  // Network.
  if (attack == "tcp") return need(2), Tcp(ParseAddress(argv[2], argv[3]));
  if (attack == "udp-sendto") return need(2), UdpSendto(ParseAddress(argv[2], argv[3]));
  if (attack == "bpf-unfilter")
    return need(3), BpfUnfilter(argv[2], ParseAddress(argv[3], argv[4]));
  if (attack == "udp-connect") return need(2), UdpConnected(ParseAddress(argv[2], argv[3]));
  if (attack == "mptcp") return need(2), Tcp(ParseAddress(argv[2], argv[3]), IPPROTO_MPTCP);
  if (attack == "tcp-fastopen") return need(2), TcpFastOpen(ParseAddress(argv[2], argv[3]));
  if (attack == "unix-dgram") return need(1), UnixDgram(argv[2], false);
  if (attack == "unix-dgram-abstract") return need(1), UnixDgram(argv[2], true);
  if (attack == "udp-sendmmsg") return need(2), UdpSendmmsg(ParseAddress(argv[2], argv[3]));
  if (attack == "unix") return need(1), Unix(argv[2], false);
  if (attack == "unix-abstract") return need(1), Unix(argv[2], true);
  if (attack == "symlink-unix") {
    need(2);
    if (symlink(argv[2], argv[3]) != 0) return Fail(errno);
    return Unix(argv[3], false);
  }
  if (attack == "raw") return need(0), Socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
  if (attack == "raw6") return need(0), Socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
  if (attack == "packet") return need(0), Socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (attack == "netlink") return need(0), Socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
  if (attack == "family") return need(1), SocketOfFamily(std::atoi(argv[2]));
  if (attack == "nft-flush") return need(0), NftFlush();
  // The host's network (ward run shares its network namespace).
  if (attack == "netlink-proto") return need(1), Socket(AF_NETLINK, SOCK_RAW, std::atoi(argv[2]));
  if (attack == "route-dump") return need(0), RouteDump();
  if (attack == "sock-diag") return need(0), SockDiag();
  if (attack == "ifconf") return need(0), Ifconf(AF_INET);
  if (attack == "ifconf-unix") return need(0), Ifconf(AF_UNIX);
  if (attack == "getifaddrs") return need(0), GetIfaddrs();
  if (attack == "if-nameindex") {
    need(0);
    struct if_nameindex* list = if_nameindex();
    if (!list) return Fail(errno);
    if_freenameindex(list);
    return Ok();
  }
  if (attack == "getaddrinfo") return need(1), Resolve(argv[2]);
  // Typing into the caller's terminal (stdin), run after the sandbox ends.
  if (attack == "tiocsti") {
    need(0);
    const char c = '\n';
    return Check(ioctl(0, TIOCSTI, &c));
  }
  // The exit status `ward run` must pass on.
  if (attack == "exit") return need(1), std::atoi(argv[2]);
  Usage(("unknown attack " + attack).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage("escape_probe ATTACK [ARGS...]");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  static std::string asked;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "-") == 0) {
      asked = Arg(argv[i]);
      argv[i] = asked.data();
    }
  }
  return Run(argc, argv);
}
