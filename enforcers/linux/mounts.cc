#include "enforcers/linux/mounts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "backends/landlock/walk.h"

namespace ward::enforce {
namespace {

// Reached without a symbolic link anywhere on the path (realpath gives it
// back), so a mount lands where the policy says and nowhere a link points.
bool Real(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr && path == resolved;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool Writable(const ir::FileRules& rules, const std::string& path,
              const std::optional<std::string>& home) {
  return rules.Decide(path, ir::FsRight::kWrite, home).allow;
}

bool SetAttr(const char* path, uint64_t set, uint64_t clear) {
  mount_attr attr{};
  attr.attr_set = set;
  attr.attr_clr = clear;
  return mount_setattr(AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) == 0;
}

}  // namespace

std::vector<std::string> PlanDenyMounts(ir::FileRules& rules,
                                        const std::optional<std::string>& home) {
  auto& write = rules.rules[static_cast<size_t>(ir::FsRight::kWrite)];
  std::vector<std::string> paths, erased;
  for (const auto& [pattern, verdict] : write) {
    if (verdict.allow || pattern.find('*') != std::string::npos) continue;
    const std::string path = backend::landlock::ExpandHome(pattern, home);
    struct stat st;
    if (path.empty() || path == "/" || lstat(path.c_str(), &st) != 0 ||
        !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) || !Real(path)) {
      continue;
    }
    if (!Writable(rules, Parent(path), home)) continue;  // not nested in a writable tree
    // An `allow write` below it would be lost under a read-only bind.
    bool allow_below = false;
    for (const auto& [other, v] : write) {
      allow_below |= v.allow && backend::landlock::CanMatchBelow(
                                    backend::landlock::ExpandHome(other, home), path);
    }
    if (allow_below) continue;
    paths.push_back(path);
    erased.push_back(pattern);
  }
  for (const std::string& p : erased) write.erase(p);
  if (!erased.empty()) rules.BuildIndex();
  return paths;
}

bool PlanMounts(const ir::FileRules& rules, const std::optional<std::string>& home,
                const std::vector<ir::UnixRule>& unix_rules,
                const std::vector<std::string>& writable_grants,
                const std::vector<std::string>& hide, MountPlan* plan, std::string* error) {
  for (const std::string& h : hide) {
    struct stat st;
    if (stat(h.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && Real(h)) plan->hidden.push_back(h);
  }
  for (const std::string& w : writable_grants) {
    if (w == "/") plan->read_only_root = false;
    struct stat st;
    // Device nodes are written through on a read-only mount anyway.
    if (lstat(w.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      plan->writable.push_back(w);
    }
  }
  if (!plan->read_only_root) plan->writable.clear();
  for (const ir::UnixRule& u : unix_rules) {
    if (!u.allow || u.abstract || u.name.empty() || u.name.front() != '/') continue;
    struct stat st;
    if (lstat(u.name.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && Real(u.name)) {
      plan->read_only.push_back(u.name);
    } else if (Writable(rules, Parent(u.name), home)) {
      *error = "unix socket " + u.name +
               " is granted in a folder the workload may write, but it is not there to be "
               "fixed in place: the workload could put a link to another socket at its path "
               "(start the server first, or grant a socket in a folder the workload cannot "
               "write)";
      return false;
    }
  }
  // Pin the directories between each protected path and the first ancestor
  // whose parent the workload cannot write.
  for (const std::string& p : plan->read_only) {
    for (std::string a = Parent(p); a != "/" && Writable(rules, Parent(a), home); a = Parent(a)) {
      if (std::find(plan->pinned.begin(), plan->pinned.end(), a) == plan->pinned.end()) {
        plan->pinned.push_back(a);
      }
    }
  }
  // Outermost first, so an inner bind is not covered by an outer one.
  std::sort(plan->pinned.begin(), plan->pinned.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return true;
}

bool ApplyMounts(const MountPlan& plan, MountFailure* f) {
  auto fail = [f](const char* step) {
    f->step = step;
    f->error = errno;
    return false;
  };
  if (unshare(CLONE_NEWNS) != 0) return fail("unshare(CLONE_NEWNS)");
  // Nothing mounted here reaches the host, nothing the host mounts later
  // reaches the run.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return fail("mount --make-rprivate /");
  }
  for (const std::string& h : plan.hidden) {
    if (mount("ward-hidden", h.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=4k,mode=000") != 0) {
      return fail("mount tmpfs over Ward's state");
    }
  }
  if (plan.read_only_root) {
    if (!SetAttr("/", MOUNT_ATTR_RDONLY, 0)) return fail("mount_setattr / read-only");
    for (const std::string& w : plan.writable) {
      if (mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        return fail("mount --rbind (writable grant)");
      }
      if (!SetAttr(w.c_str(), 0, MOUNT_ATTR_RDONLY)) return fail("mount_setattr read-write");
    }
  }
  for (const std::string& p : plan.pinned) {
    if (mount(p.c_str(), p.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return fail("mount --rbind (pin)");
    }
  }
  for (const std::string& p : plan.read_only) {
    if (mount(p.c_str(), p.c_str(), nullptr, MS_BIND, nullptr) != 0) return fail("mount --bind");
    if (!SetAttr(p.c_str(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) {
      return fail("mount_setattr read-only");
    }
  }
  // The working directory was entered before these mounts: entered again,
  // it resolves through them (a writable grant's bind above all), or
  // relative writes there meet the read-only mount beneath (EROFS).
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && cwd[0] == '/') (void)!chdir(cwd);
  return true;
}

std::string DescribeMounts(const MountPlan& plan) {
  std::string out;
  for (const std::string& h : plan.hidden) out += "hide " + h + " (empty read-only tmpfs)\n";
  if (plan.read_only_root) {
    out += "every mount read-only, but " + std::to_string(plan.writable.size()) +
           " writable grants bound read-write\n";
  } else {
    out += "mounts left as they are (the policy lets the workload write /)\n";
  }
  for (const std::string& p : plan.read_only) {
    out += "read-only bind " + p + " (exact deny write, or a granted unix socket)\n";
  }
  for (const std::string& p : plan.pinned) out += "pinned " + p + " (cannot be moved)\n";
  return out;
}

}  // namespace ward::enforce
