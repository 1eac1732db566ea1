#include "compiler/ir_json.h"
#include "compiler/fs_names.h"

#include <cstdio>

namespace ward::ir {
namespace {

using nlohmann::ordered_json;

// The IR names files by their ir_path (source.h), never as the user typed
// them: ir_sha256 must not depend on that.
std::string IrWhere(const SourceManager& sources, Span span) {
  if (!span.valid()) return "";
  Location loc = sources.LocationOf(span.file, span.begin);
  return sources.IrPath(span.file) + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.column);
}

ordered_json Spans(const SourceManager& sources, const std::vector<Span>& spans) {
  ordered_json out = ordered_json::array();
  for (Span s : spans) out.push_back(IrWhere(sources, s));
  return out;
}

ordered_json Decision(const NetDecision& d) {
  ordered_json j;
  j["tcp"] = d.tcp.ToString();
  j["udp"] = d.udp.ToString();
  j["icmp"] = d.icmp;
  return j;
}

template <typename A, typename Format, typename Cidrs>
ordered_json Pieces(const std::vector<Piece<A>>& pieces, Format format, Cidrs cidrs) {
  ordered_json out = ordered_json::array();
  for (const Piece<A>& p : pieces) {
    // Pieces that allow nothing and record no deny are the default: left out.
    if (p.decision.empty() && p.denied.empty()) continue;
    ordered_json j;
    j["from"] = format(p.range.lo);
    j["to"] = format(p.range.hi);
    j["cidrs"] = cidrs(p.range);
    j["allow"] = Decision(p.decision);
    if (!p.denied.empty()) j["denied"] = Decision(p.denied);
    out.push_back(std::move(j));
  }
  return out;
}

ordered_json DirectionJson(const Partition& p, const std::map<std::string, DomainEntry>& domains) {
  ordered_json j;
  j["v4"] = Pieces(p.v4, FormatV4, V4Cidrs);
  j["v6"] = Pieces(p.v6, FormatV6, V6Cidrs);
  ordered_json d = ordered_json::object();
  for (const auto& [name, entry] : domains) {
    d[name]["allow"] = Decision(entry.allow);
    d[name]["deny"] = Decision(entry.deny);
  }
  j["domains"] = std::move(d);
  return j;
}

ordered_json Filesystem(const FileRules& fs, const SourceManager& sources) {
  ordered_json j;
  for (FsRight right : kFsRights) {
    ordered_json list = ordered_json::array();
    for (const auto& [pattern, verdict] : fs.rules[static_cast<size_t>(right)]) {
      ordered_json r;
      r["pattern"] = pattern;
      r["verdict"] = verdict.allow ? "allow" : "deny";
      r["rules"] = Spans(sources, verdict.rules);
      list.push_back(std::move(r));
    }
    j[FsRightName(right)] = std::move(list);
  }
  return j;
}

ordered_json Process(const ProcessRules& p) {
  ordered_json j;
  j["no_new_privileges"] = p.no_new_privileges;
  j["capabilities_kept"] = p.capabilities_kept;
  if (p.user) {
    j["user"] = {{"uid", p.user->first}, {"gid", p.user->second}};
  } else {
    j["user"] = nullptr;
  }
  j["env_allowed"] = p.env_allowed;
  return j;
}

}  // namespace

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

ordered_json Action(const SysAction& a) {
  ordered_json j;
  j["action"] = std::string(KindName(a.kind));
  if (a.kind == SysAction::Kind::kErrno) j["errno"] = a.errno_value;
  return j;
}

ordered_json Syscalls(const SyscallRules& s, const SourceManager& sources) {
  ordered_json j;
  ordered_json arches = ordered_json::array();
  for (Arch a : s.arches) arches.push_back(std::string(ArchName(a)));
  j["arches"] = std::move(arches);
  ordered_json def = Action(s.default_action);
  def["rules"] = Spans(
      sources, s.default_span.valid() ? std::vector<Span>{s.default_span} : std::vector<Span>{});
  j["default"] = std::move(def);
  ordered_json by_arch = ordered_json::object();
  for (const auto& [arch, calls] : s.syscalls) {
    ordered_json per = ordered_json::object();
    for (const auto& [name, regions] : calls) {
      ordered_json list = ordered_json::array();
      for (const Region& r : regions) {
        ordered_json rj = Action(r.action);
        ordered_json tests = ordered_json::array();
        for (const ArgTest& t : r.tests) {
          tests.push_back({{"arg", t.arg}, {"mask", Hex(t.mask)}, {"value", Hex(t.value)}});
        }
        rj["when"] = std::move(tests);
        rj["rules"] = Spans(sources, r.rules);
        list.push_back(std::move(rj));
      }
      per[name] = std::move(list);
    }
    by_arch[std::string(ArchName(arch))] = std::move(per);
  }
  j["by_arch"] = std::move(by_arch);
  return j;
}

}  // namespace

nlohmann::ordered_json DecisionToJson(const NetDecision& decision) { return Decision(decision); }

std::string Where(const SourceManager& sources, Span span) {
  if (!span.valid()) return "";
  Location loc = sources.LocationOf(span.file, span.begin);
  return sources.file(span.file).display_path + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.column);
}

nlohmann::ordered_json ToJson(const Policy& policy, const SourceManager& sources) {
  ordered_json j;
  j["version"] = kIrJsonVersion;
  j["policy"] = policy.name;
  j["description"] = policy.metadata.description;
  j["labels"] = policy.metadata.labels;
  j["filesystem"] = Filesystem(policy.filesystem, sources);
  ordered_json net;
  net["egress"] = DirectionJson(policy.network.egress, policy.network.egress_domains);
  net["ingress"] = DirectionJson(policy.network.ingress, policy.network.ingress_domains);
  net["unix"] = {{"paths", policy.network.unix_paths}, {"abstract", policy.network.unix_abstract}};
  net["netlink"] = policy.network.netlink;
  j["network"] = std::move(net);
  j["syscalls"] = Syscalls(policy.syscalls, sources);
  j["process"] = Process(policy.process);
  ordered_json limits = ordered_json::object();
  for (const auto& [key, v] : policy.limits) limits[key] = v.value;
  j["limits"] = std::move(limits);
  ordered_json targets = ordered_json::object();
  for (const auto& [name, settings] : policy.targets) {
    ordered_json t = ordered_json::object();
    for (const auto& [key, s] : settings) {
      ordered_json v;
      if (!s.labels.empty()) {
        v["labels"] = s.labels;
      } else {
        v["value"] = s.value;
      }
      if (!s.flags.empty()) v["flags"] = s.flags;
      t[key] = std::move(v);
    }
    targets[name] = std::move(t);
  }
  j["targets"] = std::move(targets);
  return j;
}

}  // namespace ward::ir
