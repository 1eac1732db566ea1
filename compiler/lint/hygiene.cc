// Hygiene rules (L25xx): unused lets and groups (per file, on the AST),
// redundant and duplicated rules (per policy, on the IR's provenance).
// L2505 and L2506 (suppression comments) are found in lint.cc.
#include <map>
#include <set>

#include "compiler/lint/context.h"

namespace ward::lint {
namespace {

void Refs(const ast::Value& v, std::set<std::string>& names) {
  if (v.kind == ast::ValueKind::kWord) names.insert(v.text);
  for (const ast::StringPiece& p : v.pieces) {
    if (p.is_ref) names.insert(p.text);
  }
  for (const ast::Value& item : v.items) Refs(item, names);
}

void Refs(const std::vector<ast::Value>& values, std::set<std::string>& names) {
  for (const ast::Value& v : values) Refs(v, names);
}

std::set<std::string> ReferencedNames(const ast::File& file) {
  std::set<std::string> names;
  for (const ast::Let& l : file.lets) Refs(l.values, names);
  for (const ast::Policy& p : file.policies) {
    if (p.filesystem) {
      for (const ast::FsRule& r : p.filesystem->rules) Refs(r.raw, names);
    }
    if (p.network) {
      for (const ast::NetRule& r : p.network->rules) {
        Refs(r.raw_peers, names);
        Refs(r.raw_ports, names);
      }
    }
    if (p.process) {
      for (const auto& c : p.process->capabilities) Refs(c.raw, names);
      for (const auto& e : p.process->env) Refs(e.raw, names);
    }
    if (p.limits) {
      for (const ast::Limit& l : p.limits->limits) Refs(l.raw, names);
    }
    for (const ast::TargetSection& t : p.targets) {
      for (const ast::TargetToken& tok : t.tokens) {
        Refs(tok.value, names);
        for (const auto& [k, v] : tok.block) Refs(v, names);
      }
    }
  }
  return names;
}

// Deletes the whole lines a definition spans, when nothing else is on them.
std::optional<Fix> DeleteLines(const SourceManager& sources, Span span, const std::string& what) {
  const SourceFile& file = sources.file(span.file);
  uint32_t line = sources.LocationOf(span.file, span.begin).line;
  uint32_t start = file.line_starts[line - 1];
  for (uint32_t i = start; i < span.begin; ++i) {
    if (file.text[i] != ' ' && file.text[i] != '\t') return std::nullopt;
  }
  uint32_t end = span.end;
  while (end < file.text.size() && (file.text[end] == ' ' || file.text[end] == '\t')) ++end;
  if (end < file.text.size() && file.text[end] != '\n') return std::nullopt;
  if (end < file.text.size()) ++end;
  return Fix{"remove " + what, {span.file, start, end}, ""};
}

std::string Key(const ir::FlatRule& r) {
  std::string k = std::to_string(static_cast<int>(r.direction)) + (r.allow ? "a" : "d") + "|" +
                  r.what.tcp.ToString() + "|" + r.what.udp.ToString() + "|" +
                  (r.what.icmp ? "i" : "") + "|" + std::to_string(static_cast<int>(r.peer.kind)) +
                  "|" + r.peer.domain + "|";
  if (r.peer.kind == ast::PeerKind::kAddress) k += FormatPrefix(r.peer.prefix);
  return k;
}

// Reports `later` as repeating `first`: L2503 within one policy, L2504
// across a base.
void Repeat(const PolicyContext& ctx, Findings& out, Span first, Span later, Span anchor,
            const std::string& what) {
  const ast::Policy* a = PolicyOf(ctx.order, first);
  const ast::Policy* b = PolicyOf(ctx.order, later);
  if (!a || !b) return;
  Finding& f =
      a == b ? out.Add("L2503", later, what + " is given twice in this policy")
             : out.Add("L2504", later, what + " repeats the rule of base '" + a->name.text + "'");
  f.anchor = anchor;
  AddRelated(f, first, "first given here");
}

// The verdict of a pattern's entries: deny on a tie.
bool Allows(const std::vector<FsEntry>& entries) {
  for (const FsEntry& e : entries) {
    if (!e.allow) return false;
  }
  return true;
}

void FsRepeats(const PolicyContext& ctx, Findings& out) {
  const FsEntries all = CollectFsEntries(ctx);
  for (ir::FsRight right : ir::kFsRights) {
    const auto& entries = all[static_cast<int>(right)];
    std::vector<std::string> globs;
    for (const auto& [pattern, e] : entries) {
      if (pattern.find('*') != std::string::npos) globs.push_back(pattern);
    }
    for (const auto& [pattern, list] : entries) {
      // The same pattern and verdict from two rules.
      for (size_t i = 1; i < list.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (list[j].allow != list[i].allow) continue;
          Repeat(ctx, out, list[j].atom, list[i].atom, list[i].rule,
                 std::string(list[i].allow ? "allow" : "deny") + " of '" + pattern + "'");
          break;
        }
      }
      // A pattern whose nearest enclosing pattern already gives its verdict,
      // in the same policy.
      const std::string* nearest = nullptr;
      for (const std::string* outer : EnclosingPatterns(entries, globs, pattern)) {
        if (ir::CompareSpecificity(*outer, pattern) >= 0) continue;
        if (!nearest || ir::CompareSpecificity(*outer, *nearest) > 0 ||
            (ir::CompareSpecificity(*outer, *nearest) == 0 && !Allows(entries.at(*outer)))) {
          nearest = outer;
        }
      }
      if (!nearest) continue;
      const std::vector<FsEntry>& above = entries.at(*nearest);
      const bool allow = Allows(list);
      if (Allows(above) != allow) continue;
      for (const FsEntry& e : list) {
        if (e.allow != allow) continue;
        const FsEntry* same = nullptr;
        for (const FsEntry& a : above) {
          if (a.policy == e.policy && a.allow == allow) same = &a;
        }
        if (!same) continue;
        Finding& f = out.Add("L2503", e.atom,
                             std::string(allow ? "allow" : "deny") + " of '" + pattern +
                                 "' changes nothing: '" + *nearest + "' already decides it");
        f.anchor = e.rule;
        AddRelated(f, same->atom, "the enclosing rule");
      }
    }
  }
}

void NetRepeats(const PolicyContext& ctx, Findings& out) {
  std::map<std::string, const ir::FlatRule*> first;
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    auto [it, fresh] = first.emplace(Key(r), &r);
    if (fresh || it->second->span.begin == r.span.begin) continue;
    Repeat(ctx, out, it->second->peer.span, r.peer.span, r.span,
           std::string(r.allow ? "allow" : "deny") + " of '" +
               std::string(ctx.sources.Text(r.peer.span)) + "'");
  }
}

void NetlinkRepeats(const PolicyContext& ctx, Findings& out) {
  std::map<std::string, Span> first;
  for (const ir::NetlinkRule& r : ctx.ir.network.netlink_rules) {
    const std::string what = std::string(r.allow ? "allow" : "deny") + " of netlink " + r.protocol;
    auto [it, fresh] = first.emplace(what, r.span);
    if (fresh || it->second.begin == r.span.begin) continue;
    Repeat(ctx, out, it->second, r.span, r.span, what);
  }
}

void SysRepeats(const PolicyContext& ctx, Findings& out) {
  std::map<std::string, Span> first;
  for (const ast::Policy* p : ctx.order) {
    if (!p->syscalls) continue;
    for (const ast::SysRule& r : p->syscalls->rules) {
      if (!r.conditions.empty()) continue;
      for (const ast::SysTarget& t : r.targets) {
        std::string key = t.name + "|" + std::to_string(static_cast<int>(r.action.kind)) + "|" +
                          std::to_string(r.action.errno_value);
        auto [it, fresh] = first.emplace(key, t.span);
        if (fresh) continue;
        Repeat(ctx, out, it->second, t.span, r.span,
               std::string(ctx.sources.Text(r.action.span)) + " " + t.name);
      }
    }
  }
}

}  // namespace

void LintFileHygiene(const FileContext& ctx, Findings& out) {
  if (ctx.file.is_std) return;
  std::set<std::string> used = ReferencedNames(ctx.file);
  for (const ast::Let& l : ctx.file.lets) {
    if (used.count(l.name.text)) continue;
    Finding& f = out.Add("L2501", l.name.span, "let '" + l.name.text + "' is never used");
    f.anchor = l.span;
    f.fix = DeleteLines(ctx.sources, l.span, "the let");
  }
  std::set<std::string> groups;
  for (const auto& file : ctx.program.files) {
    if (!file) continue;
    for (const ast::Group& g : file->groups) {
      for (const ast::SysTarget& t : g.members) {
        if (t.is_group) groups.insert(t.name);
      }
    }
    for (const ast::Policy& p : file->policies) {
      if (!p.syscalls) continue;
      for (const ast::SysRule& r : p.syscalls->rules) {
        for (const ast::SysTarget& t : r.targets) {
          if (t.is_group) groups.insert(t.name);
        }
      }
    }
  }
  for (const ast::Group& g : ctx.file.groups) {
    if (groups.count(g.name.text)) continue;
    Finding& f = out.Add("L2502", g.name.span, "group " + g.name.text + " is never used");
    f.anchor = g.span;
    f.fix = DeleteLines(ctx.sources, g.span, "the group");
  }
}

void LintHygiene(const PolicyContext& ctx, Findings& out) {
  FsRepeats(ctx, out);
  NetRepeats(ctx, out);
  NetlinkRepeats(ctx, out);
  SysRepeats(ctx, out);
}

}  // namespace ward::lint
