#include "enforcers/agent/listen.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <iostream>
#include <vector>

#include "compiler/agent_guard.h"
#include "enforcers/agent/access.h"

namespace ward::agent {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool ParsePort(std::string_view text, uint16_t* port) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 65535)
    return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

// Creates the missing folders above the socket's own (0755, root's).
bool MakeParents(const std::string& dir, std::string* error) {
  for (size_t i = 1; i < dir.size(); ++i) {
    if (dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = Errno(part);
      return false;
    }
  }
  return true;
}

// The socket's own folder, opened without following a link: created 0700,
// or taken over when it is root's with mode 0700 or 0710 already (a shared
// folder such as /run or /tmp is refused, never re-moded).
int OpenOwnFolder(const std::string& dir, std::string* error) {
  if (!MakeParents(dir, error)) return -1;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = Errno(dir);
    return -1;
  }
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *error = Errno(dir);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = Errno(dir);
    close(fd);
    return -1;
  }
  mode_t mode = st.st_mode & 07777;
  if (st.st_uid != geteuid() || (mode != 0700 && mode != 0710)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "owner uid %u, mode %04o", static_cast<unsigned>(st.st_uid),
                  static_cast<unsigned>(mode));
    *error = dir + ": " + buf + "; the socket needs a folder of its own (root's, mode 0700)";
    close(fd);
    return -1;
  }
  return fd;
}

// A socket left at `path`: removed when nobody listens on it (a crash).
bool ClearStale(int dirfd, const std::string& name, const std::string& path, std::string* error) {
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    *error = Errno(path);
    return false;
  }
  if (!S_ISSOCK(st.st_mode)) {
    *error = path + ": exists and is not a socket";
    return false;
  }
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) {
    *error = Errno("socket");
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  int rc = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  close(probe);
  if (rc == 0) {
    *error = path + ": another process listens on it (is wardd running already?)";
    return false;
  }
  if (err != ECONNREFUSED) {
    errno = err;
    *error = Errno(path);
    return false;
  }
  if (unlinkat(dirfd, name.c_str(), 0) != 0) {
    *error = Errno(path);
    return false;
  }
  return true;
}

bool InGroups(int fd, gid_t group) {
  std::vector<gid_t> groups(64);
  for (;;) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      break;
    }
    if (errno != ERANGE || len <= groups.size() * sizeof(gid_t)) return false;
    groups.resize(len / sizeof(gid_t));
  }
  for (gid_t g : groups) {
    if (g == group) return true;
  }
  return false;
}

}  // namespace

bool ParseListenUrl(const std::string& url, ListenUrl* out, std::string* error) {
  ListenUrl u;
  u.url = url;
  std::string_view v(url);
  if (v.substr(0, 7) == "unix://") {
    u.kind = ListenUrl::kUnix;
    u.path = std::string(v.substr(7));
    if (u.path.empty() || u.path[0] != '/') {
      *error = "--listen " + Printable(url) + ": expected unix:///ABSOLUTE/PATH";
      return false;
    }
    if (u.path.back() == '/' || u.path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      *error = "--listen " + Printable(url) + ": not a socket path (or longer than 107 bytes)";
      return false;
    }
    *out = std::move(u);
    return true;
  }
  if (v.substr(0, 6) == "tcp://") {
    u.kind = ListenUrl::kTcp;
    std::string_view hp = v.substr(6);
    size_t colon = std::string_view::npos;
    if (!hp.empty() && hp[0] == '[') {
      size_t close = hp.find(']');
      if (close != std::string_view::npos && close + 1 < hp.size() && hp[close + 1] == ':')
        colon = close + 1;
    } else {
      colon = hp.rfind(':');
      if (colon != std::string_view::npos && hp.substr(0, colon).find(':') != hp.npos)
        colon = std::string_view::npos;  // a bare IPv6 address: needs brackets
    }
    if (colon == std::string_view::npos || colon == 0 ||
        !ParsePort(hp.substr(colon + 1), &u.port)) {
      *error = "--listen " + Printable(url) + ": expected tcp://HOST:PORT";
      return false;
    }
    u.address = std::string(hp);
    *out = std::move(u);
    return true;
  }
  *error = "--listen " + Printable(url) + ": expected unix:///PATH or tcp://HOST:PORT";
  return false;
}

bool ResolveGroup(const std::string& name, int64_t* gid, std::string* error) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (!name.empty() && ec == std::errc() && end == name.data() + name.size()) {
    *gid = value;
    return true;
  }
  std::vector<char> buf(16384);
  group gr;
  group* found = nullptr;
  if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    *error = "--reader-group " + Printable(name) + ": no such group";
    return false;
  }
  *gid = found->gr_gid;
  return true;
}

bool PublishEndpoints(const std::string& path, const std::vector<std::string>& urls,
                      std::string* error) {
  ir::AgentEndpoints e;
  for (const auto& url : urls) {
    ListenUrl u;
    if (!ParseListenUrl(url, &u, error)) return false;
    if (u.kind == ListenUrl::kUnix) {
      e.unix_paths.push_back(u.path);
      continue;
    }
    std::string host = u.address.substr(0, u.address.rfind(':'));
    if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
    in6_addr probe;
    if (inet_pton(AF_INET, host.c_str(), &probe) == 1 ||
        inet_pton(AF_INET6, host.c_str(), &probe) == 1) {
      e.tcp.push_back({host, u.port});
    } else {
      e.tcp.push_back({"0.0.0.0", u.port});
      e.tcp.push_back({"::", u.port});
    }
  }
  std::string text = ir::EndpointsToJson(e);
  size_t slash = path.rfind('/');
  std::string dir = path.substr(0, slash);
  if (!MakeParents(dir, error)) return false;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = Errno(dir);
    return false;
  }
  int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0) {
    *error = Errno(dir);
    return false;
  }
  std::string name = path.substr(slash + 1);
  std::string tmp = "." + name + ".wardd-" + std::to_string(getpid());
  unlinkat(dirfd, tmp.c_str(), 0);  // left by a crash of this pid's predecessor
  int fd = openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && fchmod(fd, 0644) == 0 &&
            write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            fsync(fd) == 0;
  if (fd >= 0) close(fd);
  ok = ok && renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) == 0 && fsync(dirfd) == 0;
  if (!ok) {
    *error = Errno(path);
    unlinkat(dirfd, tmp.c_str(), 0);
  }
  close(dirfd);
  return ok;
}

void UnixPeers::Register(int fd, const Caller& caller) {
  std::lock_guard<std::mutex> lock(mutex_);
  by_fd_[fd] = caller;
}

bool UnixPeers::Lookup(std::string_view peer, Caller* caller) const {
  if (peer.substr(0, 3) != "fd:") return false;
  int fd = -1;
  std::string_view digits = peer.substr(3);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return false;
  *caller = it->second;
  return true;
}

std::unique_ptr<UnixListener> UnixListener::Open(const std::string& path, int64_t reader_group,
                                                 std::string* error) {
  size_t slash = path.rfind('/');
  std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  if (dir == "/") {
    *error = path + ": the socket needs a folder of its own (root's, mode 0700)";
    return nullptr;
  }
  int dirfd = OpenOwnFolder(dir, error);
  if (dirfd < 0) return nullptr;
  std::unique_ptr<UnixListener> l(new UnixListener());
  l->path_ = path;
  l->reader_group_ = reader_group;
  auto fail = [&](const std::string& why) {
    *error = why;
    close(dirfd);
    return nullptr;
  };
  if (!ClearStale(dirfd, name, path, error)) return fail(*error);
  // Closed to the group until the socket has its final owner and mode.
  if (fchmod(dirfd, 0700) != 0) return fail(Errno(dir));
  l->fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (l->fd_ < 0) return fail(Errno("socket"));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (bind(l->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return fail(Errno("bind " + path));
  gid_t gid = reader_group >= 0 ? static_cast<gid_t>(reader_group) : getegid();
  mode_t mode = reader_group >= 0 ? 0660 : 0600;
  if (fchownat(dirfd, name.c_str(), geteuid(), gid, AT_SYMLINK_NOFOLLOW) != 0 ||
      fchmodat(dirfd, name.c_str(), mode, 0) != 0)
    return fail(Errno(path));
  struct stat bound;
  if (fstatat(dirfd, name.c_str(), &bound, AT_SYMLINK_NOFOLLOW) != 0) return fail(Errno(path));
  l->inode_ = bound.st_ino;
  if (listen(l->fd_, 128) != 0) return fail(Errno("listen " + path));
  if (reader_group >= 0 && (fchown(dirfd, geteuid(), gid) != 0 || fchmod(dirfd, 0710) != 0))
    return fail(Errno(dir));
  close(dirfd);
  if (pipe2(l->wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = Errno("pipe");
    return nullptr;
  }
  return l;
}

UnixListener::~UnixListener() {
  Stop();
  if (fd_ >= 0) {
    close(fd_);
    // Only the socket it bound: not one another process put there since.
    struct stat st;
    if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode_)
      unlink(path_.c_str());
  }
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

void UnixListener::Start(UnixPeers* peers, std::function<void(int)> serve) {
  peers_ = peers;
  serve_ = std::move(serve);
  thread_ = std::thread([this] { Loop(); });
}

void UnixListener::Stop() {
  if (stopped_.exchange(true)) return;
  if (thread_.joinable()) {
    char c = 0;
    (void)!write(wake_[1], &c, 1);
    thread_.join();
  }
}

bool UnixListener::Classify(int fd, Caller* caller, std::string* refused) const {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    *refused = Errno("SO_PEERCRED");
    return false;
  }
  caller->identity = "uid:" + std::to_string(cred.uid);
  if (cred.uid == 0) {
    caller->role = Role::kOperator;
    return true;
  }
  if (reader_group_ >= 0 && (cred.gid == static_cast<gid_t>(reader_group_) ||
                             InGroups(fd, static_cast<gid_t>(reader_group_)))) {
    caller->role = Role::kReader;
    return true;
  }
  *refused = "uid " + std::to_string(cred.uid) + " (pid " + std::to_string(cred.pid) +
             "): not root" +
             (reader_group_ >= 0 ? ", not in group " + std::to_string(reader_group_) : "");
  return false;
}

void UnixListener::Loop() {
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  while (!stopped_.load()) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      std::cerr << "wardd: " << path_ << ": poll: " << std::strerror(errno) << "\n";
      return;
    }
    if (fds[1].revents != 0) return;
    int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: pending callers wait rather than spin the loop.
        std::cerr << "wardd: " << path_ << ": accept: " << std::strerror(errno) << "\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;
    }
    Caller caller;
    std::string refused;
    if (!Classify(fd, &caller, &refused)) {
      close(fd);
      std::cerr << "wardd: " << path_ << ": refused a connection from " << refused << "\n";
      continue;
    }
    peers_->Register(fd, caller);
    serve_(fd);
  }
}

}  // namespace ward::agent
