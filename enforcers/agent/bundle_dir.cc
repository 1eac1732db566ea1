#include "enforcers/agent/bundle_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>
#include <vector>

#include "backends/bundle.h"

namespace ward::agent {
namespace {

// What the kubelet's atomic writer does to a ConfigMap volume: a new
// `..TIMESTAMP` folder, a `..data_tmp` link renamed over `..data`
// (IN_MOVED_TO), links for new keys (IN_CREATE), the old folder deleted.
// Plain files renamed or written in place come as IN_MOVED_TO and
// IN_CLOSE_WRITE. Any of them means: scan again.
constexpr uint32_t kEvents = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE |
                             IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
// Events come in bursts (one swap is several); the scan waits until the
// folder has been quiet this long.
constexpr int kQuietMs = 50;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file's bytes in one read of one open file: the open resolves NAME ->
// ..data/NAME -> ..TIMESTAMP/NAME once, and the kubelet never writes into a
// folder it has published, so the bytes are one version's, whole.
// *gone: the name, or the link's target, no longer exists.
bool ReadFile(int dir_fd, const std::string& name, std::string* out, std::string* error,
              bool* gone) {
  const int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  *gone = fd < 0 && errno == ENOENT;
  if (fd < 0) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) {
    *error = std::string("cannot stat: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    *error = "not a regular file";
    ok = false;
  } else if (static_cast<uint64_t>(st.st_size) > kMaxBundleFile) {
    *error = std::to_string(st.st_size) + " bytes, more than the " +
             std::to_string(kMaxBundleFile) + " a bundle file may have";
    ok = false;
  }
  out->clear();
  char buffer[65536];
  while (ok) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = std::string("cannot read: ") + std::strerror(errno);
      ok = false;
    } else if (n == 0) {
      break;
    } else if (out->size() + static_cast<size_t>(n) > kMaxBundleFile) {
      *error = "grew past the " + std::to_string(kMaxBundleFile) + " bytes a bundle file may have";
      ok = false;
    } else {
      out->append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return ok;
}

}  // namespace

BundleDir::BundleDir(std::string dir, Agent* agent, Refuse refuse, std::chrono::milliseconds rescan)
    : dir_(std::move(dir)), agent_(agent), refuse_(std::move(refuse)), rescan_(rescan) {}

std::unique_ptr<BundleDir> BundleDir::Start(const std::string& dir, Agent* agent, Refuse refuse,
                                            std::string* error, std::chrono::milliseconds rescan) {
  std::unique_ptr<BundleDir> d(new BundleDir(dir, agent, std::move(refuse), rescan));
  d->inotify_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  d->stop_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (d->inotify_ < 0 || d->stop_ < 0) {
    *error = std::string("--bundle-dir: ") + std::strerror(errno);
    return nullptr;
  }
  if (!d->Watch(error)) return nullptr;
  d->thread_ = std::thread([p = d.get()] { p->Run(); });
  return d;
}

BundleDir::~BundleDir() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_, &one, sizeof one) < 0) std::cerr << "wardd: --bundle-dir: cannot stop\n";
    thread_.join();
  }
  if (inotify_ >= 0) close(inotify_);
  if (stop_ >= 0) close(stop_);
}

bool BundleDir::Watch(std::string* error) {
  watch_ = inotify_add_watch(inotify_, dir_.c_str(), kEvents);
  if (watch_ >= 0) return true;
  *error = "--bundle-dir " + dir_ + ": cannot watch: " + std::strerror(errno);
  return false;
}

void BundleDir::Run() {
  Scan();
  auto next_scan = std::chrono::steady_clock::now() + rescan_;
  while (true) {
    // Without a watch (the folder went away), look for it again each second.
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        next_scan - std::chrono::steady_clock::now());
    if (watch_ < 0) wait = std::min(wait, std::chrono::milliseconds(1000));
    pollfd fds[2] = {{stop_, POLLIN, 0}, {inotify_, POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(std::max<int64_t>(wait.count(), 0)));
    if (n < 0 && errno != EINTR) {
      std::cerr << "wardd: --bundle-dir: poll: " << std::strerror(errno) << "\n";
      return;
    }
    if (fds[0].revents) return;
    bool changed = false;
    if (n > 0 && fds[1].revents) {
      // Drain the burst until the folder is quiet, then scan once.
      do {
        alignas(inotify_event) char buffer[8192];
        ssize_t got;
        while ((got = read(inotify_, buffer, sizeof buffer)) > 0) {
          for (char* p = buffer; p < buffer + got;) {
            auto* e = reinterpret_cast<inotify_event*>(p);
            if (e->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
              if (e->wd == watch_) {
                inotify_rm_watch(inotify_, watch_);
                watch_ = -1;
                std::cerr << "wardd: --bundle-dir " << dir_
                          << " is gone; the policies in force stay, watching for it again\n";
              }
            }
            p += sizeof(inotify_event) + e->len;
          }
        }
        changed = true;
      } while (poll(fds + 1, 1, kQuietMs) > 0);
    }
    if (watch_ < 0) {
      std::string error;
      if (Watch(&error)) {
        std::cerr << "wardd: --bundle-dir " << dir_ << " is back\n";
        changed = true;
      } else {
        watch_ = -1;
      }
    }
    if (changed || std::chrono::steady_clock::now() >= next_scan) {
      if (watch_ >= 0) Scan();
      next_scan = std::chrono::steady_clock::now() + rescan_;
    }
  }
}

void BundleDir::Scan() {
  const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return;  // gone between the event and now: the watch says so
  std::vector<std::string> files;
  if (DIR* d = fdopendir(dup(dir_fd))) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      // `..data`, `..TIMESTAMP` and other dot files are the volume's own.
      if (name[0] != '.' &&
          (EndsWith(name, kBundleFileSuffix) || EndsWith(name, kRemoveFileSuffix)))
        files.push_back(name);
    }
    closedir(d);
  }
  // In name order: a policy's bundle before its tombstone. Which of them
  // wins is the sequences' to say, whatever the order.
  std::sort(files.begin(), files.end());
  std::set<std::string> present;
  for (const std::string& file : files) {
    std::string bytes, error;
    bool gone = false;
    if (!ReadFile(dir_fd, file, &bytes, &error, &gone)) {
      // Between the kubelet's swap of ..data and its removal of the key's
      // link, NAME dangles: the key is gone, not broken.
      if (gone) continue;
      present.insert(file);
      // Refused once per version of the error, not every re-scan.
      const std::string digest = "error:" + error;
      if (seen_[file] == digest) continue;
      seen_[file] = digest;
      const Caller caller{"bundle-dir:" + dir_ + "/" + file, Role::kOperator};
      refuse_(caller, "", error);  // audited before it is logged
      std::cerr << "wardd: " << caller.identity << ": refused: " << error << "\n";
      continue;
    }
    present.insert(file);
    const std::string digest = backend::Sha256(bytes);
    if (seen_[file] == digest) continue;
    seen_[file] = digest;
    if (EndsWith(file, kRemoveFileSuffix)) {
      HandleRemove(file, bytes);
    } else {
      Handle(file, bytes);
    }
  }
  close(dir_fd);
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    std::cerr << "wardd: bundle-dir:" << dir_ << "/" << it->first
              << " is gone; what it applied stays in force (removing a policy takes a signed "
                 "tombstone: ward remove --sign-key)\n";
    it = seen_.erase(it);
  }
}

void BundleDir::HandleRemove(const std::string& file, const std::string& bytes) {
  const Caller caller{"bundle-dir:" + dir_ + "/" + file, Role::kOperator};
  auto refused = [&](const std::string& policy, const std::string& reason) {
    refuse_(caller, policy, reason);  // audited before it is logged
    std::cerr << "wardd: " << caller.identity << ": refused: " << reason << "\n";
  };
  v1::RemoveRequest request;
  std::string error;
  if (!ParseRemoveFile(bytes, &request, &error)) return refused("", error);
  const std::string name = file.substr(0, file.size() - std::strlen(kRemoveFileSuffix));
  if (request.policy() != name) {
    return refused(request.policy(), "the file " + file + " removes policy '" + request.policy() +
                                         "'; a tombstone file is named after its policy (" +
                                         request.policy() + kRemoveFileSuffix + ")");
  }
  // Not in force (removed before this start, or never applied here):
  // nothing to do, and its sequence, spent already, is not refused again.
  v1::GetRequest get;
  get.set_policy(name);
  v1::GetResponse state;
  if (agent_->Get(caller, get, &state).code == RpcStatus::kNotFound) {
    std::cerr << "wardd: " << caller.identity << ": policy " << name
              << " is not in force; nothing to remove\n";
    return;
  }
  v1::RemoveResponse response;
  const RpcStatus s = agent_->Remove(caller, request, &response);
  if (!s.ok()) {
    const bool refused =
        s.code == RpcStatus::kInvalidArgument || s.code == RpcStatus::kPermissionDenied;
    std::cerr << "wardd: " << caller.identity << ": " << (refused ? "refused: " : "failed: ")
              << s.message << "\n";
    return;
  }
  std::cerr << "wardd: " << caller.identity << ": "
            << (response.removed() ? "removed policy " : "not in force: policy ") << name << "\n";
}

void BundleDir::Handle(const std::string& file, const std::string& bytes) {
  const Caller caller{"bundle-dir:" + dir_ + "/" + file, Role::kOperator};
  auto refused = [&](const std::string& policy, const std::string& reason) {
    refuse_(caller, policy, reason);  // audited before it is logged
    std::cerr << "wardd: " << caller.identity << ": refused: " << reason << "\n";
  };
  v1::ApplyRequest request;
  std::string error;
  if (!ParseBundleFile(bytes, request.mutable_bundle(), &error)) return refused("", error);
  const v1::Bundle& bundle = request.bundle();
  const std::string name = file.substr(0, file.size() - std::strlen(kBundleFileSuffix));
  if (bundle.policy() != name) {
    return refused(bundle.policy(), "the file " + file + " holds policy '" + bundle.policy() +
                                        "'; a bundle file is named after its policy (" +
                                        bundle.policy() + kBundleFileSuffix + ")");
  }
  // Even when the bundle in force has this content (a restart, another
  // key of the ConfigMap changed): Apply answers "unchanged", and records a
  // higher sequence, so that what the folder says is never older than what
  // wardd holds to.
  v1::ApplyResponse response;
  const RpcStatus s = agent_->Apply(caller, request, &response);
  if (!s.ok()) {
    // Apply audited it; the generation in force stays.
    const bool refused = s.code == RpcStatus::kInvalidArgument ||
                         s.code == RpcStatus::kPermissionDenied ||
                         s.code == RpcStatus::kFailedPrecondition;
    std::cerr << "wardd: " << caller.identity << ": " << (refused ? "refused: " : "failed: ")
              << s.message << "\n";
    return;
  }
  std::cerr << "wardd: " << caller.identity << ": "
            << (response.changed() ? "applied" : "unchanged") << " policy " << bundle.policy()
            << ", generation " << response.generation() << "\n";
}

}  // namespace ward::agent
