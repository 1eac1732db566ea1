#include "enforcers/agent/audit.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "enforcers/agent/state.h"
#include "enforcers/linux/files.h"

namespace ward::agent {
namespace {

constexpr std::string_view kRecordStart = "{\"seq\":";
constexpr off_t kTailBlock = 64 * 1024;

std::string Reason(const std::string& path, int err) { return path + ": " + std::strerror(err); }

// The folder and the last component of `path`.
void Split(const std::string& path, std::string* dir, std::string* name) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *dir = ".";
    *name = path;
  } else {
    *dir = slash == 0 ? "/" : path.substr(0, slash);
    *name = path.substr(slash + 1);
  }
}

bool ReadAt(int fd, off_t at, size_t n, std::string* out) {
  out->assign(n, '\0');
  size_t done = 0;
  while (done < n) {
    const ssize_t r = pread(fd, out->data() + done, n - done, at + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

AuditLog::~AuditLog() {
  Close();
  if (fd_ >= 0) close(fd_);
}

bool AuditLog::Open(int dir_fd, const AuditConfig& config, std::string* error) {
  checkpoint_every_ = std::max<uint64_t>(config.checkpoint_every, 1);
  checkpoint_interval_ = config.checkpoint_interval;
  on_error_ = config.on_error;
  if (!OpenKey(dir_fd, config, error) || !OpenFile(config, dir_fd, error) || !ReadLast(error)) {
    return false;
  }
  timer_ = std::thread([this] { Timer(); });
  return true;
}

bool AuditLog::OpenKey(int dir_fd, const AuditConfig& config, std::string* error) {
  const std::string path =
      config.key_path.empty() ? config.state_dir + "/" + kAuditKeyFile : config.key_path;
  struct stat st;
  // The default key is the state folder's own file (no link followed); one
  // given by path may be a link (a Kubernetes Secret volume's are).
  const int r = config.key_path.empty() ? lstat(path.c_str(), &st) : stat(path.c_str(), &st);
  if (r != 0 && errno == ENOENT) {
    key_ = trust::PrivateKey::Generate(error);
    if (!key_ || !key_->Write(path, error)) return false;
  } else if (r != 0) {
    *error = Reason(path, errno);
    return false;
  } else if (!S_ISREG(st.st_mode)) {
    *error = path + ": the audit key is not a regular file";
    return false;
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error = path + ": the audit key may be read by others (mode " + mode + "): chmod 600 it";
    return false;
  } else {
    key_ = trust::PrivateKey::Load(path, error);
    if (!key_) return false;
  }
  // Its public half beside the state, for auditors; rewritten when it
  // does not match (a key given by path changed), never over a non-file.
  const std::string pem = key_->public_key().Pem();
  if (fstatat(dir_fd, kAuditPubFile, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) {
      *error = config.state_dir + "/" + kAuditPubFile + ": not a regular file";
      return false;
    }
    std::string current;
    const int fd = enforce::OpenStateFile(dir_fd, kAuditPubFile, O_RDONLY, error);
    if (fd < 0) return false;
    const bool same = ReadAt(fd, 0, static_cast<size_t>(st.st_size), &current) && current == pem;
    close(fd);
    if (same) return true;
  }
  if (!enforce::WriteStateFile(dir_fd, kAuditPubFile, pem, error)) {
    *error = config.state_dir + "/" + *error;
    return false;
  }
  return true;
}

bool AuditLog::OpenFile(const AuditConfig& config, int state_fd, std::string* error) {
  std::string dir, name;
  int dir_fd = state_fd;
  if (config.log_path.empty()) {
    name = kAuditFile;
    name_ = config.state_dir + "/" + kAuditFile;
  } else {
    Split(config.log_path, &dir, &name);
    name_ = config.log_path;
    dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      *error = "--audit-log: " + Reason(dir, errno);
      return false;
    }
  }
  struct Closer {
    int fd, keep;
    ~Closer() {
      if (fd != keep) close(fd);
    }
  } closer{dir_fd, state_fd};
  for (int attempt = 0;; ++attempt) {
    fd_ = enforce::OpenStateFile(dir_fd, name, O_RDWR | O_CREAT | O_APPEND, error);
    if (fd_ < 0) {
      *error = (config.log_path.empty() ? config.state_dir + "/" : dir + "/") + *error;
      return false;
    }
    struct stat st;
    if (fstat(fd_, &st) != 0) {
      *error = Reason(name_, errno);
      return false;
    }
    size_ = st.st_size;
    std::string first;
    if (size_ == 0) {
      fsync(dir_fd);  // the new file's name
      return true;
    }
    if (!ReadAt(fd_, 0, std::min<size_t>(static_cast<size_t>(size_), kRecordStart.size()),
                &first)) {
      *error = Reason(name_, errno);
      return false;
    }
    if (kRecordStart.substr(0, first.size()) == first) return true;
    if (attempt > 0 || first.rfind("{\"time\"", 0) != 0) {
      *error = name_ + ": not an audit log (its first line does not start with {\"seq\":)";
      return false;
    }
    // The format before issue 21: kept as it is, beside the new log.
    const std::string aside = name + ".v0";
    close(fd_);
    fd_ = -1;
    if (renameat2(dir_fd, name.c_str(), dir_fd, aside.c_str(), RENAME_NOREPLACE) != 0) {
      *error = name_ + ": a log of the old format, and it cannot be moved aside to " + aside +
               ": " + std::strerror(errno);
      return false;
    }
    notice_ = name_ + ": a log of the old format (before seq and checkpoints): moved aside to " +
              aside + ", a new log begins";
  }
}

// The last record, from the end of the file: blocks read backwards until
// the last two lines are whole (a torn last line needs the one before it).
bool AuditLog::ReadLast(std::string* error) {
  if (size_ == 0) return true;
  std::string tail, block;
  off_t from = size_;
  while (from > 0 && std::count(tail.begin(), tail.end(), '\n') < 3) {
    const off_t at = std::max<off_t>(0, from - kTailBlock);
    if (!ReadAt(fd_, at, static_cast<size_t>(from - at), &block)) {
      *error = Reason(name_, errno);
      return false;
    }
    tail = block + tail;
    from = at;
  }
  const bool torn = tail.back() != '\n';
  if (torn) {
    // Ended, so that the next record is a line of its own.
    if (write(fd_, "\n", 1) != 1 || fdatasync(fd_) != 0) {
      *error = Reason(name_, errno);
      return false;
    }
    ++size_;
    tail += '\n';
  }
  // The whole lines of the tail, last first (the first piece is whole
  // only when the tail starts at the beginning of the file).
  std::vector<std::string_view> lines;
  std::string_view rest(tail);
  rest.remove_suffix(1);
  while (true) {
    const size_t nl = rest.rfind('\n');
    if (nl == std::string_view::npos) {
      if (from == 0) lines.push_back(rest);
      break;
    }
    lines.push_back(rest.substr(nl + 1));
    rest = rest.substr(0, nl);
    if (lines.size() == 2) break;
  }
  audit::LineHasher hasher;
  for (size_t i = 0; i < lines.size(); ++i) {
    audit::RecordView v;
    std::string why;
    const audit::ParseResult r = audit::ParseRecord(lines[i], &v, &why);
    if (r == audit::ParseResult::kTorn && i == 0) continue;  // chained over; verify names it
    if (r != audit::ParseResult::kOk) {
      *error = name_ + ": its last record is not valid (" + why +
               "): check it with `ward audit verify`, then move the log aside";
      return false;
    }
    if (hasher.Hash(lines[i]) != v.hash) {
      *error = name_ + ": its last record (seq " + std::to_string(v.seq) +
               ") does not match its hash: the log was changed; check it with `ward audit "
               "verify`, then move it aside";
      return false;
    }
    seq_ = v.seq;
    hash_ = std::string(v.hash);
    time_ = std::string(v.time);
    // Records a crash left without a checkpoint: one comes within the
    // interval (or at Close).
    if (!v.checkpoint) {
      uncovered_ = 1;
      due_ = std::chrono::steady_clock::now() + checkpoint_interval_;
    }
    return true;
  }
  return true;  // only a torn first record: the chain starts again at 1
}

bool AuditLog::WriteLocked(audit::Record r, std::string* error) {
  if (fd_ < 0) {
    *error = "the audit log is not open";
    return false;
  }
  r.seq = seq_ + 1;
  r.prev = hash_;
  // Times never go backwards in the log, even when the clock is set back.
  r.time = std::max(NowRfc3339(), time_);
  std::string hash;
  const std::string line = audit::RecordLine(r, &hash) + "\n";
  // O_APPEND, one write of the whole line; a short one is cut off again so
  // that no partial line stays in the middle of the log.
  const ssize_t n = write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = n < 0 ? errno : ENOSPC;
    // When even that fails the line stays torn: verify names it.
    if (n > 0 && ftruncate(fd_, size_) != 0) size_ += n;
    *error = Reason(name_, err);
    return false;
  }
  size_ += n;
  seq_ = r.seq;
  hash_ = hash;
  time_ = r.time;
  if (fdatasync(fd_) != 0) {
    *error = Reason(name_, errno);  // written, but perhaps not durable
    return false;
  }
  return true;
}

bool AuditLog::Append(const AuditEntry& e, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  audit::Record r;
  r.who = e.who;
  r.method = e.method;
  r.policy = e.policy;
  r.sha256 = e.sha256;
  r.generation = e.generation;
  r.result = e.result;
  if (!WriteLocked(std::move(r), error)) return false;
  if (uncovered_++ == 0) {
    due_ = std::chrono::steady_clock::now() + checkpoint_interval_;
    wake_.notify_all();
  }
  if (uncovered_ >= checkpoint_every_) {
    std::string checkpoint_error;
    if (!CheckpointLocked(&checkpoint_error) && on_error_) on_error_(checkpoint_error);
  }
  return true;
}

bool AuditLog::CheckpointLocked(std::string* error) {
  if (uncovered_ == 0) return true;
  audit::Record r;
  r.who = "wardd";
  r.method = "checkpoint";
  r.result = "ok";
  r.size = seq_;
  r.head = hash_;
  r.key_id = key_->id();
  const std::string sig = key_->Sign(trust::CheckpointBytes(r.size, r.head, r.key_id));
  if (sig.empty()) {
    *error = name_ + ": cannot sign a checkpoint";
    return false;
  }
  r.sig = trust::Base64(sig);
  if (!WriteLocked(std::move(r), error)) return false;
  uncovered_ = 0;
  return true;
}

bool AuditLog::Checkpoint(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  return CheckpointLocked(error);
}

std::string AuditLog::Head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::to_string(seq_) + ":" + hash_;
}

void AuditLog::Timer() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (uncovered_ == 0) {
      wake_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < due_) {
      wake_.wait_until(lock, due_);
      continue;
    }
    std::string error;
    if (!CheckpointLocked(&error)) {
      if (on_error_) on_error_(error);
      due_ = std::chrono::steady_clock::now() + checkpoint_interval_;  // tried again then
    }
  }
}

void AuditLog::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
    wake_.notify_all();
  }
  if (timer_.joinable()) timer_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0 || !key_) return;
  std::string error;
  if (!CheckpointLocked(&error) && on_error_) on_error_(error);
}

}  // namespace ward::agent
