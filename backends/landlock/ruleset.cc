#include "backends/landlock/ruleset.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/landlock/walk.h"
#include "compiler/fs_names.h"

namespace ward::backend::landlock {
namespace {

using nlohmann::ordered_json;

constexpr uint64_t Bit(const char* name) {
  for (const Right& r : kFsRights) {
    if (std::string_view(r.name) == name) return r.bit;
  }
  return 0;
}

ir::PortSet Intersect(const ir::PortSet& a, const ir::PortSet& b) { return a.Minus(a.Minus(b)); }

// Ports allowed to (or from) every address of a partition, and those allowed
// to some address or name only.
struct PortSplit {
  ir::PortSet every = ir::PortSet::All();
  ir::PortSet some;
};

PortSplit SplitPorts(const ir::Partition& partition,
                     const std::map<std::string, ir::DomainEntry>& domains) {
  PortSplit s;
  for (const ir::Piece<ir::V4>& p : partition.v4) {
    s.every = Intersect(s.every, p.decision.tcp);
    s.some = s.some.Union(p.decision.tcp);
  }
  for (const ir::Piece<ir::V6>& p : partition.v6) {
    // IPv4-mapped addresses are decided by the v4 pieces (always empty here).
    if (ir::IsMapped(p.range.lo) && ir::IsMapped(p.range.hi)) continue;
    s.every = Intersect(s.every, p.decision.tcp);
    s.some = s.some.Union(p.decision.tcp);
  }
  for (const auto& [name, entry] : domains) {
    s.every = s.every.Minus(entry.deny.tcp);
    s.some = s.some.Union(entry.allow.tcp);
  }
  s.some = s.some.Minus(s.every);
  return s;
}

// The egress (or ingress) allow rules that name a TCP port of `ports`.
std::vector<const ir::FlatRule*> RulesFor(const ir::NetRules& net, ir::Direction dir,
                                          const ir::PortSet& ports) {
  std::vector<const ir::FlatRule*> out;
  for (const ir::FlatRule& f : net.rules) {
    if (f.direction != dir || !f.allow || Intersect(f.what.tcp, ports).empty()) continue;
    // One source rule expands to several (a list of peers): cite it once.
    const bool seen = std::any_of(out.begin(), out.end(), [&](const ir::FlatRule* g) {
      return g->span.file == f.span.file && g->span.begin == f.span.begin &&
             g->span.end == f.span.end;
    });
    if (!seen) out.push_back(&f);
  }
  return out;
}

void WarnAt(DiagnosticSink& sink, const std::vector<const ir::FlatRule*>& rules,
            const std::string& message, const std::string& hint) {
  sink.Warning(Code::kCannotExpress, rules.empty() ? Span{} : rules[0]->span, message, hint);
  for (size_t i = 1; i < rules.size() && i <= DiagnosticSink::kMaxRelated; ++i) {
    sink.AddRelated(rules[i]->span, "also allows some of these ports");
  }
}

void BuildNetwork(const ir::NetRules& net, bool address_layer, Ruleset* out, DiagnosticSink& sink) {
  const PortSplit egress = SplitPorts(net.egress, net.egress_domains);
  const PortSplit ingress = SplitPorts(net.ingress, net.ingress_domains);
  if (!(egress.every == ir::PortSet::All())) {
    out->handled_access_net |= kNetRights[1].bit;
    out->connect_tcp = egress.every;
    out->connect_tcp_partial = egress.some;
  }
  // Under ward run the eBPF layer decides binds exactly (port and
  // protocol, and port 0 for an ephemeral one), so the ruleset leaves them.
  if (!(ingress.every == ir::PortSet::All()) && !address_layer) {
    out->handled_access_net |= kNetRights[0].bit;
    out->bind_tcp = ingress.every;
  }
  if (!egress.some.empty() && !address_layer) {
    WarnAt(sink, RulesFor(net, ir::Direction::kEgress, egress.some),
           "landlock grants a TCP port for every address or none: tcp port(s) " +
               egress.some.ToString() +
               " are allowed to some destinations only, so this ruleset alone denies connecting "
               "to them",
           "ward run grants them while its eBPF layer checks the destinations");
  }
  if (!ingress.some.empty() && !address_layer) {
    WarnAt(sink, RulesFor(net, ir::Direction::kIngress, ingress.some),
           "landlock grants a TCP port for every address or none: tcp port(s) " +
               ingress.some.ToString() +
               " are allowed from some sources only, so the ruleset denies binding them "
               "(lost: listening on them)",
           "");
  }
  if (!net.unix_abstract.empty()) {
    for (const ir::UnixRule& u : net.unix_rules) {
      if (!u.allow || !u.abstract || address_layer) continue;
      sink.Warning(Code::kCannotExpress, u.span,
                   "landlock scopes abstract unix sockets all or none: with a grant of @" + u.name +
                       ", the ruleset leaves every abstract socket reachable",
                   "the other abstract names must be refused by another layer (ward run's "
                   "unix-socket step)");
      break;
    }
  } else {
    out->scoped |= kScopes[0].bit;
  }
  out->scoped |= kScopes[1].bit;
}

bool IsGlob(const std::string& p) { return p.find('*') != std::string::npos; }
// `**` anywhere but at the end: matching it needs a walk of a whole tree.
bool Unbounded(const std::string& p) {
  const size_t i = p.find("**");
  return i != std::string::npos && i + 2 != p.size();
}
// Both patterns rooted the same way (`~` or `/`), `outer` matching `inner`
// read as a path or one of its ancestors.
bool Encloses(const std::string& outer, const std::string& inner) {
  if ((outer[0] == '~') != (inner[0] == '~')) return outer == "/";
  auto strip = [](const std::string& p) { return p[0] == '~' ? "/~" + p.substr(1) : p; };
  return ir::PatternMatchesPathOrAncestor(strip(outer), strip(inner)) &&
         ir::CompareSpecificity(strip(inner), strip(outer)) > 0;
}

bool BuildFilesystem(const ir::FileRules& fs, bool partial, Ruleset* out, DiagnosticSink& sink) {
  out->handled_access_fs = AllFsAccess();
  out->filesystem = fs;
  bool ok = true;
  for (ir::FsRight r : ir::kFsRights) {
    auto& rules = out->filesystem.rules[static_cast<size_t>(r)];
    const std::string right = ir::FsRightName(r);
    std::set<std::string> narrowed;  // allows turned into denies (partial)
    // Allow -> the denies nested in it that the walk carves out.
    std::map<std::string, std::vector<std::pair<std::string, Span>>> carved;
    for (const auto& [pattern, verdict] : fs.rules[static_cast<size_t>(r)]) {
      const Span span = verdict.rules.empty() ? Span{} : verdict.rules[0];
      if (verdict.allow) {
        if (Unbounded(pattern)) {
          const std::string what = "allow " + right + " '" + pattern +
                                   "': a `**` before the end needs a walk of a whole tree at "
                                   "apply time; landlock cannot express it";
          if (partial) {
            sink.Warning(Code::kCannotExpress, span, what + " (--partial: not granted)");
            narrowed.insert(pattern);
          } else {
            sink.Error(Code::kCannotExpress, span, what,
                       "name the directories, or pass --partial to leave it ungranted");
            ok = false;
          }
        } else if (IsGlob(pattern)) {
          sink.Warning(Code::kCannotExpress, span,
                       "allow " + right + " '" + pattern +
                           "': landlock has no globs; the ruleset grants the entries that match "
                           "when ward run starts (lost: entries created later)");
        }
        continue;
      }
      for (const auto& [outer, o] : fs.rules[static_cast<size_t>(r)]) {
        if (!o.allow || !Encloses(outer, pattern)) continue;
        if (Unbounded(pattern)) {
          const std::string what = "deny " + right + " '" + pattern + "' inside allow '" + outer +
                                   "': carving it out needs a walk of the whole tree; landlock "
                                   "cannot express it";
          if (partial) {
            sink.Warning(Code::kCannotExpress, span,
                         what + " (--partial: '" + outer + "' is not granted)");
            narrowed.insert(outer);
          } else {
            sink.Error(Code::kCannotExpress, span, what,
                       "name the paths to deny, or pass --partial to deny all of '" + outer + "'");
            ok = false;
          }
          if (!o.rules.empty()) sink.AddRelated(o.rules[0], "the enclosing allow");
        } else {
          carved[outer].push_back({pattern, span});
        }
        break;
      }
    }
    // One warning per enclosing allow, at its first nested deny.
    for (const auto& [outer, denies] : carved) {
      std::string list;
      for (const auto& [pattern, span] : denies)
        list += (list.empty() ? "'" : ", '") + pattern + "'";
      sink.Warning(Code::kCannotExpress, denies[0].second,
                   "deny " + right + " " + list + " inside allow '" + outer +
                       "': landlock can only grant, so the ruleset grants the entries of '" +
                       outer + "' except " + (denies.size() == 1 ? "this one" : "these") +
                       ", along the path (lost: the directories on that path themselves, and "
                       "entries created in them later)");
      const auto& o = fs.rules[static_cast<size_t>(r)].at(outer);
      if (!o.rules.empty()) sink.AddRelated(o.rules[0], "the enclosing allow");
    }
    for (const std::string& p : narrowed) rules.at(p).allow = false;
  }
  out->filesystem.BuildIndex();
  return ok;
}

ordered_json NamesJson(uint64_t mask, const Right* table, size_t count) {
  ordered_json a = ordered_json::array();
  for (const std::string& n : Names(mask, table, count)) a.push_back(n);
  return a;
}

bool ParseNames(const nlohmann::json& j, const Right* table, size_t count, uint64_t* mask,
                const std::string& field, std::string* error) {
  if (!j.is_array()) {
    *error = field + ": not a list";
    return false;
  }
  for (const auto& n : j) {
    const Right* found = nullptr;
    for (size_t i = 0; i < count; ++i) {
      if (n.is_string() && n.get<std::string>() == table[i].name) found = &table[i];
    }
    if (!found) {
      *error = field + ": unknown right " + n.dump();
      return false;
    }
    *mask |= found->bit;
  }
  return true;
}

bool ParsePorts(const std::string& text, ir::PortSet* out) {
  std::vector<std::pair<uint16_t, uint16_t>> ranges;
  size_t i = 0;
  while (i < text.size()) {
    size_t comma = text.find(',', i);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(i, comma - i);
    const size_t dash = item.find('-');
    try {
      const unsigned long lo = std::stoul(item.substr(0, dash));
      const unsigned long hi = dash == std::string::npos ? lo : std::stoul(item.substr(dash + 1));
      if (lo < 1 || hi > 65535 || lo > hi) return false;
      ranges.emplace_back(uint16_t(lo), uint16_t(hi));
    } catch (...) {
      return false;
    }
    i = comma + 1;
  }
  *out = ir::PortSet(std::move(ranges));
  return true;
}

}  // namespace

uint64_t FsAccessOf(ir::FsRight right) {
  switch (right) {
    case ir::FsRight::kRead:
      return Bit("read_file") | Bit("read_dir");
    case ir::FsRight::kWrite:
      return Bit("write_file") | Bit("truncate") | Bit("remove_dir") | Bit("remove_file") |
             Bit("make_char") | Bit("make_dir") | Bit("make_reg") | Bit("make_sock") |
             Bit("make_fifo") | Bit("make_block") | Bit("make_sym") | Bit("refer") |
             Bit("ioctl_dev");
    case ir::FsRight::kExec:
      return Bit("execute");
  }
  return 0;
}

uint64_t AllFsAccess() {
  uint64_t all = 0;
  for (ir::FsRight r : ir::kFsRights) all |= FsAccessOf(r);
  return all;
}

std::vector<std::string> Names(uint64_t mask, const Right* table, size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (mask & table[i].bit) out.push_back(table[i].name);
  }
  return out;
}

int Ruleset::Abi() const {
  int abi = 1;
  for (const Right& r : kFsRights) abi = handled_access_fs & r.bit ? std::max(abi, r.abi) : abi;
  for (const Right& r : kNetRights) abi = handled_access_net & r.bit ? std::max(abi, r.abi) : abi;
  for (const Right& r : kScopes) abi = scoped & r.bit ? std::max(abi, r.abi) : abi;
  return abi;
}

std::vector<std::string> Ruleset::Missing(int abi) const {
  // Grouped by ABI, newest first: "scopes abstract_unix_socket, signal need ABI 6".
  std::map<int, std::vector<std::string>, std::greater<int>> by_abi;
  for (const Right& r : kFsRights) {
    if ((handled_access_fs & r.bit) && r.abi > abi) by_abi[r.abi].push_back(r.name);
  }
  for (const Right& r : kNetRights) {
    if ((handled_access_net & r.bit) && r.abi > abi) by_abi[r.abi].push_back(r.name);
  }
  for (const Right& r : kScopes) {
    if ((scoped & r.bit) && r.abi > abi) by_abi[r.abi].push_back(std::string("scope ") + r.name);
  }
  std::vector<std::string> out;
  for (const auto& [need, names] : by_abi) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    out.push_back(s + (names.size() == 1 ? " needs" : " need") + " ABI " + std::to_string(need));
  }
  return out;
}

bool BuildRuleset(const ir::Policy& policy, bool partial, Ruleset* out, DiagnosticSink& sink,
                  bool address_layer) {
  out->policy = policy.name;
  const bool ok = BuildFilesystem(policy.filesystem, partial, out, sink);
  BuildNetwork(policy.network, address_layer, out, sink);
  return ok;
}

std::string ToJson(const Ruleset& r) {
  ordered_json j;
  j["version"] = kRulesetJsonVersion;
  j["policy"] = r.policy;
  j["abi"] = r.Abi();
  j["handled_access_fs"] = NamesJson(r.handled_access_fs, kFsRights, std::size(kFsRights));
  j["handled_access_net"] = NamesJson(r.handled_access_net, kNetRights, std::size(kNetRights));
  j["scoped"] = NamesJson(r.scoped, kScopes, std::size(kScopes));
  ordered_json rights = ordered_json::object();
  ordered_json fs = ordered_json::object();
  for (ir::FsRight right : ir::kFsRights) {
    rights[ir::FsRightName(right)] = NamesJson(FsAccessOf(right), kFsRights, std::size(kFsRights));
    ordered_json patterns = ordered_json::object();
    for (const auto& [pattern, verdict] : r.filesystem.rules[static_cast<size_t>(right)]) {
      patterns[pattern] = verdict.allow ? "allow" : "deny";
    }
    fs[ir::FsRightName(right)] = std::move(patterns);
  }
  j["rights"] = std::move(rights);
  j["filesystem"] = std::move(fs);
  j["net_port"] = {{"connect_tcp", r.connect_tcp.ToString()},
                   {"bind_tcp", r.bind_tcp.ToString()},
                   {"connect_tcp_partial", r.connect_tcp_partial.ToString()}};
  return j.dump(2) + "\n";
}

bool FromJson(const std::string& bytes, Ruleset* out, std::string* error) {
  const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = j.find(name);
    if (it == j.end()) {
      *error = std::string(name) + ": missing";
      return nullptr;
    }
    return &*it;
  };
  const nlohmann::json* v = field("version");
  if (!v) return false;
  if (*v != kRulesetJsonVersion) {
    *error = "version: " + v->dump() + " is not " + std::to_string(kRulesetJsonVersion);
    return false;
  }
  Ruleset r;
  const nlohmann::json *policy = field("policy"), *fs_access = field("handled_access_fs"),
                       *net_access = field("handled_access_net"), *scoped = field("scoped"),
                       *fs = field("filesystem"), *ports = field("net_port");
  if (!policy || !fs_access || !net_access || !scoped || !fs || !ports) return false;
  if (!policy->is_string()) {
    *error = "policy: not a string";
    return false;
  }
  r.policy = policy->get<std::string>();
  if (!ParseNames(*fs_access, kFsRights, std::size(kFsRights), &r.handled_access_fs,
                  "handled_access_fs", error) ||
      !ParseNames(*net_access, kNetRights, std::size(kNetRights), &r.handled_access_net,
                  "handled_access_net", error) ||
      !ParseNames(*scoped, kScopes, std::size(kScopes), &r.scoped, "scoped", error)) {
    return false;
  }
  for (ir::FsRight right : ir::kFsRights) {
    const std::string name = ir::FsRightName(right);
    auto it = fs->find(name);
    if (it == fs->end() || !it->is_object()) {
      *error = "filesystem." + name + ": missing or not an object";
      return false;
    }
    for (const auto& [pattern, verdict] : it->items()) {
      if (pattern.empty() || (pattern[0] != '/' && pattern[0] != '~') ||
          pattern.find("/../") != std::string::npos || !verdict.is_string() ||
          (verdict != "allow" && verdict != "deny")) {
        *error = "filesystem." + name + ": bad entry \"" + pattern + "\": " + verdict.dump();
        return false;
      }
      r.filesystem.rules[static_cast<size_t>(right)][pattern] = {verdict == "allow", {}};
    }
  }
  r.filesystem.BuildIndex();
  for (auto [key, target] :
       {std::pair{"connect_tcp", &r.connect_tcp}, std::pair{"bind_tcp", &r.bind_tcp},
        std::pair{"connect_tcp_partial", &r.connect_tcp_partial}}) {
    auto it = ports->find(key);
    if (it == ports->end() || !it->is_string() || !ParsePorts(it->get<std::string>(), target)) {
      *error = std::string("net_port.") + key + ": missing or not a port list";
      return false;
    }
  }
  *out = std::move(r);
  return true;
}

}  // namespace ward::backend::landlock
