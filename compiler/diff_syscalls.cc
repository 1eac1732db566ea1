// `ward diff`, syscalls section (compiler/diff.h has the line formats).
//
// Architectures compiled for by one policy only give an arch line; a
// changed default gives the default line. Then, per architecture both
// compile for and per syscall either lists, each side's regions (an
// unlisted syscall: one region with the default) become one decision
// diagram over the argument bits whose leaves name the region, and the two
// are overlaid: each leaf of the overlay is a pair of regions, so the calls
// that go from one action to another are read off it, less those both
// policies leave to their default (the default line's). The conditions of
// each such change: diff_syscall_conditions.cc (this file keeps the walks
// over diagrams both use). Lines that say the same on several
// architectures, then for several syscalls, are joined.
#include <string.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "compiler/diff_internal.h"

namespace ward::ir::diff_internal {
namespace {

using Args = std::array<uint64_t, 6>;
using Kind = SysAction::Kind;
using Node = Bdd::Node;

std::string ActionText(const SysAction& a) {
  if (a.kind != Kind::kErrno) return std::string(KindName(a.kind));
  const char* name = strerrorname_np(a.errno_value);
  return "errno " + (name ? std::string(name) : std::to_string(a.errno_value));
}

// By restrictiveness: SysAction::Kind is ordered from allow to kill.
ChangeKind KindOf(const SysAction& before, const SysAction& after) {
  if (before.kind == after.kind) return ChangeKind::kChanged;
  return after.kind > before.kind ? ChangeKind::kNarrowed : ChangeKind::kWidened;
}

// "x86_64 clone(arg0=0x10000000)": the arguments not listed are 0.
std::string CallText(Arch arch, const std::string& name, const Args& args) {
  std::vector<std::string> parts;
  for (int i = 0; i < 6; ++i) {
    if (args[i]) parts.push_back("arg" + std::to_string(i) + "=" + Number(args[i]));
  }
  return std::string(ArchName(arch)) + " " + name + "(" + Join(parts, ", ") + ")";
}

// Whether a set meets a cube, without building nodes: a walk of the set
// restricted to the cube, marking the nodes that do not meet it.
class Walker {
 public:
  Walker(const Bdd& bdd, NodeMarks& marks, const Args& mask, const Args& value)
      : bdd_(bdd), marks_(marks), mask_(mask), value_(value) {
    if (++marks_.generation == 0) {
      marks_.stamp.assign(marks_.stamp.size(), 0);
      marks_.generation = 1;
    }
    if (marks_.stamp.size() < bdd.size()) marks_.stamp.resize(bdd.size(), 0);
  }

  bool Meets(Node n) {
    if (bdd_.IsLeaf(n)) return bdd_.Value(n) != 0;
    if (marks_.stamp[n] == marks_.generation) return false;
    const Bdd::Var v = bdd_.VarOf(n);
    const int arg = static_cast<int>(v / 64);
    const uint64_t bit = uint64_t{1} << (63 - v % 64);
    const bool meets = (mask_[arg] & bit) ? Meets((value_[arg] & bit) ? bdd_.Hi(n) : bdd_.Lo(n))
                                          : Meets(bdd_.Lo(n)) || Meets(bdd_.Hi(n));
    if (!meets) marks_.stamp[n] = marks_.generation;
    return meets;
  }

 private:
  const Bdd& bdd_;
  NodeMarks& marks_;
  const Args& mask_;
  const Args& value_;
};

// The calls of a region: the function that is `leaf` there and 0 elsewhere.
Node RegionNode(Bdd& bdd, const std::vector<ArgTest>& tests, uint64_t leaf) {
  Node n = bdd.Leaf(leaf);
  for (auto t = tests.rbegin(); t != tests.rend(); ++t) {
    for (int bit = 0; bit < 64; ++bit) {
      if (!(t->mask >> bit & 1)) continue;
      const Bdd::Var v = static_cast<Bdd::Var>(t->arg * 64 + 63 - bit);
      n = (t->value >> bit & 1) ? bdd.Make(v, Bdd::kZero, n) : bdd.Make(v, n, Bdd::kZero);
    }
  }
  return n;
}

// The lowering's regions are the paths of its reduced diagram, 0-branch
// first (syscalls.h), so the function that is 1 + the region's index there
// is rebuilt node by node from them, in time linear in their tests. Nullopt
// when the list is not such paths (the caller then joins region by region).
class PathBuilder {
 public:
  PathBuilder(Bdd& bdd, const std::vector<const Region*>& regions) : bdd_(bdd) {
    for (const Region* r : regions) {
      std::vector<std::pair<Bdd::Var, bool>>& steps = paths_.emplace_back();
      for (const ArgTest& t : r->tests) {
        for (int bit = 63; bit >= 0; --bit) {
          if (t.mask >> bit & 1) {
            steps.emplace_back(static_cast<Bdd::Var>(t.arg * 64 + 63 - bit), t.value >> bit & 1);
          }
        }
      }
    }
  }

  std::optional<Node> Build() {
    if (paths_.empty()) return std::nullopt;
    const Node f = Build(0, paths_.size(), 0);
    return ok_ ? std::optional(f) : std::nullopt;
  }

 private:
  // The paths [b, e) agree on their first `depth` steps.
  Node Build(size_t b, size_t e, size_t depth) {
    if (!ok_) return Bdd::kZero;
    if (e - b == 1 && paths_[b].size() == depth) return bdd_.Leaf(b + 1);
    if (paths_[b].size() <= depth) return Fail();
    const Bdd::Var v = paths_[b][depth].first;
    size_t m = b;
    while (m < e && At(m, depth) == std::pair(v, false)) ++m;
    if (m == b || m == e) return Fail();
    for (size_t k = m; k < e; ++k) {
      if (At(k, depth) != std::pair(v, true)) return Fail();
    }
    const Node lo = Build(b, m, depth + 1);
    const Node hi = Build(m, e, depth + 1);
    return bdd_.Make(v, lo, hi);
  }

  std::pair<Bdd::Var, bool> At(size_t path, size_t depth) const {
    if (paths_[path].size() <= depth) return {UINT32_MAX, false};
    return paths_[path][depth];
  }

  Node Fail() {
    ok_ = false;
    return Bdd::kZero;
  }

  Bdd& bdd_;
  std::vector<std::vector<std::pair<Bdd::Var, bool>>> paths_;
  bool ok_ = true;
};

std::optional<Node> PathFunction(Bdd& bdd, const std::vector<const Region*>& regions) {
  return PathBuilder(bdd, regions).Build();
}

// The distinct leaf values of a diagram, 0-branch first.
std::vector<uint64_t> Leaves(const Bdd& bdd, Node root) {
  std::vector<uint64_t> out;
  std::unordered_set<Node> seen;
  std::vector<Node> stack = {root};
  while (!stack.empty()) {
    const Node n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (bdd.IsLeaf(n)) {
      out.push_back(bdd.Value(n));
      continue;
    }
    stack.push_back(bdd.Hi(n));
    stack.push_back(bdd.Lo(n));
  }
  return out;
}

// One policy's side of the comparison.
struct Side {
  const SyscallRules& rules;
  Region absent;  // an unlisted syscall: the default everywhere

  explicit Side(const SyscallRules& r) : rules(r), absent{{}, r.default_action, {}} {}

  bool Compiles(Arch arch) const {
    return std::find(rules.arches.begin(), rules.arches.end(), arch) != rules.arches.end();
  }
  const std::map<std::string, std::vector<Region>>* Listed(Arch arch) const {
    auto it = rules.syscalls.find(arch);
    return it == rules.syscalls.end() ? nullptr : &it->second;
  }
  bool Lists(Arch arch, const std::string& name) const {
    const auto* listed = Listed(arch);
    return listed && listed->count(name);
  }
  // The regions of a syscall, the absent one for an unlisted syscall.
  std::vector<const Region*> Regions(Arch arch, const std::string& name) const {
    std::vector<const Region*> out;
    if (const auto* listed = Listed(arch)) {
      auto it = listed->find(name);
      if (it != listed->end()) {
        for (const Region& r : it->second) out.push_back(&r);
      }
    }
    if (out.empty()) out.push_back(&absent);
    return out;
  }
  // No rule reaches the region: the default decides it.
  bool ByDefault(const Region& r) const {
    return r.rules.empty() && r.action == rules.default_action;
  }
  // The spans behind a region's action: its rules, else the `default` when
  // it gives that action (not a bypass class's fallback, which has none).
  void Cite(const Region& r, std::vector<Span>* out) const {
    if (!r.rules.empty()) {
      out->insert(out->end(), r.rules.begin(), r.rules.end());
    } else if (r.action == rules.default_action && rules.default_span.valid()) {
      out->push_back(rules.default_span);
    }
  }
};

// A line of one syscall on one architecture, before the lines that say the
// same are joined.
struct SysLine {
  std::string name;
  Arch arch;
  int first_arg;     // the first argument the condition tests; -1: none
  std::string rest;  // after the name: " if CONDITION: BEFORE -> AFTER"
  Args witness;
  Change change;
};

using ActionKey = std::tuple<int, int, int, int>;

ActionKey KeyOf(const SysAction& before, const SysAction& after) {
  return {static_cast<int>(before.kind), before.errno_value, static_cast<int>(after.kind),
          after.errno_value};
}

class SyscallDiff {
 public:
  SyscallDiff(const SyscallRules& before, const SyscallRules& after)
      : before_(before), after_(after) {}

  void Run(std::vector<Change>* out) {
    std::vector<Change> arch_lines;
    for (Arch arch : AllArches()) {
      const bool was = before_.Compiles(arch), is = after_.Compiles(arch);
      if (was != is) {
        ArchLine(arch, is, &arch_lines);
      } else if (was) {
        CompareArch(arch);
      }
    }
    out->insert(out->end(), arch_lines.begin(), arch_lines.end());
    DefaultLine(out);
    JoinLines(out);
  }

 private:
  // A call on `arch` that the side does not kill.
  std::optional<std::pair<std::string, Args>> Unkilled(const Side& side, Arch arch) const {
    if (side.rules.default_action.kind != Kind::kKill) {
      if (std::optional<std::string> name = Unlisted(arch)) return std::pair(*name, Args{});
    }
    if (const auto* listed = side.Listed(arch)) {
      for (const auto& [name, regions] : *listed) {
        for (const Region& r : regions) {
          if (r.action.kind == Kind::kKill) continue;
          Args args{};
          for (const ArgTest& t : r.tests) args[t.arg] = t.value;
          return std::pair(name, args);
        }
      }
    }
    return std::nullopt;
  }

  // The first syscall of `arch`, by name, that neither policy lists there.
  std::optional<std::string> Unlisted(Arch arch) const {
    for (const std::string& name : AllSyscallNames()) {
      if (SyscallNumber(arch, name) && !before_.Lists(arch, name) && !after_.Lists(arch, name)) {
        return name;
      }
    }
    return std::nullopt;
  }

  void ArchLine(Arch arch, bool gained, std::vector<Change>* out) const {
    std::optional<std::pair<std::string, Args>> call = Unkilled(gained ? after_ : before_, arch);
    if (!call) return;  // killed everywhere there: nothing changed
    Change c =
        MakeChange(DiffSection::kSyscalls, gained ? ChangeKind::kWidened : ChangeKind::kNarrowed,
                   std::string(gained ? "+ arch " : "- arch ") + std::string(ArchName(arch)));
    c.example = CallText(arch, call->first, call->second);
    out->push_back(std::move(c));
  }

  void DefaultLine(std::vector<Change>* out) {
    const SysAction& was = before_.rules.default_action;
    const SysAction& is = after_.rules.default_action;
    if (was == is) return;
    std::optional<std::string> example;
    for (Arch arch : before_.rules.arches) {
      if (!after_.Compiles(arch)) continue;
      if (std::optional<std::string> name = Unlisted(arch)) {
        example = CallText(arch, *name, {});
        break;
      }
    }
    if (!example) example = default_witness_;
    if (!example) return;  // no call is left to the default by both
    Change c = MakeChange(DiffSection::kSyscalls, KindOf(was, is),
                          "~ syscalls default: " + ActionText(was) + " -> " + ActionText(is));
    if (before_.rules.default_span.valid()) c.old_rules.push_back(before_.rules.default_span);
    if (after_.rules.default_span.valid()) c.new_rules.push_back(after_.rules.default_span);
    c.example = *example;
    out->push_back(std::move(c));
  }

  void CompareArch(Arch arch) {
    std::set<std::string> names;
    for (const Side* side : {&before_, &after_}) {
      if (const auto* listed = side->Listed(arch)) {
        for (const auto& [name, regions] : *listed) names.insert(name);
      }
    }
    for (const std::string& name : names) CompareSyscall(arch, name);
  }

  // A side's regions as one function: 1 + the region's index.
  Node Function(const std::vector<const Region*>& regions) {
    if (std::optional<Node> f = PathFunction(bdd_, regions)) return *f;
    Node f = Bdd::kZero;
    for (size_t i = 0; i < regions.size(); ++i) {
      f = bdd_.Max(f, RegionNode(bdd_, regions[i]->tests, i + 1));
    }
    return f;
  }

  void CompareSyscall(Arch arch, const std::string& name) {
    const std::vector<const Region*> olds = before_.Regions(arch, name);
    const std::vector<const Region*> news = after_.Regions(arch, name);
    if (std::equal(olds.begin(), olds.end(), news.begin(), news.end(),
                   [](const Region* x, const Region* y) { return *x == *y; })) {
      return;
    }
    // Leaves: (old region + 1) << 32 | (new region + 1).
    const Node pairs =
        bdd_.Join(bdd_.MapLeaves(Function(olds), [](uint64_t x) -> uint64_t { return x << 32; }),
                  Function(news), [](uint64_t x, uint64_t y) { return x | y; });
    std::map<ActionKey, std::set<uint64_t>> changes;
    for (uint64_t leaf : Leaves(bdd_, pairs)) {
      const Region& o = *olds[(leaf >> 32) - 1];
      const Region& n = *news[(leaf & 0xffffffff) - 1];
      if (o.action == n.action) continue;
      if (!before_.ByDefault(o) || !after_.ByDefault(n)) {
        changes[KeyOf(o.action, n.action)].insert(leaf);
      } else if (!default_witness_) {
        default_witness_ = CallText(arch, name, FirstCall(bdd_, Select(pairs, {leaf})));
      }
    }
    for (const auto& [key, leaves] : changes) {
      AddLines(arch, name, olds, news, leaves, Select(pairs, leaves));
    }
  }

  // 1 where the overlay has one of `leaves`.
  Node Select(Node pairs, const std::set<uint64_t>& leaves) {
    return bdd_.MapLeaves(pairs, [&](uint64_t x) -> uint64_t { return leaves.count(x); });
  }

  void AddLines(Arch arch, const std::string& name, const std::vector<const Region*>& olds,
                const std::vector<const Region*>& news, const std::set<uint64_t>& leaves,
                Node calls) {
    const SysAction& was = olds[(*leaves.begin() >> 32) - 1]->action;
    const SysAction& is = news[(*leaves.begin() & 0xffffffff) - 1]->action;
    std::set<size_t> old_regions, new_regions;
    for (uint64_t leaf : leaves) {
      old_regions.insert((leaf >> 32) - 1);
      new_regions.insert((leaf & 0xffffffff) - 1);
    }
    for (const CallCondition& c : DescribeCalls(bdd_, marks_, calls, arch, name)) {
      std::string rest = (c.text.empty() ? "" : " if " + c.text) + ": " + ActionText(was) + " -> " +
                         ActionText(is);
      SysLine line{name, arch, c.first_arg, std::move(rest), c.witness, {}};
      line.change = MakeChange(DiffSection::kSyscalls, KindOf(was, is), "");
      // The rules of the regions the line's calls come from and go to.
      for (size_t i : old_regions) {
        if (!Meets(bdd_, marks_, c.calls, olds[i]->tests)) continue;
        before_.Cite(*olds[i], &line.change.old_rules);
      }
      for (size_t i : new_regions) {
        if (!Meets(bdd_, marks_, c.calls, news[i]->tests)) continue;
        after_.Cite(*news[i], &line.change.new_rules);
      }
      line.change.example = CallText(arch, name, c.witness);
      lines_.push_back(std::move(line));
    }
  }

  // One line for the architectures, then the syscalls, that give the same
  // one (`~ syscall x86_64,aarch64 read,write: allow -> kill`), in the order
  // of their first syscall, architecture, argument tested and witness.
  void JoinLines(std::vector<Change>* out) {
    std::stable_sort(lines_.begin(), lines_.end(), [](const SysLine& x, const SysLine& y) {
      return std::tie(x.name, x.arch, x.first_arg, x.witness, x.rest) <
             std::tie(y.name, y.arch, y.first_arg, y.witness, y.rest);
    });
    struct Joined {
      std::vector<std::string> arches, names;
      const std::string* rest;
      Change change;
    };
    auto append = [](const Change& from, Change* into) {
      into->old_rules.insert(into->old_rules.end(), from.old_rules.begin(), from.old_rules.end());
      into->new_rules.insert(into->new_rules.end(), from.new_rules.begin(), from.new_rules.end());
    };
    std::vector<Joined> by_arch;
    std::map<std::pair<std::string, std::string>, size_t> arch_index;  // (name, rest)
    for (SysLine& l : lines_) {
      auto [it, inserted] = arch_index.emplace(std::pair(l.name, l.rest), by_arch.size());
      if (inserted) by_arch.push_back({{}, {l.name}, &l.rest, std::move(l.change)});
      Joined& j = by_arch[it->second];
      j.arches.emplace_back(ArchName(l.arch));
      if (!inserted) append(l.change, &j.change);
    }
    std::vector<Joined> joined;
    std::map<std::pair<std::string, std::string>, size_t> name_index;  // (arches, rest)
    for (Joined& j : by_arch) {
      const std::string arches = Join(j.arches, ",");
      auto [it, inserted] = name_index.emplace(std::pair(arches, *j.rest), joined.size());
      if (inserted) {
        j.arches = {arches};
        joined.push_back(std::move(j));
        continue;
      }
      joined[it->second].names.push_back(j.names[0]);
      append(j.change, &joined[it->second].change);
    }
    for (Joined& j : joined) {
      j.change.line = "~ syscall " + j.arches[0] + " " + Join(j.names, ",") + *j.rest;
      SortSpans(&j.change.old_rules);
      SortSpans(&j.change.new_rules);
      out->push_back(std::move(j.change));
    }
  }

  const Side before_;
  const Side after_;
  Bdd bdd_;
  NodeMarks marks_;
  std::optional<std::string> default_witness_;  // a call both leave to their default
  std::vector<SysLine> lines_;
};

}  // namespace

std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

std::string Number(uint64_t v) { return v < 65536 ? std::to_string(v) : Hex(v); }

bool Meets(const Bdd& bdd, NodeMarks& marks, Node calls, const std::vector<ArgTest>& tests) {
  Args mask{}, value{};
  for (const ArgTest& t : tests) {
    mask[t.arg] = t.mask;
    value[t.arg] = t.value;
  }
  return Walker(bdd, marks, mask, value).Meets(calls);
}

Args FirstCall(const Bdd& bdd, Node n) {
  Args args{};
  while (!bdd.IsLeaf(n)) {
    const bool hi = bdd.Lo(n) == Bdd::kZero;
    const Bdd::Var v = bdd.VarOf(n);
    if (hi) args[v / 64] |= uint64_t{1} << (63 - v % 64);
    n = hi ? bdd.Hi(n) : bdd.Lo(n);
  }
  return args;
}

void DiffSyscalls(const SyscallRules& before, const SyscallRules& after, std::vector<Change>* out) {
  if (before == after) return;
  SyscallDiff(before, after).Run(out);
}

}  // namespace ward::ir::diff_internal
