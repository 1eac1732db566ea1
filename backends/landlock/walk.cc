#include "backends/landlock/walk.h"
#include "compiler/fs_names.h"

#include <algorithm>
#include <set>

namespace ward::backend::landlock {
namespace {

// The pattern positions reachable after matching every component of `path`
// (`**` matches zero or more components).
std::set<size_t> States(const std::vector<std::string>& pat, const std::string& path) {
  auto closure = [&](std::set<size_t> s) {
    std::vector<size_t> pending(s.begin(), s.end());
    while (!pending.empty()) {
      size_t i = pending.back();
      pending.pop_back();
      if (i < pat.size() && pat[i] == "**" && s.insert(i + 1).second) pending.push_back(i + 1);
    }
    return s;
  };
  std::set<size_t> states = closure({0});
  for (const std::string& c : ir::PathComponents(path)) {
    std::set<size_t> next;
    for (size_t i : states) {
      if (i >= pat.size()) continue;
      if (pat[i] == "**") {
        next.insert(i);
      } else if (ir::ComponentMatches(pat[i], c)) {
        next.insert(i + 1);
      }
    }
    states = closure(std::move(next));
    if (states.empty()) break;
  }
  return states;
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

class Walker {
 public:
  Walker(const ir::FileRules& fs, const std::optional<std::string>& home, Tree& tree,
         size_t max_nodes)
      : fs_(fs), home_(home), tree_(tree), max_nodes_(max_nodes) {
    for (ir::FsRight r : ir::kFsRights) {
      for (const auto& [pattern, verdict] : fs.rules[static_cast<size_t>(r)]) {
        std::string e = ExpandHome(pattern, home);
        if (!e.empty()) patterns_[static_cast<size_t>(r)].push_back({e, verdict.allow});
      }
    }
  }

  // `allowed_above`: the rights some ancestor of the node is allowed.
  bool Visit(int node, const std::string& path, uint8_t active, uint8_t allowed_above) {
    const bool ok = VisitNode(node, path, active, allowed_above);
    tree_.Release(node);
    return ok;
  }

  bool VisitNode(int node, const std::string& path, uint8_t active, uint8_t allowed_above) {
    if (++visited_ > max_nodes_) {
      result_.error = "resolving the patterns visits more than " + std::to_string(max_nodes_) +
                      " paths (at " + path + ")";
      return false;
    }
    const Tree::Kind kind = tree_.KindOf(node);
    uint8_t grant = 0, pending = 0, pending_allow = 0, named = 0, beyond_link = 0, carved = 0;
    for (ir::FsRight r : ir::kFsRights) {
      const uint8_t bit = RightBit(r);
      if (!(active & bit)) continue;
      const bool allow = fs_.Decide(path, r, home_).allow;
      bool mixed = false;
      for (const auto& [pattern, verdict] : patterns_[static_cast<size_t>(r)]) {
        if (pattern == path && verdict) named |= bit;
        mixed = mixed || (verdict != allow && CanMatchBelow(pattern, path) &&
                          !ir::PatternMatchesPathOrAncestor(pattern, path));
      }
      if (mixed && kind == Tree::Kind::kSymlink) {
        // Never descended: a path spelled through a link would give its
        // target (whose own path may decide otherwise) the link's grants.
        beyond_link |= bit;
      } else if (mixed && kind == Tree::Kind::kDirectory) {
        pending |= bit;
        if (allow) pending_allow |= bit;
      } else if (allow) {
        grant |= bit;
      } else if (!mixed && (allowed_above & bit)) {
        carved |= bit;
      }
    }
    if (kind == Tree::Kind::kSymlink) {
      // A rule on a link covers the link, never its target.
      if (grant & named) {
        result_.losses.push_back({path, uint8_t(grant & named),
                                  "a symbolic link: not followed (grant its target instead)"});
      }
      if (beyond_link) {
        result_.losses.push_back(
            {path, beyond_link,
             "a symbolic link on the way to deeper patterns: not followed (name the real "
             "path instead)"});
      }
      return true;
    }
    if (grant) {
      result_.grants.push_back({node, path, grant});
      if (!tree_.Grant(node, path, grant, &result_.error)) return false;
    }
    if (carved) {
      result_.carved.push_back({node, path, carved});
      if (!tree_.Carved(node, path, carved, &result_.error)) return false;
    }
    if (!pending) return true;
    if (pending_allow) {
      result_.losses.push_back(
          {path, pending_allow,
           "partially granted (a deny below it): the directory itself and entries created "
           "in it later are not granted"});
    }
    // Below an allowed node every entry is visited (its siblings of the
    // deny are granted one by one); below a denied one only the ways to
    // an allow, unless the denied one is inside an allowed one. The literal
    // names allows go through are always looked up, so a missing one is
    // reported.
    std::vector<std::string> names;
    // Where an ancestor allows a pending right, the denied entries are
    // visited too: they are carved (Tree::Carved).
    bool any = pending_allow != 0;
    for (ir::FsRight r : ir::kFsRights) {
      if (!(pending & RightBit(r))) continue;
      for (const auto& [pattern, verdict] : patterns_[static_cast<size_t>(r)]) {
        if (verdict && CanMatchBelow(pattern, path)) NextNames(pattern, path, &names, &any);
      }
    }
    const uint8_t carving = pending & allowed_above;
    if ((any || carving) && !tree_.List(node, &names)) {
      result_.losses.push_back(
          {path, any ? pending : carving,
           any ? "cannot be listed when the ruleset is built: its entries are not granted"
               : "cannot be listed when the ruleset is built: its entries were not checked for "
                 "other names (hard links)"});
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const std::string& name : names) {
      const std::string child_path = Join(path, name);
      const int child = tree_.Child(node, name);
      if (child < 0) {
        uint8_t missing = 0;
        for (ir::FsRight r : ir::kFsRights) {
          if (!(pending & RightBit(r))) continue;
          for (const auto& [pattern, verdict] : patterns_[static_cast<size_t>(r)]) {
            if (verdict && pattern == child_path) missing |= RightBit(r);
          }
        }
        if (missing) {
          result_.losses.push_back(
              {child_path, missing, "does not exist when the ruleset is built: not granted"});
        }
        continue;
      }
      if (!Visit(child, child_path, pending, uint8_t(allowed_above | pending_allow))) return false;
    }
    return true;
  }

  WalkResult Finish(bool ok) {
    result_.ok = ok;
    auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
    std::stable_sort(result_.grants.begin(), result_.grants.end(), by_path);
    std::stable_sort(result_.carved.begin(), result_.carved.end(), by_path);
    std::stable_sort(result_.losses.begin(), result_.losses.end(), by_path);
    return std::move(result_);
  }

 private:
  const ir::FileRules& fs_;
  const std::optional<std::string>& home_;
  Tree& tree_;
  size_t max_nodes_;
  size_t visited_ = 0;
  std::array<std::vector<std::pair<std::string, bool>>, 3> patterns_;
  WalkResult result_;
};

}  // namespace

bool CanMatchBelow(const std::string& pattern, const std::string& path) {
  const std::vector<std::string> pat = ir::PathComponents(pattern);
  for (size_t i : States(pat, path)) {
    if (i < pat.size()) return true;
  }
  return false;
}

void NextNames(const std::string& pattern, const std::string& path, std::vector<std::string>* out,
               bool* any) {
  const std::vector<std::string> pat = ir::PathComponents(pattern);
  for (size_t i : States(pat, path)) {
    if (i >= pat.size()) continue;
    if (pat[i].find('*') != std::string::npos) {
      *any = true;
    } else {
      out->push_back(pat[i]);
    }
  }
}

std::string RightNames(uint8_t rights) {
  std::string out;
  for (ir::FsRight r : ir::kFsRights) {
    if (!(rights & RightBit(r))) continue;
    out += out.empty() ? "" : ",";
    out += r == ir::FsRight::kRead ? "read" : r == ir::FsRight::kWrite ? "write" : "exec";
  }
  return out;
}

WalkResult Walk(const ir::FileRules& fs, const std::optional<std::string>& home, Tree& tree,
                size_t max_nodes) {
  if (fs.NeedsHome() && !home) {
    WalkResult r;
    r.error = "the policy has ~ patterns and no home directory was given";
    return r;
  }
  Walker walker(fs, home, tree, max_nodes);
  const uint8_t all =
      RightBit(ir::FsRight::kRead) | RightBit(ir::FsRight::kWrite) | RightBit(ir::FsRight::kExec);
  const bool ok = walker.Visit(0, "/", all, 0);
  return walker.Finish(ok);
}

std::string ExpandHome(const std::string& pattern, const std::optional<std::string>& home) {
  if (pattern.empty() || pattern[0] != '~') return pattern;
  if (!home) return {};
  std::string out = *home + pattern.substr(1);
  return out.empty() ? "/" : out;
}

}  // namespace ward::backend::landlock
