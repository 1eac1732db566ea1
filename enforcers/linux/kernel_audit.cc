#include "enforcers/linux/kernel_audit.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "enforcers/linux/files.h"
#include "enforcers/linux/process.h"

namespace ward::enforce {
namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool IsHex(const std::string& s) {
  if (s.empty() || s.size() % 2 != 0) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Unhex(const std::string& s) {
  std::string out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
  }
  return out;
}

// The keys whose value the kernel quotes when it is plain text and writes
// in hex otherwise (audit_log_untrustedstring).
bool Untrusted(const std::string& key) {
  return key == "exe" || key == "comm" || key == "path" || key == "name" || key == "cwd" ||
         key == "proctitle";
}

// A NETLINK_AUDIT socket of the initial network namespace. The kernel
// multicasts audit records only to the initial namespace's sockets
// (measured: a listener opened inside `ip netns`/`nsenter --net` gets no
// record at all), so a supervisor in another network namespace opens its
// socket in the namespace of pid 1 and returns to its own: a socket keeps
// the namespace it was made in. setns moves only the calling thread. If it
// cannot return, the process would go on in the wrong namespace (the
// workload on the host's network): it stops instead.
int InitNetnsAuditSocket(int flags) {
  const int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int init = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
  struct stat a {
  }, b{};
  bool moved = false;
  if (self >= 0 && init >= 0 && fstat(self, &a) == 0 && fstat(init, &b) == 0 &&
      (a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
    moved = setns(init, CLONE_NEWNET) == 0;
  }
  const int fd = socket(AF_NETLINK, SOCK_RAW | flags, NETLINK_AUDIT);
  const int saved = errno;
  if (moved && setns(self, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "ward: cannot return to this process's network namespace: %s\n",
                 std::strerror(errno));
    std::abort();
  }
  if (self >= 0) close(self);
  if (init >= 0) close(init);
  errno = saved;
  return fd;
}

// One request on a fresh socket and its answer (AUDIT_GET, AUDIT_SET).
bool Request(uint16_t type, const audit_status* set, audit_status* got, std::string* error) {
  const int fd = InitNetnsAuditSocket(SOCK_CLOEXEC);
  if (fd < 0) {
    *error = Errno("audit socket", errno);
    return false;
  }
  struct {
    nlmsghdr h;
    audit_status s;
  } req{};
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = type;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.h.nlmsg_seq = 1;
  if (set) req.s = *set;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, &req, sizeof req, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    *error = Errno(type == AUDIT_GET ? "AUDIT_GET" : "AUDIT_SET", errno);
    close(fd);
    return false;
  }
  // AUDIT_GET answers with the status, then the ack; AUDIT_SET with the ack.
  bool ok = false, have_status = type != AUDIT_GET;
  for (int i = 0; i < 4 && !(ok && have_status); ++i) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) {
      *error = "audit: no answer from the kernel";
      break;
    }
    alignas(nlmsghdr) char buf[8192];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) continue;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, static_cast<unsigned>(n));
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == AUDIT_GET && got) {
        std::memcpy(got, NLMSG_DATA(h), std::min<size_t>(sizeof *got, NLMSG_PAYLOAD(h, 0)));
        have_status = true;
      } else if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        if (e->error != 0) {
          *error = Errno(type == AUDIT_GET ? "AUDIT_GET" : "AUDIT_SET", -e->error);
          close(fd);
          return false;
        }
        ok = true;
      }
    }
  }
  close(fd);
  return ok && have_status;
}

bool SetEnabled(uint32_t enabled, std::string* error) {
  audit_status s{};
  s.mask = AUDIT_STATUS_ENABLED;
  s.enabled = enabled;
  return Request(AUDIT_SET, &s, nullptr, error);
}

// The count file, under its lock.
struct Users {
  bool restore = false;  // the first user turned audit on
  std::vector<std::pair<pid_t, std::string>> live;
  size_t listed = 0;  // user lines in the file, live or not
};

Users ReadUsers(int dir_fd) {
  Users u;
  std::string ignored;
  const int fd = OpenStateFile(dir_fd, "audit-users", O_RDONLY, &ignored);
  if (fd < 0) return u;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    if (word == "restore") {
      std::string value;
      in >> value;
      u.restore = value == "0";
    } else if (word == "user") {
      long pid = 0;
      std::string start;
      in >> pid >> start;
      ++u.listed;
      if (pid > 0 && ProcessStartTime(static_cast<pid_t>(pid)) == start) {
        u.live.emplace_back(static_cast<pid_t>(pid), start);
      }
    }
  }
  return u;
}

bool WriteUsers(int dir_fd, const Users& u, std::string* error) {
  std::string text = u.restore ? "restore 0\n" : "";
  for (const auto& [pid, start] : u.live) {
    text += "user " + std::to_string(pid) + " " + start + "\n";
  }
  return WriteStateFile(dir_fd, "audit-users", text, error);
}

// The state folder and its lock, for one change of the count.
struct Locked {
  int dir_fd = -1;
  int lock_fd = -1;
  ~Locked() {
    if (lock_fd >= 0) {
      flock(lock_fd, LOCK_UN);
      close(lock_fd);
    }
    if (dir_fd >= 0) close(dir_fd);
  }
  bool Take(const std::string& state_dir, std::string* error) {
    dir_fd = OpenStateDir(state_dir, error);
    if (dir_fd < 0) return false;
    lock_fd = OpenStateFile(dir_fd, "audit.lock", O_RDWR | O_CREAT, error);
    if (lock_fd < 0) return false;
    if (flock(lock_fd, LOCK_EX) != 0) {
      *error = Errno("locking " + state_dir + "/audit.lock", errno);
      return false;
    }
    return true;
  }
};

}  // namespace

std::string AuditRecord::Get(const std::string& key) const {
  const auto it = fields.find(key);
  return it == fields.end() ? "" : it->second;
}

bool ParseAuditRecord(int type, const std::string& text, AuditRecord* out) {
  *out = AuditRecord{};
  out->type = type;
  if (text.rfind("audit(", 0) != 0) return false;
  const size_t close_paren = text.find("):");
  const size_t colon = text.find(':');
  if (close_paren == std::string::npos || colon > close_paren) return false;
  const std::string stamp = text.substr(6, colon - 6);  // SEC.MS
  const size_t dot = stamp.find('.');
  try {
    out->time_ms = std::stoll(stamp.substr(0, dot)) * 1000 +
                   (dot == std::string::npos ? 0 : std::stoll(stamp.substr(dot + 1)));
    out->serial = std::stoull(text.substr(colon + 1, close_paren - colon - 1));
  } catch (...) {
    return false;
  }
  size_t i = close_paren + 2;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t eq = text.find('=', i);
    if (eq == std::string::npos) break;
    const std::string key = text.substr(i, eq - i);
    std::string value;
    i = eq + 1;
    if (i < text.size() && text[i] == '"') {
      const size_t end = text.find('"', i + 1);
      value = text.substr(i + 1, (end == std::string::npos ? text.size() : end) - i - 1);
      i = end == std::string::npos ? text.size() : end + 1;
    } else {
      const size_t end = text.find(' ', i);
      value = text.substr(i, (end == std::string::npos ? text.size() : end) - i);
      i = end == std::string::npos ? text.size() : end;
      if (Untrusted(key) && IsHex(value)) value = Unhex(value);
    }
    out->fields[key] = value;
  }
  return true;
}

AuditListener::~AuditListener() {
  if (fd_ >= 0) close(fd_);
}

bool AuditListener::Open(std::string* error) {
  fd_ = InitNetnsAuditSocket(SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd_ < 0) {
    *error = Errno("audit socket", errno);
    return false;
  }
  // A larger buffer than the default (~200 KiB): a burst of denials from a
  // workload in a loop should not overflow it before the supervisor reads.
  const int size = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  sockaddr_nl a{};
  a.nl_family = AF_NETLINK;
  a.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    *error = Errno("binding the audit socket to its read-only group", errno);
    close(fd_);
    fd_ = -1;
    return false;
  }
  return true;
}

void AuditListener::Drain(std::vector<AuditRecord>* out) {
  if (fd_ < 0) return;
  alignas(nlmsghdr) static char buf[16384];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == ENOBUFS) {
        ++dropped_;  // the kernel dropped records for us; go on reading
        continue;
      }
      if (errno == EINTR) continue;
      return;  // EAGAIN: nothing more now
    }
    // One record per message; the kernel's nlmsg_len is not always the
    // size received (the text may be cut or padded): read what arrived.
    if (n < static_cast<ssize_t>(NLMSG_HDRLEN)) continue;
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    size_t len = static_cast<size_t>(n) - NLMSG_HDRLEN;
    if (h->nlmsg_len >= NLMSG_HDRLEN) len = std::min<size_t>(len, h->nlmsg_len - NLMSG_HDRLEN);
    std::string text(buf + NLMSG_HDRLEN, len);
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    AuditRecord r;
    if (ParseAuditRecord(h->nlmsg_type, text, &r)) out->push_back(std::move(r));
  }
}

bool AuditGetStatus(AuditStatus* out, std::string* error) {
  audit_status s{};
  if (!Request(AUDIT_GET, nullptr, &s, error)) return false;
  out->enabled = s.enabled;
  out->lost = s.lost;
  out->pid = s.pid;
  return true;
}

bool AuditAcquire(const std::string& state_dir, bool* turned_on, std::string* error) {
  *turned_on = false;
  Locked lock;
  if (!lock.Take(state_dir, error)) return false;
  // A "restore 0" left by a run that was killed stays: audit is still on
  // because of it.
  Users users = ReadUsers(lock.dir_fd);
  AuditStatus status;
  if (!AuditGetStatus(&status, error)) return false;
  if (status.enabled == 0) {
    if (!SetEnabled(1, error)) return false;
    *turned_on = true;
    users.restore = true;
  }
  users.live.emplace_back(getpid(), ProcessStartTime(getpid()));
  if (!WriteUsers(lock.dir_fd, users, error)) {
    if (*turned_on) {
      std::string ignored;
      SetEnabled(0, &ignored);
      *turned_on = false;
    }
    return false;
  }
  return true;
}

bool AuditRelease(const std::string& state_dir, bool* turned_off, std::string* error) {
  *turned_off = false;
  struct stat st;
  // Nothing was ever counted here (the clean-up of stale runs asks).
  if (stat((state_dir + "/audit-users").c_str(), &st) != 0) return true;
  Locked lock;
  if (!lock.Take(state_dir, error)) return false;
  Users users = ReadUsers(lock.dir_fd);
  std::erase_if(users.live, [](const auto& u) { return u.first == getpid(); });
  // Most calls (every run's clean-up) change nothing: no write, no fsync.
  if (users.live.size() == users.listed && (!users.live.empty() || !users.restore)) return true;
  if (users.live.empty() && users.restore) {
    AuditStatus status;
    // Only back to off from what we set (1); a host that locked it (2)
    // meanwhile keeps it.
    if (AuditGetStatus(&status, error) && status.enabled == 1) {
      if (!SetEnabled(0, error)) return false;
      *turned_off = true;
    }
    users.restore = false;
  }
  return WriteUsers(lock.dir_fd, users, error);
}

}  // namespace ward::enforce
