#include "compiler/filesystem.h"
#include "compiler/fs_names.h"

#include <algorithm>
#include <set>

namespace ward::ir {
namespace {

int Rank(const std::string& component) {
  if (component == "**") return 0;
  return component.find('*') == std::string::npos ? 2 : 1;
}

std::string Expand(const std::string& pattern, const std::optional<std::string>& home) {
  if (pattern.empty() || pattern[0] != '~') return pattern;
  if (!home) return {};
  return *home + pattern.substr(1);
}

}  // namespace

int CompareSpecificity(const std::string& a, const std::string& b) {
  std::vector<std::string> ca = PathComponents(a), cb = PathComponents(b);
  auto count = [](const std::vector<std::string>& c) {
    return std::count_if(c.begin(), c.end(), [](const std::string& s) { return s != "**"; });
  };
  long na = count(ca), nb = count(cb);
  if (na != nb) return na < nb ? -1 : 1;
  for (size_t i = 0; i < std::min(ca.size(), cb.size()); ++i) {
    int ra = Rank(ca[i]), rb = Rank(cb[i]);
    if (ra != rb) return ra < rb ? -1 : 1;
  }
  return 0;
}

namespace {

// Canonical form: drops the literal absolute patterns that decide nothing
// (removing them changes no decision), so that redundant rules do not make
// equal meanings unequal. P is redundant when its nearest literal ancestor
// pattern has the same verdict (none: the default deny), no glob could match
// P or anything under it, and no `~` pattern exists for the right (the home
// directory may lie anywhere). Transitive: a chain of equal verdicts goes at
// once. Conservative: what it keeps may still be redundant.
void RemoveRedundant(std::map<std::string, FsVerdict>& rules) {
  std::set<std::string> globs;  // the literal part of each glob pattern
  for (const auto& [pattern, verdict] : rules) {
    if (pattern[0] == '~') return;
    if (pattern.find('*') == std::string::npos) continue;
    std::string literal;
    for (const std::string& c : PathComponents(pattern)) {
      if (c.find('*') != std::string::npos) break;
      literal += "/" + c;
    }
    globs.insert(literal.empty() ? "/" : literal);
  }
  if (globs.count("/")) return;  // a glob may match anything
  std::vector<std::string> redundant;
  for (const auto& [pattern, verdict] : rules) {
    if (pattern.find('*') != std::string::npos) continue;
    // A glob rooted at the pattern, under it, or at one of its ancestors.
    const std::string below = pattern + "/";
    auto under = globs.lower_bound(below);
    if ((pattern == "/" && !globs.empty()) || globs.count(pattern) ||
        (under != globs.end() && under->compare(0, below.size(), below) == 0)) {
      continue;
    }
    bool glob_above = false;
    for (size_t slash = pattern.rfind('/'); slash != 0 && slash != std::string::npos;
         slash = pattern.rfind('/', slash - 1)) {
      glob_above = glob_above || globs.count(pattern.substr(0, slash));
    }
    if (glob_above) continue;
    bool inherited = false;  // the default
    std::string up = pattern;
    while (up != "/") {
      size_t slash = up.rfind('/');
      up = slash == 0 ? "/" : up.substr(0, slash);
      auto it = rules.find(up);
      if (it != rules.end()) {
        inherited = it->second.allow;
        break;
      }
    }
    if (inherited == verdict.allow) redundant.push_back(pattern);
  }
  for (const std::string& p : redundant) rules.erase(p);
}

}  // namespace

FileRules LowerFilesystem(const std::vector<const ast::FilesystemSection*>& sections) {
  FileRules ir;
  for (const ast::FilesystemSection* section : sections) {
    for (const ast::FsRule& rule : section->rules) {
      for (FsRight right : kFsRights) {
        uint8_t bit = right == FsRight::kRead    ? ast::kRead
                      : right == FsRight::kWrite ? ast::kWrite
                                                 : ast::kExec;
        if (!(rule.rights & bit)) continue;
        for (const ast::Atom& path : rule.paths) {
          auto [it, inserted] =
              ir.rules[static_cast<size_t>(right)].emplace(path.text, FsVerdict{rule.allow, {}});
          // The same pattern allowed and denied: deny wins (a full tie).
          if (!inserted) it->second.allow = it->second.allow && rule.allow;
          it->second.rules.push_back(rule.span);
        }
      }
    }
  }
  for (auto& per_right : ir.rules) RemoveRedundant(per_right);
  ir.BuildIndex();
  return ir;
}

void FileRules::BuildIndex() {
  needs_home_ = false;
  for (FsRight right : kFsRights) {
    auto& index = index_[static_cast<size_t>(right)];
    index.clear();
    for (const auto& [pattern, verdict] : rules[static_cast<size_t>(right)]) {
      std::string literal = pattern[0] == '~' ? "~" : "";
      for (const std::string& c : PathComponents(pattern[0] == '~' ? pattern.substr(1) : pattern)) {
        if (c.find('*') != std::string::npos) break;
        literal += "/" + c;
      }
      if (literal.empty()) literal = "/";
      index.emplace(literal, pattern);
      needs_home_ |= pattern[0] == '~';
    }
  }
}

FsDecision FileRules::Decide(const std::string& path, FsRight right,
                             const std::optional<std::string>& home) const {
  // The candidates: patterns whose literal part is the path or an ancestor,
  // written from the root or from ~ when the path is under the home.
  std::vector<std::string> roots = {"/"};
  std::string prefix;
  for (const std::string& c : PathComponents(path)) roots.push_back(prefix += "/" + c);
  if (home && (path == *home || path.rfind(*home + "/", 0) == 0)) {
    std::string tilde = "~";
    roots.push_back(tilde);
    for (const std::string& c : PathComponents(path.substr(home->size()))) {
      roots.push_back(tilde += "/" + c);
    }
  }
  const auto& index = index_[static_cast<size_t>(right)];
  const auto& by_pattern = rules[static_cast<size_t>(right)];
  FsDecision best;
  const std::string* best_pattern = nullptr;
  std::string best_expanded;
  std::vector<const std::string*> candidates;
  for (const std::string& root : roots) {
    auto [lo, hi] = index.equal_range(root);
    for (auto it = lo; it != hi; ++it) candidates.push_back(&it->second);
  }
  // A fixed order, so that equally specific allows are cited the same way.
  std::sort(candidates.begin(), candidates.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const std::string* candidate : candidates) {
    const std::string& pattern = *candidate;
    const FsVerdict& verdict = by_pattern.at(pattern);
    std::string expanded = Expand(pattern, home);
    if (expanded.empty() || !PatternMatchesPathOrAncestor(expanded, path)) continue;
    int cmp = best_pattern ? CompareSpecificity(expanded, best_expanded) : 1;
    if (cmp > 0 || (cmp == 0 && !verdict.allow && best.allow)) {
      best = {verdict.allow, pattern, verdict.rules};
      best_pattern = &pattern;
      best_expanded = expanded;
    }
  }
  return best;
}

bool FileRules::NeedsHome() const { return needs_home_; }

}  // namespace ward::ir
