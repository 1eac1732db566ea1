// Process and limits rules (L24xx), on the AST of the pooled sources (the
// IR keeps the merged result, not who widened what).
#include <map>
#include <set>

#include "compiler/lint/context.h"

namespace ward::lint {
namespace {

// L2401: capabilities that amount to root.
void RootCapability(const PolicyContext& ctx, Findings& out) {
  static const std::set<std::string> kRoot = {
      "CAP_SYS_ADMIN",       "CAP_NET_ADMIN",    "CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE",
      "CAP_DAC_READ_SEARCH", "CAP_SYS_MODULE",   "CAP_SYS_RAWIO",  "CAP_SETUID",
      "CAP_SETGID",          "CAP_SETFCAP",      "CAP_SETPCAP",    "CAP_FOWNER",
      "CAP_CHOWN",           "CAP_BPF",          "CAP_SYS_BOOT",   "CAP_MKNOD",
      "CAP_MAC_ADMIN",       "CAP_MAC_OVERRIDE", "CAP_PERFMON"};
  for (const ast::Policy* p : ctx.order) {
    if (!p->process) continue;
    for (const auto& caps : p->process->capabilities) {
      for (const ast::Name& n : caps.names) {
        if (caps.drop || !kRoot.count(n.text)) continue;
        Finding& f = out.Add("L2401", n.span,
                             n.text +
                                 " is kept: it amounts to root on the host or in its "
                                 "namespace");
        f.anchor = caps.span;
        if (caps.names.size() == 1) {
          f.fix = Fix{"drop every capability", caps.span, "capabilities drop all"};
        }
      }
    }
  }
}

// L2402: a process section that never sets no_new_privileges.
void NoNewPrivileges(const PolicyContext& ctx, Findings& out) {
  if (ctx.ir.process.no_new_privileges) return;
  const ast::ProcessSection* last = nullptr;
  for (const ast::Policy* p : ctx.order) {
    if (p->process) last = &*p->process;
  }
  if (!last) return;
  Finding& f = out.Add("L2402", last->span,
                       "no_new_privileges is not set: a setuid or file-capability binary "
                       "regains privileges");
  std::string_view text = ctx.sources.Text(last->span);
  size_t brace = text.find('{');
  if (brace != std::string_view::npos) {
    uint32_t at = last->span.begin + static_cast<uint32_t>(brace) + 1;
    f.fix = Fix{"set no_new_privileges", {last->span.file, at, at}, "\n    no_new_privileges"};
  }
}

// L2403: a child raises a base's limit.
void LimitWidened(const PolicyContext& ctx, Findings& out) {
  struct Seen {
    uint64_t value;
    Span span;
    const ast::Policy* policy;
  };
  std::map<std::string, Seen> seen;
  for (const ast::Policy* p : ctx.order) {
    if (!p->limits) continue;
    for (const ast::Limit& l : p->limits->limits) {
      auto it = seen.find(l.key.text);
      if (it != seen.end() && it->second.policy != p && l.value > it->second.value) {
        Finding& f =
            out.Add("L2403", l.raw.span,
                    l.key.text + " " + std::string(ctx.sources.Text(l.raw.span)) +
                        " raises the limit of " + std::string(ctx.sources.Text(it->second.span)) +
                        " set by '" + it->second.policy->name.text + "'");
        f.anchor = l.span;
        AddRelated(f, it->second.span, "the base's limit");
      }
      seen[l.key.text] = {l.value, l.raw.span, p};
    }
  }
}

// L2404: decimal size units (G, GB, ...) in memory and disk.
void DecimalSizeUnit(const PolicyContext& ctx, Findings& out) {
  for (const ast::Policy* p : ctx.order) {
    if (!p->limits) continue;
    for (const ast::Limit& l : p->limits->limits) {
      if (l.kind != ast::LimitKind::kMemory && l.kind != ast::LimitKind::kDisk) continue;
      const std::string text(ctx.sources.Text(l.raw.span));
      size_t unit = text.find_first_not_of("0123456789");
      if (unit == 0 || unit == std::string::npos) continue;
      std::string u = text.substr(unit);
      if (u != "K" && u != "KB" && u != "M" && u != "MB" && u != "G" && u != "GB" && u != "T" &&
          u != "TB") {
        continue;
      }
      std::string binary = text.substr(0, unit) + u.substr(0, 1) + "iB";
      if (binary[unit] == 'K') binary[unit] = 'K';
      Finding& f = out.Add("L2404", l.raw.span,
                           l.key.text + " " + text + " is " + std::to_string(l.value) +
                               " bytes (decimal units); Docker reads " + text + " as " + binary);
      f.anchor = l.span;
      f.fix = Fix{"use the binary unit", l.raw.span, binary};
    }
  }
}

}  // namespace

void LintProcess(const PolicyContext& ctx, Findings& out) {
  RootCapability(ctx, out);
  NoNewPrivileges(ctx, out);
  LimitWidened(ctx, out);
  DecimalSizeUnit(ctx, out);
}

}  // namespace ward::lint
