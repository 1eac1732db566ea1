#include "enforcers/linux/files.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>

namespace ward::enforce {
namespace {

std::string Reason(const std::string& what, int err) { return what + ": " + std::strerror(err); }

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// `.NAME.ward-PID-N`: hidden, and never a name Ward reads (run records
// start with "run-", cache entries end in ".cbor" or ".bpf"). NAME is cut
// so that the whole stays within NAME_MAX.
std::string TempName(const std::string& base) {
  static unsigned counter = 0;
  return "." + base.substr(0, NAME_MAX - 40) + ".ward-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
}

// Creates a fresh temporary file for `base` in the folder `dir_fd` (mode
// `mode` less the umask): its descriptor and *name, or -1 with errno set.
int CreateTemp(int dir_fd, const std::string& dir, const std::string& base, mode_t mode,
               std::string* name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    *name = TempName(base);
    const std::string at = dir_fd == AT_FDCWD ? dir + "/" + *name : *name;
    const int fd =
        openat(dir_fd, at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) {
      if (dir_fd == AT_FDCWD) *name = at;
      return fd;
    }
  }
  return -1;
}

// Writes all of `bytes` to `fd`: 0, or the errno of the failed write. A
// reader that went away is EPIPE, not a SIGPIPE that kills Ward before it
// cleans up.
int WriteAll(int fd, std::string_view bytes) {
  sigset_t pipe, old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  int err = 0;
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == EPIPE && !was_pending) {
    const timespec zero{};
    sigtimedwait(&pipe, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return err;
}

// Writes, syncs and closes the temporary `fd`: 0 or the first errno.
int FinishTemp(int fd, std::string_view bytes) {
  int err = WriteAll(fd, bytes);
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  return err;
}

void SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);  // the renames' durability only; they are done either way
  close(fd);
}

// The kernel's fs.protected_symlinks rule, which following a link by hand
// would bypass: a link in a sticky folder that others may write (/tmp) is
// followed only when it is the caller's or the folder owner's; another
// user's could point a root `-o` anywhere.
bool MayFollow(const std::string& link, const struct stat& st) {
  struct stat dir;
  if (stat(DirOf(link).c_str(), &dir) != 0) return false;
  const bool shared = (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH);
  return !shared || st.st_uid == geteuid() || st.st_uid == dir.st_uid;
}

// Follows `path` through symbolic links to the name that is not one:
// *target, with *st its lstat and *exists false when nothing is there.
bool ResolveLinks(const std::string& path, std::string* target, struct stat* st, bool* exists,
                  std::string* error) {
  std::string current = path;
  for (int level = 0; level <= kMaxLinks; ++level) {
    if (lstat(current.c_str(), st) != 0) {
      if (errno != ENOENT) {
        *error = Reason(path, errno);
        return false;
      }
      *exists = false;
      *target = current;
      return true;
    }
    if (!S_ISLNK(st->st_mode)) {
      *exists = true;
      *target = current;
      return true;
    }
    if (!MayFollow(current, *st)) {
      *error = Reason(path, EACCES);
      return false;
    }
    char link[PATH_MAX];
    const ssize_t n = readlink(current.c_str(), link, sizeof link);
    if (n < 0 || n == static_cast<ssize_t>(sizeof link)) {
      *error = Reason(path, n < 0 ? errno : ENAMETOOLONG);
      return false;
    }
    const std::string to(link, static_cast<size_t>(n));
    current = to.front() == '/' ? to : DirOf(current) + "/" + to;
  }
  *error = Reason(path, ELOOP);
  return false;
}

// Creates the missing folders above `path` (as mkdir -p), recording each.
bool MakeParents(const std::string& path, std::vector<std::string>* made, std::string* error) {
  std::vector<std::string> missing;
  struct stat st;
  for (std::string dir = DirOf(path); lstat(dir.c_str(), &st) != 0; dir = DirOf(dir)) {
    if (errno != ENOENT) break;  // the temporary file's creation says why
    missing.push_back(dir);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      *error = Reason(*it, errno);
      return false;
    }
    made->push_back(*it);
  }
  return true;
}

// Opens the character device or FIFO `target` (lstat `st`) for writing
// through: its descriptor, blocking again, or -1 with *error.
int OpenThrough(const std::string& path, const std::string& target, const struct stat& st,
                std::string* error) {
  // O_NONBLOCK: a FIFO without a reader is ENXIO at once instead of a hang.
  const int fd = open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno == ENXIO && S_ISFIFO(st.st_mode) ? path + ": a FIFO without a reader"
                                                    : Reason(path, errno);
    return -1;
  }
  struct stat now;
  if (fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
    *error = path + ": changed while being opened";
  } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    *error = Reason(path, errno);
  } else {
    return fd;
  }
  close(fd);
  return -1;
}

// Writes `bytes` to a new temporary file beside `target` (`st`: the lstat
// of the file it replaces, if `exists`), with that file's owner and mode:
// *temp, or false with *error and nothing left.
bool WriteBeside(const std::string& path, const std::string& target, const struct stat& st,
                 bool exists, std::string_view bytes, std::string* temp, std::string* error) {
  const int fd = CreateTemp(AT_FDCWD, DirOf(target), BaseOf(target), exists ? 0600 : 0666, temp);
  if (fd < 0) {
    *error = Reason(path, errno);
    return false;
  }
  // fchown first: it clears set-id bits.
  if (exists && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
      fchown(fd, st.st_uid, st.st_gid) != 0) {
    errno = 0;  // not ours to give: the new file is the caller's, as an editor's would be
  }
  int err = exists && fchmod(fd, st.st_mode & 07777) != 0 ? errno : 0;
  if (err != 0) close(fd);
  if (err == 0) err = FinishTemp(fd, bytes);
  if (err != 0) {
    unlink(temp->c_str());
    *error = Reason(path, err);
    return false;
  }
  return true;
}

}  // namespace

StagedFiles::~StagedFiles() {
  if (!committed_) Abort();
}

bool StagedFiles::Stage(const std::string& path, std::string_view bytes, std::string* error) {
  std::string target;
  struct stat st;
  bool exists = false;
  if (path.empty() || path.back() == '/') {
    *error = Reason(path.empty() ? "\"\"" : path, path.empty() ? ENOENT : EISDIR);
    return false;
  }
  if (!ResolveLinks(path, &target, &st, &exists, error)) return false;
  if (exists && S_ISDIR(st.st_mode)) {
    *error = Reason(path, EISDIR);
    return false;
  }
  if (exists && S_ISSOCK(st.st_mode)) {
    *error = path + ": is a socket";
    return false;
  }
  // No policy or artifact belongs on a disk; a slip of `-o` would overwrite one.
  if (exists && S_ISBLK(st.st_mode)) {
    *error = path + ": is a block device";
    return false;
  }
  if (exists && !S_ISREG(st.st_mode)) {  // a character device or a FIFO: written through
    const int fd = OpenThrough(path, target, st, error);
    if (fd < 0) return false;
    entries_.push_back({path, target, "", fd, std::string(bytes)});
    return true;
  }
  if (exists && faccessat(AT_FDCWD, target.c_str(), W_OK, AT_EACCESS) != 0) {
    *error = Reason(path, errno);
    return false;
  }
  if (!exists && create_folders_ && !MakeParents(target, &made_dirs_, error)) return false;
  std::string temp;
  if (!WriteBeside(path, target, st, exists, bytes, &temp, error)) return false;
  entries_.push_back({path, target, temp, -1, {}});
  return true;
}

bool StagedFiles::Commit(std::string* error) {
  committed_ = true;
  std::set<std::string> dirs;
  for (Entry& e : entries_) {
    int err = 0;
    if (e.fd >= 0) {
      err = WriteAll(e.fd, e.bytes);
      if (close(e.fd) != 0 && err == 0) err = errno;
      e.fd = -1;
    } else if (rename(e.temp.c_str(), e.target.c_str()) != 0) {
      err = errno;
    } else {
      e.temp.clear();
      dirs.insert(DirOf(e.target));
    }
    if (err != 0) {
      *error = Reason(e.path, err);
      Abort();
      return false;
    }
  }
  for (const std::string& dir : dirs) SyncDir(dir);
  entries_.clear();
  made_dirs_.clear();
  return true;
}

void StagedFiles::Abort() {
  for (Entry& e : entries_) {
    if (!e.temp.empty()) unlink(e.temp.c_str());
    if (e.fd >= 0) close(e.fd);
  }
  entries_.clear();
  // Empty unless a commit failed half way; rmdir leaves a folder with files.
  for (auto it = made_dirs_.rbegin(); it != made_dirs_.rend(); ++it) rmdir(it->c_str());
  made_dirs_.clear();
}

bool WriteUserFile(const std::string& path, std::string_view bytes, std::string* error) {
  StagedFiles files;
  return files.Stage(path, bytes, error) && files.Commit(error);
}

int OpenStateDir(const std::string& dir, std::string* error) {
  if (dir.empty() || dir.front() != '/') {
    *error = dir + ": not an absolute path";
    return -1;
  }
  std::vector<std::string> missing;
  struct stat st;
  for (std::string d = dir; d != "/" && lstat(d.c_str(), &st) != 0 && errno == ENOENT;
       d = DirOf(d)) {
    missing.push_back(d);
  }
  bool created = false;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    const bool last = *it == dir;
    if (mkdir(it->c_str(), last ? 0700 : 0755) == 0) {
      created = last;
      // A parent 0755 whatever the umask took away (0500 would stop the next mkdir).
      if (!last && chmod(it->c_str(), 0755) != 0) {
        *error = Reason(*it, errno);
        return -1;
      }
    } else if (errno != EEXIST) {
      *error = Reason(*it, errno);
      return -1;
    }
  }
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    *error = lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode) ? dir + ": is a symbolic link"
                                                                 : Reason(dir, err);
    return -1;
  }
  // Made by us: 0700 whatever the umask took away.
  if ((created && fchmod(fd, 0700) != 0) || fstat(fd, &st) != 0) {
    *error = Reason(dir, errno);
    close(fd);
    return -1;
  }
  char mode[8];
  snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (st.st_uid != geteuid()) {
    *error =
        dir + ": owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(geteuid());
  } else if ((st.st_mode & 07777) != 0700) {
    *error = dir + ": mode " + mode + ", not 0700";
  } else {
    return fd;
  }
  close(fd);
  return -1;
}

bool WriteStateFile(int dir_fd, const std::string& name, std::string_view bytes,
                    std::string* error) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    *error = name + ": not a file name";
    return false;
  }
  std::string temp;
  const int fd = CreateTemp(dir_fd, "", name, 0600, &temp);
  if (fd < 0) {
    *error = Reason(name, errno);
    return false;
  }
  int err = FinishTemp(fd, bytes);
  if (err == 0 && renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) err = errno;
  if (err != 0) {
    unlinkat(dir_fd, temp.c_str(), 0);
    *error = Reason(name, err);
    return false;
  }
  fsync(dir_fd);  // the rename's durability only: it is done either way
  return true;
}

bool WriteStateFile(const std::string& dir, const std::string& name, std::string_view bytes,
                    std::string* error) {
  const int dir_fd = OpenStateDir(dir, error);
  if (dir_fd < 0) return false;
  const bool ok = WriteStateFile(dir_fd, name, bytes, error);
  close(dir_fd);
  if (!ok) *error = dir + "/" + *error;
  return ok;
}

int OpenStateFile(int dir_fd, const std::string& name, int flags, std::string* error) {
  const int fd = openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    *error = Reason(name, errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    *error = name + ": not a regular file of uid " + std::to_string(geteuid()) +
             " that only it may write";
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace ward::enforce
