// ward run's network layer without a verifier pass per run (ebpf.h,
// EbpfAttachShared). Loading Ward's programs costs over half a second of
// verification on this kernel; attaching loaded ones to a cgroup costs
// microseconds. So the programs of one policy (by hash), with their filled
// maps, are loaded once and kept pinned as a cache, and each run only links
// them to its own cgroup.
#include <bpf/bpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "enforcers/linux/ebpf.h"
#include "enforcers/linux/files.h"

namespace ward::enforce {
namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string ProgPin(const std::string& link) {
  return "prog" + link.substr(4);
}  // link_x -> prog_x

// The folder of a cache entry's object (EbpfApply made it, in its own
// folder under the entry's), when every program is pinned there; "".
std::string CacheObject(const std::string& cache_name) {
  const std::vector<EbpfPinnedObject> objects = EbpfPinnedObjects(cache_name);
  if (objects.empty() || objects.back().seq == 0) return "";
  const std::string& dir = objects.back().dir;
  if (!Exists(dir + "/ward_cfg")) return "";
  for (const auto& [link, type] : EbpfHookLinks()) {
    if (!Exists(dir + "/" + ProgPin(link))) return "";
  }
  return dir;
}

// A run's links to a cache object `object`: <run folder>/<object id>.
std::string RunObject(const std::string& run, const std::string& object) {
  return run + object.substr(object.rfind('/'));
}

void Unpin(const std::string& run, const std::string& dir) {
  for (const auto& [link, type] : EbpfHookLinks()) unlink((dir + "/" + link).c_str());
  rmdir(dir.c_str());
  rmdir(run.c_str());
}

// After a normal apply under the cache's name: pins every program next to
// its maps and moves the links (attached to the first run's cgroup) to the
// run's own folder.
bool TurnIntoCache(const std::string& cache, const std::string& run_dir, std::string* error) {
  const std::string run = RunObject(run_dir, cache);
  if (mkdir(run_dir.c_str(), 0700) != 0 || mkdir(run.c_str(), 0700) != 0) {
    *error = Errno("creating " + run, errno);
    return false;
  }
  for (const auto& [link, type] : EbpfHookLinks()) {
    const int link_fd = bpf_obj_get((cache + "/" + link).c_str());
    if (link_fd < 0) {
      *error = Errno("opening " + cache + "/" + link, errno);
      return false;
    }
    bpf_link_info info{};
    uint32_t len = sizeof(info);
    const int rc = bpf_obj_get_info_by_fd(link_fd, &info, &len);
    close(link_fd);
    const int prog_fd = rc == 0 ? bpf_prog_get_fd_by_id(info.prog_id) : -1;
    if (prog_fd < 0) {
      *error = Errno("finding the program of " + link, errno);
      return false;
    }
    const int pinned = bpf_obj_pin(prog_fd, (cache + "/" + ProgPin(link)).c_str());
    close(prog_fd);
    if (pinned != 0) {
      *error = Errno("pinning the program of " + link, errno);
      return false;
    }
    if (rename((cache + "/" + link).c_str(), (run + "/" + link).c_str()) != 0) {
      *error = Errno("moving " + link + " to " + run, errno);
      return false;
    }
  }
  return true;
}

// Links the cached programs to the run's cgroup; all or nothing.
bool LinkCached(const std::string& cache, const std::string& run_dir, const Cgroup& cgroup,
                std::string* error) {
  const std::string run = RunObject(run_dir, cache);
  const std::string cg_path = cgroup.mount + "/" + cgroup.relative;
  const int cg_fd = open(cg_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd < 0) {
    *error = Errno("opening cgroup " + cg_path, errno);
    return false;
  }
  if (mkdir(run_dir.c_str(), 0700) != 0 || mkdir(run.c_str(), 0700) != 0) {
    *error = Errno("creating " + run, errno);
    rmdir(run_dir.c_str());
    close(cg_fd);
    return false;
  }
  std::vector<int> links;
  bool ok = true;
  for (const auto& [link, type] : EbpfHookLinks()) {
    const int prog_fd = bpf_obj_get((cache + "/" + ProgPin(link)).c_str());
    const int link_fd =
        prog_fd < 0 ? -1
                    : bpf_link_create(prog_fd, cg_fd, static_cast<bpf_attach_type>(type), nullptr);
    const int err = errno;
    if (prog_fd >= 0) close(prog_fd);
    if (link_fd < 0) {
      *error = Errno("attaching the cached program of " + link, err);
      ok = false;
      break;
    }
    links.push_back(link_fd);
    if (bpf_obj_pin(link_fd, (run + "/" + link).c_str()) != 0) {
      *error = Errno("pinning " + link, errno);
      ok = false;
      break;
    }
  }
  for (int fd : links) {
    if (!ok) bpf_link_detach(fd);
    close(fd);
  }
  close(cg_fd);
  if (!ok) Unpin(run_dir, run);
  return ok;
}

// `name` in Ward's state folder `dir` opened (created if missing, never
// through a link: files.h) and locked exclusively: its descriptor, or -1
// with *error.
int LockFile(const std::string& dir, const std::string& name, std::string* error) {
  const int dir_fd = OpenStateDir(dir, error);
  if (dir_fd < 0) {
    *error = "locking: " + *error;
    return -1;
  }
  const int fd = OpenStateFile(dir_fd, name, O_RDWR | O_CREAT, error);
  close(dir_fd);
  if (fd < 0) {
    *error = "locking " + dir + "/" + *error;
    return -1;
  }
  if (flock(fd, LOCK_EX) != 0) {
    *error = Errno("locking " + dir + "/" + name, errno);
    close(fd);
    return -1;
  }
  return fd;
}

void Unlock(int fd) {
  flock(fd, LOCK_UN);
  close(fd);
}

// The program type of the programs a cgroup hook runs.
bpf_prog_type ProgTypeOf(int attach) {
  switch (attach) {
    case BPF_CGROUP_INET_INGRESS:
    case BPF_CGROUP_INET_EGRESS:
      return BPF_PROG_TYPE_CGROUP_SKB;
    case BPF_CGROUP_INET_SOCK_CREATE:
      return BPF_PROG_TYPE_CGROUP_SOCK;
    default:  // bind, connect, sendmsg: inet4, inet6 and unix
      return BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
  }
}

// Links an allow-all program (r0 = 1; exit) to `cg_fd` at hook `attach`
// and pins the link at `pin`.
bool PinAllowAll(int cg_fd, int attach, const std::string& pin, std::string* error) {
  const bpf_insn allow_all[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1},  // r0 = 1
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},                   // exit
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts,
              .expected_attach_type = static_cast<bpf_attach_type>(attach));
  const int prog = bpf_prog_load(ProgTypeOf(attach), "ward_anchor", "GPL", allow_all, 2, &opts);
  if (prog < 0) {
    *error = Errno("loading the anchor program for " + pin, errno);
    return false;
  }
  const int link = bpf_link_create(prog, cg_fd, static_cast<bpf_attach_type>(attach), nullptr);
  const int err = errno;
  close(prog);
  if (link < 0) {
    *error = Errno("linking " + pin, err);
    return false;
  }
  const bool pinned = bpf_obj_pin(link, pin.c_str()) == 0;
  if (!pinned) *error = Errno("pinning " + pin, errno);
  close(link);  // unpinned, the link goes with its last descriptor
  return pinned;
}

}  // namespace

bool EbpfAnchorHooks(const std::string& cgroup_mount, const std::string& lock_dir,
                     std::string* error) {
  const std::string dir = EbpfPinDir("anchor");
  const auto hooks = EbpfHookLinks();
  // Created in order under the lock: the last pin says they all are.
  const auto complete = [&] { return Exists(dir + "/" + hooks.back().first); };
  if (complete()) return true;
  const int lock = LockFile(lock_dir, "ebpf-anchor.lock", error);
  if (lock < 0) return false;
  bool ok = true;
  if (!complete()) {
    const std::string cg = cgroup_mount + "/ward/anchor";
    mkdir(EbpfPinDir("").c_str(), 0700);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = Errno("creating " + dir, errno);
      ok = false;
    } else if (mkdir(cg.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = Errno("creating " + cg, errno);
      ok = false;
    }
    const int cg_fd = ok ? open(cg.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (ok && cg_fd < 0) {
      *error = Errno("opening " + cg, errno);
      ok = false;
    }
    // Each hook on its own: one this kernel lacks leaves the others.
    for (const auto& [link, type] : hooks) {
      if (cg_fd < 0) break;
      const std::string pin = dir + "/" + link;
      if (!Exists(pin) && !PinAllowAll(cg_fd, type, pin, error)) ok = false;
    }
    if (cg_fd >= 0) close(cg_fd);
  }
  Unlock(lock);
  return ok;
}

bool EbpfAttachShared(const ir::Policy& policy, const std::string& key, const Cgroup& cgroup,
                      const EbpfApplyOptions& options, const std::string& run_name,
                      const std::string& lock_dir, DiagnosticSink& sink, bool* cache_hit,
                      std::string* error) {
  *cache_hit = false;
  const std::string cache_name = "cache-" + key + "-" + EbpfObjectIdentity().substr(0, 8) +
                                 (options.abstract_unix_by_landlock ? "l" : "");
  const std::string run = EbpfPinDir(run_name);
  // A complete entry is only ever read: link to it without waiting. Its
  // time says when it was last used (EbpfPruneCache). Should it be pruned
  // between the check and the links, it is loaded again below.
  if (const std::string cache = CacheObject(cache_name); !cache.empty()) {
    utimensat(AT_FDCWD, EbpfPinDir(cache_name).c_str(), nullptr, 0);
    if (LinkCached(cache, run, cgroup, error)) {
      *cache_hit = true;
      return true;
    }
    if (!CacheObject(cache_name).empty()) return false;
    error->clear();
  }
  // One run at a time creates a given entry; others wait for it, not for
  // the entries of other policies.
  const std::string lock_name = "ebpf-" + cache_name + ".lock";
  const int lock = LockFile(lock_dir, lock_name, error);
  if (lock < 0) return false;
  bool ok;
  if (const std::string cache = CacheObject(cache_name); !cache.empty()) {
    *cache_hit = true;
    ok = LinkCached(cache, run, cgroup, error);
  } else {
    // Leftovers of an interrupted creation go first.
    bool removed = false;
    EbpfRemove(cache_name, &removed, error);
    error->clear();
    ir::Policy named = policy;
    named.name = cache_name;
    EbpfApplyResult result;
    ok = EbpfApply(named, cgroup, {}, options, sink, &result, error);
    if (ok && !TurnIntoCache(result.object_dir, run, error)) {
      std::string ignored;
      EbpfRemove(run_name, &removed, &ignored);
      EbpfRemove(cache_name, &removed, &ignored);
      ok = false;
    }
  }
  Unlock(lock);
  if (ok) unlink((lock_dir + "/" + lock_name).c_str());
  return ok;
}

int EbpfPruneCache(size_t keep, int64_t idle_seconds) {
  const std::string identity = EbpfObjectIdentity().substr(0, 8);
  std::vector<std::pair<int64_t, std::string>> ours;  // (last use, name)
  std::vector<std::string> doomed;
  const std::string root = EbpfPinDir("");
  DIR* dir = opendir(root.c_str());
  if (!dir) return 0;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind("cache-", 0) != 0) continue;
    // cache-<key>-<identity>[l] (EbpfAttachShared)
    if (name.compare(name.rfind('-') + 1, identity.size(), identity) != 0) {
      doomed.push_back(name);
      continue;
    }
    struct stat st;
    if (stat((root + "/" + name).c_str(), &st) == 0) ours.emplace_back(st.st_mtim.tv_sec, name);
  }
  closedir(dir);
  std::sort(ours.rbegin(), ours.rend());  // most recently used first
  const int64_t now = time(nullptr);
  for (size_t i = keep; i < ours.size(); ++i) {
    if (now - ours[i].first >= idle_seconds) doomed.push_back(ours[i].second);
  }
  int removed_count = 0;
  for (const std::string& name : doomed) {
    bool removed = false;
    std::string ignored;
    EbpfRemove(name, &removed, &ignored);
    removed_count += removed;
  }
  return removed_count;
}

}  // namespace ward::enforce
