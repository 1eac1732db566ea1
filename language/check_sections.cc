// Checks of the filesystem, network, process and limits sections and labels.
#include <algorithm>
#include <set>

#include "language/checker.h"
#include "language/constants.h"
#include "language/literals.h"

namespace ward {

// A rule whose values expand to nothing (`[]`, or a let of `[]`) is refused:
// it either does nothing or, for ports, would read as "all".
void Checker::ReportEmpty(Span span, const char* what) {
  if (dropped_) return;  // an item was dropped after an error of its own
  sink_.Error(Code::kEmptyList, span, std::string("empty list of ") + what,
              "remove the rule, or name at least one value");
}

// ---- filesystem ---------------------------------------------------------

void Checker::CheckFilesystem(ast::FilesystemSection& section) {
  for (ast::FsRule& rule : section.rules) {
    std::vector<ast::Atom> atoms = Expand(rule.raw);
    if (atoms.empty()) ReportEmpty(rule.span, "paths");
    for (const ast::Atom& atom : atoms) {
      if (atom.kind != ast::ValueKind::kString) {
        if (atom.kind == ast::ValueKind::kWord && IsIdentifier(atom.text)) {
          sink_.Error(Code::kUndefinedName, atom.span, "undefined name '" + atom.text + "'",
                      "paths are strings: write \"/" + atom.text + "\", or define a let");
        } else {
          sink_.Error(Code::kTypeMismatch, atom.span,
                      "expected a path (a string), found " + DescribeAtom(atom));
        }
        continue;
      }
      std::string path;
      if (!NormalisePath(atom, &path)) continue;
      WarnLiteralGlob(atom);
      rule.paths.push_back({atom.kind, path, atom.span});
    }
  }
}

// `?`, `[` and `{` are glob syntax in shells, gitignore and srt, and
// ordinary file-name characters here: `deny read "/w/file?.txt"` denies one
// file with a `?` in its name, which is rarely what was meant.
void Checker::WarnLiteralGlob(const ast::Atom& atom) {
  const size_t at = atom.text.find_first_of("?[{");
  if (at == std::string::npos) return;
  const char c = atom.text[at];
  std::string hint = "`?`, `[` and `{` are literal in `ward 1` (only `*` and `**` are globs); ";
  if (c == '?') {
    hint += "for any characters within a component write `*`";
  } else if (c == '[') {
    hint += "for a set of characters write `*`, or one path per character";
  } else {
    hint += "for alternatives write one path each";
  }
  sink_.Warning(
      Code::kLiteralGlob, atom.span,
      "path \"" + atom.text + "\" contains '" + std::string(1, c) + "', which matches only itself",
      hint);
}

// Paths are absolute or start with `~`; `..`, `.` and `~user` are refused;
// `//` and a trailing `/` are normalised away. `*` globs within a component,
// `**` only as a whole component.
bool Checker::NormalisePath(const ast::Atom& atom, std::string* out) {
  const std::string& p = atom.text;
  auto bad = [&](const std::string& why, const std::string& hint = {}) {
    sink_.Error(Code::kInvalidPath, atom.span, "invalid path \"" + p + "\": " + why, hint);
    return false;
  };
  if (p.empty()) return bad("empty");
  if (p.find('\0') != std::string::npos) return bad("contains a NUL byte");
  std::string rest;
  if (p[0] == '~') {
    if (p.size() > 1 && p[1] != '/') {
      return bad("~user is not supported", "write the absolute path");
    }
    *out = "~";
    rest = p.substr(1);
  } else if (p[0] == '/') {
    *out = "";
    rest = p;
  } else {
    return bad("not absolute", "start it with / or ~/");
  }
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == '/') ++i;
    size_t j = rest.find('/', i);
    if (j == std::string::npos) j = rest.size();
    std::string comp = rest.substr(i, j - i);
    i = j;
    if (comp.empty()) continue;
    if (comp == "." || comp == "..") return bad("'" + comp + "' components are not allowed");
    if (comp.find("**") != std::string::npos && comp != "**") {
      return bad("'**' must be a whole path component", "write /**/ between slashes");
    }
    *out += "/" + comp;
  }
  if (out->empty()) *out = "/";
  return true;
}

// ---- network ------------------------------------------------------------

void Checker::CheckNetwork(ast::NetworkSection& section) {
  for (ast::NetRule& rule : section.rules) {
    if (rule.is_unix) {
      CheckUnixRule(rule);
      continue;
    }
    if (rule.is_netlink) {
      CheckNetlinkRule(rule);
      continue;
    }
    CheckPeers(rule);
    CheckPorts(rule);
  }
}

void Checker::CheckUnixRule(ast::NetRule& rule) {
  std::vector<ast::Atom> sockets = Expand(rule.raw_peers);
  if (sockets.empty()) ReportEmpty(rule.span, "sockets");
  for (const ast::Atom& atom : sockets) {
    if (atom.kind != ast::ValueKind::kString) {
      sink_.Error(
          Code::kTypeMismatch, atom.span,
          "expected a unix socket (a string: \"/path\" or \"@name\"), found " + DescribeAtom(atom));
      continue;
    }
    const std::string& s = atom.text;
    if (s.size() > 1 && s[0] == '@') {
      if (s.size() > 108) {
        sink_.Error(Code::kInvalidUnixSocket, atom.span, "abstract socket name is too long",
                    "the kernel allows 107 bytes");
        continue;
      }
      rule.sockets.push_back({true, s.substr(1), atom.span});
      continue;
    }
    std::string path;
    if (s.empty() || s[0] != '/') {
      sink_.Error(Code::kInvalidUnixSocket, atom.span,
                  "invalid unix socket \"" + s + "\": expected an absolute path or @name");
      continue;
    }
    if (s.find('*') != std::string::npos) {
      sink_.Error(Code::kInvalidUnixSocket, atom.span, "unix socket paths cannot contain globs",
                  "name each socket");
      continue;
    }
    if (NormalisePath(atom, &path)) rule.sockets.push_back({false, path, atom.span});
  }
}

// Only NETLINK_ROUTE can be granted: what the others show or change (the
// host's sockets, devices, firewall, audit log) no sandbox needs, and ward
// run's guard refuses them whatever the policy says.
void Checker::CheckNetlinkRule(ast::NetRule& rule) {
  std::vector<ast::Atom> protocols = Expand(rule.raw_peers);
  if (protocols.empty()) ReportEmpty(rule.span, "netlink protocols");
  for (const ast::Atom& atom : protocols) {
    if (atom.kind != ast::ValueKind::kWord) {
      sink_.Error(Code::kTypeMismatch, atom.span,
                  "expected a netlink protocol (route), found " + DescribeAtom(atom));
      continue;
    }
    if (atom.text == "route") {
      rule.netlink.push_back({atom.text, atom.span});
      continue;
    }
    const std::vector<std::string>& names = NetlinkProtocolNames();
    const bool known = std::find(names.begin(), names.end(), atom.text) != names.end();
    if (known) {
      sink_.Error(Code::kUnknownNetlink, atom.span,
                  "netlink protocol '" + atom.text + "' is never granted",
                  "only `route` is; ward run refuses every other netlink protocol");
    } else {
      const std::string close = ClosestMatch(atom.text, names);
      sink_.Error(Code::kUnknownNetlink, atom.span, "unknown netlink protocol '" + atom.text + "'",
                  close == "route" ? "did you mean `route`?"
                                   : "the one netlink protocol a policy grants is `route`");
    }
  }
}

void Checker::CheckPeers(ast::NetRule& rule) {
  const char* keyword = rule.direction == ast::Direction::kEgress ? "to" : "from";
  if (!rule.peer_keyword) {
    sink_.Error(Code::kMissingPeer, rule.span, std::string("network rule has no `") + keyword + "`",
                std::string("write `") + keyword + " any` to match every address");
    return;
  }
  if (*rule.peer_keyword != rule.direction) {
    bool ingress = rule.direction == ast::Direction::kIngress;
    sink_.Error(Code::kWrongDirection, rule.peer_keyword_span,
                ingress ? "`to` in an ingress rule" : "`from` in an egress rule",
                ingress ? "ingress rules name the remote side with `from`"
                        : "write `allow ingress ... from ...` for incoming connections");
    return;
  }
  std::vector<ast::Atom> peers = Expand(rule.raw_peers);
  if (peers.empty()) ReportEmpty(rule.peer_keyword_span, "addresses");
  for (const ast::Atom& atom : peers) {
    ast::Peer peer;
    peer.span = atom.span;
    switch (atom.kind) {
      case ast::ValueKind::kAny:
        peer.kind = ast::PeerKind::kAny;
        break;
      case ast::ValueKind::kLoopback:
        peer.kind = ast::PeerKind::kLoopback;
        break;
      case ast::ValueKind::kString:
        if (!CheckDomain(atom, &peer)) continue;
        break;
      case ast::ValueKind::kList:
      case ast::ValueKind::kWord: {
        std::string error;
        LiteralKind kind = Classify(atom.text);
        if (kind != LiteralKind::kIpAddress && kind != LiteralKind::kCidr) {
          if (kind == LiteralKind::kName) {
            sink_.Error(Code::kUndefinedName, atom.span, "undefined name '" + atom.text + "'",
                        "domain names are strings: write \"" + atom.text + "\"");
          } else if (atom.text.find_first_of(".:") != std::string::npos &&
                     kind == LiteralKind::kOther) {
            ParseIpOrCidr(atom.text, &error);
            // Only a word with letters and no ':' could have been meant as a domain.
            bool name_like = atom.text.find(':') == std::string::npos &&
                             std::any_of(atom.text.begin(), atom.text.end(),
                                         [](unsigned char c) { return std::isalpha(c); });
            sink_.Error(Code::kInvalidLiteral, atom.span,
                        "invalid address '" + atom.text + "': " + error,
                        name_like ? "domain names are strings: write \"" + atom.text + "\"" : "");
          } else {
            sink_.Error(Code::kTypeMismatch, atom.span,
                        "expected an address, a CIDR, a domain (a string), `any` or "
                        "`loopback`, found " +
                            DescribeAtom(atom));
          }
          continue;
        }
        peer.kind = ast::PeerKind::kAddress;
        peer.prefix = *ParseIpOrCidr(atom.text, &error);
        IpPrefix canonical;
        if (HostBitsSet(peer.prefix, &canonical)) {
          sink_.Warning(Code::kHostBitsSet, atom.span,
                        "'" + atom.text + "' has host bits set beyond its prefix",
                        "did you mean " + FormatPrefix(canonical) + "?");
          peer.prefix = canonical;
        }
        break;
      }
    }
    rule.peers.push_back(std::move(peer));
  }
}

// A domain, or `*.domain` for strict subdomains. An address written as a
// string is taken as the address.
bool Checker::CheckDomain(const ast::Atom& atom, ast::Peer* peer) {
  std::string error;
  if (auto ip = ParseIpOrCidr(atom.text, &error)) {
    peer->kind = ast::PeerKind::kAddress;
    peer->prefix = *ip;
    return true;
  }
  std::string name = atom.text;
  peer->kind = ast::PeerKind::kDomain;
  if (name.rfind("*.", 0) == 0) {
    peer->kind = ast::PeerKind::kWildcardDomain;
    name = name.substr(2);
  }
  if (!name.empty() && name.back() == '.') name.pop_back();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto bad = [&](const std::string& why, const std::string& hint) {
    sink_.Error(Code::kInvalidDomain, atom.span, "invalid domain \"" + atom.text + "\": " + why,
                hint);
    return false;
  };
  if (name.empty()) return bad("empty", "");
  if (name.size() > 253) return bad("longer than 253 characters", "");
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    std::string label = name.substr(start, dot - start);
    if (label.empty()) return bad("empty label", "remove the doubled dot");
    if (label.size() > 63) return bad("label longer than 63 characters", "");
    for (char c : label) {
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '*') {
        return bad("'*' is only allowed as a whole first label",
                   "write \"*.example.com\" for every strict subdomain");
      }
      if (u < 0x80 && !std::isalnum(u) && c != '-' && c != '_') {
        return bad(std::string("character '") + c + "' is not allowed in a domain", "");
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return bad("a label cannot start or end with '-'", "");
    }
    start = dot + 1;
  }
  peer->domain = name;
  return true;
}

void Checker::CheckPorts(ast::NetRule& rule) {
  if (rule.raw_ports.empty()) return;
  if (rule.protocol == ast::Protocol::kIcmp) {
    sink_.Error(Code::kPortWithIcmp, rule.ports_keyword_span, "ICMP has no ports",
                "remove the port, or use tcp or udp");
    return;
  }
  std::vector<ast::Atom> ports = Expand(rule.raw_ports);
  // An empty port list would read as "every port": refuse it.
  if (ports.empty()) ReportEmpty(rule.ports_keyword_span, "ports");
  for (const ast::Atom& atom : ports) {
    std::string error;
    LiteralKind kind =
        atom.kind == ast::ValueKind::kWord ? Classify(atom.text) : LiteralKind::kOther;
    if (kind != LiteralKind::kInteger && kind != LiteralKind::kRange) {
      sink_.Error(Code::kTypeMismatch, atom.span,
                  "expected a port or port range, found " + DescribeAtom(atom));
      continue;
    }
    auto range = ParsePortRange(atom.text, &error);
    if (!range) {
      sink_.Error(Code::kPortOutOfRange, atom.span, "invalid port '" + atom.text + "': " + error,
                  "ports are 1-65535");
      continue;
    }
    range->span = atom.span;
    rule.ports.push_back(*range);
  }
}

// ---- process ------------------------------------------------------------

void Checker::CheckProcess(ast::ProcessSection& section) {
  for (ast::ProcessSection::Caps& caps : section.capabilities) {
    std::vector<ast::Atom> atoms = Expand(caps.raw);
    if (caps.drop) {
      if (atoms.size() != 1 || atoms[0].kind != ast::ValueKind::kWord || atoms[0].text != "all") {
        sink_.Error(Code::kTypeMismatch, caps.span, "expected `capabilities drop all`",
                    "to keep some capabilities, write `capabilities keep [CAP_...]`");
        continue;
      }
      caps.all = true;
      continue;
    }
    if (atoms.empty()) ReportEmpty(caps.span, "capabilities");
    std::set<std::string> seen;
    for (const ast::Atom& a : atoms) {
      if (a.kind != ast::ValueKind::kWord || !LookupCapability(a.text)) {
        std::string close =
            sink_.full() ? "" : DidYouMean(ClosestMatches(a.text, CapabilityNames()));
        sink_.Error(Code::kUnknownCapability, a.span, "unknown capability '" + a.text + "'",
                    close.empty() ? "capabilities are written CAP_NAME" : close);
        continue;
      }
      if (seen.insert(a.text).second) caps.names.push_back({a.text, a.span});
    }
  }
  if (section.user) {
    std::string err;
    const std::string& t = section.user->text;
    size_t colon = t.find(':');
    std::optional<int64_t> uid, gid;
    if (colon != std::string::npos) {
      uid = ParseInteger(t.substr(0, colon), &err);
      gid = ParseInteger(t.substr(colon + 1), &err);
    }
    auto valid = [](std::optional<int64_t> v) { return v && *v >= 0 && *v < 0xFFFFFFFFll; };
    if (!valid(uid) || !valid(gid)) {
      sink_.Error(Code::kInvalidUser, section.user->span, "invalid user '" + t + "'",
                  "write `user UID:GID` with numbers, e.g. `user 1000:1000`");
    } else {
      section.user->uid = static_cast<uint32_t>(*uid);
      section.user->gid = static_cast<uint32_t>(*gid);
    }
  }
  for (ast::ProcessSection::Env& env : section.env) {
    std::vector<ast::Atom> names = Expand(env.raw);
    if (names.empty()) ReportEmpty(env.span, "variable names");
    for (const ast::Atom& a : names) {
      bool ok = a.kind == ast::ValueKind::kString && !a.text.empty();
      for (size_t i = 0; ok && i < a.text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(a.text[i]);
        bool last_star = c == '*' && i + 1 == a.text.size() && i > 0;
        ok = std::isalnum(c) || c == '_' || last_star;
        if (i == 0 && std::isdigit(c)) ok = false;
      }
      if (!ok) {
        bool name = a.kind == ast::ValueKind::kWord && IsIdentifier(a.text);
        sink_.Error(
            name ? Code::kUndefinedName : Code::kInvalidEnvName, a.span,
            name ? "undefined name '" + a.text + "'"
                 : "invalid environment variable name " +
                       (a.kind == ast::ValueKind::kString ? "\"" + a.text + "\"" : DescribeAtom(a)),
            "write names as strings, e.g. \"PATH\"; a trailing * matches a prefix");
        continue;
      }
      env.names.push_back(a);
    }
  }
}

// ---- limits -------------------------------------------------------------

void Checker::CheckLimits(ast::LimitsSection& section) {
  struct LimitInfo {
    const char* key;
    ast::LimitKind kind;
    LiteralKind type;  // kDecimal, kSize, kInteger or kDuration
  };
  static constexpr LimitInfo kLimits[] = {
      {"cpus", ast::LimitKind::kCpus, LiteralKind::kDecimal},
      {"memory", ast::LimitKind::kMemory, LiteralKind::kSize},
      {"pids", ast::LimitKind::kPids, LiteralKind::kInteger},
      {"open_files", ast::LimitKind::kOpenFiles, LiteralKind::kInteger},
      {"disk", ast::LimitKind::kDisk, LiteralKind::kSize},
      {"cpu_time", ast::LimitKind::kCpuTime, LiteralKind::kDuration},
      {"timeout", ast::LimitKind::kTimeout, LiteralKind::kDuration},
  };
  std::map<std::string, Span> seen;
  for (ast::Limit& limit : section.limits) {
    const LimitInfo* info = nullptr;
    std::vector<std::string> keys;
    for (const LimitInfo& l : kLimits) {
      keys.push_back(l.key);
      if (limit.key.text == l.key) info = &l;
    }
    if (!info) {
      std::string close = DidYouMean(ClosestMatches(limit.key.text, keys));
      sink_.Error(Code::kUnknownLimit, limit.key.span, "unknown limit '" + limit.key.text + "'",
                  close.empty() ? "the limits are cpus, memory, pids, open_files, disk, "
                                  "cpu_time and timeout"
                                : close);
      continue;
    }
    auto [it, inserted] = seen.emplace(limit.key.text, limit.key.span);
    if (!inserted) {
      sink_.Error(Code::kDuplicateEntry, limit.key.span,
                  "limit '" + limit.key.text + "' is given twice");
      sink_.AddRelated(it->second, "first given here");
      continue;
    }
    limit.kind = info->kind;
    std::vector<ast::Atom> atoms = Expand({limit.raw});
    std::string error;
    std::optional<uint64_t> value;
    if (atoms.size() == 1 && atoms[0].kind == ast::ValueKind::kWord) {
      const std::string& t = atoms[0].text;
      switch (info->type) {
        case LiteralKind::kDecimal:
          value = ParseMilliUnits(t, &error);
          break;
        case LiteralKind::kSize:
          value = ParseSize(t, &error);
          break;
        case LiteralKind::kDuration:
          value = ParseDuration(t, &error);
          break;
        default: {
          auto n = ParseInteger(t, &error);
          if (n && *n >= 0) value = static_cast<uint64_t>(*n);
          break;
        }
      }
    }
    if (!value) {
      std::string found = atoms.size() == 1 ? DescribeAtom(atoms[0]) : "a list";
      static const std::map<LiteralKind, const char*> kExamples = {
          {LiteralKind::kDecimal, "a number of CPUs such as 2 or 0.5"},
          {LiteralKind::kSize, "a size with a unit such as 4GiB"},
          {LiteralKind::kDuration, "a duration such as 30s, 5m or 2h"},
          {LiteralKind::kInteger, "a whole number"},
      };
      std::string hint = atoms.size() == 1 && atoms[0].kind == ast::ValueKind::kWord
                             ? UnitHint(atoms[0].text, info->type)
                             : "";
      sink_.Error(
          Code::kTypeMismatch, limit.raw.span,
          "'" + limit.key.text + "' expects " + kExamples.at(info->type) + ", found " + found,
          hint);
      continue;
    }
    if (*value == 0) {
      sink_.Error(Code::kValueOutOfRange, limit.raw.span,
                  "'" + limit.key.text + "' must be greater than zero");
      continue;
    }
    // cpus becomes a CFS quota of cpus x 100 ms per 100 ms period (cgroup v2
    // cpu.max, v1 cpu.cfs_quota_us, runc, the kubelet, Firecracker's jailer).
    // The kernel refuses a quota under 1 ms or over 2^44-1 us (EINVAL), so
    // such a value would compile and then fail where it is applied.
    constexpr uint64_t kMinCpuMilli = 10;  // 0.01: 1000 us
    constexpr uint64_t kMaxCpuMilli = ((uint64_t{1} << 44) - 1) / 100;
    if (info->kind == ast::LimitKind::kCpus && (*value < kMinCpuMilli || *value > kMaxCpuMilli)) {
      sink_.Error(Code::kValueOutOfRange, limit.raw.span,
                  *value < kMinCpuMilli
                      ? "'cpus' must be at least 0.01: a CPU quota under 1 ms per 100 ms period "
                        "is refused by the kernel (cpu.max)"
                      : "'cpus' must be at most " + std::to_string(kMaxCpuMilli / 1000) +
                            ": the kernel refuses a larger CPU quota (cpu.max)",
                  "the kernel's CFS bandwidth quota is 1000 us to 2^44-1 us per period");
      continue;
    }
    limit.value = *value;
  }
}

void Checker::CheckLabels(ast::Policy& policy) {
  std::map<std::string, Span> seen;
  for (const ast::Label& l : policy.labels) {
    auto [it, inserted] = seen.emplace(l.key.text, l.key.span);
    if (!inserted) {
      sink_.Error(Code::kDuplicateEntry, l.key.span, "label '" + l.key.text + "' is given twice");
      sink_.AddRelated(it->second, "first given here");
    }
  }
}

}  // namespace ward
