#include "enforcers/learn/draft.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include "compiler/ip.h"
#include "language/literals.h"
#include "language/syscall_facts.h"

namespace ward::learn {
namespace {

constexpr int kRead = 1, kWrite = 2, kExec = 4;
constexpr std::array<std::pair<int, ir::FsRight>, 3> kRights = {
    {{kRead, ir::FsRight::kRead}, {kWrite, ir::FsRight::kWrite}, {kExec, ir::FsRight::kExec}}};

bool Under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

int Depth(const std::string& path) {
  return path == "/" ? 0 : static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A directory a grant may name as a whole tree: at least two levels deep,
// not a home directory nor above one.
bool Sensible(const std::string& dir, const DraftOptions& o) {
  if (Depth(dir) < 2) return false;
  for (const std::string& home : o.homes) {
    if (Under(home, dir)) return false;
  }
  return true;
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 1;
  while (i <= path.size()) {
    const size_t j = path.find('/', i);
    const std::string part = path.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (!part.empty()) parts.push_back(part);
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return parts;
}

// Step 2: the names that stay valid from one run to the next.
std::optional<std::string> Normalise(std::string path) {
  static const std::string kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() &&
      path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    path.resize(path.size() - kDeleted.size());
  }
  if (path.empty() || path[0] != '/' || path.rfind("/memfd:", 0) == 0) return std::nullopt;
  std::vector<std::string> parts = Split(path);
  if (parts.size() >= 2 && parts[0] == "proc" && AllDigits(parts[1])) {
    size_t rest = 2;
    std::string head = "/proc/self";
    if (parts.size() >= 4 && parts[2] == "task" && AllDigits(parts[3])) {
      head = "/proc/thread-self";
      rest = 4;
    }
    for (size_t i = rest; i < parts.size(); ++i) head += "/" + parts[i];
    return head;
  }
  if (parts.size() >= 3 && parts[0] == "dev" && parts[1] == "pts" && AllDigits(parts[2])) {
    return "/dev/pts";
  }
  return path;
}

bool IsLibraryComponent(const std::string& c) {
  if (c == "site-packages" || c == "dist-packages" || c == "node_modules" || c == "perl5" ||
      c == "gems") {
    return true;
  }
  if (c.rfind("python3", 0) != 0) return false;
  const std::string v = c.substr(7);
  return v.empty() || (v[0] == '.' && AllDigits(v.substr(1)));
}

// Steps 3 to 5: the tree a path collapses to, or "".
std::string Anchor(const std::string& path, const DraftOptions& o) {
  if (!o.cwd.empty() && Sensible(o.cwd, o) && Under(path, o.cwd)) return o.cwd;
  for (const char* t : {"/tmp", "/var/tmp", "/dev/shm"}) {
    if (Under(path, t)) return t;
  }
  std::string prefix;
  for (const std::string& c : Split(path)) {
    prefix += "/" + c;
    if (IsLibraryComponent(c) && prefix != path && Sensible(prefix, o)) return prefix;
  }
  return "";
}

std::string RightsText(int rights) {
  std::string out;
  if (rights & kRead) out += " read";
  if (rights & kWrite) out += " write";
  if (rights & kExec) out += " exec";
  return out.substr(1);
}

std::string FamilyName(uint64_t family) {
  static const std::map<uint64_t, std::string> kNames = {
      {AF_UNIX, "AF_UNIX"},       {AF_INET, "AF_INET"},          {AF_INET6, "AF_INET6"},
      {AF_NETLINK, "AF_NETLINK"}, {AF_PACKET, "AF_PACKET"},      {AF_ALG, "AF_ALG"},
      {AF_VSOCK, "AF_VSOCK"},     {AF_BLUETOOTH, "AF_BLUETOOTH"}};
  auto it = kNames.find(family);
  return it != kNames.end() ? it->second : std::to_string(family);
}

Arch MachineArch() {
#if defined(__aarch64__)
  return Arch::kAarch64;
#else
  return Arch::kX86_64;
#endif
}

const std::map<uint64_t, std::string>& SyscallNames() {
  static const std::map<uint64_t, std::string> names = [] {
    std::map<uint64_t, std::string> out;
    for (const std::string& name : AllSyscallNames()) {
      if (auto nr = SyscallNumber(MachineArch(), name)) out.emplace(*nr, name);
    }
    return out;
  }();
  return names;
}

// The call as a note shows it: "clone(flags 0x1200011)".
std::string CallText(const std::string& name, uint64_t arg) {
  char hex[32];
  snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(arg));
  if (name == "socket") return "socket(" + FamilyName(arg) + ", ...)";
  if (name == "clone") return std::string("clone(flags ") + hex + ", ...)";
  if (name == "personality") return std::string("personality(") + hex + ")";
  return name;
}

void FilesystemDraft(const Records& r, const DraftOptions& o, Draft* d) {
  std::map<std::string, int> wanted;
  std::set<std::string> listed;
  auto want = [&](const std::string& raw, int right) {
    if (auto p = Normalise(raw)) wanted[*p] |= right;
  };
  for (const std::string& p : r.read) want(p, kRead);
  for (const std::string& p : r.read_dirs) {
    want(p, kRead);
    if (auto n = Normalise(p)) listed.insert(*n);
  }
  for (const std::string& p : r.write) want(p, kWrite);
  // Landlock checks an execve's open as a read too (READ_FILE with
  // EXECUTE): what is executed is granted both.
  for (const std::string& p : r.exec) want(p, kExec | kRead);
  for (const auto* set : {&r.created, &r.deleted, &r.renamed}) {
    for (const std::string& p : *set) want(Parent(p), kWrite);
  }
  // Per right: the paths the base does not grant, collapsed.
  std::map<std::string, int> grants;
  for (const auto& [bit, right] : kRights) {
    std::vector<std::string> left;
    for (const auto& [path, rights] : wanted) {
      if (!(rights & bit)) continue;
      if (o.base && o.base->filesystem.Decide(path, right, o.home).allow) continue;
      left.push_back(path);
    }
    std::map<std::string, int> per_dir;  // step 6's count
    for (const std::string& p : left) {
      if (Anchor(p, o).empty()) ++per_dir[Parent(p)];
    }
    std::set<std::string> chosen;
    for (const std::string& p : left) {
      std::string g = Anchor(p, o);
      const bool anchored = !g.empty();  // steps 3 to 5 name trees fit to grant
      if (!anchored) {
        const std::string dir = Parent(p);
        const bool whole = per_dir[dir] >= 3 || listed.count(dir) > 0;
        g = whole && Sensible(dir, o) ? dir : p;
      }
      // A directory named for itself (listed) names a whole tree: only a
      // sensible one.
      if (!anchored && g == p && (listed.count(p) || IsDir(p)) && !Sensible(p, o)) {
        d->notes.push_back("not granted: " + RightsText(bit) + " on the directory " + p +
                           " (a whole tree: it is / or a home directory or above one)");
        continue;
      }
      // Gone since (a temporary file): its nearest existing directory.
      if (!Exists(g) && g.rfind("/proc/", 0) != 0) {
        while (!Exists(g) && g != "/") g = Parent(g);
        if (!Sensible(g, o)) {
          d->notes.push_back("not granted: " + RightsText(bit) + " on " + p +
                             " (gone, and no sensible directory holds it)");
          continue;
        }
      }
      chosen.insert(g);
    }
    // Within one right, a tree covers what is under it.
    std::string last;
    for (const std::string& g : chosen) {
      if (!last.empty() && Under(g, last)) continue;
      grants[g] |= bit;
      last = g;
    }
  }
  for (const auto& [path, rights] : grants) {
    if (auto q = QuotePath(path)) {
      d->filesystem.push_back("allow " + RightsText(rights) + " " + *q);
    } else {
      d->notes.push_back("not granted: " + RightsText(rights) + " on " + path +
                         " (not writable as a literal path)");
    }
  }
}

void NetworkDraft(const Records& r, const DraftOptions& o, Draft* d) {
  // (protocol, destination as written) -> ports
  std::map<std::pair<std::string, std::string>, std::set<uint16_t>> egress;
  for (const Records::Peer& peer : r.connects) {
    if (peer.port == 0) continue;
    const char* proto = peer.type == SOCK_STREAM  ? "tcp"
                        : peer.type == SOCK_DGRAM ? "udp"
                                                  : nullptr;
    if (!proto) {
      d->notes.push_back("not granted: a socket of type " + std::to_string(peer.type) + " to " +
                         peer.address + " (v1 rules grant tcp, udp and icmp only)");
      continue;
    }
    std::string address = peer.address;
    if (address.rfind("::ffff:", 0) == 0 && address.find('.') != std::string::npos) {
      address = address.substr(7);  // IPv4-mapped: the IR folds it into IPv4
    }
    std::string error;
    const auto prefix = ParseIpOrCidr(address, &error);
    const ir::Protocol p = peer.type == SOCK_STREAM ? ir::Protocol::kTcp : ir::Protocol::kUdp;
    auto names = r.dns_names.find(address);
    if (names == r.dns_names.end()) names = r.dns_names.find(peer.address);
    // DNS itself goes by address: it is what makes names resolve (a
    // resolver on loopback shares its address with loopback services).
    if (names != r.dns_names.end() && peer.port != 53) {
      for (const std::string& name : names->second) {
        if (o.base && prefix &&
            o.base->network.DecideName(ir::Direction::kEgress, p, name, &*prefix, peer.port)) {
          continue;
        }
        egress[{proto, "\"" + name + "\""}].insert(peer.port);
      }
      continue;
    }
    if (o.base && prefix && o.base->network.Decide(ir::Direction::kEgress, p, *prefix, peer.port)) {
      continue;
    }
    egress[{proto, address}].insert(peer.port);
  }
  auto ports = [](const std::set<uint16_t>& set) {
    std::string out;
    for (uint16_t port : set) out += (out.empty() ? "" : ", ") + std::to_string(port);
    return (set.size() > 1 ? "ports " : "port ") + out;
  };
  for (const auto& [key, set] : egress) {
    d->network.push_back("allow " + key.first + " to " + key.second + " " + ports(set));
  }
  std::map<std::string, std::set<uint16_t>> ingress;
  for (const Records::Peer& peer : r.binds) {
    if (peer.port == 0) continue;  // an ephemeral port: nothing to grant
    if (peer.type == SOCK_STREAM) ingress["tcp"].insert(peer.port);
    if (peer.type == SOCK_DGRAM) ingress["udp"].insert(peer.port);
  }
  for (const auto& [proto, set] : ingress) {
    d->network.push_back("allow ingress " + proto + " from any " + ports(set));
  }
  for (const std::string& name : r.unix_connects) {
    bool granted = false;
    if (o.base) {
      for (const ir::UnixRule& u : o.base->network.unix_rules) {
        granted |= u.allow && (u.abstract ? "@" + u.name : u.name) == name;
      }
    }
    if (granted) continue;
    if (name[0] == '/' && !Exists(name)) {
      d->notes.push_back("not granted: unix socket " + name +
                         " (the workload tried it; it does not exist)");
      continue;
    }
    if (auto q = QuotePath(name[0] == '@' ? "/" + name.substr(1) : name)) {
      d->network.push_back("allow unix " + (name[0] == '@' ? "\"" + name + "\"" : *q));
      d->notes.push_back("unix socket " + name +
                         ": refused while learning (ward learn grants none), granted here");
    }
  }
}

void SyscallsDraft(const Records& r, const DraftOptions& o, Draft* d) {
  for (const auto& [nr, arg] : r.syscalls) {
    auto it = SyscallNames().find(nr);
    if (it == SyscallNames().end()) {
      d->notes.push_back("syscall number " + std::to_string(nr) + ": not in the kernel's table");
      continue;
    }
    const std::array<uint64_t, 6> args = {arg, 0, 0, 0, 0, 0};
    if (o.base) {
      const ir::SysAction a = o.base->syscalls.Decide(MachineArch(), it->second, args);
      if (a.kind == ir::SysAction::Kind::kAllow || a.kind == ir::SysAction::Kind::kLog) continue;
    }
    d->syscalls.insert(it->second);
  }
}

}  // namespace

std::vector<std::string> Draft::SyscallLines() const {
  std::vector<std::string> lines;
  if (!arch.empty()) lines.push_back("arch " + arch);
  if (syscalls.empty()) return lines;
  std::string line = "allow ";
  for (const std::string& name : syscalls) line += (line.size() > 6 ? ", " : "") + name;
  lines.push_back(line);
  return lines;
}

std::string MachineArchName() { return std::string(ArchName(MachineArch())); }

std::optional<std::string> QuotePath(const std::string& path) {
  if (path.find('*') != std::string::npos || path.find("${") != std::string::npos) {
    return std::nullopt;
  }
  std::string out = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

Draft MakeDraft(const Records& records, const DraftOptions& options) {
  Draft d;
  FilesystemDraft(records, options, &d);
  NetworkDraft(records, options, &d);
  SyscallsDraft(records, options, &d);
  std::sort(d.notes.begin(), d.notes.end());
  d.notes.erase(std::unique(d.notes.begin(), d.notes.end()), d.notes.end());
  return d;
}

std::vector<std::string> StillRefused(const Records& records, const ir::Policy& draft, Draft* d) {
  std::vector<std::string> refused;
  for (const auto& [nr, arg] : records.syscalls) {
    auto it = SyscallNames().find(nr);
    if (it == SyscallNames().end()) continue;
    const std::array<uint64_t, 6> args = {arg, 0, 0, 0, 0, 0};
    const ir::SysAction a = draft.syscalls.Decide(MachineArch(), it->second, args);
    if (a.kind == ir::SysAction::Kind::kAllow || a.kind == ir::SysAction::Kind::kLog) continue;
    refused.push_back(CallText(it->second, arg) + ": " + ir::ToString(a));
    d->syscalls.erase(it->second);
  }
  for (const std::string& r : refused) {
    d->notes.push_back("refused under this policy, as the workload tried it: " + r +
                       " (a rule of the base that an allow cannot lift)");
  }
  std::sort(d->notes.begin(), d->notes.end());
  d->notes.erase(std::unique(d->notes.begin(), d->notes.end()), d->notes.end());
  return refused;
}

std::string DraftFile(const std::string& name, const std::vector<std::string>& header,
                      const Draft& draft) {
  std::string out = "ward 1\n\n";
  for (const std::string& h : header) out += "// " + h + "\n";
  out += "\nimport \"std/linux.ward\"\n\npolicy " + name + " extends linux-base {\n";
  for (const std::string& n : draft.notes) out += "  // " + n + "\n";
  auto section = [&](const char* title, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += std::string("  ") + title + " {\n";
    for (const std::string& l : lines) out += "    " + l + "\n";
    out += "  }\n";
  };
  section("filesystem", draft.filesystem);
  section("network", draft.network);
  section("syscalls", draft.SyscallLines());
  return out + "}\n";
}

std::string MergeInto(const std::string& text, const PolicySpans& spans, const Draft& draft) {
  // (offset, text) insertions, applied from the end so offsets stay valid.
  std::vector<std::pair<size_t, std::string>> inserts;
  auto closing = [&](size_t begin, size_t end) {
    const size_t brace = text.rfind('}', end == 0 ? 0 : end - 1);
    return brace == std::string::npos || brace < begin ? std::string::npos : brace;
  };
  std::string fresh;
  auto add = [&](const char* title, const size_t* span, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    std::string body;
    for (const std::string& l : lines) body += "    " + l + "\n";
    const size_t at = span[1] > span[0] ? closing(span[0], span[1]) : std::string::npos;
    if (at != std::string::npos) {
      inserts.emplace_back(at, "\n    // added by ward learn --merge\n" + body);
    } else {
      fresh +=
          std::string("  ") + title + " {\n    // added by ward learn --merge\n" + body + "  }\n";
    }
  };
  add("filesystem", spans.filesystem, draft.filesystem);
  add("network", spans.network, draft.network);
  add("syscalls", spans.syscalls, draft.SyscallLines());
  std::string notes;
  for (const std::string& n : draft.notes) notes += "  // " + n + "\n";
  if (!fresh.empty() || !notes.empty()) {
    const size_t at = closing(0, spans.policy_end);
    if (at != std::string::npos) inserts.emplace_back(at, "\n" + notes + fresh);
  }
  std::sort(inserts.begin(), inserts.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = text;
  for (const auto& [at, s] : inserts) out.insert(at, s);
  return out;
}

}  // namespace ward::learn
