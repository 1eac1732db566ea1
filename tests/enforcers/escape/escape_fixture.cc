#include "tests/enforcers/escape/escape_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

namespace ward::test {
namespace {

namespace fs = std::filesystem;

std::string CgroupV2Mount() {
  std::ifstream mounts("/proc/mounts");
  std::string device, dir, type, rest;
  while (mounts >> device >> dir >> type && std::getline(mounts, rest)) {
    if (type == "cgroup2") return dir;
  }
  return "";
}

int Listen(int family, int type, const sockaddr* a, socklen_t len) {
  const int s = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1, zero = 0;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (s < 0 || bind(s, a, len) != 0) _exit(3);
  if (type == SOCK_STREAM && listen(s, 64) != 0) _exit(4);
  return s;
}

int ListenUnix(const std::string& name, bool abstract, int type = SOCK_STREAM) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                               (abstract ? 1 : 0) + name.size() + !abstract);
  return Listen(AF_UNIX, type, reinterpret_cast<sockaddr*>(&a), len);
}

// The servers, inside the namespace: TCP listeners on the wildcard address
// that take connections and drain them; UDP echo bound to each address
// asked (127.0.0.1, 127.0.0.2, ::1), so that the answer comes from the
// address a connected client expects; unix listeners and datagram sinks
// (a path and an abstract name each, granted and not).
[[noreturn]] void Serve(const std::string& netns, const std::string& sock_dir,
                        const std::string& abstract_prefix, int ready) {
  const int ns = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(2);
  enum Kind { kListener, kConnection, kEcho, kSink };
  std::vector<pollfd> fds;
  std::map<int, Kind> kind;
  auto add = [&](int fd, Kind k) {
    fds.push_back({fd, POLLIN, 0});
    kind[fd] = k;
  };
  for (uint16_t port : {kTcpGranted, kTcpOther}) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    add(Listen(AF_INET6, SOCK_STREAM, reinterpret_cast<sockaddr*>(&a), sizeof a), kListener);
  }
  for (uint16_t port : {kUdpGranted, kUdpOther}) {
    for (const char* address : {"127.0.0.1", "127.0.0.2"}) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      inet_pton(AF_INET, address, &a.sin_addr);
      add(Listen(AF_INET, SOCK_DGRAM, reinterpret_cast<sockaddr*>(&a), sizeof a), kEcho);
    }
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_loopback;
    add(Listen(AF_INET6, SOCK_DGRAM, reinterpret_cast<sockaddr*>(&a), sizeof a), kEcho);
  }
  for (const std::string name : {"granted", "other"}) {
    add(ListenUnix(sock_dir + "/" + name + ".sock", false), kListener);
    add(ListenUnix(abstract_prefix + name, true), kListener);
    add(ListenUnix(sock_dir + "/" + name + ".dgram", false, SOCK_DGRAM), kSink);
    add(ListenUnix(abstract_prefix + name + "-dgram", true, SOCK_DGRAM), kSink);
  }
  const ssize_t n = write(ready, "x", 1);
  (void)n;
  close(ready);
  char buf[2048];
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    std::vector<int> accepted;
    for (pollfd& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      switch (kind[p.fd]) {
        case kListener: {
          const int c = accept4(p.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c >= 0) accepted.push_back(c);
          break;
        }
        case kConnection:
          if (read(p.fd, buf, sizeof buf) <= 0 && errno != EAGAIN) {
            close(p.fd);
            kind.erase(p.fd);
            p.fd = -1;
          }
          break;
        case kEcho: {
          sockaddr_storage from{};
          socklen_t len = sizeof from;
          const ssize_t got =
              recvfrom(p.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
          if (got > 0) sendto(p.fd, buf, got, 0, reinterpret_cast<sockaddr*>(&from), len);
          break;
        }
        case kSink: {
          const ssize_t got = recv(p.fd, buf, sizeof buf, 0);
          (void)got;
          break;
        }
      }
    }
    std::erase_if(fds, [](const pollfd& p) { return p.fd < 0; });
    for (int c : accepted) add(c, kConnection);
  }
}

void Replace(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at)) {
    text->replace(at, from.size(), to);
    at += to.size();
  }
}

}  // namespace

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> entries;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.insert(entry.path());
  return entries;
}

Run Spawn(const std::vector<std::string>& argv, const SpawnOptions& o) {
  Run r;
  for (const std::string& a : argv) r.command += (r.command.empty() ? "" : " ") + a;
  int in[2], out[2], err[2];
  REQUIRE(pipe2(in, O_CLOEXEC) == 0);
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(pipe2(err, O_CLOEXEC) == 0);
  int master = -1;
  std::string slave;
  if (o.terminal) {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(master >= 0);
    REQUIRE(grantpt(master) == 0);
    REQUIRE(unlockpt(master) == 0);
    slave = ptsname(master);
  }
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(in[0], 0);
    if (o.terminal) {
      const int tty = open(slave.c_str(), O_RDWR);
      if (setsid() < 0 || tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0) _exit(122);
      dup2(tty, 0);
    }
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (o.leak_fd >= 0) dup2(o.leak_fd, 5);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) _exit(120);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(121);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  int to_child = in[1];
  if (!o.answer) {
    close(to_child);
    to_child = -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (to_child >= 0 && r.out.find("ready\n") != std::string::npos) {
      const std::string line = o.answer() + "\n";
      const ssize_t n = write(to_child, line.data(), line.size());
      (void)n;
      close(to_child);
      to_child = -1;
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  if (to_child >= 0) close(to_child);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (master >= 0) close(master);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string Outcome(const Run& r) {
  std::string line = r.out;
  if (line.rfind("ready\n", 0) == 0) line.erase(0, 6);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.empty()) line = "-";
  if (r.timed_out) return line + ", timed out";
  if (r.signal != 0) return line + ", signal " + sigabbrev_np(r.signal);
  return line + ", exit " + std::to_string(r.code);
}

namespace {

// What `ward run --dry-run` says about a policy of `file`.
std::string DryRun(const std::string& env, const std::string& file, const std::string& policy) {
  const std::string command = env + " " + WARD_BINARY + " run " + file + " --policy " + policy +
                              " --dry-run -- /bin/true 2>/dev/null";
  FILE* out = popen(command.c_str(), "r");
  if (!out) return "";
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, out)) > 0;) text.append(buf, n);
  pclose(out);
  return text;
}

// The rest of the line after `marker` in `text`, or "".
std::string After(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + marker.size();
  return text.substr(from, text.find('\n', from) - from);
}

}  // namespace

std::string CachedFilter(const std::string& file, const std::string& policy) {
  // Compiled (not from the run cache), so the filter's own cache shows.
  const std::string path = After(DryRun("WARD_RUN_CACHE=0", file, policy), ", cached ");
  return path.rfind('/', 0) == 0 ? path : "";
}

std::string RunCacheEntry(const std::string& file, const std::string& policy) {
  return After(DryRun("", file, policy), "front end: from the run cache ");
}

Env::Env() {
  char tmpl[] = "/tmp/ward-escape-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  root_ = tmpl;
  for (const char* d : {"/bin", "/workspace", "/plant", "/home", "/home/.ssh", "/readonly",
                        "/outside", "/sock", "/mnt"}) {
    REQUIRE(mkdir((root_ + d).c_str(), 0755) == 0);
  }
  probe_ = root_ + "/bin/escape_probe";
  fs::copy_file(ESCAPE_PROBE, probe_);
  chmod(probe_.c_str(), 0755);
  abstract_prefix_ = "ward-escape-" + std::to_string(getpid()) + "-";
  std::string policy = Slurp(std::string(ESCAPE_TESTDATA) + "/escape.ward.in");
  REQUIRE(!policy.empty());
  Replace(&policy, "@ROOT@", root_);
  Replace(&policy, "@TCP@", std::to_string(kTcpGranted));
  Replace(&policy, "@UDP@", std::to_string(kUdpGranted));
  Replace(&policy, "@ABSTRACT@", abstract_prefix_ + "granted");
  policy_ = root_ + "/escape.ward";
  WriteFile(policy_, policy);
  Reset();

  netns_name_ = "ward-escape-" + std::to_string(getpid());
  netns_ = "/var/run/netns/" + netns_name_;
  REQUIRE(std::system(("ip netns add " + netns_name_).c_str()) == 0);
  REQUIRE(std::system(("ip -n " + netns_name_ + " link set lo up").c_str()) == 0);
  int ready[2];
  REQUIRE(pipe2(ready, O_CLOEXEC) == 0);
  server_ = fork();
  if (server_ == 0) Serve(netns_, Path("/sock"), abstract_prefix_, ready[1]);
  close(ready[1]);
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);

  const std::string mount = CgroupV2Mount();
  REQUIRE(!mount.empty());
  cgroup_ = mount + "/ward-escape-" + std::to_string(getpid());
  REQUIRE(mkdir(cgroup_.c_str(), 0755) == 0);
}

Env::~Env() {
  if (server_ > 0) {
    kill(server_, SIGKILL);
    waitpid(server_, nullptr, 0);
  }
  if (!netns_name_.empty()) {
    const int rc = std::system(("ip netns del " + netns_name_).c_str());
    (void)rc;
  }
  if (!cgroup_.empty()) rmdir(cgroup_.c_str());
  // The filters ward run cached for this run's policies (their texts
  // hold this run's paths: no other run uses them).
  // So are the programs it keeps loaded for them, keyed by the same hash.
  for (const char* p : {"escape-base", "escape-rodeny", "escape-unixdir", "escape-open",
                        "escape-raw", "escape-cache"}) {
    const std::string entry = RunCacheEntry(policy_, p);
    if (!entry.empty()) unlink(entry.c_str());
    const std::string cached = CachedFilter(policy_, p);
    if (cached.empty()) continue;
    unlink(cached.c_str());
    const std::string prefix = "cache-" + fs::path(cached).filename().string().substr(0, 16) + "-";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(kBpfPins, ec)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(entry, ec);
    }
  }
  fs::remove_all(root_);
}

void Env::Reset() const {
  for (const char* d : {"/workspace", "/plant", "/readonly", "/outside"}) {
    fs::remove_all(Path(d));
    fs::create_directory(Path(d));
  }
  WriteFile(secret(), "the secret\n");  // the same inode while it exists
  WriteFile(Path("/workspace/file"), "work\n");
  WriteFile(Path("/home/notes"), "notes\n");
  WriteFile(Path("/readonly/file"), "read only\n");
  WriteFile(Path("/outside/file"), "outside\n");
}

Run Env::InWorkspace(std::vector<std::string> argv, const std::vector<std::string>& args,
                     SpawnOptions o) const {
  argv.insert(argv.end(), args.begin(), args.end());
  if (o.cwd.empty()) o.cwd = Path("/workspace");
  return Spawn(argv, o);
}

Run Env::Alone(const std::vector<std::string>& args, const SpawnOptions& o) const {
  return InWorkspace({"/usr/bin/nsenter", "--net=" + netns_, probe_}, args, o);
}

Run Env::Warded(const std::string& policy, const std::vector<std::string>& args,
                const SpawnOptions& o) const {
  return InWorkspace({"/usr/bin/nsenter", "--net=" + netns_, WARD_BINARY, "run", policy_,
                      "--policy", policy, "--", probe_},
                     args, o);
}

Env& E() {
  static Env env;
  return env;
}

}  // namespace ward::test
