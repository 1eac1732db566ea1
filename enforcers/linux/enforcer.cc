#include "enforcers/linux/enforcer.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#ifdef WARD_HAVE_NFTABLES
#include "enforcers/linux/nftables.h"
#endif
#ifdef WARD_HAVE_EBPF
#include "enforcers/linux/ebpf.h"
#endif

namespace ward::enforce {

std::vector<std::pair<ir::Direction, std::string>> NamesToResolve(const ir::Policy& policy) {
  std::vector<std::pair<ir::Direction, std::string>> out;
  for (ir::Direction d : {ir::Direction::kEgress, ir::Direction::kIngress}) {
    const auto& domains = d == ir::Direction::kEgress ? policy.network.egress_domains
                                                      : policy.network.ingress_domains;
    for (const auto& [pattern, entry] : domains) {
      if (pattern.rfind("*.", 0) != 0 && !entry.allow.empty()) out.emplace_back(d, pattern);
    }
  }
  return out;
}

namespace {

// The first allow rule that grants `pattern` in direction `d`: where a
// warning about its answers points.
Span RuleSpan(const ir::Policy& policy, ir::Direction d, const std::string& pattern) {
  for (const ir::FlatRule& r : policy.network.rules) {
    if (r.direction == d && r.allow && r.peer.kind == ast::PeerKind::kDomain &&
        ir::NormaliseDomain(r.peer.domain) == pattern) {
      return r.span;
    }
  }
  return Span{};
}

}  // namespace

std::vector<backend::ResolvedAddress> ResolveDomainGrants(const ir::Policy& policy,
                                                          const DnsOptions& dns,
                                                          DiagnosticSink& sink) {
  std::vector<backend::ResolvedAddress> out;
  for (const auto& [d, pattern] : NamesToResolve(policy)) {
    std::vector<DnsAnswer> answers;
    std::string error;
    if (!ResolveName(pattern, dns, &answers, &error) || answers.empty()) {
      sink.Warning(Code::kCannotExpress, RuleSpan(policy, d, pattern),
                   "\"" + pattern + "\" did not resolve" + (error.empty() ? "" : ": " + error) +
                       "; flows to it stay denied until it does",
                   "check the name and the DNS server");
      continue;
    }
    if (!error.empty()) {
      // One family answered, the other failed: its flows stay denied.
      const bool v4 = std::any_of(answers.begin(), answers.end(),
                                  [](const DnsAnswer& a) { return !a.address.v6; });
      sink.Warning(Code::kCannotExpress, RuleSpan(policy, d, pattern),
                   "\"" + pattern + "\" resolved only in part: " + error + "; its " +
                       (v4 ? "IPv4" : "IPv6") + " addresses are allowed, " +
                       (v4 ? "IPv6" : "IPv4") + " flows to it stay denied until it answers",
                   "check the DNS server");
    }
    for (const DnsAnswer& a : answers) out.push_back({d, pattern, a.address, a.ttl});
  }
  return out;
}

uint32_t RefreshSeconds(const std::vector<backend::ResolvedAddress>& answers,
                        const DnsOptions& dns) {
  uint32_t shortest = std::max<uint32_t>(dns.ttl_floor, 1);
  if (!answers.empty()) {
    shortest = UINT32_MAX;
    for (const auto& a : answers) shortest = std::min(shortest, a.ttl);
  }
  return std::max<uint32_t>(shortest / 2, 1);
}

void WarnNonIpSockets(std::string_view enforcer, DiagnosticSink& sink) {
  sink.Warning(Code::kCannotExpress, Span{},
               std::string(enforcer) +
                   " does not see packet sockets (AF_PACKET, with CAP_NET_RAW) nor "
                   "other families outside IP such as vsock: they send past it",
               "drop CAP_NET_RAW in the scope and refuse other socket families with seccomp "
               "(ward run does both)");
}

std::vector<MountEntry> MountTable() {
  static std::mutex mutex;
  static int fd = -1;
  static std::vector<MountEntry> table;
  std::lock_guard<std::mutex> lock(mutex);
  if (fd < 0) fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  pollfd p{fd, POLLPRI, 0};
  const bool changed = poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR));
  if (!table.empty() && !changed) return table;
  std::string text;
  char buf[8192];
  if (lseek(fd, 0, SEEK_SET) != 0) return {};
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return {};
    }
    text.append(buf, static_cast<size_t>(n));
  }
  table.clear();
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    MountEntry e;
    fields >> e.device >> e.dir >> e.type >> e.options;
    if (!e.dir.empty()) table.push_back(std::move(e));
  }
  return table;
}

std::string CgroupV2Mount(std::string* error) {
  for (const MountEntry& m : MountTable()) {
    if (m.type == "cgroup2") return m.dir;
  }
  *error = "no cgroup2 file system is mounted (see /proc/mounts)";
  return "";
}

std::optional<Cgroup> ResolveCgroup(const std::string& path, std::string* error) {
  Cgroup c;
  c.mount = CgroupV2Mount(error);
  if (c.mount.empty()) return std::nullopt;
  std::string rel = path;
  if (!rel.empty() && rel.front() == '/') {
    if (rel.compare(0, c.mount.size(), c.mount) != 0 ||
        (rel.size() > c.mount.size() && rel[c.mount.size()] != '/')) {
      *error = "cgroup " + path + " is not under the cgroup v2 mount " + c.mount;
      return std::nullopt;
    }
    rel = rel.substr(c.mount.size());
  }
  // Normalise: no empty, "." or ".." components.
  std::string out;
  std::istringstream parts(rel);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == ".." || part.find('"') != std::string::npos) {
      *error = "cgroup path " + path + ": '..' and quotes are not allowed";
      return std::nullopt;
    }
    out += (out.empty() ? "" : "/") + part;
    ++c.level;
  }
  c.relative = out;
  const std::string full = c.mount + (out.empty() ? "" : "/" + out);
  struct stat st;
  if (stat(full.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      access((full + "/cgroup.procs").c_str(), F_OK) != 0) {
    *error = "cgroup " + full + " does not exist";
    return std::nullopt;
  }
  if (c.level == 0) {
    *error = "cgroup " + full + " is the root cgroup: name a cgroup below it";
    return std::nullopt;
  }
  c.id = st.st_ino;
  return c;
}

std::string CgroupPathOfId(uint64_t id) {
  std::string error;
  const std::string mount = CgroupV2Mount(&error);
  if (mount.empty()) return "";
  std::error_code ec;
  namespace fs = std::filesystem;
  for (auto it = fs::recursive_directory_iterator(
           mount, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st;
    if (stat(it->path().c_str(), &st) == 0 && st.st_ino == id) {
      return it->path().string().substr(mount.size() + 1);
    }
  }
  return "";
}

const std::vector<const NetworkEnforcer*>& NetworkEnforcers() {
  static const std::vector<const NetworkEnforcer*> all = {
#ifdef WARD_HAVE_NFTABLES
      &NftablesEnforcer(),
#endif
#ifdef WARD_HAVE_EBPF
      &EbpfEnforcer(),
#endif
  };
  return all;
}

const NetworkEnforcer* FindNetworkEnforcer(std::string_view name) {
  for (const NetworkEnforcer* e : NetworkEnforcers()) {
    if (e->name() == name) return e;
  }
  return nullptr;
}

bool IsPlannedEnforcer(std::string_view name) {
  return FindNetworkEnforcer(name) == nullptr && (name == "ebpf" || name == "nftables");
}

bool HasCapability(int capability) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[capability / 32].effective >> (capability % 32)) & 1;
}

}  // namespace ward::enforce
