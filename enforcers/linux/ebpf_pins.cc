// The ebpf enforcer's pins (ebpf.h, backends/ebpf/README.md "Pins"): one
// folder per loaded object under the policy's folder, the config word read
// and flipped atomically, links detached and pins removed per object.
#include <bpf/bpf.h>
#include <dirent.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "backends/ebpf/bpf/ward_ebpf.h"
#include "enforcers/linux/ebpf.h"

namespace ward::enforce {
namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// "<16 hex digits>-<decimal>": the folder of one object.
bool ParseObjectId(const std::string& name, std::string* identity, uint64_t* seq) {
  const size_t dash = name.find('-');
  if (dash != 16 || dash + 1 >= name.size() || name.size() > dash + 1 + 19) return false;
  for (size_t i = 0; i < dash; ++i) {
    if (!isxdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  uint64_t n = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(name[i]))) return false;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (n == 0) return false;
  *identity = name.substr(0, dash);
  *seq = n;
  return true;
}

void Describe(EbpfPinnedObject* o) {
  o->has_config = Exists(o->dir + "/ward_cfg");
  o->has_links = true;
  o->any_link = false;
  for (const auto& [link, type] : EbpfHookLinks()) {
    const bool there = Exists(o->dir + "/" + link);
    o->has_links &= there;
    o->any_link |= there;
  }
}

}  // namespace

std::vector<EbpfPinnedObject> EbpfPinnedObjects(const std::string& policy) {
  std::vector<EbpfPinnedObject> out;
  const std::string root = EbpfPinDir(policy);
  DIR* d = opendir(root.c_str());
  if (!d) return out;
  bool flat = false;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    EbpfPinnedObject o;
    if (ParseObjectId(n, &o.identity, &o.seq)) {
      o.id = n;
      o.dir = root + "/" + n;
      out.push_back(o);
    } else if (e->d_type != DT_DIR) {
      flat = true;  // a pin of the flat layout
    }
  }
  closedir(d);
  if (flat) {
    EbpfPinnedObject o;
    o.dir = root;
    out.push_back(o);
  }
  std::sort(out.begin(), out.end(),
            [](const EbpfPinnedObject& a, const EbpfPinnedObject& b) { return a.seq < b.seq; });
  for (EbpfPinnedObject& o : out) Describe(&o);
  return out;
}

std::string EbpfObjectDir(const std::string& policy) {
  const std::vector<EbpfPinnedObject> objects = EbpfPinnedObjects(policy);
  for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
    if (it->has_config && it->has_links) return it->dir;
  }
  return "";
}

bool EbpfReadConfig(int cfg_fd, EbpfConfig* out, std::string* error) {
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(cfg_fd, &info, &len) != 0) {
    *error = Errno("reading the config map's info", errno);
    return false;
  }
  if (info.value_size != sizeof(ward_config)) {
    *error = "the config map has an unknown layout";
    return false;
  }
  unsigned char value[sizeof(ward_config)];
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(cfg_fd, &zero, value) != 0) {
    *error = Errno("reading the generation", errno);
    return false;
  }
  *out = {};
  out->atomic = (info.map_flags & BPF_F_MMAPABLE) != 0;
  if (out->atomic) {
    ward_config c;
    std::memcpy(&c, value, sizeof c);
    out->generation = static_cast<uint32_t>(c.state & WARD_STATE_GENERATION);
    out->flags = static_cast<uint32_t>(c.state >> WARD_STATE_FLAGS_SHIFT);
    out->cgroup_id = c.cgroup_id;
    out->cgroup_level = c.cgroup_level;
  } else {
    // The layout of earlier Wards: {u32 generation, u32 level, u64 cgroup
    // id, u32 flags, u32 pad}.
    uint32_t gen, level, flags;
    std::memcpy(&gen, value, 4);
    std::memcpy(&level, value + 4, 4);
    std::memcpy(&out->cgroup_id, value + 8, 8);
    std::memcpy(&flags, value + 16, 4);
    out->generation = gen & 1u;
    out->cgroup_level = level;
    out->flags = flags;
  }
  return true;
}

bool EbpfReadConfigAt(const std::string& dir, EbpfConfig* out, std::string* error) {
  const int fd = bpf_obj_get((dir + "/ward_cfg").c_str());
  if (fd < 0) {
    *error = Errno("opening " + dir + "/ward_cfg", errno);
    return false;
  }
  const bool ok = EbpfReadConfig(fd, out, error);
  close(fd);
  return ok;
}

uint64_t EbpfState(uint32_t generation, uint32_t flags) {
  return (generation & WARD_STATE_GENERATION) |
         (static_cast<uint64_t>(flags) << WARD_STATE_FLAGS_SHIFT);
}

bool EbpfStoreState(int cfg_fd, uint64_t state, std::string* error) {
  const long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE, MAP_SHARED, cfg_fd, 0);
  if (p == MAP_FAILED) {
    *error = Errno("mapping the config map", errno);
    return false;
  }
  // The one step that changes what is enforced: an aligned 8-byte store,
  // which no program can see half done.
  __atomic_store_n(&static_cast<ward_config*>(p)->state, state, __ATOMIC_SEQ_CST);
  munmap(p, static_cast<size_t>(page));
  return true;
}

void EbpfWaitForPrograms() {
  // MEMBARRIER_CMD_GLOBAL is synchronize_rcu() on a machine with more than
  // one CPU; every cgroup program runs inside an RCU read-side section, so
  // each run that read the old state word has ended when it returns.
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  // nohz_full refuses it: give runs in flight time to end (a run that still
  // reads the old generation finds fewer entries: it refuses more).
  const timespec ts{0, 50 * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

bool EbpfDetachLinks(const std::string& dir, std::string* error) {
  bool ok = true;
  for (const auto& [link, type] : EbpfHookLinks()) {
    const std::string path = dir + "/" + link;
    if (!Exists(path)) continue;
    const int fd = bpf_obj_get(path.c_str());
    if (fd < 0 || bpf_link_detach(fd) != 0) {
      *error = Errno("detaching " + path, errno);
      ok = false;
    }
    if (fd >= 0) close(fd);
  }
  return ok;
}

void EbpfUnpinFolder(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    unlink((dir + "/" + n).c_str());  // a folder (of the nested layout) stays
  }
  closedir(d);
  rmdir(dir.c_str());
}

bool EbpfRemoveObject(const EbpfPinnedObject& object, std::string* error) {
  if (!EbpfDetachLinks(object.dir, error)) return false;
  EbpfUnpinFolder(object.dir);
  return true;
}

}  // namespace ward::enforce
