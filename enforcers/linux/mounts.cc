#include "enforcers/linux/mounts.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "backends/landlock/walk.h"

namespace ward::enforce {
namespace {

// A directory or regular file reached without a symbolic link anywhere on
// the path (realpath gives the path back), so the mount lands where the
// pattern says and nowhere a link points.
bool MountablePath(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    return false;
  }
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr && path == resolved;
}

}  // namespace

std::vector<std::string> PlanReadOnlyMounts(ir::FileRules& rules,
                                            const std::optional<std::string>& home) {
  auto& write = rules.rules[static_cast<size_t>(ir::FsRight::kWrite)];
  std::vector<std::string> paths;
  std::vector<std::string> erased;
  for (const auto& [pattern, verdict] : write) {
    if (verdict.allow || pattern.find('*') != std::string::npos) continue;
    const std::string path = backend::landlock::ExpandHome(pattern, home);
    if (path.empty() || path == "/" || !MountablePath(path)) continue;
    // Nested in an allowed tree: the parent is writable.
    const std::string parent = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
    if (!rules.Decide(parent, ir::FsRight::kWrite, home).allow) continue;
    // An `allow write` below it would be lost under a read-only mount.
    bool allow_below = false;
    for (const auto& [other, v] : write) {
      const std::string o = backend::landlock::ExpandHome(other, home);
      allow_below |= v.allow && backend::landlock::CanMatchBelow(o, path);
    }
    if (allow_below) continue;
    paths.push_back(path);
    erased.push_back(pattern);
  }
  for (const std::string& p : erased) write.erase(p);
  if (!erased.empty()) rules.BuildIndex();
  return paths;
}

bool ApplyReadOnlyMounts(const std::vector<std::string>& paths, MountFailure* f) {
  if (paths.empty()) return true;
  auto fail = [f](const char* step) {
    f->step = step;
    f->error = errno;
    return false;
  };
  if (unshare(CLONE_NEWNS) != 0) return fail("unshare(CLONE_NEWNS)");
  // Nothing mounted here reaches the host, and nothing the host mounts
  // later reaches the run.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return fail("mount --make-rprivate /");
  }
  for (const std::string& p : paths) {
    if (mount(p.c_str(), p.c_str(), nullptr, MS_BIND, nullptr) != 0) return fail("mount --bind");
    // A bind remount sets the mount's flags as given: carry noexec over,
    // or the remount would allow executing where the host does not.
    struct statvfs vfs;
    if (statvfs(p.c_str(), &vfs) != 0) return fail("statvfs");
    const unsigned long noexec = (vfs.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
    if (mount(nullptr, p.c_str(), nullptr,
              MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | noexec, nullptr) != 0) {
      return fail("mount -o remount,bind,ro");
    }
  }
  return true;
}

}  // namespace ward::enforce
