#include "enforcers/linux/ebpf.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "backends/ebpf/bpf/ward_ebpf.h"
#include "backends/ebpf/maps.h"
#include "ward.skel.h"
#include "ward_identity.h"

namespace ward::enforce {
namespace {

namespace eb = ward::backend::ebpf;

constexpr const char* kBpffs = "/sys/fs/bpf";
constexpr const char* kWardDir = "/sys/fs/bpf/ward";

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Mounts bpffs at /sys/fs/bpf unless one is there already.
bool EnsureBpffs(std::string* error) {
  for (const MountEntry& m : MountTable()) {
    if (m.dir == kBpffs && m.type == "bpf") return true;
  }
  if (mount("bpf", kBpffs, "bpf", 0, "mode=0700") != 0) {
    *error = Errno(std::string("mount bpffs at ") + kBpffs, errno);
    return false;
  }
  return true;
}

bool ValidPolicyName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// The unix hooks (kernel 6.7) by their uapi numbers (enum bpf_attach_type):
// the system's headers and libbpf 1.1 predate them, so libbpf knows neither
// the section names nor the attach types.
constexpr auto kCgroupUnixConnect = static_cast<bpf_attach_type>(49);
constexpr auto kCgroupUnixSendmsg = static_cast<bpf_attach_type>(50);

// The cgroup programs, their pinned link names and attach types, in attach
// order.
struct Hook {
  const char* link;
  bpf_attach_type type;
  bpf_program* (*prog)(ward_bpf*);
};
const Hook kHooks[] = {
    {"link_sock_create", BPF_CGROUP_INET_SOCK_CREATE,
     [](ward_bpf* s) { return s->progs.ward_sock_create; }},
    {"link_connect4", BPF_CGROUP_INET4_CONNECT, [](ward_bpf* s) { return s->progs.ward_connect4; }},
    {"link_connect6", BPF_CGROUP_INET6_CONNECT, [](ward_bpf* s) { return s->progs.ward_connect6; }},
    {"link_sendmsg4", BPF_CGROUP_UDP4_SENDMSG, [](ward_bpf* s) { return s->progs.ward_sendmsg4; }},
    {"link_sendmsg6", BPF_CGROUP_UDP6_SENDMSG, [](ward_bpf* s) { return s->progs.ward_sendmsg6; }},
    {"link_bind4", BPF_CGROUP_INET4_BIND, [](ward_bpf* s) { return s->progs.ward_bind4; }},
    {"link_bind6", BPF_CGROUP_INET6_BIND, [](ward_bpf* s) { return s->progs.ward_bind6; }},
    {"link_connect_unix", kCgroupUnixConnect,
     [](ward_bpf* s) { return s->progs.ward_connect_unix; }},
    {"link_sendmsg_unix", kCgroupUnixSendmsg,
     [](ward_bpf* s) { return s->progs.ward_sendmsg_unix; }},
    {"link_egress", BPF_CGROUP_INET_EGRESS, [](ward_bpf* s) { return s->progs.ward_egress; }},
    {"link_ingress", BPF_CGROUP_INET_INGRESS, [](ward_bpf* s) { return s->progs.ward_ingress; }},
};

struct Skel {
  ward_bpf* s = nullptr;
  ~Skel() { ward_bpf__destroy(s); }
};

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// A map update that failed; E2BIG: the map is full (sized when the policy
// was first applied, OpenSkeleton).
constexpr const char* kMapsFull = ": the pinned maps are full";
std::string MapErrno(const std::string& what, int err) {
  if (err == E2BIG) return what + kMapsFull + " (sized for the policy as first applied)";
  return Errno(what, err);
}

// Deletes every key of one generation from a hash or LPM map. The
// generation sits at `gen_offset` in the key.
template <typename Key>
bool ClearGeneration(int fd, size_t gen_offset, uint32_t gen, std::string* error) {
  std::vector<Key> doomed;
  Key key{}, next{};
  void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    uint32_t g;
    std::memcpy(&g, reinterpret_cast<const char*>(&next) + gen_offset, 4);
    if (g == gen) doomed.push_back(next);
    key = next;
    prev = &key;
  }
  for (const Key& k : doomed) {
    if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) {
      *error = Errno("deleting a map entry", errno);
      return false;
    }
  }
  return true;
}

bool ClearAll(ward_bpf* s, uint32_t gen, std::string* error) {
  return ClearGeneration<ward_v4_key>(bpf_map__fd(s->maps.v4_exact), 0, gen, error) &&
         ClearGeneration<ward_v6_key>(bpf_map__fd(s->maps.v6_exact), 0, gen, error) &&
         ClearGeneration<ward_v4_key>(bpf_map__fd(s->maps.v4_dom), 0, gen, error) &&
         ClearGeneration<ward_v6_key>(bpf_map__fd(s->maps.v6_dom), 0, gen, error) &&
         ClearGeneration<ward_v4_lpm_key>(bpf_map__fd(s->maps.v4_lpm), 4, gen, error) &&
         ClearGeneration<ward_v6_lpm_key>(bpf_map__fd(s->maps.v6_lpm), 4, gen, error) &&
         ClearGeneration<ward_v4_key>(bpf_map__fd(s->maps.in4_exact), 0, gen, error) &&
         ClearGeneration<ward_v6_key>(bpf_map__fd(s->maps.in6_exact), 0, gen, error) &&
         ClearGeneration<ward_v4_lpm_key>(bpf_map__fd(s->maps.in4_lpm), 4, gen, error) &&
         ClearGeneration<ward_v6_lpm_key>(bpf_map__fd(s->maps.in6_lpm), 4, gen, error) &&
         ClearGeneration<ward_rule_key>(bpf_map__fd(s->maps.rules), 0, gen, error) &&
         ClearGeneration<ward_unix_key>(bpf_map__fd(s->maps.unix_names), 0, gen, error);
}

ward_entry ToEntry(const eb::Entry& e) {
  ward_entry w{};
  w.tcp_set = e.tcp_set;
  w.udp_set = e.udp_set;
  w.icmp = e.icmp_allow ? WARD_ALLOW : e.icmp_rule;
  return w;
}

bool WritePortSet(ward_bpf* s, uint32_t gen, size_t id, const eb::PortSetSegments& segs,
                  std::string* error) {
  ward_portset ps{};
  ps.count = static_cast<uint32_t>(segs.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    ps.seg[i] = {segs[i].lo, segs[i].hi, segs[i].allow ? WARD_ALLOW : segs[i].rule};
  }
  uint32_t idx = gen * WARD_MAX_PORTSETS + static_cast<uint32_t>(id);
  if (bpf_map_update_elem(bpf_map__fd(s->maps.portsets), &idx, &ps, BPF_ANY) != 0) {
    *error = Errno("writing a port set", errno);
    return false;
  }
  return true;
}

// One direction's four address maps.
struct AddressMaps {
  bpf_map *v4_exact, *v6_exact, *v4_lpm, *v6_lpm;
};
AddressMaps EgressMaps(ward_bpf* s) {
  return {s->maps.v4_exact, s->maps.v6_exact, s->maps.v4_lpm, s->maps.v6_lpm};
}
AddressMaps IngressMaps(ward_bpf* s) {
  return {s->maps.in4_exact, s->maps.in6_exact, s->maps.in4_lpm, s->maps.in6_lpm};
}

bool WriteCidr(const AddressMaps& maps, uint32_t gen, const eb::Cidr& c, bool exact,
               std::string* error) {
  ward_entry e = ToEntry(c.entry);
  int rc;
  if (exact && !c.v6) {
    ward_v4_key k{gen, {}};
    std::memcpy(k.addr, c.addr.data(), 4);
    rc = bpf_map_update_elem(bpf_map__fd(maps.v4_exact), &k, &e, BPF_ANY);
  } else if (exact) {
    ward_v6_key k{gen, {}};
    std::memcpy(k.addr, c.addr.data(), 16);
    rc = bpf_map_update_elem(bpf_map__fd(maps.v6_exact), &k, &e, BPF_ANY);
  } else if (!c.v6) {
    ward_v4_lpm_key k{32u + c.length, gen, {}};
    std::memcpy(k.addr, c.addr.data(), 4);
    rc = bpf_map_update_elem(bpf_map__fd(maps.v4_lpm), &k, &e, BPF_ANY);
  } else {
    ward_v6_lpm_key k{32u + c.length, gen, {}};
    std::memcpy(k.addr, c.addr.data(), 16);
    rc = bpf_map_update_elem(bpf_map__fd(maps.v6_lpm), &k, &e, BPF_ANY);
  }
  if (rc != 0) {
    *error = MapErrno("writing an address entry", errno);
    return false;
  }
  return true;
}

bool WriteUnixName(ward_bpf* s, uint32_t gen, const eb::UnixName& u, std::string* error) {
  ward_unix_key k{};
  k.generation = gen;
  k.abstract = u.abstract ? 1 : 0;
  k.len = static_cast<uint8_t>(u.name.size());
  std::memcpy(k.name, u.name.data(), u.name.size());  // BuildMaps: at most WARD_UNIX_NAME
  const uint32_t verdict = u.allow ? WARD_ALLOW : u.rule;
  if (bpf_map_update_elem(bpf_map__fd(s->maps.unix_names), &k, &verdict, BPF_ANY) != 0) {
    *error = MapErrno("writing a unix socket name", errno);
    return false;
  }
  return true;
}

// Writes one generation: port sets, rule texts, exact entries, prefixes
// (egress, then ingress), the bind ports, unix names.
bool FillGeneration(ward_bpf* s, uint32_t gen, const eb::MapContents& m, std::string* error) {
  for (size_t i = 0; i < m.portsets.size(); ++i) {
    if (!WritePortSet(s, gen, i, m.portsets[i], error)) return false;
  }
  for (size_t i = 0; i < m.rules.size(); ++i) {
    if (m.rules[i].empty()) continue;  // only deny rules are named by events
    ward_rule_text t{};
    std::strncpy(t.text, m.rules[i].c_str(), sizeof t.text - 1);
    ward_rule_key key{gen, static_cast<uint32_t>(i)};
    if (bpf_map_update_elem(bpf_map__fd(s->maps.rules), &key, &t, BPF_ANY) != 0) {
      *error = MapErrno("writing a rule text", errno);
      return false;
    }
  }
  for (const eb::Cidr& c : m.exact) {
    if (!WriteCidr(EgressMaps(s), gen, c, true, error)) return false;
  }
  for (const eb::Cidr& c : m.prefixes) {
    if (!WriteCidr(EgressMaps(s), gen, c, false, error)) return false;
  }
  for (const eb::Cidr& c : m.ingress_exact) {
    if (!WriteCidr(IngressMaps(s), gen, c, true, error)) return false;
  }
  for (const eb::Cidr& c : m.ingress_prefixes) {
    if (!WriteCidr(IngressMaps(s), gen, c, false, error)) return false;
  }
  const ward_entry bind = ToEntry(m.bind);
  if (bpf_map_update_elem(bpf_map__fd(s->maps.in_bind), &gen, &bind, BPF_ANY) != 0) {
    *error = Errno("writing the bind ports", errno);
    return false;
  }
  for (const eb::UnixName& u : m.unix_names) {
    if (!WriteUnixName(s, gen, u, error)) return false;
  }
  return true;
}

// An answer for an allowed name, as the `*_dom` maps hold it.
struct TimedCidr {
  eb::Cidr cidr;  // a /32 or /128 with its combined decision
  uint64_t expires_ns = 0;
};

uint64_t BootNanoseconds() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The answers for the allowed names, each with its decision (the address's
// own, plus what the names resolving there allow, minus the address denies)
// and its deadline: the shortest TTL among the answers for that address
// (IPv4-mapped answers count as IPv4). Egress names only: ingress names are
// not resolved (connections from them are denied).
std::vector<TimedCidr> TimedAnswers(const ir::NetRules& net,
                                    const std::vector<backend::ResolvedAddress>& resolved,
                                    eb::MapContents* m) {
  struct Slot {
    ir::NetDecision allow;
    uint32_t ttl = UINT32_MAX;
  };
  std::map<std::pair<bool, std::array<uint8_t, 16>>, Slot> answers;
  for (const backend::ResolvedAddress& r : resolved) {
    if (r.direction != ir::Direction::kEgress) continue;
    auto it = net.egress_domains.find(r.pattern);
    if (it == net.egress_domains.end()) continue;
    std::pair<bool, std::array<uint8_t, 16>> key{r.address.v6, r.address.bytes};
    if (r.address.v6 && ir::IsMapped(ir::V6Range(r.address).lo)) {  // decided as IPv4
      key.first = false;
      key.second = {};
      std::memcpy(key.second.data(), r.address.bytes.data() + 12, 4);
    }
    Slot& slot = answers[key];
    slot.allow = slot.allow.Union(it->second.allow);
    slot.ttl = std::min(slot.ttl, r.ttl);
  }
  std::vector<TimedCidr> out;
  const uint64_t now = BootNanoseconds();
  for (const auto& [key, slot] : answers) {
    IpPrefix p;
    p.v6 = key.first;
    p.bytes = key.second;
    p.length = p.v6 ? 128 : 32;
    TimedCidr t;
    t.cidr.v6 = p.v6;
    t.cidr.addr = p.bytes;
    t.cidr.length = p.length;
    if (!eb::EntryForResolved(net, p, slot.allow, m, &t.cidr.entry)) continue;
    t.expires_ns = now + static_cast<uint64_t>(slot.ttl) * 1000000000ull;
    out.push_back(t);
  }
  return out;
}

bool WriteTimed(ward_bpf* s, uint32_t gen, const TimedCidr& t, std::string* error) {
  ward_timed_entry v{};
  v.entry = ToEntry(t.cidr.entry);
  v.expires_ns = t.expires_ns;
  int rc;
  if (!t.cidr.v6) {
    ward_v4_key k{gen, {}};
    std::memcpy(k.addr, t.cidr.addr.data(), 4);
    rc = bpf_map_update_elem(bpf_map__fd(s->maps.v4_dom), &k, &v, BPF_ANY);
  } else {
    ward_v6_key k{gen, {}};
    std::memcpy(k.addr, t.cidr.addr.data(), 16);
    rc = bpf_map_update_elem(bpf_map__fd(s->maps.v6_dom), &k, &v, BPF_ANY);
  }
  if (rc != 0) {
    *error = MapErrno("writing a resolved address", errno);
    return false;
  }
  return true;
}

// What the hash maps must hold at first: entries of one generation.
struct MapNeeds {
  size_t exact = 0, dom = 0, ingress_exact = 0, rules = 0, unix_names = 0;
};

// A hash map's capacity for `n` entries per generation: both generations
// and room to grow (a narrower or wider apply, resolved names), at least
// 4096. A HASH map allocates its bucket array (16 bytes per entry) at
// creation: at WARD_MAX_ENTRIES every apply or cached run would hold ~100 MB
// of kernel memory. LPM tries allocate per entry and keep the maximum.
uint32_t HashCapacity(size_t n) {
  uint64_t c = 4096;
  while (c < 4 * static_cast<uint64_t>(n) && c < WARD_MAX_ENTRIES) c *= 2;
  return static_cast<uint32_t>(std::min<uint64_t>(c, WARD_MAX_ENTRIES));
}

// Opens the skeleton with every map pinned (and reused when pinned already,
// with the size it was created with); new hash maps are sized by `needs`.
// The maps an object may take over from the one it replaces: they hold no
// generation (the event ring buffer, so that a reader keeps reading it
// through an upgrade; the sockets the flow cutter and ingress look at).
bool ReuseShared(ward_bpf* s, const std::string& from, std::string* error) {
  for (bpf_map* m : {s->maps.events, s->maps.egress_socks, s->maps.ingress_socks}) {
    const int fd = bpf_obj_get((from + "/" + bpf_map__name(m)).c_str());
    if (fd < 0) continue;
    bpf_map_info info{};
    uint32_t len = sizeof info;
    const bool same =
        bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == bpf_map__type(m) &&
        info.key_size == bpf_map__key_size(m) && info.value_size == bpf_map__value_size(m) &&
        info.map_flags == bpf_map__map_flags(m) &&
        (info.type != BPF_MAP_TYPE_RINGBUF || info.max_entries == bpf_map__max_entries(m));
    const int rc = same ? bpf_map__reuse_fd(m, fd) : 0;
    close(fd);
    if (rc != 0) {
      *error = Errno(std::string("taking over map ") + bpf_map__name(m), -rc);
      return false;
    }
  }
  return true;
}

bool OpenSkeleton(const std::string& dir, Skel* skel, std::string* error,
                  const MapNeeds& needs = {}, const std::string& reuse_from = "") {
  skel->s = ward_bpf__open();
  if (!skel->s) {
    *error = Errno("opening the BPF object", errno);
    return false;
  }
  for (auto [prog, type] : {std::pair{skel->s->progs.ward_connect_unix, kCgroupUnixConnect},
                            std::pair{skel->s->progs.ward_sendmsg_unix, kCgroupUnixSendmsg}}) {
    if (bpf_program__set_type(prog, BPF_PROG_TYPE_CGROUP_SOCK_ADDR) != 0 ||
        bpf_program__set_expected_attach_type(prog, type) != 0) {
      *error = Errno(std::string("setting the type of ") + bpf_program__name(prog), errno);
      return false;
    }
  }
  const std::pair<bpf_map*, size_t> sized[] = {{skel->s->maps.v4_exact, needs.exact},
                                               {skel->s->maps.v6_exact, needs.exact},
                                               {skel->s->maps.v4_dom, needs.dom},
                                               {skel->s->maps.v6_dom, needs.dom},
                                               {skel->s->maps.in4_exact, needs.ingress_exact},
                                               {skel->s->maps.in6_exact, needs.ingress_exact},
                                               {skel->s->maps.rules, needs.rules},
                                               {skel->s->maps.unix_names, needs.unix_names}};
  for (const auto& [m, n] : sized) {
    uint32_t capacity = HashCapacity(n);
    const std::string pin = dir + "/" + bpf_map__name(m);
    if (const int fd = bpf_obj_get(pin.c_str()); fd >= 0) {
      bpf_map_info info{};
      uint32_t len = sizeof info;
      if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) capacity = info.max_entries;
      close(fd);
    }
    if (bpf_map__set_max_entries(m, capacity) != 0) {
      *error = Errno(std::string("sizing map ") + bpf_map__name(m), errno);
      return false;
    }
  }
  if (!reuse_from.empty() && !ReuseShared(skel->s, reuse_from, error)) return false;
  bpf_map* map;
  bpf_object__for_each_map(map, skel->s->obj) {
    std::string name = bpf_map__name(map);
    if (name.find('.') != std::string::npos) continue;
    if (bpf_map__set_pin_path(map, (dir + "/" + name).c_str()) != 0) {
      *error = Errno("pin path for map " + name, errno);
      return false;
    }
  }
  if (ward_bpf__load(skel->s) != 0) {
    *error = Errno(
        "loading the BPF programs (pinned maps of an incompatible version? run "
        "`ward remove` first)",
        errno);
    return false;
  }
  return true;
}

// Writes the whole config of an object not attached yet (no program reads
// it: an update is fine). Flips go through EbpfStoreState.
bool WriteConfig(ward_bpf* s, const ward_config& c, std::string* error) {
  uint32_t zero = 0;
  if (bpf_map_update_elem(bpf_map__fd(s->maps.ward_cfg), &zero, &c, BPF_ANY) != 0) {
    *error = Errno("writing the config", errno);
    return false;
  }
  return true;
}

// Runs the flow cutter once over the TCP sockets of the calling thread's
// network namespace (a TCP iterator walks the namespace it was created in).
bool CutFlowsHere(ward_bpf* s, std::string* error) {
  bpf_link* link = bpf_program__attach_iter(s->progs.ward_cut_tcp, nullptr);
  if (!link) {
    *error = Errno("attaching the flow cutter (iter/tcp)", errno);
    return false;
  }
  int fd = bpf_iter_create(bpf_link__fd(link));
  bool ok = fd >= 0;
  if (ok) {
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
  } else {
    *error = Errno("running the flow cutter", errno);
  }
  bpf_link__destroy(link);
  return ok;
}

// The processes of a cgroup and its descendants.
void CgroupPids(const std::string& dir, std::vector<pid_t>* out) {
  std::ifstream procs(dir + "/cgroup.procs");
  pid_t pid;
  while (procs >> pid) out->push_back(pid);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (e->d_type == DT_DIR && n != "." && n != "..") CgroupPids(dir + "/" + n, out);
  }
  closedir(d);
}

// Runs the flow cutter in this namespace and in every network namespace a
// process of the cgroup lives in (each from a thread that enters it).
bool CutFlows(ward_bpf* s, const std::string& cgroup_dir, std::string* error) {
  if (!CutFlowsHere(s, error)) return false;
  struct stat self;
  if (stat("/proc/thread-self/ns/net", &self) != 0) return true;
  std::vector<pid_t> pids;
  CgroupPids(cgroup_dir, &pids);
  std::vector<ino_t> seen = {self.st_ino};
  bool ok = true;
  for (pid_t pid : pids) {
    const std::string ns = "/proc/" + std::to_string(pid) + "/ns/net";
    struct stat st;
    if (stat(ns.c_str(), &st) != 0 ||
        std::find(seen.begin(), seen.end(), st.st_ino) != seen.end()) {
      continue;
    }
    seen.push_back(st.st_ino);
    int fd = open(ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // the process has exited
    std::string thread_error;
    bool thread_ok = true;
    std::thread t([&] {
      if (setns(fd, CLONE_NEWNET) != 0) {
        thread_error = Errno("entering the network namespace of pid " + std::to_string(pid), errno);
        thread_ok = false;
        return;
      }
      thread_ok = CutFlowsHere(s, &thread_error);
    });
    t.join();
    close(fd);
    if (!thread_ok) {
      *error = thread_error;
      ok = false;
    }
  }
  return ok;
}

// A new object: attach every cgroup program (beside any other object's: a
// link attaches with BPF_F_ALLOW_MULTI semantics) and pin its link; on any
// failure detach what was attached.
bool AttachAll(ward_bpf* s, const std::string& dir, int cgroup_fd, std::string* error) {
  std::vector<bpf_link*> links;
  bool ok = true;
  for (const Hook& h : kHooks) {
    bpf_link* link = bpf_program__attach_cgroup(h.prog(s), cgroup_fd);
    if (!link) {
      *error = Errno(std::string("attaching ") + bpf_program__name(h.prog(s)), errno);
      ok = false;
      break;
    }
    links.push_back(link);
    if (bpf_link__pin(link, (dir + "/" + h.link).c_str()) != 0) {
      *error = Errno(std::string("pinning ") + h.link, errno);
      ok = false;
      break;
    }
  }
  for (bpf_link* l : links) {
    if (!ok) bpf_link_detach(bpf_link__fd(l));
    bpf_link__destroy(l);  // the pin keeps it (when ok)
  }
  return ok;
}

// Re-apply: every pinned link moves to the freshly loaded program (the maps
// are the same pinned ones, so each hook keeps deciding by the flipped
// generation).
bool UpdateLinks(ward_bpf* s, const std::string& dir, std::string* error) {
  for (const Hook& h : kHooks) {
    bpf_link* link = bpf_link__open((dir + "/" + h.link).c_str());
    if (!link) {
      *error = Errno(std::string("opening pinned ") + h.link, errno);
      return false;
    }
    int rc = bpf_link__update_program(link, h.prog(s));
    int err = errno;
    bpf_link__destroy(link);
    if (rc != 0) {
      *error = Errno(std::string("updating ") + h.link, err);
      return false;
    }
  }
  return true;
}

// What one apply writes, whichever object takes it.
struct Rendered {
  eb::MapContents maps;
  std::vector<TimedCidr> timed;
  uint32_t flags = 0;  // WARD_CFG_*
  MapNeeds needs;
};

// Fills generation `gen` of a loaded object; *full: a map is too small.
bool Fill(ward_bpf* s, uint32_t gen, const Rendered& r, bool* full, std::string* error) {
  bool ok = ClearAll(s, gen, error) && FillGeneration(s, gen, r.maps, error);
  for (const TimedCidr& t : r.timed) ok = ok && WriteTimed(s, gen, t, error);
  if (!ok) *full = error->find(kMapsFull) != std::string::npos;
  return ok;
}

// Re-apply by the object enforcing (`dir`, config `cfg`): the inactive
// generation filled, the state word flipped, the runs that read the old one
// waited for, the old generation cleared. *full (nothing changed): its maps
// cannot hold the policy.
bool ReapplyInPlace(const std::string& dir, const EbpfConfig& cfg, const Rendered& r,
                    const std::string& cg_path, bool* full, std::string* error) {
  Skel skel;
  if (!OpenSkeleton(dir, &skel, error)) return false;
  const uint32_t gen = cfg.generation ^ 1u;
  std::string ignored;
  if (!Fill(skel.s, gen, r, full, error)) {
    ClearAll(skel.s, gen, &ignored);
    return false;
  }
  const int cfg_fd = bpf_map__fd(skel.s->maps.ward_cfg);
  if (!EbpfStoreState(cfg_fd, EbpfState(gen, r.flags), error)) {
    ClearAll(skel.s, gen, &ignored);
    return false;
  }
  if (!UpdateLinks(skel.s, dir, error)) {
    // Back to the generation in force before (the programs are the same).
    EbpfStoreState(cfg_fd, EbpfState(cfg.generation, cfg.flags), &ignored);
    EbpfWaitForPrograms();
    ClearAll(skel.s, gen, &ignored);
    return false;
  }
  // No run still reads the old generation once this returns: clearing it
  // cannot make one decide by a half-empty generation.
  EbpfWaitForPrograms();
  ClearAll(skel.s, cfg.generation, &ignored);
  std::string cut_error;
  if (!CutFlows(skel.s, cg_path, &cut_error)) {
    *error = "policy applied, but established connections were not checked: " + cut_error;
    return false;
  }
  return true;
}

// A new object in `dir`, make before break: loaded (taking over the
// generation-free maps of `previous`), filled, attached beside the objects
// in `old`, which are then detached and unpinned.
bool ApplyNewObject(const std::string& dir, const std::string& previous,
                    const std::vector<EbpfPinnedObject>& old, const Cgroup& cgroup, int cg_fd,
                    const std::string& cg_path, const Rendered& r, std::string* error) {
  EbpfUnpinFolder(dir);  // leftovers without links (the caller removed those with)
  if (mkdir(dir.c_str(), 0700) != 0) {
    *error = Errno("creating " + dir, errno);
    return false;
  }
  Skel skel;
  bool full = false;
  const ward_config first{EbpfState(0, r.flags), cgroup.id, static_cast<uint32_t>(cgroup.level), 0};
  if (!OpenSkeleton(dir, &skel, error, r.needs, previous) || !Fill(skel.s, 0, r, &full, error) ||
      !WriteConfig(skel.s, first, error) || !AttachAll(skel.s, dir, cg_fd, error)) {
    EbpfUnpinFolder(dir);
    return false;
  }
  // Both objects run now (either's refusal refuses); the old ones go.
  bool ok = true;
  for (const EbpfPinnedObject& o : old) {
    std::string e;
    if (!EbpfRemoveObject(o, &e)) {
      *error = "policy applied, but the object it replaces is still attached: " + e;
      ok = false;
    }
  }
  std::string cut_error;
  if (!CutFlows(skel.s, cg_path, &cut_error) && ok) {
    *error = "policy applied, but established connections were not checked: " + cut_error;
    ok = false;
  }
  return ok;
}
}  // namespace

std::string EbpfPinDir(const std::string& policy) { return std::string(kWardDir) + "/" + policy; }

std::vector<std::pair<std::string, int>> EbpfHookLinks() {
  std::vector<std::pair<std::string, int>> out;
  for (const Hook& h : kHooks) out.emplace_back(h.link, static_cast<int>(h.type));
  return out;
}

std::string EbpfObjectIdentity() {
  // The SHA-256 of ward.bpf.o, the object the skeleton embeds, computed
  // when it is built (cmake/EbpfIdentity.cmake): hashing its 800 kB at
  // every run cost ward run 0.5 ms.
  return std::string(WARD_EBPF_OBJECT_SHA256).substr(0, 16);
}

bool EbpfApply(const ir::Policy& policy, const Cgroup& cgroup,
               const std::vector<backend::ResolvedAddress>& resolved, DiagnosticSink& sink,
               EbpfApplyResult* result, std::string* error) {
  return EbpfApply(policy, cgroup, resolved, EbpfApplyOptions{}, sink, result, error);
}

bool EbpfApply(const ir::Policy& policy, const Cgroup& cgroup,
               const std::vector<backend::ResolvedAddress>& resolved,
               const EbpfApplyOptions& options, DiagnosticSink& sink, EbpfApplyResult* result,
               std::string* error) {
  *result = {};
  if (!ValidPolicyName(policy.name)) {
    *error = "policy name '" + policy.name + "' cannot name a bpffs directory";
    return false;
  }
  Rendered r;
  if (!eb::BuildMaps(policy.network, &r.maps, sink)) return false;
  r.timed = TimedAnswers(policy.network, resolved, &r.maps);
  if (r.maps.portsets.size() > WARD_MAX_PORTSETS) {
    *error = "the resolved names need more port sets than the maps hold";
    return false;
  }
  const bool abstract_open =
      options.abstract_unix_by_landlock && policy.network.unix_abstract.empty();
  r.flags = (r.timed.empty() ? 0u : WARD_CFG_DOMAINS) |
            (abstract_open ? WARD_CFG_UNIX_ABSTRACT_OPEN : 0u);
  r.needs.exact = r.maps.exact.size();
  r.needs.dom = r.timed.size();
  r.needs.ingress_exact = r.maps.ingress_exact.size();
  r.needs.rules = r.maps.rules.size();
  r.needs.unix_names = r.maps.unix_names.size();
  if (!EnsureBpffs(error)) return false;
  mkdir(kWardDir, 0700);
  const std::string pdir = EbpfPinDir(policy.name);
  if (mkdir(pdir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = Errno("creating " + pdir, errno);
    return false;
  }
  // The object in force: the newest with its config and every link. Any
  // other is a leftover: of an interrupted load (no link: removed now), of
  // an upgrade interrupted before it detached the object it replaced, or an
  // earlier Ward's object without some of today's hooks. Those still
  // attached enforce beside it; they are detached once this apply is in
  // force (make before break).
  std::vector<EbpfPinnedObject> objects = EbpfPinnedObjects(policy.name);
  std::optional<EbpfPinnedObject> current;
  for (const EbpfPinnedObject& o : objects) {
    if (o.has_config && o.has_links) current = o;
  }
  const uint64_t next_seq = objects.empty() ? 1 : objects.back().seq + 1;
  std::vector<EbpfPinnedObject> attached;  // the others still attached
  for (const EbpfPinnedObject& o : objects) {
    if (current && o.dir == current->dir) continue;
    if (o.any_link) {
      attached.push_back(o);
    } else if (!EbpfRemoveObject(o, error)) {
      return false;
    }
  }
  const auto detach_others = [&] {
    for (const EbpfPinnedObject& o : attached) {
      std::string e;
      if (!EbpfRemoveObject(o, &e)) {
        *error = "policy applied, but an earlier object is still attached: " + e;
        return false;
      }
    }
    return true;
  };
  EbpfConfig cfg;
  if (current && !EbpfReadConfigAt(current->dir, &cfg, error)) return false;
  if (current && cfg.cgroup_id != cgroup.id) {
    *error = "policy " + policy.name + " is enforced on another cgroup: `ward remove` it first";
    return false;
  }
  const std::string cg_path = cgroup.mount + "/" + cgroup.relative;
  const int cg_fd = open(cg_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd < 0) {
    *error = Errno("opening cgroup " + cg_path, errno);
    if (!current) rmdir(pdir.c_str());
    return false;
  }
  bool ok = false, done = false;
  if (current && cfg.atomic && current->identity == EbpfObjectIdentity() && !options.new_object) {
    bool full = false;
    ok = done = ReapplyInPlace(current->dir, cfg, r, cg_path, &full, error);
    if (!ok && full) {
      error->clear();  // a new object, with maps sized for this policy
    } else {
      done = true;
      ok = ok && detach_others();
    }
    result->object_dir = current->dir;
    result->generation = cfg.generation ^ 1u;
  }
  if (!done) {
    const std::string dir = pdir + "/" + EbpfObjectIdentity() + "-" + std::to_string(next_seq);
    std::vector<EbpfPinnedObject> old = attached;
    if (current) old.push_back(*current);
    const std::string previous = current ? current->dir : old.empty() ? "" : old.back().dir;
    ok = ApplyNewObject(dir, previous, old, cgroup, cg_fd, cg_path, r, error);
    result->new_object = true;
    result->object_dir = dir;
    result->generation = 0;
    if (!ok && old.empty()) rmdir(pdir.c_str());
  }
  close(cg_fd);
  if (!ok) return false;
  result->entries = r.maps.exact.size() + r.maps.prefixes.size() + r.maps.ingress_exact.size() +
                    r.maps.ingress_prefixes.size() + r.timed.size();
  result->unix_names = r.maps.unix_names.size();
  result->abstract_unix_open = abstract_open;
  result->replaced = current.has_value() || !attached.empty();
  return true;
}

bool EbpfRemove(const std::string& policy, bool* removed, std::string* error) {
  *removed = false;
  if (!ValidPolicyName(policy)) {
    *error = "policy name '" + policy + "' cannot name a bpffs directory";
    return false;
  }
  const std::string dir = EbpfPinDir(policy);
  if (!Exists(dir)) return true;
  // Every object, newest first (the flat layout of an earlier Ward last):
  // a link fd held elsewhere cannot keep any of them attached.
  std::vector<EbpfPinnedObject> objects = EbpfPinnedObjects(policy);
  bool ok = true;
  for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
    if (!EbpfDetachLinks(it->dir, error)) ok = false;
  }
  if (!ok) return false;
  for (auto it = objects.rbegin(); it != objects.rend(); ++it) EbpfUnpinFolder(it->dir);
  rmdir(dir.c_str());
  *removed = true;
  return true;
}

bool EbpfAddResolved(const ir::Policy& policy, const IpPrefix& addr,
                     const ir::NetDecision& names_allow, uint32_t ttl_seconds, std::string* error) {
  const std::string dir = EbpfObjectDir(policy.name);
  if (dir.empty()) {
    *error = "policy " + policy.name + " is not applied";
    return false;
  }
  DiagnosticSink sink;
  eb::MapContents maps;  // deterministic: the same port set ids as the apply
  if (!eb::BuildMaps(policy.network, &maps, sink)) {
    *error = "the policy does not compile for ebpf";
    return false;
  }
  const size_t known_sets = maps.portsets.size();
  backend::ResolvedAddress answer;
  answer.address = addr;
  answer.ttl = ttl_seconds;
  // TimedAnswers looks the grant up by pattern: give it one of its own.
  ir::NetRules net = policy.network;
  answer.pattern = "\x01answer";
  net.egress_domains[answer.pattern].allow = names_allow;
  const std::vector<TimedCidr> timed = TimedAnswers(net, {answer}, &maps);
  if (timed.size() != 1 || maps.portsets.size() > WARD_MAX_PORTSETS) {
    *error = "the answer needs more port sets than the maps hold";
    return false;
  }
  Skel skel;
  EbpfConfig cfg;
  if (!OpenSkeleton(dir, &skel, error) ||
      !EbpfReadConfig(bpf_map__fd(skel.s->maps.ward_cfg), &cfg, error)) {
    return false;
  }
  if (maps.portsets.size() > known_sets && (cfg.flags & WARD_CFG_DOMAINS) != 0) {
    // The apply's own answers may hold the port set ids past the policy's:
    // writing new ones there could change their meaning.
    *error = "the answer needs a port set the applied policy does not have: apply again";
    return false;
  }
  const uint32_t gen = cfg.generation & 1u;
  for (size_t i = known_sets; i < maps.portsets.size(); ++i) {
    if (!WritePortSet(skel.s, gen, i, maps.portsets[i], error)) return false;
  }
  if (!WriteTimed(skel.s, gen, timed[0], error)) return false;
  if ((cfg.flags & WARD_CFG_DOMAINS) == 0) {
    return EbpfStoreState(bpf_map__fd(skel.s->maps.ward_cfg),
                          EbpfState(gen, cfg.flags | WARD_CFG_DOMAINS), error);
  }
  return true;
}

// ---- events ---------------------------------------------------------------

namespace {

std::string UnixName(const ward_event& ev) {
  const size_t len = std::min<size_t>(ev.unix_len, sizeof ev.unix_name);
  std::string name = ev.unix_abstract ? "@" : "";
  for (size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(ev.unix_name[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      name += hex;
    } else {
      name += static_cast<char>(c);
    }
  }
  return name;
}

EbpfDenial DecodeEvent(const ward_event& ev, const std::string& rule_text) {
  EbpfDenial d;
  d.pid = ev.pid;
  d.rule = ev.rule;
  d.line = FormatEbpfEvent(&ev, rule_text);
  if (ev.hook == WARD_HOOK_SOCKET) {
    d.op = "socket";
    d.family = static_cast<int>(ev.sock_type >> 16);
    d.sock_type = static_cast<int>(ev.sock_type & 0xffff);
    d.sock_proto = static_cast<int>(ev.sock_proto);
    return d;
  }
  d.op = ev.hook == WARD_HOOK_CONNECT   ? "connect"
         : ev.hook == WARD_HOOK_SENDMSG ? "send"
         : ev.hook == WARD_HOOK_BIND    ? "bind"
         : ev.hook == WARD_HOOK_ACCEPT  ? (ev.proto == IPPROTO_UDP ? "receive" : "accept")
                                        : "packet";
  if (ev.family == WARD_FAMILY_UNIX) {
    d.family = AF_UNIX;
    d.unix_name = UnixName(ev);
    return d;
  }
  d.family = ev.family == 6 ? AF_INET6 : AF_INET;
  d.protocol = ev.proto == IPPROTO_UDP    ? "udp"
               : ev.proto == IPPROTO_TCP  ? "tcp"
               : ev.proto == IPPROTO_ICMP ? "icmp"
                                          : "protocol " + std::to_string(ev.proto);
  const bool ports = ev.proto == IPPROTO_TCP || ev.proto == IPPROTO_UDP;
  if (ev.hook == WARD_HOOK_BIND) {
    d.local_port = ev.local_port;
    return d;
  }
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ev.family == 6 ? AF_INET6 : AF_INET, ev.addr, buf, sizeof buf);
  d.address = buf;
  if (ports) d.port = ev.port;
  if (ev.hook == WARD_HOOK_ACCEPT && ports) d.local_port = ev.local_port;
  return d;
}

}  // namespace

struct EbpfEventReader::Impl {
  ring_buffer* rb = nullptr;
  int rules_fd = -1;
  std::string policy, dir;  // the rule texts' object (the ring buffer outlives it)
  std::vector<std::string>* out = nullptr;
  std::vector<EbpfDenial>* denials = nullptr;
  ~Impl() {
    ring_buffer__free(rb);
    if (rules_fd >= 0) close(rules_fd);
  }
};

EbpfEventReader::~EbpfEventReader() = default;

std::unique_ptr<EbpfEventReader> EbpfEventReader::Open(const std::string& policy,
                                                       std::string* error) {
  std::string dir = EbpfObjectDir(policy);
  // A cache entry of ward run's shared programs (ebpf_shared.cc) holds no
  // links: its newest object with a ring buffer.
  const std::vector<EbpfPinnedObject> objects = EbpfPinnedObjects(policy);
  for (auto it = objects.rbegin(); dir.empty() && it != objects.rend(); ++it) {
    if (Exists(it->dir + "/events")) dir = it->dir;
  }
  int events_fd = dir.empty() ? -1 : bpf_obj_get((dir + "/events").c_str());
  if (events_fd < 0) {
    *error = Errno("opening " + dir + "/events", errno);
    return nullptr;
  }
  std::unique_ptr<EbpfEventReader> r(new EbpfEventReader);
  r->impl_ = std::make_unique<Impl>();
  r->impl_->rules_fd = bpf_obj_get((dir + "/rules").c_str());
  r->impl_->policy = policy;
  r->impl_->dir = dir;
  Impl* impl = r->impl_.get();
  auto on_event = [](void* ctx, void* data, size_t size) -> int {
    auto* self = static_cast<Impl*>(ctx);
    if (size < sizeof(ward_event)) return 0;
    ward_event ev;
    std::memcpy(&ev, data, sizeof ev);
    std::string text;
    if (ev.rule != 0 && self->rules_fd >= 0) {
      ward_rule_key key{ev.generation & 1u, ev.rule};
      ward_rule_text t{};
      if (bpf_map_lookup_elem(self->rules_fd, &key, &t) == 0) {
        text.assign(t.text, strnlen(t.text, sizeof t.text));
      }
    }
    if (self->out) self->out->push_back(FormatEbpfEvent(&ev, text));
    if (self->denials) self->denials->push_back(DecodeEvent(ev, text));
    return 0;
  };
  impl->rb = ring_buffer__new(events_fd, on_event, impl, nullptr);
  int err = errno;
  close(events_fd);  // the ring buffer keeps its own mapping
  if (!impl->rb) {
    *error = Errno("reading the ring buffer", err);
    return nullptr;
  }
  return r;
}

bool EbpfEventReader::Poll(int timeout_ms, std::vector<EbpfDenial>* denials, std::string* error) {
  impl_->denials = denials;
  std::vector<std::string> lines;
  const bool ok = Poll(timeout_ms, &lines, error);
  impl_->denials = nullptr;
  return ok;
}

int EbpfEventReader::fd() const { return ring_buffer__epoll_fd(impl_->rb); }

bool EbpfEventReader::Poll(int timeout_ms, std::vector<std::string>* lines, std::string* error) {
  // A new object took the ring buffer over (make before break): its rule
  // texts are its own.
  if (std::string dir = EbpfObjectDir(impl_->policy); !dir.empty() && dir != impl_->dir) {
    if (const int fd = bpf_obj_get((dir + "/rules").c_str()); fd >= 0) {
      if (impl_->rules_fd >= 0) close(impl_->rules_fd);
      impl_->rules_fd = fd;
      impl_->dir = std::move(dir);
    }
  }
  impl_->out = lines;
  int n = ring_buffer__poll(impl_->rb, timeout_ms);
  impl_->out = nullptr;
  if (n < 0 && n != -EINTR) {
    *error = Errno("polling the ring buffer", -n);
    return false;
  }
  return true;
}

std::string FormatEbpfEvent(const void* event, const std::string& rule_text) {
  ward_event ev;
  std::memcpy(&ev, event, sizeof ev);
  std::string reason = ev.rule == 0 ? "no rule matched"
                                    : "rule " + std::to_string(ev.rule) +
                                          (rule_text.empty() ? "" : ": " + rule_text);
  if (ev.hook == WARD_HOOK_SOCKET) {
    const uint32_t family = ev.sock_type >> 16, type = ev.sock_type & 0xffff;
    auto fam = family == AF_INET    ? std::string("AF_INET")
               : family == AF_INET6 ? std::string("AF_INET6")
                                    : std::to_string(family);
    return "socket(" + fam + ", " + std::to_string(type) + ", " + std::to_string(ev.sock_proto) +
           ") denied (no rule grants this socket type)";
  }
  if (ev.family == WARD_FAMILY_UNIX) {
    const std::string name = UnixName(ev);
    return std::string(ev.hook == WARD_HOOK_SENDMSG ? "sendmsg" : "connect") + " to unix:" + name +
           " denied (" + reason + ")";
  }
  const std::string proto_name = ev.proto == IPPROTO_UDP   ? "udp"
                                 : ev.proto == IPPROTO_TCP ? "tcp"
                                                           : "protocol " + std::to_string(ev.proto);
  if (ev.hook == WARD_HOOK_BIND) {
    return "bind to port " + std::to_string(ev.local_port) + "/" + proto_name + " denied (" +
           reason + ")";
  }
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ev.family == 6 ? AF_INET6 : AF_INET, ev.addr, buf, sizeof buf);
  std::string addr = ev.family == 6 ? "[" + std::string(buf) + "]" : std::string(buf);
  if (ev.hook == WARD_HOOK_ACCEPT) {
    if (ev.proto != IPPROTO_TCP && ev.proto != IPPROTO_UDP) {
      return proto_name + " packet from " + addr + " denied (" + reason + ")";
    }
    return std::string(ev.proto == IPPROTO_TCP ? "accept" : "udp receive") + " from " + addr + ":" +
           std::to_string(ev.port) + " on port " + std::to_string(ev.local_port) + " denied (" +
           reason + ")";
  }
  const char* what = ev.hook == WARD_HOOK_CONNECT   ? "connect"
                     : ev.hook == WARD_HOOK_SENDMSG ? "send"
                                                    : "packet";
  const bool ports = ev.proto == IPPROTO_TCP || ev.proto == IPPROTO_UDP;
  std::string proto = ev.proto == IPPROTO_UDP    ? "udp "
                      : ev.proto == IPPROTO_ICMP ? "icmp "
                      : ev.proto == IPPROTO_TCP  ? ""
                                                 : "protocol " + std::to_string(ev.proto) + " ";
  return proto + what + " to " + (ports ? addr + ":" + std::to_string(ev.port) : addr) +
         " denied (" + reason + ")";
}

// ---- the NetworkEnforcer adapter --------------------------------------------

namespace {

class Ebpf final : public NetworkEnforcer {
 public:
  std::string_view name() const override { return "ebpf"; }
  bool Apply(const ir::Policy& policy, const Target& target, const ApplyOptions& options,
             DiagnosticSink& sink, std::string* error) const override {
    if (target.kind != Target::Kind::kCgroup) {
      *error =
          "ebpf enforces on a cgroup only (--cgroup PATH); use -t nftables for a user or "
          "an interface";
      return false;
    }
    std::optional<Cgroup> cg = ResolveCgroup(target.cgroup, error);
    if (!cg) return false;
    WarnNonIpSockets("ebpf", sink);
    EbpfApplyResult r;
    std::vector<backend::ResolvedAddress> resolved;
    if (options.resolve_domains) resolved = ResolveDomainGrants(policy, options.dns, sink);
    if (options.resolved) *options.resolved = resolved;
    return EbpfApply(policy, *cg, resolved, sink, &r, error);
  }
  // The maps' entries do not expire: a refresh applies the policy again with
  // the new answers (a generation flip: never wider than old or new).
  bool RefreshDomains(const ir::Policy& policy, const ApplyOptions& options, DiagnosticSink& sink,
                      uint32_t* next_seconds, std::string* error) const override {
    const std::string dir = EbpfObjectDir(policy.name);
    if (dir.empty()) {
      *error = "policy " + policy.name + " is not applied with ebpf";
      return false;
    }
    EbpfConfig cfg;
    if (!EbpfReadConfigAt(dir, &cfg, error)) return false;
    const std::string path = CgroupPathOfId(cfg.cgroup_id);
    std::optional<Cgroup> cg = ResolveCgroup(path, error);
    if (path.empty() || !cg) {
      if (error->empty()) *error = "the cgroup policy " + policy.name + " was applied to is gone";
      return false;
    }
    const std::vector<backend::ResolvedAddress> resolved =
        ResolveDomainGrants(policy, options.dns, sink);
    *next_seconds = RefreshSeconds(resolved, options.dns);
    // A refresh keeps who decides abstract unix names (for the same policy,
    // the flag is set iff the apply asked for it).
    EbpfApplyOptions ebpf_options;
    ebpf_options.abstract_unix_by_landlock = (cfg.flags & WARD_CFG_UNIX_ABSTRACT_OPEN) != 0;
    EbpfApplyResult r;
    return EbpfApply(policy, *cg, resolved, ebpf_options, sink, &r, error);
  }
  bool Remove(const std::string& policy, bool* removed, std::string* error) const override {
    return EbpfRemove(policy, removed, error);
  }
  // The entries of a pinned map (both generations while a flip is under
  // way; one otherwise).
  static size_t MapEntries(const std::string& pinned) {
    const int fd = bpf_obj_get(pinned.c_str());
    if (fd < 0) return 0;
    bpf_map_info info{};
    uint32_t len = sizeof info;
    size_t count = 0;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.key_size <= 64) {
      unsigned char key[64], next[64];
      for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, next) == 0; prev = key) {
        std::memcpy(key, next, info.key_size);
        ++count;
      }
    }
    close(fd);
    return count;
  }

  bool Status(std::vector<Enforcement>* out, std::string* error) const override {
    DIR* d = opendir(kWardDir);
    if (!d) return true;
    std::vector<std::pair<std::string, std::string>> names;  // (policy, its object's folder)
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      std::string dir = EbpfObjectDir(n);
      if (!dir.empty()) names.emplace_back(n, std::move(dir));
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& [n, dir] : names) {
      EbpfConfig cfg;
      if (!EbpfReadConfigAt(dir, &cfg, error)) {
        if (!Exists(dir + "/ward_cfg")) continue;  // removed meanwhile
        return false;
      }
      Enforcement e;
      e.enforcer = "ebpf";
      e.policy = n;
      e.table = dir;
      e.generation = cfg.generation;
      e.scope = Target::Kind::kCgroup;
      e.cgroup_id = cfg.cgroup_id;
      e.cgroup = CgroupPathOfId(cfg.cgroup_id);
      for (const char* map : {"v4_exact", "v6_exact", "v4_lpm", "v6_lpm", "v4_dom", "v6_dom",
                              "in4_exact", "in6_exact", "in4_lpm", "in6_lpm"}) {
        e.elements += MapEntries(dir + "/" + map);
      }
      out->push_back(e);
    }
    return true;
  }
};

}  // namespace

const NetworkEnforcer& EbpfEnforcer() {
  static const Ebpf enforcer;
  return enforcer;
}

}  // namespace ward::enforce
