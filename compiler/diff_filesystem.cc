// `ward diff`, filesystem section: the paths and rights whose decision
// changed (compiler/diff.h has the line format).
//
// The rule, per right. Let U be the patterns of both IRs. A path's
// decision in each policy depends only on which patterns of U match it (or
// an ancestor). A changed path is reported under U's most specific pattern
// matching it (on a tie, the first in text order): `- write /data/frozen`
// covers the paths for which /data/frozen is that pattern. The regions are
// those of U's patterns, not of one policy's, and a region need not change
// as a whole: a pattern in one policy only can cut across the other's (NEW
// adding `allow /*/d` over OLD's `allow /*` and `deny /b` changes /b/d, not
// /x/d), so each line keeps a path that did change as its example, shown
// when it is not the pattern itself: `+ read /*/d (e.g. /b/d)`.
//
// Finding every region that changes: a breadth-first walk over a tree of
// representative paths. A node's children are each next component that a
// still-live pattern names literally, an instance of each combination of the
// globs inside a component (`lib*`, `*.so`) live there, and one fresh name
// that no live pattern names, standing for every other name; so every path
// has a visited representative that matches exactly the same patterns.
// Nodes with every live pattern at the same position and the same deciding
// patterns have identical subtrees, so each such state is visited once (the
// walk ends even with `**`); a node that both policies decide by the same
// pattern, with every live pattern the same in both, is not entered at all
// (nothing below it can differ). One limit: in-component globs are combined
// singly and in pairs (singly only, beyond 8 at one node), so a name that
// must match three of them at once and miss another could be missed.
#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compiler/diff_internal.h"
#include "compiler/fs_names.h"

namespace ward::ir::diff_internal {
namespace {

enum class CompKind { kLiteral, kStar, kGlobstar, kPartial };

CompKind KindOf(std::string_view c) {
  if (c == "*") return CompKind::kStar;
  if (c == "**") return CompKind::kGlobstar;
  return c.find('*') == std::string_view::npos ? CompKind::kLiteral : CompKind::kPartial;
}

std::vector<std::string_view> ComponentViews(std::string_view path) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

bool PartialMatches(const std::string& glob, const std::string& name) {
  return PatternMatchesPathOrAncestor("/" + glob, "/" + name);
}

std::string Instance(const std::string& glob, const std::string& fill) {
  std::string out;
  for (char c : glob) {
    if (c == '*') {
      out += fill;
    } else {
      out += c;
    }
  }
  return out;
}

// One pattern of either policy, by its expansion (`~` replaced). Held in
// place: comps point into `expanded`.
struct FsPattern {
  std::string expanded;
  const std::string* shown = nullptr;  // as written (the first, when several expand alike)
  std::vector<std::string_view> comps;
  std::vector<CompKind> kinds;
  // [right][side]: -1 no rule, 0 deny, 1 allow; side 0 is OLD.
  std::array<std::array<int8_t, 2>, 3> verdict;
  // [right][side]: the IR's verdict (its rules); further ones that expand
  // alike are in FsWalk::more_sources_.
  std::array<std::array<const FsVerdict*, 2>, 3> source{};
  bool common = false;  // the same verdicts in both policies
};

// The most specific matching pattern(s) so far for one right and side.
struct FsBest {
  int pid = -1;       // shown for the tie set: the first in text order
  int rule_pid = -1;  // one with the deciding verdict
  bool allow = false;
};

struct FsFinding {
  std::string example;
  int old_pid = -1;
  int new_pid = -1;
};

class FsWalk {
 public:
  FsWalk(const FileRules& before, const FileRules& after, std::string home)
      : home_(std::move(home)) {
    size_t total = 0;
    for (const FileRules* rules : {&before, &after}) {
      for (const auto& by_right : rules->rules) total += by_right.size();
    }
    patterns_.reserve(total);  // never moved: comps and by_expanded_ point into them
    AddPatterns(before, 0);
    AddPatterns(after, 1);
  }

  void Run();
  void AppendChanges(std::vector<Change>* out) const;

 private:
  using Entry = uint64_t;  // pattern id << 32 | position of the next component
  struct Node {
    std::string path;
    std::vector<Entry> live;
    std::array<FsBest, 6> best;  // [right * 2 + side]
  };

  static int Pid(Entry e) { return static_cast<int>(e >> 32); }
  static size_t Pos(Entry e) { return static_cast<size_t>(e & 0xffffffffu); }
  static Entry MakeEntry(int pid, size_t pos) {
    return (Entry{static_cast<uint32_t>(pid)} << 32) | pos;
  }

  void AddPatterns(const FileRules& rules, int side);
  void Push(int pid, size_t pos, std::vector<Entry>* live) const;
  bool Settle(Node* node);
  bool Alike(const Node& node) const;
  void Consider(int pid, std::array<FsBest, 6>* best);
  int Compare(int a, int b);
  int Top(int a, int b);
  void Record(const Node& node);
  void Children(const Node& node, std::deque<Node>* queue);
  Node Child(const Node& parent, const std::string& name,
             const std::map<std::string_view, std::vector<Entry>>& literal,
             const std::vector<Entry>& other) const;
  std::vector<Span> Spans(int pid, size_t right, int side) const;

  std::string home_;
  std::vector<FsPattern> patterns_;
  std::unordered_map<std::string_view, int> by_expanded_;
  std::vector<std::tuple<int, size_t, int, const FsVerdict*>> more_sources_;
  std::unordered_map<uint64_t, int> compared_;
  std::unordered_set<std::string> seen_;
  // (shown pattern, right, gained) -> the first path found
  std::map<std::tuple<std::string, int, bool>, FsFinding> findings_;
};

void FsWalk::AddPatterns(const FileRules& rules, int side) {
  for (FsRight right : kFsRights) {
    size_t r = static_cast<size_t>(right);
    for (const auto& [pattern, verdict] : rules.rules[r]) {
      std::string expanded = pattern[0] == '~' ? home_ + pattern.substr(1) : pattern;
      auto it = by_expanded_.find(expanded);
      if (it == by_expanded_.end()) {
        FsPattern& p = patterns_.emplace_back();
        p.expanded = std::move(expanded);
        p.shown = &pattern;
        for (std::string_view c : ComponentViews(p.expanded)) {
          p.comps.push_back(c);
          p.kinds.push_back(KindOf(c));
        }
        for (auto& by_side : p.verdict) by_side = {-1, -1};
        it = by_expanded_.emplace(p.expanded, static_cast<int>(patterns_.size() - 1)).first;
      }
      FsPattern& p = patterns_[it->second];
      int8_t& v = p.verdict[r][side];
      // Two patterns that expand alike tie: deny wins (as in Decide).
      v = v == -1 ? verdict.allow : (v && verdict.allow);
      if (!p.source[r][side]) {
        p.source[r][side] = &verdict;
      } else {
        more_sources_.emplace_back(it->second, r, side, &verdict);
      }
    }
  }
}

// Adds a pattern at a position, and the positions after any `**` there
// (which may match no component).
void FsWalk::Push(int pid, size_t pos, std::vector<Entry>* live) const {
  const FsPattern& p = patterns_[pid];
  live->push_back(MakeEntry(pid, pos));
  while (pos < p.kinds.size() && p.kinds[pos] == CompKind::kGlobstar) {
    live->push_back(MakeEntry(pid, ++pos));
  }
}

int FsWalk::Compare(int a, int b) {
  uint64_t key = (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b);
  auto it = compared_.find(key);
  if (it != compared_.end()) return it->second;
  int c = CompareSpecificity(patterns_[a].expanded, patterns_[b].expanded);
  compared_.emplace(key, c);
  return c;
}

// The more specific of two patterns (either may be -1, none); on a tie the
// first in text order.
int FsWalk::Top(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  int c = Compare(a, b);
  if (c != 0) return c > 0 ? a : b;
  return *patterns_[a].shown <= *patterns_[b].shown ? a : b;
}

void FsWalk::Consider(int pid, std::array<FsBest, 6>* best) {
  const FsPattern& p = patterns_[pid];
  for (size_t r = 0; r < 3; ++r) {
    for (size_t side = 0; side < 2; ++side) {
      int8_t v = p.verdict[r][side];
      if (v < 0) continue;
      FsBest& b = (*best)[r * 2 + side];
      int c = b.pid < 0 ? 1 : Compare(pid, b.pid);
      if (c > 0) {
        b = {pid, pid, v == 1};
      } else if (c == 0) {
        // A full tie: deny wins.
        if (b.allow && v == 0) b.rule_pid = pid;
        b.allow = b.allow && v == 1;
        if (*p.shown < *patterns_[b.pid].shown) b.pid = pid;
      }
    }
  }
}

// Applies the patterns that now match (no component left) and drops them;
// false when an equivalent node was already visited.
bool FsWalk::Settle(Node* node) {
  std::vector<Entry>& live = node->live;
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  std::vector<int> matched;
  for (Entry e : live) {
    if (Pos(e) == patterns_[Pid(e)].comps.size()) matched.push_back(Pid(e));
  }
  for (int pid : matched) Consider(pid, &node->best);
  if (!matched.empty()) {
    std::sort(matched.begin(), matched.end());
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](Entry e) {
                                return std::binary_search(matched.begin(), matched.end(), Pid(e));
                              }),
               live.end());
  }
  std::string key(reinterpret_cast<const char*>(live.data()), live.size() * sizeof(Entry));
  for (const FsBest& b : node->best) {
    int parts[3] = {b.pid, b.rule_pid, b.allow};
    key.append(reinterpret_cast<const char*>(parts), sizeof parts);
  }
  return seen_.insert(std::move(key)).second;
}

void FsWalk::Record(const Node& node) {
  for (size_t r = 0; r < 3; ++r) {
    const FsBest& b = node.best[r * 2];
    const FsBest& a = node.best[r * 2 + 1];
    bool before = b.pid >= 0 && b.allow, after = a.pid >= 0 && a.allow;
    if (before == after) continue;
    int top = Top(b.pid, a.pid);
    auto key = std::make_tuple(*patterns_[top].shown, static_cast<int>(r), after);
    findings_.emplace(key, FsFinding{node.path, b.rule_pid, a.rule_pid});
  }
}

FsWalk::Node FsWalk::Child(const Node& parent, const std::string& name,
                           const std::map<std::string_view, std::vector<Entry>>& literal,
                           const std::vector<Entry>& other) const {
  Node child;
  child.path = (parent.path == "/" ? "" : parent.path) + "/" + name;
  child.best = parent.best;
  if (auto it = literal.find(name); it != literal.end()) {
    for (Entry e : it->second) Push(Pid(e), Pos(e) + 1, &child.live);
  }
  for (Entry e : other) {
    const FsPattern& p = patterns_[Pid(e)];
    switch (p.kinds[Pos(e)]) {
      case CompKind::kGlobstar:
        Push(Pid(e), Pos(e), &child.live);  // `**` takes the component
        break;
      case CompKind::kStar:
        Push(Pid(e), Pos(e) + 1, &child.live);
        break;
      case CompKind::kPartial:
        if (PartialMatches(std::string(p.comps[Pos(e)]), name)) {
          Push(Pid(e), Pos(e) + 1, &child.live);
        }
        break;
      case CompKind::kLiteral:
        break;
    }
  }
  return child;
}

void FsWalk::Children(const Node& node, std::deque<Node>* queue) {
  std::map<std::string_view, std::vector<Entry>> literal;
  std::vector<Entry> other;
  std::set<std::string> partial;
  for (Entry e : node.live) {
    const FsPattern& p = patterns_[Pid(e)];
    if (p.kinds[Pos(e)] == CompKind::kLiteral) {
      literal[p.comps[Pos(e)]].push_back(e);
    } else {
      other.push_back(e);
      if (p.kinds[Pos(e)] == CompKind::kPartial) partial.insert(std::string(p.comps[Pos(e)]));
    }
  }
  std::vector<std::string> names;
  names.reserve(literal.size() + 1);
  for (const auto& [name, entries] : literal) names.emplace_back(name);
  if (!other.empty()) {
    std::vector<std::string> globs(partial.begin(), partial.end());
    auto signature = [&](const std::string& name) {
      std::vector<bool> s(globs.size());
      for (size_t i = 0; i < globs.size(); ++i) s[i] = PartialMatches(globs[i], name);
      return s;
    };
    // The instances to try: every glob alone, and each pair of globs (one
    // inside the other), each `*` filled with a few different texts so that
    // some instance escapes the other globs' literal parts.
    static constexpr const char* kFills[] = {"", "x", "y", "z", "0"};
    std::vector<std::string> tries;
    tries.reserve(globs.size() * std::size(kFills) * (globs.size() <= 8 ? globs.size() : 1));
    for (const std::string& g : globs) {
      for (const char* fill : kFills) tries.push_back(Instance(g, fill));
      if (globs.size() > 8) continue;  // pairs grow quadratically
      for (const std::string& h : globs) {
        if (h == g) continue;
        for (const char* fill : kFills) tries.push_back(Instance(g, Instance(h, fill)));
      }
    }
    std::set<std::vector<bool>> signatures = {std::vector<bool>(globs.size(), false)};
    for (const std::string& t : tries) {
      if (t.empty() || literal.count(t)) continue;
      if (signatures.insert(signature(t)).second) names.push_back(t);
    }
    // The fresh name: no live pattern names it, no glob but `*` and `**`
    // matches it.
    static constexpr const char* kFresh[] = {"x", "y", "z"};
    for (int i = 0; i < 30; ++i) {
      std::string fresh = kFresh[i % 3] + (i < 3 ? std::string() : std::to_string(i / 3));
      if (literal.count(fresh) || signature(fresh) != std::vector<bool>(globs.size(), false)) {
        continue;
      }
      names.push_back(fresh);
      break;
    }
  }
  for (const std::string& name : names) queue->push_back(Child(node, name, literal, other));
}

// True when nothing below the node can differ: both policies decide it by
// the same patterns, and every pattern still to match is in both alike.
bool FsWalk::Alike(const Node& node) const {
  for (size_t r = 0; r < 3; ++r) {
    const FsBest& b = node.best[r * 2];
    const FsBest& a = node.best[r * 2 + 1];
    if (b.pid != a.pid || b.allow != a.allow) return false;
  }
  return std::all_of(node.live.begin(), node.live.end(),
                     [&](Entry e) { return patterns_[Pid(e)].common; });
}

void FsWalk::Run() {
  for (FsPattern& p : patterns_) {
    p.common =
        std::all_of(p.verdict.begin(), p.verdict.end(), [](const auto& v) { return v[0] == v[1]; });
  }
  std::deque<Node> queue;
  Node root;
  root.path = "/";
  for (size_t pid = 0; pid < patterns_.size(); ++pid) Push(static_cast<int>(pid), 0, &root.live);
  queue.push_back(std::move(root));
  while (!queue.empty()) {
    Node node = std::move(queue.front());
    queue.pop_front();
    if (!Settle(&node) || Alike(node)) continue;
    Record(node);
    if (!node.live.empty()) Children(node, &queue);
  }
}

std::vector<Span> FsWalk::Spans(int pid, size_t right, int side) const {
  std::vector<Span> out;
  if (const FsVerdict* v = patterns_[pid].source[right][side]) out = v->rules;
  for (const auto& [p, r, s, v] : more_sources_) {
    if (p == pid && r == right && s == side) {
      out.insert(out.end(), v->rules.begin(), v->rules.end());
    }
  }
  SortSpans(&out);
  return out;
}

void FsWalk::AppendChanges(std::vector<Change>* out) const {
  for (const auto& [key, f] : findings_) {
    const auto& [shown, r, gained] = key;
    std::string example = f.example;
    if (example == home_ || example.rfind(home_ + "/", 0) == 0) {
      example = "~" + example.substr(home_.size());
    }
    std::string line = std::string(gained ? "+ " : "- ") + FsRightName(static_cast<FsRight>(r)) +
                       " " + PathText(shown);
    if (example != shown) line += " (e.g. " + PathText(example) + ")";
    Change c = MakeChange(DiffSection::kFilesystem,
                          gained ? ChangeKind::kWidened : ChangeKind::kNarrowed, std::move(line));
    c.example = example;
    if (f.old_pid >= 0) c.old_rules = Spans(f.old_pid, r, 0);
    if (f.new_pid >= 0) c.new_rules = Spans(f.new_pid, r, 1);
    out->push_back(std::move(c));
  }
}

}  // namespace

void DiffFilesystem(const FileRules& before, const FileRules& after, const std::string& home,
                    std::vector<Change>* out) {
  if (before == after) return;
  FsWalk walk(before, after, home);
  walk.Run();
  walk.AppendChanges(out);
}

}  // namespace ward::ir::diff_internal
