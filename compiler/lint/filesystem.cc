// Filesystem rules (L23xx), on the IR's decisions (FileRules::Decide) and
// provenance.
#include <algorithm>
#include <map>

#include "compiler/fs_names.h"
#include "compiler/lint/context.h"

namespace ward::lint {
namespace {

using ir::FsRight;

std::string Expand(const std::string& pattern, const std::string& home) {
  return pattern.rfind("~", 0) == 0 ? home + pattern.substr(1) : pattern;
}

// A concrete path inside a pattern: `*` as one name, `**` as none.
std::string Concrete(const std::string& pattern) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = pattern.find('/', i + 1);
    std::string comp = pattern.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (comp == "/**") {
    } else if (comp.find('*') != std::string::npos) {
      out += "/x";
    } else {
      out += comp;
    }
    if (j == std::string::npos) break;
    i = j;
  }
  return out.empty() ? "/" : out;
}

// The span of `pattern` within the rule at `rule` (the path as written, or
// the let it came from), else the rule.
Span AtomSpan(const PolicyContext& ctx, Span rule, const std::string& pattern) {
  for (const ast::Policy* p : ctx.order) {
    if (!p->filesystem) continue;
    for (const ast::FsRule& r : p->filesystem->rules) {
      if (r.span.file != rule.file || r.span.begin != rule.begin) continue;
      for (const ast::Atom& a : r.paths) {
        if (a.text == pattern) return a.span;
      }
    }
  }
  return rule;
}

Finding& AddAt(const PolicyContext& ctx, Findings& out, std::string_view id, Span rule,
               const std::string& pattern, std::string message) {
  Finding& f = out.Add(id, AtomSpan(ctx, rule, pattern), std::move(message));
  f.anchor = rule;
  return f;
}

struct Probe {
  const char* path;
  const char* what;
};

// Whether a writable tree may hold a repository the user opens later: not
// scratch space, devices, caches or package stores (hidden folders such as
// ~/.cache and ~/.npm, Go's module cache, node_modules).
bool MayHoldRepositories(const std::string& base) {
  for (const char* scratch : {"/tmp", "/var/tmp", "/dev", "/proc", "/run", "/sys"}) {
    const size_t n = std::string_view(scratch).size();
    if (base.compare(0, n, scratch) == 0 && (base.size() == n || base[n] == '/')) return false;
  }
  for (size_t i = base.find('/'); i != std::string::npos; i = base.find('/', i + 1)) {
    std::string_view comp = std::string_view(base).substr(i + 1);
    comp = comp.substr(0, comp.find('/'));
    if ((!comp.empty() && comp[0] == '.') || comp == "node_modules" || comp == "pkg") {
      return false;
    }
  }
  return base != "/";
}

// L2301: writes that persist beyond the sandbox.
void PersistentWrite(const PolicyContext& ctx, Findings& out) {
  static const Probe kFixed[] = {
      {"/usr/bin", "a $PATH directory"},
      {"/usr/local/bin", "a $PATH directory"},
      {"/bin", "a $PATH directory"},
      {"/usr/sbin", "a $PATH directory"},
      {"/usr/lib", "a system library directory"},
      {"/etc/profile.d", "the system shell start-up"},
      {"/etc/cron.d", "cron"},
      {"~/.local/bin", "a $PATH directory"},
      {"~/bin", "a $PATH directory"},
      {"~/.bashrc", "a shell start-up file"},
      {"~/.bash_profile", "a shell start-up file"},
      {"~/.profile", "a shell start-up file"},
      {"~/.zshrc", "a shell start-up file"},
      {"~/.config/fish/config.fish", "a shell start-up file"},
      {"~/.ssh/authorized_keys", "SSH configuration"},
      {"~/.ssh/config", "SSH configuration"},
      {"~/.gitconfig", "git configuration (hooks, credential helpers)"},
      {"~/.config/git/config", "git configuration (hooks, credential helpers)"},
      {"~/.config/autostart", "desktop autostart"},
      {"~/.config/systemd/user", "user services"},
      {"~/.claude/settings.json", "the agent's own settings"},
      {"~/.cursor", "the agent's own settings"},
      {"~/.config/Code/User", "editor settings"},
  };
  // Inside a writable tree that may be a repository the user opens later.
  static const Probe kInTree[] = {
      {"/.git/hooks", "git hooks"},
      {"/.git/config", "the repository's git configuration"},
      {"/.vscode", "editor tasks and settings"},
      {"/.claude", "the agent's own settings"},
      {"/.envrc", "a direnv file"},
  };
  const ir::FileRules& fs = ctx.ir.filesystem;
  const std::string& home = ctx.options.home;
  auto check = [&](const std::string& shown, const char* what) {
    std::string path = Expand(shown, home);
    ir::FsDecision d = fs.Decide(path, FsRight::kWrite, home);
    if (!d.allow || d.rules.empty()) return;
    Finding& f = AddAt(ctx, out, "L2301", d.rules.back(), d.pattern,
                       "write access to '" + shown + "' (" + what +
                           ") persists beyond the sandbox and runs later outside it");
    f.hint = "deny write \"" + shown + "\"";
  };
  for (const Probe& p : kFixed) check(p.path, p.what);
  for (const auto& [pattern, verdict] : fs.rules[static_cast<int>(FsRight::kWrite)]) {
    if (!verdict.allow) continue;
    std::string base = Concrete(pattern);
    if (!MayHoldRepositories(base)) continue;
    for (const Probe& p : kInTree) check(base + p.path, p.what);
  }
}

// L2302: credential stores readable through a broader grant.
void CredentialRead(const PolicyContext& ctx, Findings& out) {
  static const char* const kCredentials[] = {"~/.ssh",       "~/.aws",
                                             "~/.kube",      "~/.config/gcloud",
                                             "~/.netrc",     "~/.docker/config.json",
                                             "~/.gnupg",     "~/.git-credentials",
                                             "~/.config/gh", "~/.pypirc",
                                             "/etc/shadow",  "/root"};
  const std::string& home = ctx.options.home;
  for (const char* cred : kCredentials) {
    ir::FsDecision d = ctx.ir.filesystem.Decide(Expand(cred, home) + "/x", FsRight::kRead, home);
    if (!d.allow || d.rules.empty()) continue;
    // A grant that names the store (or something inside it) is deliberate.
    if (ir::PatternMatchesPathOrAncestor(cred, d.pattern)) continue;
    AddAt(ctx, out, "L2302", d.rules.back(), d.pattern,
          "'" + std::string(cred) + "' is readable through the broader grant '" + d.pattern + "'")
        .hint = "deny read \"" + std::string(cred) + "\"";
  }
}

std::vector<std::string> Globs(const std::map<std::string, std::vector<FsEntry>>& entries) {
  std::vector<std::string> globs;
  for (const auto& [pattern, e] : entries) {
    if (pattern.find('*') != std::string::npos) globs.push_back(pattern);
  }
  return globs;
}

size_t Position(const PolicyContext& ctx, const ast::Policy* p) {
  return std::find(ctx.order.begin(), ctx.order.end(), p) - ctx.order.begin();
}

// L2303 and L2304: an allow inside a deny of a base; a deny inside an allow.
void Nesting(const PolicyContext& ctx, const FsEntries& all, Findings& out) {
  for (FsRight right : ir::kFsRights) {
    const auto& entries = all[static_cast<int>(right)];
    const std::vector<std::string> globs = Globs(entries);
    for (const auto& [pattern, list] : entries) {
      for (const std::string* outer : EnclosingPatterns(entries, globs, pattern)) {
        if (ir::CompareSpecificity(pattern, *outer) <= 0) continue;
        for (const FsEntry& in : list) {
          for (const FsEntry& o : entries.at(*outer)) {
            if (in.allow && !o.allow && o.policy != in.policy &&
                Position(ctx, o.policy) < Position(ctx, in.policy)) {
              Finding& f = out.Add("L2303", in.atom,
                                   std::string("allow ") + ir::FsRightName(right) + " '" + pattern +
                                       "' opens part of the deny of '" + *outer + "' in base '" +
                                       o.policy->name.text + "'");
              f.anchor = in.rule;
              AddRelated(f, o.atom, "the base's deny");
            }
            if (!in.allow && o.allow) {
              Finding& f = out.Add(
                  "L2304", in.atom,
                  std::string("deny ") + ir::FsRightName(right) + " '" + pattern +
                      "' inside allow '" + *outer +
                      "': Landlock can only approximate it (it grants what lies beside the denied "
                      "path, as it "
                      "exists when applied, and nothing created later next to it)");
              f.anchor = in.rule;
              AddRelated(f, o.atom, "the enclosing allow");
            }
          }
        }
      }
    }
  }
}

}  // namespace

FsEntries CollectFsEntries(const PolicyContext& ctx) {
  FsEntries out;
  for (const ast::Policy* p : ctx.order) {
    if (!p->filesystem) continue;
    for (const ast::FsRule& r : p->filesystem->rules) {
      for (FsRight right : ir::kFsRights) {
        const uint8_t bit = right == FsRight::kRead    ? ast::kRead
                            : right == FsRight::kWrite ? ast::kWrite
                                                       : ast::kExec;
        if (!(r.rights & bit)) continue;
        for (const ast::Atom& a : r.paths) {
          out[static_cast<int>(right)][a.text].push_back({a.text, r.allow, r.span, a.span, p});
        }
      }
    }
  }
  return out;
}

std::vector<const std::string*> EnclosingPatterns(
    const std::map<std::string, std::vector<FsEntry>>& entries,
    const std::vector<std::string>& globs, const std::string& pattern) {
  std::vector<const std::string*> out;
  std::string parent = pattern;
  while (true) {
    size_t slash = parent.rfind('/');
    if (slash == std::string::npos || parent == "/") break;
    parent = slash == 0 ? "/" : parent.substr(0, slash);
    auto it = entries.find(parent);
    if (it != entries.end()) out.push_back(&it->first);
  }
  if (pattern[0] == '~' && pattern != "~") {
    auto it = entries.find("~");
    if (it != entries.end()) out.push_back(&it->first);
  }
  for (const std::string& g : globs) {
    // Cheap first: the glob's literal head must be one of the pattern's
    // ancestors (or the pattern itself).
    const size_t star = g.find('*');
    const size_t head = star == std::string::npos ? g.size() : g.rfind('/', star);
    if (head != std::string::npos && head > 0 &&
        (pattern.compare(0, head, g, 0, head) != 0 ||
         (pattern.size() > head && pattern[head] != '/'))) {
      continue;
    }
    // A literal last component must be one of the pattern's components.
    const std::string_view last = std::string_view(g).substr(g.rfind('/') + 1);
    if (last.find('*') == std::string_view::npos) {
      size_t at = pattern.find(last);
      bool found = false;
      for (; at != std::string::npos && !found; at = pattern.find(last, at + 1)) {
        found = at > 0 && pattern[at - 1] == '/' &&
                (at + last.size() == pattern.size() || pattern[at + last.size()] == '/');
      }
      if (!found) continue;
    }
    if (g != pattern && ir::PatternMatchesPathOrAncestor(g, pattern)) {
      out.push_back(&entries.find(g)->first);
    }
  }
  return out;
}

void LintFilesystem(const PolicyContext& ctx, Findings& out) {
  PersistentWrite(ctx, out);
  CredentialRead(ctx, out);
  Nesting(ctx, CollectFsEntries(ctx), out);
}

}  // namespace ward::lint
