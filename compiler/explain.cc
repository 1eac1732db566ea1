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
