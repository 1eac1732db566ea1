// Drift, the eBPF half (drift.h, ReadLiveEbpf): the object enforcing a
// policy read back through libbpf (its links: program id, tag, cgroup,
// attach type; the active generation of its maps), compared with what
// backends/ebpf/maps.cc renders for the desired IR, and the maps decoded
// back into the network partitions they enforce. Reads only.
#include <bpf/bpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <type_traits>

#include "backends/ebpf/bpf/ward_ebpf.h"
#include "backends/ebpf/maps.h"
#include "enforcers/linux/drift.h"
#include "enforcers/linux/ebpf.h"

namespace ward::enforce {
namespace {

namespace eb = ward::backend::ebpf;

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// One address entry with the port sets it points at spelled out: the form
// in which the rendered maps and the kernel's are compared.
struct Held {
  bool v6 = false;
  std::array<uint8_t, 16> addr{};
  uint8_t length = 0;
  bool exact = false;  // the HASH map (looked up before the LPM trie)
  eb::PortSetSegments tcp, udp;
  uint32_t icmp = 0;  // WARD_ALLOW or the refusing rule's id
  auto operator<=>(const Held&) const = default;
};

// What one direction's maps hold.
struct HeldDirection {
  std::vector<Held> entries;               // sorted
  eb::PortSetSegments bind_tcp, bind_udp;  // ingress: the ports bind() may take
  bool operator==(const HeldDirection&) const = default;
};

struct HeldUnix {
  bool abstract = false;
  std::string name;
  uint32_t verdict = 0;  // WARD_ALLOW or the rule id
  auto operator<=>(const HeldUnix&) const = default;
};

// Allowed segments carry no rule: compare them so.
eb::PortSetSegments Normal(eb::PortSetSegments segs) {
  for (eb::Segment& s : segs) {
    if (s.allow) s.rule = 0;
  }
  return segs;
}

// ---- the rendering of the desired IR ---------------------------------------

Held FromCidr(const eb::MapContents& m, const eb::Cidr& c, bool exact) {
  Held h;
  h.v6 = c.v6;
  h.addr = c.addr;
  h.length = c.length;
  h.exact = exact;
  h.tcp = Normal(m.portsets.at(c.entry.tcp_set));
  h.udp = Normal(m.portsets.at(c.entry.udp_set));
  h.icmp = c.entry.icmp_allow ? WARD_ALLOW : c.entry.icmp_rule;
  return h;
}

HeldDirection Rendered(const eb::MapContents& m, bool ingress) {
  HeldDirection d;
  for (const eb::Cidr& c : ingress ? m.ingress_exact : m.exact) {
    d.entries.push_back(FromCidr(m, c, true));
  }
  for (const eb::Cidr& c : ingress ? m.ingress_prefixes : m.prefixes) {
    d.entries.push_back(FromCidr(m, c, false));
  }
  std::sort(d.entries.begin(), d.entries.end());
  if (ingress) {
    d.bind_tcp = Normal(m.portsets.at(m.bind.tcp_set));
    d.bind_udp = Normal(m.portsets.at(m.bind.udp_set));
  }
  return d;
}

// ---- the kernel's maps -------------------------------------------------------

// A pinned map of the object, closed with this.
struct MapFd {
  int fd = -1;
  ~MapFd() {
    if (fd >= 0) close(fd);
  }
};

bool OpenMap(const std::string& dir, const char* name, MapFd* m, std::string* error) {
  m->fd = bpf_obj_get((dir + "/" + name).c_str());
  if (m->fd < 0) {
    *error = Errno("opening " + dir + "/" + name, errno);
    return false;
  }
  return true;
}

// Every key of a map (of size sizeof(Key)).
template <typename Key>
std::vector<Key> Keys(int fd) {
  std::vector<Key> out;
  Key key{}, next{};
  void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    out.push_back(next);
    key = next;
    prev = &key;
  }
  return out;
}

struct KernelMaps {
  MapFd portsets;
  uint32_t gen = 0;
  // Port set `id` of the active generation (missing: empty, as the programs
  // read a missing set).
  bool Segments(uint32_t id, eb::PortSetSegments* out, std::string* error) const {
    out->clear();
    uint32_t idx = gen * WARD_MAX_PORTSETS + (id & (WARD_MAX_PORTSETS - 1));
    ward_portset ps{};
    if (bpf_map_lookup_elem(portsets.fd, &idx, &ps) != 0) {
      if (errno == ENOENT) return true;
      *error = Errno("reading port set " + std::to_string(id), errno);
      return false;
    }
    for (uint32_t i = 0; i < std::min<uint32_t>(ps.count, WARD_MAX_SEGMENTS); ++i) {
      eb::Segment s;
      s.lo = ps.seg[i].lo;
      s.hi = ps.seg[i].hi;
      s.allow = ps.seg[i].verdict == WARD_ALLOW;
      s.rule = s.allow ? 0 : ps.seg[i].verdict;
      out->push_back(s);
    }
    return true;
  }
  bool Entry(const ward_entry& e, Held* h, std::string* error) const {
    h->icmp = e.icmp;
    return Segments(e.tcp_set, &h->tcp, error) && Segments(e.udp_set, &h->udp, error);
  }
};

template <typename Key>
bool ReadExact(const KernelMaps& k, int fd, bool v6, std::vector<Held>* out, std::string* error) {
  for (const Key& key : Keys<Key>(fd)) {
    if (key.generation != k.gen) continue;
    ward_entry e{};
    if (bpf_map_lookup_elem(fd, &key, &e) != 0) continue;  // deleted meanwhile
    Held h;
    h.v6 = v6;
    std::memcpy(h.addr.data(), key.addr, sizeof key.addr);
    h.length = v6 ? 128 : 32;
    h.exact = true;
    if (!k.Entry(e, &h, error)) return false;
    out->push_back(std::move(h));
  }
  return true;
}

template <typename Key>
bool ReadLpm(const KernelMaps& k, int fd, bool v6, std::vector<Held>* out, std::string* error) {
  for (const Key& key : Keys<Key>(fd)) {
    if (key.generation != k.gen || key.prefixlen < 32) continue;
    ward_entry e{};
    if (bpf_map_lookup_elem(fd, &key, &e) != 0) continue;
    Held h;
    h.v6 = v6;
    std::memcpy(h.addr.data(), key.addr, sizeof key.addr);
    h.length = static_cast<uint8_t>(key.prefixlen - 32);
    if (!k.Entry(e, &h, error)) return false;
    out->push_back(std::move(h));
  }
  return true;
}

bool ReadDirection(const std::string& dir, const KernelMaps& k, bool ingress, HeldDirection* out,
                   std::string* error) {
  MapFd v4e, v6e, v4l, v6l;
  if (!OpenMap(dir, ingress ? "in4_exact" : "v4_exact", &v4e, error) ||
      !OpenMap(dir, ingress ? "in6_exact" : "v6_exact", &v6e, error) ||
      !OpenMap(dir, ingress ? "in4_lpm" : "v4_lpm", &v4l, error) ||
      !OpenMap(dir, ingress ? "in6_lpm" : "v6_lpm", &v6l, error)) {
    return false;
  }
  if (!ReadExact<ward_v4_key>(k, v4e.fd, false, &out->entries, error) ||
      !ReadExact<ward_v6_key>(k, v6e.fd, true, &out->entries, error) ||
      !ReadLpm<ward_v4_lpm_key>(k, v4l.fd, false, &out->entries, error) ||
      !ReadLpm<ward_v6_lpm_key>(k, v6l.fd, true, &out->entries, error)) {
    return false;
  }
  std::sort(out->entries.begin(), out->entries.end());
  if (ingress) {
    MapFd bind;
    if (!OpenMap(dir, "in_bind", &bind, error)) return false;
    ward_entry e{};
    uint32_t gen = k.gen;
    if (bpf_map_lookup_elem(bind.fd, &gen, &e) != 0) {
      *error = Errno("reading the bind ports", errno);
      return false;
    }
    if (!k.Segments(e.tcp_set, &out->bind_tcp, error) ||
        !k.Segments(e.udp_set, &out->bind_udp, error)) {
      return false;
    }
  }
  return true;
}

bool ReadUnix(const std::string& dir, uint32_t gen, std::vector<HeldUnix>* out,
              std::string* error) {
  MapFd m;
  if (!OpenMap(dir, "unix_names", &m, error)) return false;
  for (const ward_unix_key& key : Keys<ward_unix_key>(m.fd)) {
    if (key.generation != gen) continue;
    uint32_t verdict = 0;
    if (bpf_map_lookup_elem(m.fd, &key, &verdict) != 0) continue;
    HeldUnix u;
    u.abstract = key.abstract != 0;
    u.name.assign(key.name, std::min<size_t>(key.len, sizeof key.name));
    u.verdict = verdict;
    out->push_back(std::move(u));
  }
  std::sort(out->begin(), out->end());
  return true;
}

// ---- back into the IR ------------------------------------------------------

template <typename A>
constexpr A MaxOf() {
  return static_cast<A>(~static_cast<A>(0));
}

// What one address decides: the ports allowed, and those a deny refuses.
struct Decided {
  ir::NetDecision allow, deny;
  bool operator==(const Decided&) const = default;
};

// A partition under construction: the decision from each breakpoint on.
template <typename A>
class Painter {
 public:
  Painter() { at_[0] = {}; }
  // [lo, hi] decides `d` (later calls win).
  void Paint(A lo, A hi, const Decided& d) {
    std::optional<Decided> after;  // the decision right after hi, kept
    if (hi != MaxOf<A>()) after = At(hi + 1);
    auto first = at_.lower_bound(lo);
    auto last = hi == MaxOf<A>() ? at_.end() : at_.upper_bound(hi);
    at_.erase(first, last);
    at_[lo] = d;
    if (after) at_.emplace(hi + 1, *after);
  }
  // The pieces, adjacent ones differing; `denied` as the IR keeps it: the
  // denies where a domain grant could otherwise allow.
  std::vector<ir::Piece<A>> Pieces(const ir::NetDecision& domain_allows) const {
    std::vector<ir::Piece<A>> out;
    for (auto it = at_.begin(); it != at_.end(); ++it) {
      auto next = std::next(it);
      ir::Piece<A> p;
      p.range = {it->first, next == at_.end() ? MaxOf<A>() : static_cast<A>(next->first - 1)};
      p.decision = it->second.allow;
      p.denied = it->second.deny.Intersect(domain_allows);
      if (!out.empty() && out.back().decision == p.decision && out.back().denied == p.denied) {
        out.back().range.hi = p.range.hi;
      } else {
        out.push_back(p);
      }
    }
    return out;
  }

 private:
  Decided At(A a) const { return std::prev(at_.upper_bound(a))->second; }
  std::map<A, Decided> at_;
};

ir::PortSet Ports(const eb::PortSetSegments& segs, bool allowed) {
  std::vector<std::pair<uint16_t, uint16_t>> ranges;
  for (const eb::Segment& s : segs) {
    if (s.allow == allowed) ranges.emplace_back(s.lo, s.hi);
  }
  return ir::PortSet(ranges);
}

ir::NetDecision Allowed(const Held& h) {
  ir::NetDecision d;
  d.tcp = Ports(h.tcp, true);
  d.udp = Ports(h.udp, true);
  d.icmp = h.icmp == WARD_ALLOW;
  return d;
}

ir::NetDecision Denied(const Held& h) {
  ir::NetDecision d;
  d.tcp = Ports(h.tcp, false);
  d.udp = Ports(h.udp, false);
  d.icmp = h.icmp != WARD_ALLOW && h.icmp != 0;
  return d;
}

IpPrefix PrefixOf(const Held& h) {
  IpPrefix p;
  p.v6 = h.v6;
  p.bytes = h.addr;
  p.length = h.length;
  return p;
}

// The partition the programs enforce: the exact HASH decides first, then
// the longest prefix of the LPM trie; a miss refuses.
ir::Partition Decode(const HeldDirection& d, const ir::NetDecision& domain_allows) {
  Painter<ir::V4> v4;
  Painter<ir::V6> v6;
  std::vector<const Held*> order;
  for (const Held& h : d.entries) order.push_back(&h);
  // Shorter prefixes first, exact entries last: the later paint wins.
  std::stable_sort(order.begin(), order.end(), [](const Held* a, const Held* b) {
    if (a->exact != b->exact) return !a->exact;
    return a->length < b->length;
  });
  for (const Held* h : order) {
    const Decided dd{Allowed(*h), Denied(*h)};
    if (!h->v6) {
      const ir::Range<ir::V4> r = ir::V4Range(PrefixOf(*h));
      v4.Paint(r.lo, r.hi, dd);
    } else {
      const ir::Range<ir::V6> r = ir::V6Range(PrefixOf(*h));
      v6.Paint(r.lo, r.hi, dd);
    }
  }
  ir::Partition p;
  p.v4 = v4.Pieces(domain_allows);
  p.v6 = v6.Pieces(domain_allows);
  return p;
}

ir::NetDecision DomainAllows(const std::map<std::string, ir::DomainEntry>& domains) {
  ir::NetDecision u;
  for (const auto& [pattern, e] : domains) u = u.Union(e.allow);
  return u;
}

// Every flow of these protocols to (from) one family allowed: what a lost
// hook no longer refuses. The v6 space of ::ffff:0:0/96 stays empty (the
// IR's invariant: mapped addresses are decided as IPv4).
template <typename A>
void Open(std::vector<ir::Piece<A>>* pieces, bool tcp, bool udp, bool icmp) {
  Painter<A> painter;
  for (ir::Piece<A> p : *pieces) {
    if (tcp) p.decision.tcp = ir::PortSet::All();
    if (udp) p.decision.udp = ir::PortSet::All();
    if (icmp) p.decision.icmp = true;
    painter.Paint(p.range.lo, p.range.hi, Decided{p.decision, p.denied});
  }
  if constexpr (std::is_same_v<A, ir::V6>) {
    painter.Paint(ir::MappedV6(0), ir::MappedV6(MaxOf<ir::V4>()), Decided{});
  }
  // `denied` was copied as it was (the intersection is idempotent).
  *pieces = painter.Pieces(ir::NetDecision{ir::PortSet::All(), ir::PortSet::All(), true});
}

// The whole space of both families, nothing allowed.
ir::Partition Closed() {
  ir::Partition p;
  p.v4 = Painter<ir::V4>().Pieces({});
  p.v6 = Painter<ir::V6>().Pieces({});
  return p;
}

// ---- links and programs --------------------------------------------------

std::string Hex(const uint8_t* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// "program 42 ward_connect4 (tag 0123abcd...)".
std::string DescribeProgram(uint32_t id) {
  std::string s = "program " + std::to_string(id);
  const int fd = bpf_prog_get_fd_by_id(id);
  if (fd < 0) return s;
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
    s += " " + std::string(info.name, strnlen(info.name, sizeof info.name)) + " (tag " +
         Hex(info.tag, sizeof info.tag) + ")";
  }
  close(fd);
  return s;
}

// Whether program `id` reads map `map_id` (Ward's programs all read their
// object's ward_cfg).
bool ProgramUsesMap(uint32_t id, uint32_t map_id) {
  const int fd = bpf_prog_get_fd_by_id(id);
  if (fd < 0) return false;
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  std::vector<uint32_t> maps(64);
  info.nr_map_ids = static_cast<uint32_t>(maps.size());
  info.map_ids = reinterpret_cast<uint64_t>(maps.data());
  const bool ok = bpf_obj_get_info_by_fd(fd, &info, &len) == 0;
  close(fd);
  if (!ok) return false;
  maps.resize(std::min<size_t>(info.nr_map_ids, maps.size()));
  return std::find(maps.begin(), maps.end(), map_id) != maps.end();
}

// The hooks whose link is not (or no longer) attached to the cgroup with
// this object's program; the ids of the programs that are.
struct Links {
  std::set<std::string> lost;
  std::set<uint32_t> programs;
  std::vector<std::string> problems;  // what is wrong with each lost one
};

Links ReadLinks(const std::string& dir, uint64_t cgroup_id, uint32_t cfg_map_id) {
  Links out;
  for (const auto& [link, type] : EbpfHookLinks()) {
    const std::string path = dir + "/" + link;
    const int fd = bpf_obj_get(path.c_str());
    bpf_link_info info{};
    uint32_t len = sizeof info;
    std::string problem;
    if (fd < 0) {
      problem = "is not pinned";
    } else if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
      problem = "cannot be read";
    } else if (info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != cgroup_id) {
      problem = "is not attached to the cgroup";
    } else if (static_cast<int>(info.cgroup.attach_type) != type) {
      problem = "is attached at another hook";
    } else if (!ProgramUsesMap(info.prog_id, cfg_map_id)) {
      problem = "runs " + DescribeProgram(info.prog_id) + ", not this object's program";
    }
    if (fd >= 0) close(fd);
    if (problem.empty()) {
      out.programs.insert(info.prog_id);
    } else {
      out.lost.insert(link);
      out.problems.push_back(link + " " + problem);
    }
  }
  return out;
}

// Programs attached to the cgroup itself (not through this object's links).
void ForeignPrograms(const std::string& cg_path, const std::set<uint32_t>& ours,
                     std::vector<std::string>* unknown) {
  const int cg_fd = open(cg_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd < 0) return;
  for (const auto& [link, type] : EbpfHookLinks()) {
    std::vector<uint32_t> ids(64);
    uint32_t count = static_cast<uint32_t>(ids.size()), flags = 0;
    if (bpf_prog_query(cg_fd, static_cast<bpf_attach_type>(type), 0, &flags, ids.data(), &count) !=
        0) {
      continue;  // a hook this kernel lacks
    }
    ids.resize(std::min<size_t>(count, ids.size()));
    for (uint32_t id : ids) {
      if (ours.count(id)) continue;
      unknown->push_back(DescribeProgram(id) + " attached at " + link.substr(5) +
                         " of the cgroup (not this policy's)");
    }
  }
  close(cg_fd);
}

// What each lost hook no longer decides: the partitions opened for it
// (README.md, "Drift"), and notes for what the IR cannot say.
void ApplyLosses(const Links& links, ir::NetRules* net, std::vector<std::string>* notes) {
  auto lost = [&](const char* l) { return links.lost.count(l) > 0; };
  // The backstop (cgroup_skb/egress) decides every first SYN, every UDP
  // datagram and every ICMP packet again: a connect/sendmsg hook alone
  // lost refuses as before, by the backstop.
  if (lost("link_egress")) {
    const bool tcp4 = lost("link_connect4"), udp4 = tcp4 || lost("link_sendmsg4");
    const bool tcp6 = lost("link_connect6"), udp6 = tcp6 || lost("link_sendmsg6");
    Open(&net->egress.v4, tcp4, udp4, true);  // unconnected pings: the backstop only
    Open(&net->egress.v6, tcp6, udp6, true);
  }
  if (lost("link_ingress")) {
    Open(&net->ingress.v4, true, true, false);
    Open(&net->ingress.v6, true, true, false);
  }
  if (lost("link_bind4") || lost("link_bind6")) {
    notes->push_back("explicit bind() to a port no ingress rule allows is not refused");
  }
  if (lost("link_connect_unix") || lost("link_sendmsg_unix")) {
    notes->push_back("unix socket connects and sends are not decided");
  }
  if (lost("link_sock_create")) {
    notes->push_back("raw, SCTP and other inet sockets are not refused at creation");
  }
}

}  // namespace

bool ReadLiveEbpf(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                  LiveState* out, std::string* error) {
  (void)options;  // domain answers are not compared (README.md, "Drift")
  *out = {};
  out->live = desired;
  if (target.kind != Target::Kind::kCgroup) {
    *error = "ebpf enforces on a cgroup only";
    return false;
  }
  std::optional<Cgroup> cg = ResolveCgroup(target.cgroup, error);
  if (!cg) return false;
  const std::string cg_path = cg->mount + "/" + cg->relative;
  DiagnosticSink sink;
  eb::MapContents want;
  if (!eb::BuildMaps(desired.network, &want, sink)) {
    *error = "the policy does not compile for ebpf";
    return false;
  }
  const std::string dir = EbpfObjectDir(desired.name);
  if (dir.empty()) {
    // Nothing enforces: every flow is allowed.
    ir::NetRules& net = out->live.network;
    net.egress = Closed();
    net.ingress = Closed();
    Open(&net.egress.v4, true, true, true);
    Open(&net.egress.v6, true, true, true);
    Open(&net.ingress.v4, true, true, false);
    Open(&net.ingress.v6, true, true, false);
    ForeignPrograms(cg_path, {}, &out->unknown);
    return true;
  }
  out->present = true;
  MapFd cfg_fd;
  EbpfConfig cfg;
  if (!OpenMap(dir, "ward_cfg", &cfg_fd, error) || !EbpfReadConfig(cfg_fd.fd, &cfg, error)) {
    return false;
  }
  bpf_map_info cfg_info{};
  uint32_t len = sizeof cfg_info;
  if (bpf_obj_get_info_by_fd(cfg_fd.fd, &cfg_info, &len) != 0) {
    *error = Errno("reading the config map's info", errno);
    return false;
  }
  out->generation = cfg.generation;
  if (cfg.cgroup_id != cg->id) {
    *error = "policy " + desired.name + " is enforced on another cgroup";
    return false;
  }
  KernelMaps k;
  k.gen = cfg.generation & 1u;
  if (!OpenMap(dir, "portsets", &k.portsets, error)) return false;
  HeldDirection egress, ingress;
  std::vector<HeldUnix> unix_held;
  if (!ReadDirection(dir, k, false, &egress, error) ||
      !ReadDirection(dir, k, true, &ingress, error) || !ReadUnix(dir, k.gen, &unix_held, error)) {
    return false;
  }
  std::vector<HeldUnix> unix_want;
  for (const eb::UnixName& u : want.unix_names) {
    unix_want.push_back({u.abstract, u.name, u.allow ? WARD_ALLOW : u.rule});
  }
  std::sort(unix_want.begin(), unix_want.end());

  bool in_sync = true;
  ir::NetRules& net = out->live.network;
  // Only what differs is decoded: a direction that holds what the policy
  // renders keeps the policy's own partition.
  if (!(egress == Rendered(want, false))) {
    in_sync = false;
    net.egress = Decode(egress, DomainAllows(net.egress_domains));
  }
  const HeldDirection ingress_want = Rendered(want, true);
  if (!(ingress == ingress_want)) {
    in_sync = false;
    net.ingress = Decode(ingress, DomainAllows(net.ingress_domains));
    // The IR derives the ports bind() may take from the partition: a
    // change of in_bind alone has no IR to show in.
    if (ingress.bind_tcp != ingress_want.bind_tcp || ingress.bind_udp != ingress_want.bind_udp) {
      out->unknown.push_back(
          "changed: in_bind (the ports an explicit bind() may take) differs from the policy's");
    }
  }
  if (unix_held != unix_want) {
    in_sync = false;
    net.unix_paths.clear();
    net.unix_abstract.clear();
    for (const HeldUnix& u : unix_held) {
      if (u.verdict != WARD_ALLOW) continue;
      (u.abstract ? net.unix_abstract : net.unix_paths).insert(u.name);
    }
  }
  const Links links = ReadLinks(dir, cg->id, cfg_info.id);
  if (!links.lost.empty()) {
    in_sync = false;
    std::vector<std::string> notes;
    ApplyLosses(links, &net, &notes);
    for (const std::string& p : links.problems) out->unknown.push_back("lost: " + p);
    for (const std::string& n : notes) out->unknown.push_back("lost: " + n);
  }
  const size_t before = out->unknown.size();
  ForeignPrograms(cg_path, links.programs, &out->unknown);
  if (out->unknown.size() != before) in_sync = false;
  out->in_sync = in_sync;
  return true;
}

}  // namespace ward::enforce
