#include "compiler/explain.h"
#include "compiler/fs_names.h"
#include "language/constants.h"

#include <algorithm>
#include <cstdio>

namespace ward::ir {
namespace {

void Cite(Explanation& e, const std::vector<const FlatRule*>& rules, bool allow) {
  for (const FlatRule* r : rules) {
    if (r->allow != allow) continue;
    if (r->implicit.empty()) {
      e.rules.push_back(r->span);
    } else if (std::find(e.implicit.begin(), e.implicit.end(), r->implicit) == e.implicit.end()) {
      e.implicit.push_back(r->implicit);
    }
  }
}

std::string PortText(Protocol proto, uint16_t port) {
  return std::string(ProtocolName(proto)) +
         (proto == Protocol::kIcmp ? "" : " " + std::to_string(port));
}

// Landlock's connect_tcp (backends/landlock/README.md): the ports the egress
// partition allows to every address (the IPv4-mapped v6 piece aside, which
// the IR keeps empty) and no domain deny names.
bool PortEverywhere(const NetRules& net, uint16_t port) {
  for (const auto& piece : net.egress.v4) {
    if (!piece.decision.Allows(Protocol::kTcp, port)) return false;
  }
  for (const auto& piece : net.egress.v6) {
    if (IsMapped(piece.range.lo) && IsMapped(piece.range.hi)) continue;
    if (!piece.decision.Allows(Protocol::kTcp, port)) return false;
  }
  for (const auto& [pattern, entry] : net.egress_domains) {
    if (entry.deny.Allows(Protocol::kTcp, port)) return false;
  }
  return true;
}

// Egress to `addr`, which the names in `names` resolve to (--resolve), as
// each enforcer decides it. `asked` is the name the question gave, if any.
// The address-based enforcers see only the address: they allow what a
// granted name's answers put in their sets, whichever name the workload
// meant; a name-aware one (a filtering proxy, TLS SNI) sees the name the
// connection carries.
std::vector<EnforcerAnswer> PerEnforcer(const NetRules& net, Protocol proto, uint16_t port,
                                        const IpPrefix& addr, const std::vector<std::string>& names,
                                        const std::optional<std::string>& asked) {
  std::vector<EnforcerAnswer> out;
  const bool by_address = net.Decide(Direction::kEgress, proto, addr, port);
  const std::string what = PortText(proto, port);
  bool domain_deny = false;
  for (const auto& [pattern, entry] : net.egress_domains) domain_deny |= !entry.deny.empty();

  // nftables, ebpf (ward run, ward apply) and firecracker's tap: sets filled
  // with the answers of the exact names granted; wildcards cannot be resolved.
  {
    EnforcerAnswer a{"nftables, ebpf, firecracker (addresses from DNS answers)", "deny", ""};
    std::string via, wildcard_only, overridden;
    for (const std::string& n : names) {
      auto it = net.egress_domains.find(n);
      const bool exact = it != net.egress_domains.end() && it->second.allow.Allows(proto, port);
      if (exact && net.DecideName(Direction::kEgress, proto, n, &addr, port)) {
        via += (via.empty() ? "" : ", ") + n;
      } else if (exact) {
        overridden += (overridden.empty() ? "" : ", ") + n;
      } else if (net.DecideName(Direction::kEgress, proto, n, nullptr, port)) {
        wildcard_only += (wildcard_only.empty() ? "" : ", ") + n;
      }
    }
    if (domain_deny) {
      a.decision = "refused";
      a.why =
          "a deny by domain cannot be enforced by address: these targets refuse the policy "
          "(B3002)";
    } else if (by_address) {
      a.decision = "allow";
      a.why = "the address rules allow it";
    } else if (!via.empty()) {
      a.decision = "allow";
      a.why = via + " resolves here and its grant allows " + what +
              ": the address is in the domain sets, for any connection to it";
    } else {
      a.why = "no address rule allows it";
      if (!overridden.empty()) {
        a.why += "; " + overridden +
                 " resolves here, but a deny covering the address overrides its grant (the "
                 "denied sets)";
      }
      if (!wildcard_only.empty()) {
        a.why += "; " + wildcard_only +
                 " is granted only through a wildcard, which cannot be resolved ahead of time";
      }
    }
    out.push_back(std::move(a));
  }
  // Cilium's toFQDNs: the DNS proxy learns the addresses of the names (and
  // wildcard patterns) the pod looks up.
  {
    EnforcerAnswer a{"cilium (toFQDNs, after the pod looked the name up)", "deny", ""};
    std::string via, overridden;
    for (const std::string& n : names) {
      if (net.DecideName(Direction::kEgress, proto, n, &addr, port)) {
        via += (via.empty() ? "" : ", ") + n;
      } else if (net.DecideName(Direction::kEgress, proto, n, nullptr, port)) {
        overridden += (overridden.empty() ? "" : ", ") + n;
      }
    }
    if (domain_deny) {
      a.decision = "refused";
      a.why = "egressDeny has no toFQDNs: -t cilium refuses a deny by domain (B3002)";
    } else if (by_address) {
      a.decision = "allow";
      a.why = "the address rules allow it";
    } else if (!via.empty()) {
      a.decision = "allow";
      a.why = via + " was looked up and resolved here: its grant allows " + what;
    } else if (!overridden.empty()) {
      a.why = overridden +
              " resolves here, but a deny covering the address overrides its grant (egressDeny)";
    } else {
      a.why = "neither the address nor a name that resolves here is allowed";
    }
    out.push_back(std::move(a));
  }
  // Landlock: TCP ports only, for every address or none.
  if (proto == Protocol::kTcp) {
    EnforcerAnswer a{"landlock (TCP ports only)", "deny", ""};
    bool somewhere = false;
    for (const auto& piece : net.egress.v4) somewhere |= piece.decision.Allows(proto, port);
    for (const auto& piece : net.egress.v6) somewhere |= piece.decision.Allows(proto, port);
    for (const auto& [pattern, entry] : net.egress_domains) {
      somewhere |= entry.allow.Allows(proto, port);
    }
    if (PortEverywhere(net, port)) {
      a.decision = "allow";
      a.why = "tcp " + std::to_string(port) + " is allowed to every address";
    } else if (somewhere) {
      a.decision = "port granted under ward run, deny alone";
      a.why = "tcp " + std::to_string(port) +
              " is allowed to some destinations only: ward run grants the port and its eBPF "
              "layer (above) decides the address; a Landlock ruleset alone denies it";
    } else {
      a.why = "no rule allows tcp " + std::to_string(port);
    }
    out.push_back(std::move(a));
  } else {
    out.push_back({"landlock", "not filtered", "Landlock filters TCP only"});
  }
  // NetworkPolicy has no names: domain grants are left out.
  out.push_back({"kubernetes (NetworkPolicy: addresses only)", by_address ? "allow" : "deny",
                 by_address ? "the address rules allow it"
                            : "no address rule allows it (domain grants are left out)"});
  // A name-aware enforcer decides by the name the connection carries.
  {
    EnforcerAnswer a{"name-aware (seatbelt's filtering proxy, TLS SNI)", "", ""};
    std::vector<std::string> allowed, refused;
    for (const std::string& n : names) {
      (net.DecideName(Direction::kEgress, proto, n, &addr, port) ? allowed : refused).push_back(n);
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (asked) {
      const bool ok = net.DecideName(Direction::kEgress, proto, *asked, &addr, port);
      a.decision = ok ? "allow" : "deny";
      a.why = "for a connection that names " + *asked;
    } else {
      a.decision = by_address ? "allow" : "deny";
      a.why = std::string("for a connection naming no granted host (by address)");
      if (!allowed.empty()) a.why += "; allow for one that names " + join(allowed);
      if (!refused.empty()) a.why += "; deny for one that names " + join(refused);
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string Describe(const NetDecision& d) {
  std::string out;
  if (!d.tcp.empty()) out += "tcp " + d.tcp.ToString();
  if (!d.udp.empty()) out += (out.empty() ? "" : ", ") + ("udp " + d.udp.ToString());
  if (d.icmp) out += (out.empty() ? "" : ", ") + std::string("icmp");
  return out;
}

// A flow no rule allowed: the first allow rule (in source order) that
// matches the host but not the protocol and port, else the first that
// matches the protocol and port but not the host.
std::optional<NearestRule> NearestFlowRule(const NetRules& net, const FlowQuery& q,
                                           const IpPrefix* addr, const std::string* name) {
  std::optional<NearestRule> port_only;
  for (const FlatRule& r : net.rules) {
    if (!r.allow || r.direction != q.direction || !r.implicit.empty() || !r.span.valid()) continue;
    // Whether the rule covers the host: ask Matching with a protocol and
    // port the rule itself allows.
    Protocol proto = !r.what.tcp.empty()   ? Protocol::kTcp
                     : !r.what.udp.empty() ? Protocol::kUdp
                                           : Protocol::kIcmp;
    const PortSet& ports = proto == Protocol::kTcp ? r.what.tcp : r.what.udp;
    uint16_t port = proto == Protocol::kIcmp || ports.empty() ? 0 : ports.ranges().front().first;
    std::vector<const FlatRule*> m = net.Matching(q.direction, proto, addr, name, port);
    const bool host = std::find(m.begin(), m.end(), &r) != m.end();
    const bool service = r.what.Allows(q.protocol, q.port);
    if (host && !service) {
      return NearestRule{r.span,
                         "matches the host, not the " +
                             std::string(q.protocol == Protocol::kIcmp ? "protocol" : "port") +
                             ": it allows " + Describe(r.what)};
    }
    if (service && !host && !port_only) {
      port_only =
          NearestRule{r.span, "matches the " +
                                  std::string(q.protocol == Protocol::kIcmp ? "protocol" : "port") +
                                  ", not the host"};
    }
  }
  return port_only;
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  for (size_t i = 0; i < path.size();) {
    size_t j = path.find('/', i + 1);
    if (j == std::string::npos) j = path.size();
    if (j > i + 1) out.push_back(path.substr(i + 1, j - i - 1));
    i = j;
  }
  return out;
}

// A path no rule allowed: a rule that matches the path for another right,
// else the allow rule for this right whose pattern shares the longest
// leading text with the path (the first in pattern order on a tie).
std::optional<NearestRule> NearestPathRule(const FileRules& files, const std::string& path,
                                           FsRight right, const std::optional<std::string>& home) {
  for (FsRight other : kFsRights) {
    if (other == right) continue;
    FsDecision d = files.Decide(path, other, home);
    if (d.allow && !d.rules.empty()) {
      return NearestRule{d.rules.front(), "grants " + std::string(FsRightName(other)) + ", not " +
                                              std::string(FsRightName(right))};
    }
  }
  const std::map<std::string, FsVerdict>& rules = files.rules[static_cast<size_t>(right)];
  const std::pair<const std::string, FsVerdict>* best = nullptr;
  std::string best_expanded;
  size_t best_length = 0;
  for (const auto& entry : rules) {
    if (!entry.second.allow || entry.second.rules.empty()) continue;
    std::string expanded = entry.first;
    if (expanded[0] == '~') {
      if (!home) continue;
      expanded = *home + expanded.substr(1);
    }
    size_t n = CommonPrefix(expanded, path);
    if (n > best_length) {
      best = &entry;
      best_expanded = expanded;
      best_length = n;
    }
  }
  if (!best || best_length <= 1) return std::nullopt;
  // The pattern's literal folder: its components before the first glob.
  std::string folder;
  size_t depth = 0;
  for (const std::string& c : Components(best_expanded)) {
    if (c.find('*') != std::string::npos) break;
    folder += "/" + c;
    ++depth;
  }
  std::vector<std::string> parts = Components(path);
  std::string why;
  if (!folder.empty() &&
      (parts.size() < depth || CommonPrefix(folder + "/", path + "/") < folder.size() + 1)) {
    std::string same_depth;
    for (size_t i = 0; i < std::min(depth, parts.size()); ++i) same_depth += "/" + parts[i];
    why = same_depth + " is not under " + folder;
    if (parts.size() < depth) why = path + " is above " + folder;
  } else {
    why = "\"" + best->first + "\" does not cover " + path;
  }
  return NearestRule{best->second.rules.front(), why};
}

std::string ArgTestText(const ArgTest& t) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "arg%d & 0x%llx == 0x%llx", t.arg,
                static_cast<unsigned long long>(t.mask), static_cast<unsigned long long>(t.value));
  return buf;
}

// A call that is not let run: the region that lets the syscall run (allow
// or log) with the fewest argument tests this call fails (the first in
// canonical order on a tie). `deciding` is the region that decided, when a
// rule did: an allow region cut from it only by its own test (same
// argument and mask) is a rule that matched and lost to a stricter one,
// not one that almost matched, and is passed over.
std::optional<NearestRule> NearestSyscallRule(const SyscallRules& rules, Arch arch,
                                              const std::string& name,
                                              const std::array<uint64_t, 6>& args,
                                              const Region* deciding) {
  auto per_arch = rules.syscalls.find(arch);
  if (per_arch == rules.syscalls.end()) return std::nullopt;
  auto regions = per_arch->second.find(name);
  if (regions == per_arch->second.end()) return std::nullopt;
  const Region* best = nullptr;
  std::vector<const ArgTest*> best_failed;
  for (const Region& region : regions->second) {
    if (region.rules.empty() || (region.action.kind != SysAction::Kind::kAllow &&
                                 region.action.kind != SysAction::Kind::kLog)) {
      continue;
    }
    std::vector<const ArgTest*> failed;
    for (const ArgTest& t : region.tests) {
      if ((args[static_cast<size_t>(t.arg)] & t.mask) != t.value) failed.push_back(&t);
    }
    if (failed.empty()) continue;
    const bool cut = deciding && std::all_of(failed.begin(), failed.end(), [&](const ArgTest* t) {
                       return std::any_of(
                           deciding->tests.begin(), deciding->tests.end(),
                           [&](const ArgTest& d) { return d.arg == t->arg && d.mask == t->mask; });
                     });
    if (cut) continue;
    if (!best || failed.size() < best_failed.size()) {
      best = &region;
      best_failed = failed;
    }
  }
  if (!best) return std::nullopt;
  std::string why;
  for (const ArgTest* t : best_failed) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "arg%d is 0x%llx", t->arg,
                  static_cast<unsigned long long>(args[static_cast<size_t>(t->arg)]));
    why += (why.empty() ? "" : "; ") + std::string(buf) + ", the rule needs " + ArgTestText(*t);
  }
  return NearestRule{best->rules.front(), why};
}

}  // namespace

std::optional<Explanation> ExplainFlow(const Policy& policy, const FlowQuery& q,
                                       std::string* error) {
  Explanation e;
  std::string where = q.host;
  std::optional<IpPrefix> addr;
  std::optional<std::string> name;
  std::string parse_error;
  if (auto ip = ParseIpOrCidr(q.host, &parse_error); ip && q.host.find('/') == std::string::npos) {
    addr = *ip;
  } else {
    name = q.host;
    if (auto it = q.resolve.find(NormaliseDomain(q.host)); it != q.resolve.end()) {
      auto resolved = ParseIpOrCidr(it->second, &parse_error);
      if (!resolved || it->second.find('/') != std::string::npos) {
        *error = "--resolve " + it->first + "=" + it->second + ": not an address";
        return std::nullopt;
      }
      addr = *resolved;
      where += " (" + it->second + ")";
    } else {
      e.notes.push_back("'" + q.host +
                        "' was not resolved: only domain rules were consulted (give --resolve " +
                        q.host + "=IP to add the address rules)");
    }
  }
  e.query = std::string(q.direction == Direction::kEgress ? "egress " : "ingress ") +
            ProtocolName(q.protocol) + (q.direction == Direction::kEgress ? " to " : " from ") +
            where + (q.protocol == Protocol::kIcmp ? "" : " port " + std::to_string(q.port));
  bool allowed = name ? policy.network.DecideName(q.direction, q.protocol, *name,
                                                  addr ? &*addr : nullptr, q.port)
                      : policy.network.Decide(q.direction, q.protocol, *addr, q.port);
  std::vector<const FlatRule*> matching = policy.network.Matching(
      q.direction, q.protocol, addr ? &*addr : nullptr, name ? &*name : nullptr, q.port);
  e.decision = allowed ? "allow" : "deny";
  // Allowed: the allows that matched. Denied: the denies that matched, or,
  // when none did, no rule (the default).
  Cite(e, matching, allowed);
  // With names resolved to the address, the enforcers need not agree: say
  // what each decides (egress; ingress by name is denied by all of them).
  if (q.direction == Direction::kEgress && addr && !q.resolve.empty()) {
    std::vector<std::string> names;
    for (const auto& [n, ip] : q.resolve) {
      auto r = ParseIpOrCidr(ip, &parse_error);
      if (!r || ip.find('/') != std::string::npos) {
        *error = "--resolve " + n + "=" + ip + ": not an address";
        return std::nullopt;
      }
      if (FormatPrefix(*r) == FormatPrefix(*addr)) names.push_back(n);
    }
    if (name && std::find(names.begin(), names.end(), NormaliseDomain(*name)) == names.end()) {
      names.push_back(NormaliseDomain(*name));
    }
    if (!names.empty()) {
      e.enforcers =
          PerEnforcer(policy.network, q.protocol, q.port, *addr, names,
                      name ? std::optional<std::string>(NormaliseDomain(*name)) : std::nullopt);
      for (const EnforcerAnswer& a : e.enforcers) {
        // Landlock's port grant defers to ebpf; "refused" is a compile error.
        if ((a.decision == "allow" || a.decision == "deny") && a.decision != e.decision) {
          e.notes.push_back(
              name ? "enforcers that see only addresses decide otherwise for this name (below)"
                   : "the address rules " + std::string(allowed ? "allow" : "deny") +
                         " it, but a granted name resolves here: enforcers decide otherwise "
                         "(below)");
          break;
        }
      }
    }
  }
  // Per-enforcer answers (a granted name resolves to the address) say more
  // than a nearest rule would.
  if (!allowed && e.by_default() && e.enforcers.empty()) {
    e.nearest =
        NearestFlowRule(policy.network, q, addr ? &*addr : nullptr, name ? &*name : nullptr);
  }
  return e;
}

Explanation ExplainUnix(const Policy& policy, const std::string& target) {
  Explanation e;
  bool abstract = !target.empty() && target[0] == '@';
  std::string key = abstract ? target.substr(1) : target;
  const auto& granted = abstract ? policy.network.unix_abstract : policy.network.unix_paths;
  bool allowed = granted.count(key) > 0;
  e.query = "connect unix " + target;
  e.decision = allowed ? "allow" : "deny";
  for (const UnixRule& r : policy.network.unix_rules) {
    if (r.abstract != abstract || r.name != key || r.allow != allowed) continue;
    if (r.implicit.empty()) {
      e.rules.push_back(r.span);
    } else {
      e.implicit.push_back(r.implicit);
    }
  }
  if (!allowed && e.by_default()) {
    e.notes.push_back("sockets the workload creates itself stay reachable");
  }
  return e;
}

std::optional<Explanation> ExplainNetlink(const Policy& policy, const std::string& protocol,
                                          std::string* error) {
  Explanation e;
  e.query = "netlink " + protocol;
  if (protocol != "route") {
    const std::vector<std::string>& names = NetlinkProtocolNames();
    if (std::find(names.begin(), names.end(), protocol) == names.end()) {
      *error = "unknown netlink protocol '" + protocol + "' (route, sock_diag, generic, ...)";
      return std::nullopt;
    }
    e.decision = "deny";
    e.notes.push_back("no rule grants it: ward run refuses every netlink protocol but route");
    return e;
  }
  const bool allowed = policy.network.netlink.count(protocol) > 0;
  e.decision = allowed ? "allow" : "deny";
  for (const NetlinkRule& r : policy.network.netlink_rules) {
    if (r.protocol == protocol && r.allow == allowed) e.rules.push_back(r.span);
  }
  e.notes.push_back(allowed ? "the workload reads this host's interfaces, addresses and routes "
                              "(NETLINK_ROUTE, SIOCGIF* ioctls)"
                            : "getifaddrs and if_nameindex fail; getaddrinfo still resolves");
  return e;
}

std::optional<std::string> NormaliseQueryPath(const std::string& path, std::string* error,
                                              std::string* hint) {
  auto bad = [&](const std::string& why, const std::string& how) {
    *error = "invalid path \"" + path + "\": " + why;
    *hint = how;
    return std::nullopt;
  };
  if (path.empty() || path[0] != '/') return bad("not absolute", "start it with /");
  if (path.find('\0') != std::string::npos) return bad("contains a NUL byte", "");
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string comp = path.substr(i, j - i);
    i = j;
    // `.` names the same directory whatever the links; `..` is resolved by
    // the kernel after following symlinks, which a policy cannot see: the
    // lexical answer could differ from what ward run decides.
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      return bad("'..' components are not allowed",
                 "the kernel resolves '..' after following symlinks, which explain cannot see: "
                 "give the path without '..' (realpath(1) on the host the policy runs on)");
    }
    out += "/" + comp;
  }
  return out.empty() ? "/" : out;
}

std::optional<Explanation> ExplainPath(const Policy& policy, const std::string& path, FsRight right,
                                       const std::optional<std::string>& home, std::string* error,
                                       std::string* hint) {
  std::string ignored;
  std::optional<std::string> decided = NormaliseQueryPath(path, error, hint ? hint : &ignored);
  if (!decided) return std::nullopt;
  if (policy.filesystem.NeedsHome() && !home) {
    *error = "the policy has rules under ~: give --home DIR";
    return std::nullopt;
  }
  Explanation e;
  FsDecision d = policy.filesystem.Decide(*decided, right, home);
  e.query = std::string(FsRightName(right)) + " " + *decided;
  e.path = *decided;
  e.decision = d.allow ? "allow" : "deny";
  e.rules = d.rules;
  if (!d.allow && d.rules.empty())
    e.nearest = NearestPathRule(policy.filesystem, *decided, right, home);
  if (*decided != path) e.notes.push_back("decided for " + *decided + " (given as " + path + ")");
  if (!d.pattern.empty()) e.notes.push_back("most specific pattern: " + d.pattern);
  return e;
}

std::optional<Explanation> ExplainSyscall(const Policy& policy, const SyscallQuery& q,
                                          std::string* error) {
  const SyscallRules& rules = policy.syscalls;
  Arch arch = rules.arches.empty() ? kDefaultArch : rules.arches.front();
  if (q.arch) {
    std::optional<Arch> parsed = ParseArch(*q.arch);
    if (!parsed) {
      *error = "unknown architecture '" + *q.arch + "'";
      return std::nullopt;
    }
    arch = *parsed;
  }
  if (!SyscallNumber(arch, q.name)) {
    *error = SyscallExistsAnywhere(q.name)
                 ? "syscall '" + q.name + "' does not exist on " + std::string(ArchName(arch))
                 : "unknown syscall '" + q.name + "'";
    return std::nullopt;
  }
  std::array<uint64_t, 6> args{};
  std::string shown;
  for (const auto& [index, value] : q.args) {
    if (index < 0 || index > 5) {
      *error = "argument index must be 0 to 5";
      return std::nullopt;
    }
    args[static_cast<size_t>(index)] = value;
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
    shown += (shown.empty() ? "" : ", ") + std::string("arg") + std::to_string(index) + "=" + buf;
  }
  Explanation e;
  e.query = "syscall " + q.name + "(" + shown + ") on " + std::string(ArchName(arch));
  SysAction action = rules.Decide(arch, q.name, args);
  e.decision = std::string(KindName(action.kind));
  e.errno_value = action.errno_value;
  if (std::find(rules.arches.begin(), rules.arches.end(), arch) == rules.arches.end()) {
    e.notes.push_back("the policy does not name this architecture: every call is killed");
    return e;
  }
  const Region* region = rules.Find(arch, q.name, args);
  if (region) e.rules = region->RulesFor(args);
  if (action.kind != SysAction::Kind::kAllow && action.kind != SysAction::Kind::kLog) {
    e.nearest = NearestSyscallRule(rules, arch, q.name, args,
                                   region && !e.rules.empty() ? region : nullptr);
  }
  if (region && region->cited_capped) {
    e.notes.push_back(
        "the rules listed give this action somewhere in the call's argument region; not each "
        "need hold for this call");
  }
  auto closed_here = rules.closed.find(arch);
  const Closure* closure = closed_here != rules.closed.end() && closed_here->second.count(q.name)
                               ? &closed_here->second.at(q.name)
                               : nullptr;
  if (e.rules.empty() && closure && !(closure->fallback == rules.default_action)) {
    // A closed bypass class: its fallback decided, not the default.
    const std::string answer = closure->fallback == SysAction{SysAction::Kind::kErrno, kEnosys}
                                   ? "errno ENOSYS"
                                   : ToString(closure->fallback);
    e.notes.push_back(std::string(BypassName(closure->bypass)) +
                      " is closed: no rule naming it matched, and groups cannot let it run, so "
                      "it gets " +
                      answer + " instead of the default");
  } else if (e.rules.empty()) {
    e.default_rule = rules.default_span;
    if (!e.default_rule.valid()) e.notes.push_back("the policy gives no `default`: kill");
    if (closure) {
      e.notes.push_back(std::string(BypassName(closure->bypass)) +
                        " is closed: groups cannot let it run");
    }
  }
  if (region && !region->tests.empty()) {
    std::string cond;
    for (const ArgTest& t : region->tests) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "arg%d & 0x%llx == 0x%llx", t.arg,
                    static_cast<unsigned long long>(t.mask),
                    static_cast<unsigned long long>(t.value));
      cond += (cond.empty() ? "" : " and ") + std::string(buf);
    }
    e.notes.push_back("argument region: " + cond);
  }
  return e;
}

}  // namespace ward::ir
