#include "backends/seatbelt/profile.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/fs_names.h"
#include "compiler/ip.h"

namespace ward::backend::seatbelt {
namespace {

using ir::Direction;
using ir::FsRight;
using ir::PortSet;
using ir::Protocol;

// macOS keeps these under /private and links them from the root; the
// sandbox sees the resolved path, so rules are written in both forms.
constexpr const char* kAliases[] = {"/etc", "/tmp", "/var"};
constexpr const char* kAliasRegex = "^/private/(etc|tmp|var)(/|$)";

// Ports are listed one by one (SBPL has no ranges), at most this many per
// block; a set whose members and complement are both longer is left out
// with a warning.
constexpr size_t kMaxPorts = 4096;

bool IsGlob(const std::string& pattern) { return pattern.find('*') != std::string::npos; }

// SBPL strings (and `#"..."` regex literals, which take no escapes) carry
// these paths unchanged.
bool Printable(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

bool UnderAlias(const std::string& path) {
  for (const char* a : kAliases) {
    const std::string alias(a);
    if (path == alias || path.rfind(alias + "/", 0) == 0) return true;
  }
  return false;
}

std::string RegexLiteral(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string(".^$|()[]{}+?*\\").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// The filters for a regex `re` ("^/...") of a glob whose first component
// is `first`, with its /private form where the sandbox sees one.
std::string RegexFilters(const std::string& re, const std::string& first) {
  const std::string priv = "^/private" + re.substr(1);
  if (IsGlob(first)) {
    // A glob at the root could match /private/tmp/... by its own spelling;
    // there the /tmp spelling decides (README.md), so the pattern applies
    // outside the aliases and, moved under /private, inside them.
    return "(require-all (regex #\"" + re + "\") (require-not (regex #\"" + kAliasRegex +
           "\")))\n    (require-all (regex #\"" + priv + "\") (regex #\"" + kAliasRegex + "\"))";
  }
  std::string f = "(regex #\"" + re + "\")";
  if (UnderAlias("/" + first)) f += " (regex #\"" + priv + "\")";
  return f;
}

// The filters of one rule for a pattern (absolute, `~` expanded).
std::string Filters(const std::string& pattern) {
  if (!IsGlob(pattern)) {
    std::string f = "(subpath " + Quote(pattern) + ")";
    if (UnderAlias(pattern)) f += " (subpath " + Quote("/private" + pattern) + ")";
    return f;
  }
  return RegexFilters(PatternRegex(pattern), ir::PathComponents(pattern).at(0));
}

struct FsEntry {
  std::string expanded;
  bool allow = false;
  const ir::FsVerdict* verdict = nullptr;
  FsRight right = FsRight::kRead;
};

const char* Operation(FsRight right) {
  switch (right) {
    case FsRight::kRead:
      return "file-read*";
    case FsRight::kWrite:
      return "file-write*";
    case FsRight::kExec:
      return "process-exec";
  }
  return "";
}

// ---- network ------------------------------------------------------------

const PortSet& Ports(const ir::NetDecision& d, Protocol p) {
  return p == Protocol::kTcp ? d.tcp : d.udp;
}

PortSet Intersect(const PortSet& a, const PortSet& b) { return a.Minus(a.Minus(b)); }

// The ports of `proto` that every address allows (the v6 piece of
// IPv4-mapped addresses, always empty, stands for the v4 space).
PortSet EverywherePorts(const ir::Partition& part, Protocol proto) {
  PortSet all = PortSet::All();
  for (const auto& p : part.v4) all = Intersect(all, Ports(p.decision, proto));
  for (const auto& p : part.v6) {
    if (ir::IsMapped(p.range.lo) && ir::IsMapped(p.range.hi)) continue;
    all = Intersect(all, Ports(p.decision, proto));
  }
  return all;
}

bool V4Loopback(const ir::Range<ir::V4>& r) { return r.hi >= 0x7f000000u && r.lo <= 0x7fffffffu; }
bool V6Loopback(const ir::Range<ir::V6>& r) { return r.lo <= 1 && r.hi >= 1; }

// The ports of `proto` every loopback address (127.0.0.0/8, ::1) allows.
PortSet LoopbackPorts(const ir::Partition& part, Protocol proto) {
  PortSet all = PortSet::All();
  for (const auto& p : part.v4) {
    if (V4Loopback(p.range)) all = Intersect(all, Ports(p.decision, proto));
  }
  for (const auto& p : part.v6) {
    if (V6Loopback(p.range)) all = Intersect(all, Ports(p.decision, proto));
  }
  return all;
}

size_t Count(const PortSet& s) {
  size_t n = 0;
  for (auto [lo, hi] : s.ranges()) n += static_cast<size_t>(hi) - lo + 1;
  return n;
}

std::string RangeText(const ir::Range<ir::V4>& r) {
  std::vector<std::string> c = ir::V4Cidrs(r);
  return c.size() == 1 ? c[0] : ir::FormatV4(r.lo) + "-" + ir::FormatV4(r.hi);
}
std::string RangeText(const ir::Range<ir::V6>& r) {
  std::vector<std::string> c = ir::V6Cidrs(r);
  return c.size() == 1 ? c[0] : ir::FormatV6(r.lo) + "-" + ir::FormatV6(r.hi);
}

struct NetOut {
  // In profile order: the `*` block, then the `localhost` block (which
  // decides loopback addresses over the `*` block), then single grants.
  std::vector<std::string> any_allow, any_deny, local_allow, local_deny, extra_allow;
  std::vector<std::string> lost;  // "tcp to 10.0.0.0/8 port 5432"
};

// One protocol of one direction. The ports every address allows (E) go in
// the `*` block; egress, the ports every loopback address allows (L, which
// holds E) in the `localhost` block. A block lists its ports, or, when the
// complement is shorter, allows `HOST:*` and denies the complement (the
// later rule wins). What only some addresses allow is lost.
void NetProtocol(const ir::Partition& part, Direction dir, Protocol proto, NetOut* out) {
  const std::string name = ir::ProtocolName(proto);
  const std::string kind = dir == Direction::kEgress ? "remote" : "local";
  const std::string to = dir == Direction::kEgress ? " to " : " from ";
  auto filter = [&](const std::string& host, const std::string& port) {
    return "(" + kind + " " + name + " \"" + host + ":" + port + "\")";
  };
  auto list = [&](const std::string& host, const PortSet& ports, std::vector<std::string>* into) {
    for (auto [lo, hi] : ports.ranges()) {
      for (uint32_t p = lo; p <= hi; ++p) into->push_back(filter(host, std::to_string(p)));
    }
  };
  // Makes HOST reach `want` given that `base` (a subset) already is reached.
  auto block = [&](const std::string& host, const PortSet& want, const PortSet& base,
                   std::vector<std::string>* allow, std::vector<std::string>* deny) {
    const PortSet add = want.Minus(base);
    if (add.empty()) return true;
    const PortSet refuse = PortSet::All().Minus(want);
    if (refuse.empty()) {
      allow->push_back(filter(host, "*"));
    } else if (Count(add) <= kMaxPorts && Count(add) <= Count(refuse)) {
      list(host, add, allow);
    } else if (Count(refuse) <= kMaxPorts) {
      allow->push_back(filter(host, "*"));
      list(host, refuse, deny);
    } else {
      out->lost.push_back(name + to + (host == "*" ? "any" : "loopback") + " port " +
                          add.ToString() + " (SBPL lists ports one by one; more than " +
                          std::to_string(kMaxPorts) + " either way)");
      return false;
    }
    return true;
  };
  PortSet everywhere = EverywherePorts(part, proto);
  if (!block("*", everywhere, PortSet(), &out->any_allow, &out->any_deny)) everywhere = PortSet();
  PortSet loopback = everywhere;
  if (dir == Direction::kEgress) {
    const PortSet want = LoopbackPorts(part, proto);
    if (block("localhost", want, everywhere, &out->local_allow, &out->local_deny)) loopback = want;
  }
  auto lose = [&](const std::string& where, const PortSet& allowed, bool is_loopback) {
    const PortSet rest = allowed.Minus(is_loopback ? loopback : everywhere);
    if (!rest.empty()) out->lost.push_back(name + to + where + " port " + rest.ToString());
  };
  for (const auto& p : part.v4) {
    lose(RangeText(p.range), Ports(p.decision, proto),
         p.range.lo >= 0x7f000000u && p.range.hi <= 0x7fffffffu);
  }
  for (const auto& p : part.v6) {
    lose(RangeText(p.range), Ports(p.decision, proto), p.range.lo == 1 && p.range.hi == 1);
  }
}

void NetIcmp(const ir::Partition& part, Direction dir, NetOut* out) {
  const std::string to = dir == Direction::kEgress ? "icmp to " : "icmp from ";
  std::vector<std::string> where;
  bool all = true;
  for (const auto& p : part.v4) {
    if (p.decision.icmp) where.push_back(RangeText(p.range));
    all = all && p.decision.icmp;
  }
  for (const auto& p : part.v6) {
    if (ir::IsMapped(p.range.lo) && ir::IsMapped(p.range.hi)) continue;
    if (p.decision.icmp) where.push_back(RangeText(p.range));
    all = all && p.decision.icmp;
  }
  if (all) {
    out->lost.push_back(to + "any");
    return;
  }
  for (const std::string& w : where) out->lost.push_back(to + w);
}

// The first allow rule of a direction, for the span of a warning.
Span FirstAllow(const ir::NetRules& net, Direction dir) {
  for (const ir::FlatRule& r : net.rules) {
    if (r.allow && r.direction == dir) return r.span;
  }
  return {};
}

std::string Listing(const std::vector<std::string>& items) {
  std::string s;
  size_t shown = 0;
  for (const std::string& i : items) {
    if (shown == 12) {
      s += ", and " + std::to_string(items.size() - shown) + " more";
      break;
    }
    s += (s.empty() ? "" : ", ") + i;
    ++shown;
  }
  return s;
}

// What a process needs to start under `(deny default)`, and nothing more.
// Never `mach-lookup` without a name, never LaunchServices, Apple Events or
// lsopen. README.md says why each line is here.
const char* kStartup = R"(;; What any process needs to start (README.md, "The startup list"):
;; - fork itself, signal and inspect its own sandbox's processes;
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
;; - read the handful of sysctls libc, the dynamic loader and language
;;   runtimes ask for (CPU count and features, page size, OS version);
(allow sysctl-read
    (sysctl-name "hw.activecpu")
    (sysctl-name "hw.cachelinesize")
    (sysctl-name "hw.cpufamily")
    (sysctl-name "hw.cputype")
    (sysctl-name "hw.logicalcpu")
    (sysctl-name "hw.logicalcpu_max")
    (sysctl-name "hw.machine")
    (sysctl-name "hw.memsize")
    (sysctl-name "hw.ncpu")
    (sysctl-name "hw.pagesize")
    (sysctl-name "hw.pagesize_compat")
    (sysctl-name "hw.physicalcpu")
    (sysctl-name "hw.physicalcpu_max")
    (sysctl-name-prefix "hw.optional.")
    (sysctl-name "kern.argmax")
    (sysctl-name "kern.hostname")
    (sysctl-name "kern.maxfilesperproc")
    (sysctl-name "kern.osproductversion")
    (sysctl-name "kern.osrelease")
    (sysctl-name "kern.ostype")
    (sysctl-name "kern.osversion")
    (sysctl-name "kern.usrstack64")
    (sysctl-name "kern.version")
    (sysctl-name "sysctl.proc_cputype"))
;; - the system log, notifications of configuration changes, and the user
;;   database (getpwuid: the home directory, the user name).
(allow mach-lookup
    (global-name "com.apple.logd")
    (global-name "com.apple.system.logger")
    (global-name "com.apple.system.notification_center")
    (global-name "com.apple.system.opendirectoryd.libinfo"))
(allow ipc-posix-shm-read-data (ipc-posix-name "apple.shm.notification_center"))
)";

// The regex of a glob pattern's own components ("^/a/[^/]+"), without the
// "or under it" suffix.
std::string ComponentsRegex(const std::string& pattern) {
  std::string re = "^";
  for (const std::string& c : ir::PathComponents(pattern)) {
    if (c == "**") {
      re += "(/[^/]+)*";
      continue;
    }
    re += "/";
    if (c.find_first_not_of('*') == std::string::npos) {
      re += "[^/]+";
      continue;
    }
    size_t i = 0;
    while (i < c.size()) {
      if (c[i] == '*') {
        while (i < c.size() && c[i] == '*') ++i;
        re += "[^/]*";
      } else {
        size_t j = c.find('*', i);
        if (j == std::string::npos) j = c.size();
        re += RegexLiteral(c.substr(i, j - i));
        i = j;
      }
    }
  }
  return re;
}

using Denied = std::map<std::string, std::vector<const FsEntry*>>;  // pattern -> its denies

Span FirstRule(const std::vector<const FsEntry*>& denies) {
  const auto& rules = denies.front()->verdict->rules;
  return rules.empty() ? Span{} : rules.front();
}

bool DeniesRight(const std::vector<const FsEntry*>& denies, FsRight right) {
  for (const FsEntry* d : denies) {
    if (d->right == right) return true;
  }
  return false;
}

bool Under(const std::string& path, const std::string& root) {
  return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
}

// The guard of a literal pattern whose subtree lacks `rights`: the
// subtree, minus the literal grants under it that allow all of them (they
// hold no object it protects).
std::string LiteralGuard(const ir::Policy& policy, const std::optional<std::string>& home,
                         const std::string& pattern, const std::vector<FsRight>& rights,
                         const std::vector<const FsEntry*>& allowed) {
  std::set<std::string> holes;
  for (const FsEntry* a : allowed) {
    if (IsGlob(a->expanded) || a->expanded == pattern || !Under(a->expanded, pattern)) continue;
    bool all = true;
    for (FsRight right : rights)
      all = all && policy.filesystem.Decide(a->expanded, right, home).allow;
    if (all) holes.insert(a->expanded);
  }
  auto guard = [&](const std::string& spelling) {
    if (holes.empty()) return "(subpath " + Quote(spelling + pattern) + ")";
    std::string f = "(require-all (subpath " + Quote(spelling + pattern) + ")";
    for (const std::string& h : holes) f += " (require-not (subpath " + Quote(spelling + h) + "))";
    return f + ")";
  };
  std::string f = guard("");
  if (UnderAlias(pattern)) f += "\n    " + guard("/private");
  return f;
}

// Whether a directory renamed to where the grant `a` decides can land
// there: `a` (a literal) or a grant inside it lets it be written. A glob
// grant is assumed to.
bool Landable(const ir::Policy& policy, const std::optional<std::string>& home, const FsEntry& a,
              const std::vector<const FsEntry*>& allowed) {
  if (IsGlob(a.expanded) || policy.filesystem.Decide(a.expanded, FsRight::kWrite, home).allow) {
    return true;
  }
  for (const FsEntry* w : allowed) {
    if (w->right == FsRight::kWrite && Under(w->expanded, a.expanded)) return true;
  }
  return false;
}

// Whether a directory `**` matches (after `root`) in a deny could be
// renamed to where a grant of a right it denies decides what it holds (a
// grant more specific than the deny that it can land in), or out of `root`
// to any place it can land in: there it is no longer guarded, and what it
// holds can be renamed on from there, back into `root` under a name the
// deny does not match. Guarding every directory under `root` instead would
// stop all renames there.
bool StarStarEscapes(const ir::Policy& policy, const std::optional<std::string>& home,
                     const std::string& pattern, const std::string& root,
                     const std::vector<const FsEntry*>& denies,
                     const std::vector<const FsEntry*>& allowed) {
  for (const FsEntry* a : allowed) {
    const bool outside = a->right == FsRight::kWrite && (IsGlob(root) || !Under(a->expanded, root));
    const bool closer =
        DeniesRight(denies, a->right) && ir::CompareSpecificity(a->expanded, pattern) > 0;
    if ((outside || closer) && Landable(policy, home, *a, allowed)) return true;
  }
  return false;
}

struct Guard {
  std::vector<std::string> own;                            // the denies' own filters
  std::set<std::string> literals;                          // literal directories above them
  std::set<std::pair<std::string, std::string>> prefixes;  // exact regex, first component
};

// The directories above `pattern` that keep their names, into `guard`.
// Returns the root of a `**` whose directories may escape (see
// StarStarEscapes); with `partial`, everything under that root is guarded
// instead (towards deny).
std::optional<std::string> GuardAncestors(const ir::Policy& policy,
                                          const std::optional<std::string>& home,
                                          const std::string& pattern,
                                          const std::vector<const FsEntry*>& denies,
                                          const std::vector<const FsEntry*>& allowed, bool partial,
                                          Guard* guard) {
  const std::vector<std::string> c = ir::PathComponents(pattern);
  std::string prefix;
  bool glob = false;
  std::optional<std::string> escape;
  for (size_t k = 0; k + 1 < c.size(); ++k) {
    const std::string root = prefix.empty() ? "/" : prefix;
    prefix += "/" + c[k];
    glob = glob || IsGlob(c[k]);
    if (!glob) {
      guard->literals.insert(prefix);
    } else if (c[k] != "**" ||
               (!escape && StarStarEscapes(policy, home, pattern, root, denies, allowed))) {
      if (c[k] == "**") escape = root;
      if (c[k] != "**" || partial) guard->prefixes.insert({ComponentsRegex(prefix) + "$", c[0]});
    }
  }
  return escape;
}

// The rename guard (README.md, "Renames and links"). SBPL has no rename
// operation: rename(2) is checked as file-write-unlink of the old name (and
// file-write-create of the new one). So what a deny rule protects, and each
// directory above it, keeps its name, and never reaches a name with a
// broader decision; so does what may be written but not read, when some
// writable place may be read. Hard links are never granted (the profile
// allows no `file-link`), and the profile says so. Fails on a `**` whose
// directories could escape, unless `partial`.
bool RenameGuard(const ir::Policy& policy, const std::optional<std::string>& home, bool partial,
                 const std::array<std::vector<FsEntry>, 3>& entries, std::string* out,
                 DiagnosticSink& sink) {
  bool ok = true;
  Denied denied;
  std::vector<const FsEntry*> allowed;
  for (const auto& list : entries) {
    for (const FsEntry& e : list) {
      if (e.allow) allowed.push_back(&e);
      if (!e.allow) denied[e.expanded].push_back(&e);
    }
  }
  Guard guard;
  std::vector<std::string> undeletable;
  Span undeletable_span;
  for (const auto& [pattern, denies] : denied) {
    if (policy.filesystem.Decide(pattern, FsRight::kWrite, home).allow) {
      // Writable, so deletable under the IR; the guard takes that away.
      if (undeletable.empty()) undeletable_span = FirstRule(denies);
      undeletable.push_back(pattern);
    }
    std::vector<FsRight> rights;
    for (const FsEntry* d : denies) rights.push_back(d->right);
    guard.own.push_back(IsGlob(pattern) ? Filters(pattern)
                                        : LiteralGuard(policy, home, pattern, rights, allowed));
    const std::optional<std::string> escape =
        GuardAncestors(policy, home, pattern, denies, allowed, partial, &guard);
    const std::string what = "seatbelt cannot keep the directories that `**` matches in `" +
                             pattern + "` from being renamed";
    if (escape && partial) {
      sink.Warning(
          Code::kCannotExpress, FirstRule(denies),
          what + "; towards deny, nothing under " + *escape + " can be renamed or deleted");
    } else if (escape) {
      sink.Error(Code::kCannotExpress, FirstRule(denies),
                 what +
                     ": one renamed where another grant decides would lose the deny for what "
                     "it holds",
                 "pass --partial to deny renaming and deleting anything under " + *escape +
                     " instead, or name the directories without `**`");
      ok = false;
    }
  }
  // What a grant lets be written but no rule lets be read, renamed to a
  // writable place that may be read, could be read there. (A right a copy
  // would give needs no guard: copying needs reading.)
  // Decisions change only where a pattern (of any right) starts, so those
  // points stand for every place.
  bool readable_destination = false;
  for (const auto& list : entries) {
    for (const FsEntry& e : list) {
      readable_destination = readable_destination ||
                             (policy.filesystem.Decide(e.expanded, FsRight::kRead, home).allow &&
                              policy.filesystem.Decide(e.expanded, FsRight::kWrite, home).allow);
    }
  }
  std::vector<std::string> write_only;
  Span write_only_span;
  for (const FsEntry* w : allowed) {
    if (!readable_destination || w->right != FsRight::kWrite) continue;
    const ir::FsDecision read = policy.filesystem.Decide(w->expanded, FsRight::kRead, home);
    if (read.allow || !read.pattern.empty()) continue;  // readable, or guarded as a deny
    if (write_only.empty() && !w->verdict->rules.empty())
      write_only_span = w->verdict->rules.front();
    write_only.push_back(w->expanded);
    guard.own.push_back(IsGlob(w->expanded)
                            ? Filters(w->expanded)
                            : LiteralGuard(policy, home, w->expanded, {FsRight::kRead}, allowed));
  }
  if (!write_only.empty()) {
    sink.Warning(Code::kCannotExpress, write_only_span,
                 "seatbelt keeps what these grants let be written but not read from being renamed "
                 "(or deleted), or a rename could carry it to where reading is granted: " +
                     Listing(write_only));
  }
  if (!undeletable.empty()) {
    sink.Warning(Code::kCannotExpress, undeletable_span,
                 "SBPL checks a delete as it checks a rename: what these deny rules protect "
                 "cannot be deleted, though the policy lets it be written: " +
                     Listing(undeletable));
  }
  std::string& text = *out;
  text += ";; Renames and links. SBPL checks rename(2) as file-write-unlink of the old\n";
  text += ";; name: what a deny rule protects, and each directory above it, keeps its name\n";
  text += ";; (a rename would carry it to a name with a broader decision). No hard link\n";
  text += ";; is ever granted.\n";
  if (!guard.own.empty()) {
    text += "(deny file-write-unlink";
    for (const std::string& f : guard.own) text += "\n    " + f;
    for (const std::string& l : guard.literals) {
      text += "\n    (literal " + Quote(l) + ")";
      if (UnderAlias(l)) text += " (literal " + Quote("/private" + l) + ")";
    }
    for (const auto& [re, first] : guard.prefixes) text += "\n    " + RegexFilters(re, first);
    text += ")\n";
  }
  text += "(deny file-link)\n";
  return ok;
}

}  // namespace

std::string PatternRegex(const std::string& pattern) {
  return ComponentsRegex(pattern) + "(/.*)?$";
}

bool RenderProfile(const ir::Policy& policy, const std::optional<std::string>& home_in,
                   bool partial, Profile* out, DiagnosticSink& sink) {
  bool ok = true;
  std::optional<std::string> home = home_in;
  if (home) {
    while (home->size() > 1 && home->back() == '/') home->pop_back();
    if (*home == "/") home = "";
  }
  if (policy.filesystem.NeedsHome() && !home) {
    for (FsRight right : ir::kFsRights) {
      for (const auto& [pattern, verdict] : policy.filesystem.rules[static_cast<size_t>(right)]) {
        if (pattern[0] == '~' && ok) {
          sink.Error(
              Code::kCannotExpress, verdict.rules.empty() ? Span{} : verdict.rules.front(),
              "seatbelt writes paths ahead of time: `" + pattern + "` needs the home directory",
              "pass --home DIR to ward compile");
          ok = false;
        }
      }
    }
  }
  if (home && !Printable(*home)) {
    sink.Error(Code::kCannotExpress, {},
               "the home directory holds a character SBPL strings cannot carry here");
    ok = false;
  }

  std::string text;
  text += ";; Ward policy " + policy.name + " for sandbox-exec(1): sandbox-exec -f " + policy.name +
          ".sb COMMAND...\n";
  text +=
      ";; Generated by `ward compile -t seatbelt`; backends/seatbelt/README.md says what maps\n";
  text += ";; to what. Every decision not granted below is denied.\n";
  text += "(version 1)\n(deny default)\n\n";
  text += kStartup;

  // ---- filesystem ----
  std::array<std::vector<FsEntry>, 3> entries;
  std::set<std::string> ancestors;
  for (FsRight right : ir::kFsRights) {
    auto& list = entries[static_cast<size_t>(right)];
    for (const auto& [pattern, verdict] : policy.filesystem.rules[static_cast<size_t>(right)]) {
      std::string expanded = pattern;
      if (pattern[0] == '~') {
        if (!home) continue;
        expanded = *home + pattern.substr(1);
        if (expanded.empty()) expanded = "/";
      }
      if (!Printable(expanded)) {
        sink.Error(Code::kCannotExpress, verdict.rules.empty() ? Span{} : verdict.rules.front(),
                   "the path `" + pattern +
                       "` holds a quote, a backslash or a control character, which this "
                       "backend does not write into SBPL");
        ok = false;
        continue;
      }
      list.push_back({expanded, verdict.allow, &verdict, right});
      if (verdict.allow) {
        std::string prefix;
        // The directories above the pattern's literal part, and that part
        // itself when a glob follows.
        for (const std::string& c : ir::PathComponents(expanded)) {
          ancestors.insert(prefix.empty() ? "/" : prefix);
          if (IsGlob(c)) break;
          prefix += "/" + c;
        }
      }
    }
    // Least specific first, and at equal specificity allow before deny: the
    // last matching rule is then the most specific one, a deny on a tie.
    std::sort(list.begin(), list.end(), [](const FsEntry& a, const FsEntry& b) {
      int cmp = ir::CompareSpecificity(a.expanded, b.expanded);
      if (cmp != 0) return cmp < 0;
      if (a.allow != b.allow) return a.allow;
      return a.expanded < b.expanded;
    });
  }
  bool any_fs = false;
  for (const auto& list : entries) any_fs = any_fs || !list.empty();
  text += "\n;; Filesystem. For each right the IR's most specific pattern decides, and on a\n";
  text += ";; tie a deny; SBPL lets the last matching rule decide, so the rules come least\n";
  text += ";; specific first, allows before denies of equal specificity. /etc, /tmp and /var\n";
  text += ";; are also written as /private/etc, /private/tmp and /private/var.\n";
  if (!ancestors.empty()) {
    text += ";; Metadata (stat) of the directories leading to a grant, before the rules so\n";
    text += ";; that a deny of reading them still holds.\n(allow file-read-metadata";
    for (const std::string& a : ancestors) {
      text += "\n    (literal " + Quote(a) + ")";
      if (UnderAlias(a)) text += " (literal " + Quote("/private" + a) + ")";
    }
    text += ")\n";
  }
  for (FsRight right : ir::kFsRights) {
    const auto& list = entries[static_cast<size_t>(right)];
    if (list.empty()) continue;
    text += ";; " + std::string(ir::FsRightName(right)) + "\n";
    for (const FsEntry& e : list) {
      text += std::string("(") + (e.allow ? "allow " : "deny ") + Operation(right) + "\n    " +
              Filters(e.expanded) + ")\n";
    }
  }
  if (!any_fs) text += ";; (no filesystem grants)\n";
  ok = RenameGuard(policy, home, partial, entries, &text, sink) && ok;

  // ---- network ----
  const ir::NetRules& net = policy.network;
  NetOut egress, ingress;
  for (Protocol proto : {Protocol::kTcp, Protocol::kUdp}) {
    NetProtocol(net.egress, Direction::kEgress, proto, &egress);
    NetProtocol(net.ingress, Direction::kIngress, proto, &ingress);
  }
  NetIcmp(net.egress, Direction::kEgress, &egress);
  NetIcmp(net.ingress, Direction::kIngress, &ingress);

  std::optional<uint16_t> proxy;
  if (auto t = policy.targets.find("seatbelt"); t != policy.targets.end()) {
    if (auto k = t->second.find("proxy_port"); k != t->second.end()) {
      int port = std::atoi(k->second.value.c_str());
      if (port > 0 && port < 65536) proxy = static_cast<uint16_t>(port);
    }
  }
  std::vector<std::string> domains, denied_domains;
  for (const auto& [pattern, entry] : net.egress_domains) {
    if (!entry.allow.empty()) domains.push_back(pattern);
    if (!entry.deny.empty()) denied_domains.push_back(pattern);
  }
  if (!net.egress_domains.empty() && !proxy) {
    Span span;
    for (const ir::FlatRule& r : net.rules) {
      if (r.peer.kind == ast::PeerKind::kDomain || r.peer.kind == ast::PeerKind::kWildcardDomain) {
        span = r.span;
        break;
      }
    }
    std::vector<std::string> all = domains;
    all.insert(all.end(), denied_domains.begin(), denied_domains.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    sink.Error(Code::kCannotExpress, span,
               "SBPL cannot name remote hosts: domain rules (" + Listing(all) +
                   ") need a local proxy that enforces them",
               "add `target seatbelt { proxy_port N }` and run a filtering proxy there");
    ok = false;
  }
  std::vector<std::string> ingress_domains;
  for (const auto& [pattern, entry] : net.ingress_domains) ingress_domains.push_back(pattern);
  if (!ingress_domains.empty()) {
    ingress.lost.push_back("from the names " + Listing(ingress_domains));
  }

  text += "\n;; Network. SBPL names a remote host only as `*` or `localhost`: a port every\n";
  text += ";; address may reach is `*:PORT`, one every loopback address may reach is\n";
  text += ";; `localhost:PORT`; what only some addresses allow is left out (denied).\n";
  if (proxy && !net.egress_domains.empty()) {
    text += ";; Domain rules go through the local proxy at localhost:" + std::to_string(*proxy) +
            ", which must\n;; enforce them:\n";
    for (const std::string& d : domains) {
      const ir::DomainEntry& e = net.egress_domains.at(d);
      text += ";;   allow " + d + ": tcp " + (e.allow.tcp.empty() ? "-" : e.allow.tcp.ToString()) +
              ", udp " + (e.allow.udp.empty() ? "-" : e.allow.udp.ToString()) + "\n";
    }
    for (const std::string& d : denied_domains) {
      const ir::DomainEntry& e = net.egress_domains.at(d);
      text += ";;   deny " + d + ": tcp " + (e.deny.tcp.empty() ? "-" : e.deny.tcp.ToString()) +
              ", udp " + (e.deny.udp.empty() ? "-" : e.deny.udp.ToString()) + "\n";
    }
    egress.extra_allow.push_back("(remote tcp \"localhost:" + std::to_string(*proxy) + "\")");
  }
  for (const std::string& path : net.unix_paths) {
    if (!Printable(path)) {
      sink.Error(
          Code::kCannotExpress, {},
          "the unix socket path `" + path + "` holds a quote, a backslash or a control character");
      ok = false;
      continue;
    }
    egress.extra_allow.push_back("(remote unix-socket (path-literal " + Quote(path) + "))");
    if (UnderAlias(path)) {
      egress.extra_allow.push_back("(remote unix-socket (path-literal " + Quote("/private" + path) +
                                   "))");
    }
  }
  for (const std::string& name : net.unix_abstract) {
    egress.lost.push_back("the abstract unix socket @" + name + " (macOS has none)");
  }
  bool any_net = false;
  auto rule = [&](const char* verdict, const char* ops, const std::vector<std::string>& filters) {
    if (filters.empty()) return;
    text += std::string("(") + verdict + " " + ops;
    for (const std::string& f : filters) text += "\n    " + f;
    text += ")\n";
    any_net = true;
  };
  rule("allow", "network-outbound", egress.any_allow);
  rule("deny", "network-outbound", egress.any_deny);
  rule("allow", "network-outbound", egress.local_allow);
  rule("deny", "network-outbound", egress.local_deny);
  rule("allow", "network-outbound", egress.extra_allow);
  rule("allow", "network-bind network-inbound", ingress.any_allow);
  rule("deny", "network-bind network-inbound", ingress.any_deny);
  if (!any_net) text += ";; (no network grants)\n";
  if (!egress.lost.empty()) {
    sink.Warning(Code::kCannotExpress, FirstAllow(net, Direction::kEgress),
                 "SBPL cannot name these destinations; left out (denied): " + Listing(egress.lost));
  }
  if (!ingress.lost.empty()) {
    sink.Warning(Code::kCannotExpress, FirstAllow(net, Direction::kIngress),
                 "SBPL cannot name these sources; left out (denied): " + Listing(ingress.lost));
  }

  if (!ok) return false;
  out->text = std::move(text);
  out->enforced = {Section::kFilesystem, Section::kNetwork};
  return true;
}

}  // namespace ward::backend::seatbelt
