// `ward diff`, syscalls: a set of calls of one syscall, as conditions on its
// arguments in the policy language's own terms.
//
// The set is a 0/1 decision diagram over the argument bits (arg0 first). It
// is cut into terms, each a conjunction of one set of values per argument:
// after arg0's bits the diagram reaches a few distinct functions of the
// later arguments; each, with the arg0 values that lead to it, starts a
// term, and so on per argument. A term is then widened by dropping an
// argument's set while it stays inside the whole set, and terms the others
// cover are dropped.
//
// An argument's set, and the values it leaves out, are each covered by few
// tests (arg & mask) == value, widened bit by bit while they stay inside.
// The set is written as the cheapest of: its one test (`== V`, `& M == V`,
// or as a range `< V`, `>= V`), the values of its tests (`in [..]`, up to
// 16), one range, the values left out (`not in [..]`), or each test left
// out negated (`!= V`, `& M != V`, or the range beyond it; up to 4). A set
// none of these writes splits the term: one line per range, else per test.
#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/diff_internal.h"

namespace ward::ir::diff_internal {
namespace {

using Node = Bdd::Node;
using Args = std::array<uint64_t, 6>;

constexpr size_t kMaxTerms = 64;       // past this, one term per path
constexpr size_t kMaxListValues = 16;  // `in [..]`
constexpr size_t kMaxNegatedTests = 4;
constexpr size_t kMaxCoverTests = 64;  // past this, the paths as they are

Bdd::Var End(int arg) { return static_cast<Bdd::Var>((arg + 1) * 64); }

int ArgOf(Bdd::Var v) { return static_cast<int>(v / 64); }
int BitOf(Bdd::Var v) { return 63 - static_cast<int>(v % 64); }

Node Not(Bdd& bdd, Node n) {
  return bdd.MapLeaves(n, [](uint64_t x) -> uint64_t { return x ? 0 : 1; });
}

bool Inside(Bdd& bdd, Node a, Node b) { return bdd.Min(a, Not(bdd, b)) == Bdd::kZero; }

// ---- one argument's set -----------------------------------------------------

// One argument's test: (arg & mask) == value.
struct Test {
  uint64_t mask = 0;
  uint64_t value = 0;
  auto operator<=>(const Test&) const = default;
};

// Whether some value of argument i that the test holds for is in the set.
bool Meets(const Bdd& bdd, NodeMarks& marks, Node set, int i, const Test& t) {
  return Meets(bdd, marks, set, {ArgTest{i, t.mask, t.value}});
}

Node TestSet(Bdd& bdd, int i, const Test& t) {
  Node n = Bdd::kOne;
  for (int bit = 0; bit < 64; ++bit) {
    if (!(t.mask >> bit & 1)) continue;
    const Bdd::Var v = static_cast<Bdd::Var>(i * 64 + 63 - bit);
    n = (t.value >> bit & 1) ? bdd.Make(v, Bdd::kZero, n) : bdd.Make(v, n, Bdd::kZero);
  }
  return n;
}

// The paths of a one-argument set to `leaf` (1: its values, 0: the rest)
// as tests: disjoint.
std::vector<Test> Paths(const Bdd& bdd, Node set, uint64_t leaf) {
  std::vector<Test> tests;
  bdd.ForEachPath(set, [&](const std::vector<std::pair<Bdd::Var, bool>>& path, uint64_t value) {
    if (value != leaf) return;
    Test t;
    for (auto [var, bit] : path) {
      t.mask |= uint64_t{1} << BitOf(var);
      if (bit) t.value |= uint64_t{1} << BitOf(var);
    }
    tests.push_back(t);
  });
  return tests;
}

// Few tests covering the same values: each path widened bit by bit, from
// the most significant, while it stays inside; then those the others cover
// dropped (widest kept first). Tests may overlap.
std::vector<Test> Cover(Bdd& bdd, NodeMarks& marks, Node set, int i, uint64_t leaf) {
  std::vector<Test> tests = Paths(bdd, set, leaf);
  if (tests.size() > kMaxCoverTests) return tests;
  const Node outside = leaf ? Not(bdd, set) : set;
  for (Test& t : tests) {
    for (uint64_t m = t.mask; m;) {
      const uint64_t bit = uint64_t{1} << (63 - std::countl_zero(m));
      m &= ~bit;
      // t is inside, so t without the bit is when its twin (the bit
      // flipped) is: a walk of as few nodes as t fixes bits.
      if (!Meets(bdd, marks, outside, i, {t.mask, t.value ^ bit})) {
        t = {t.mask & ~bit, t.value & ~bit};
      }
    }
  }
  std::sort(tests.begin(), tests.end(), [](const Test& a, const Test& b) {
    return std::pair(std::popcount(a.mask), a) < std::pair(std::popcount(b.mask), b);
  });
  std::vector<Test> kept;
  Node covered = Bdd::kZero;
  for (const Test& t : tests) {
    const Node n = TestSet(bdd, i, t);
    if (Inside(bdd, n, covered)) continue;
    covered = bdd.Max(covered, n);
    kept.push_back(t);
  }
  std::sort(kept.begin(), kept.end(), [](const Test& a, const Test& b) {
    return std::pair(a.value, a.mask) < std::pair(b.value, b.mask);
  });
  return kept;
}

// How the kernel reads one syscall's parameters on one architecture.
class Params {
 public:
  Params(Arch arch, const std::string& name) {
    width_.fill(~uint64_t{0});
    signed_.fill(false);
    std::optional<std::vector<std::string>> signature = SyscallSignature(name);
    if (!signature) return;
    for (size_t i = 0; i < signature->size() && i < 6; ++i) {
      ParamType t = ClassifyParam((*signature)[i], arch);
      if (t.kind != ParamKind::kScalar || t.bits <= 0) continue;
      if (t.bits < 64) width_[i] = (uint64_t{1} << t.bits) - 1;
      signed_[i] = t.is_signed;
    }
  }

  uint64_t Width(int i) const { return width_[i]; }
  // Bits to their place in the parameter's order (signed for a signed
  // parameter) mapped onto 0..Width, and back: the sign bit flipped.
  uint64_t Order(int i, uint64_t bits) const { return bits ^ Flip(i); }

  // The test as a range of the parameter's order (signed for a signed
  // parameter), as [lo, hi] of that order mapped onto 0..Width: when its
  // free bits are the lowest ones.
  std::optional<std::pair<uint64_t, uint64_t>> Range(int i, const Test& t) const {
    const uint64_t free = width_[i] & ~t.mask;
    if (free & (free + 1)) return std::nullopt;
    const uint64_t lo = t.value ^ (t.mask & Flip(i));
    return std::pair(lo, lo | free);
  }

  // A bound of that order as the policy would write it.
  std::string Bound(int i, uint64_t ordered) const {
    const uint64_t bits = ordered ^ Flip(i);
    if (!(bits & Flip(i))) return Number(bits);
    return "-" + std::to_string((~bits & width_[i]) + 1);
  }

 private:
  // The sign bit of a signed parameter, else 0: XOR with it maps the
  // parameter's order onto the unsigned order of its bits.
  uint64_t Flip(int i) const { return signed_[i] ? (width_[i] >> 1) + 1 : 0; }

  Args width_;
  std::array<bool, 6> signed_;
};

std::string Arg(int i) { return "arg" + std::to_string(i); }

// One way to write (part of) an argument's set: its atoms, joined by ` and `.
using Atoms = std::vector<std::string>;

size_t Length(const Atoms& atoms) {
  size_t n = 0;
  for (const std::string& a : atoms) n += a.size() + 5;
  return n;
}

// Writes tests of one argument.
class Writer {
 public:
  Writer(int i, const Params& params) : i_(i), params_(params) {}

  // `arg0 == 5`, `arg0 & 0xf0 == 0x10`, or the range: the shorter.
  Atoms Positive(const Test& t) const {
    Atoms test = {TestText(t, false)};
    if (auto r = params_.Range(i_, t)) {
      Atoms range = RangeAtoms(*r);
      if (Length(range) < Length(test)) return range;
    }
    return test;
  }

  // What the test leaves out: `arg0 != 5`, `arg0 & 0xf0 != 0x10`, or the
  // range beyond it when it starts or ends the order.
  std::string Negative(const Test& t) const {
    if (auto r = params_.Range(i_, t)) {
      if (r->first == 0) return Arg(i_) + " >= " + params_.Bound(i_, r->second + 1);
      if (r->second == params_.Width(i_)) return Arg(i_) + " < " + params_.Bound(i_, r->first);
    }
    return TestText(t, true);
  }

  // The values of the tests as `in [..]` (or `not in`), when there are
  // 2 to kMaxListValues of them.
  std::optional<std::string> List(const std::vector<Test>& tests, bool negated) const {
    std::set<uint64_t> values;
    for (const Test& t : tests) {
      const uint64_t free = params_.Width(i_) & ~t.mask;
      if (std::popcount(free) > 4) return std::nullopt;
      for (uint64_t sub = free;; sub = (sub - 1) & free) {
        values.insert(t.value | sub);
        if (!sub) break;
      }
      if (values.size() > kMaxListValues) return std::nullopt;
    }
    if (values.size() < 2) return std::nullopt;
    std::vector<std::string> parts;
    for (uint64_t v : values) parts.push_back(Number(v));
    return Arg(i_) + (negated ? " not in [" : " in [") + Join(parts, ", ") + "]";
  }

  // The tests as ranges of the parameter's order, overlapping and adjacent
  // ones joined, when each is one.
  std::optional<std::vector<std::pair<uint64_t, uint64_t>>> Ranges(
      const std::vector<Test>& tests) const {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const Test& t : tests) {
      std::optional<std::pair<uint64_t, uint64_t>> r = params_.Range(i_, t);
      if (!r) return std::nullopt;
      ranges.push_back(*r);
    }
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<uint64_t, uint64_t>> joined;
    for (const auto& r : ranges) {
      if (!joined.empty() && r.first <= joined.back().second + 1) {
        joined.back().second = std::max(joined.back().second, r.second);
      } else {
        joined.push_back(r);
      }
    }
    return joined;
  }

  Atoms RangeAtoms(std::pair<uint64_t, uint64_t> r) const {
    const std::string lo = Arg(i_) + " >= " + params_.Bound(i_, r.first);
    if (r.second == params_.Width(i_)) return {lo};
    const std::string hi = Arg(i_) + " < " + params_.Bound(i_, r.second + 1);
    if (r.first == 0) return {hi};
    return {lo, hi};
  }

 private:
  std::string TestText(const Test& t, bool negated) const {
    const char* op = negated ? " != " : " == ";
    if (t.mask == params_.Width(i_)) return Arg(i_) + op + Number(t.value);
    return Arg(i_) + " & " + Hex(t.mask) + op + Hex(t.value);
  }

  int i_;
  const Params& params_;
};

// One part of an argument's set and how to write it.
struct Piece {
  Node set;
  Atoms atoms;
};

// A way to write a set: its parts (each the union of its tests; none: the
// whole set), and its cost: the length of its lines, more for each line
// past the first, and a little more for a negation or a range so that in a
// near tie the plainer way wins.
struct Way {
  std::vector<std::pair<std::vector<Test>, Atoms>> parts;
  size_t cost = 0;
};

constexpr size_t kLineCost = 40;
constexpr size_t kIndirectCost = 10;

bool Overlap(const Test& a, const Test& b) { return ((a.value ^ b.value) & a.mask & b.mask) == 0; }

// The smallest test holding every path.
Test Supercube(const std::vector<Test>& paths) {
  Test c = paths[0];
  for (const Test& p : paths) {
    c.mask &= p.mask & ~(c.value ^ p.value);
    c.value &= c.mask;
  }
  return c;
}

// The tests (ranges of the parameter's order) that make up [lo, hi] of
// that order, largest aligned blocks first.
std::vector<Test> RangeTests(int i, uint64_t lo, uint64_t hi, const Params& params) {
  std::vector<Test> out;
  const uint64_t width = params.Width(i);
  for (;;) {
    uint64_t size = 1;  // the block: size values from lo, a power of two
    while (size <= (width >> 1) && !(lo & (2 * size - 1)) && lo + (2 * size - 1) <= hi) size *= 2;
    const uint64_t mask = width & ~(size - 1);
    out.push_back({mask, params.Order(i, lo) & mask});
    if (lo + (size - 1) >= hi) break;
    lo += size;
  }
  return out;
}

// The least or greatest value of a set in the parameter's order.
uint64_t Extreme(const Bdd& bdd, Node set, int i, const Params& params, bool greatest) {
  uint64_t bits = 0;
  Node n = set;
  const uint64_t sign = params.Order(i, 0);
  for (int bit = 63; bit >= 0; --bit) {
    const uint64_t b = uint64_t{1} << bit;
    if (!(params.Width(i) & b)) continue;
    const bool want = greatest != ((sign & b) != 0);  // the sign bit orders the other way
    const Bdd::Var v = static_cast<Bdd::Var>(i * 64 + 63 - bit);
    bool take = want;
    if (!bdd.IsLeaf(n) && bdd.VarOf(n) == v) {
      if ((want ? bdd.Hi(n) : bdd.Lo(n)) == Bdd::kZero) take = !want;
      n = take ? bdd.Hi(n) : bdd.Lo(n);
    }
    if (take) bits |= b;
  }
  return params.Order(i, bits);
}

// An argument's set (not every value), written the cheapest way: one test,
// a list, a container (everything, the smallest test or range holding the
// set) less up to kMaxNegatedTests tests or a `not in [..]`; or in several
// pieces, one per range or test.
std::vector<Piece> Write(Bdd& bdd, NodeMarks& marks, Node set, int i, const Params& params) {
  const Writer w(i, params);
  const std::vector<Test> paths = Paths(bdd, set, 1);
  const std::vector<Test> in = Cover(bdd, marks, set, i, 1);
  const std::vector<Test> holes = Cover(bdd, marks, set, i, 0);
  std::vector<Way> ways;
  auto one = [&](Atoms atoms, size_t extra) {
    const size_t cost = Length(atoms) + extra;
    ways.push_back({{{{}, std::move(atoms)}}, cost});
  };
  if (in.size() == 1) one(w.Positive(in[0]), 0);
  if (std::optional<std::string> list = w.List(in, false)) one({*list}, 0);
  // Containers (as tests), each less the holes that meet it: the holes
  // cover every value outside the set, so those cover what the container
  // holds beyond it.
  std::vector<std::pair<Atoms, std::vector<Test>>> containers = {{{}, {Test{}}}};
  if (const Test cube = Supercube(paths); cube.mask) {
    containers.push_back({w.Positive(cube), {cube}});
  }
  const uint64_t lo = Extreme(bdd, set, i, params, false);
  const uint64_t hi = Extreme(bdd, set, i, params, true);
  if (lo != 0 || hi != params.Width(i)) {
    containers.push_back({w.RangeAtoms({lo, hi}), RangeTests(i, lo, hi, params)});
  }
  for (const auto& [atoms, container] : containers) {
    std::vector<Test> meet;
    for (const Test& h : holes) {
      if (meet.size() > kMaxListValues) break;
      if (std::any_of(container.begin(), container.end(),
                      [&](const Test& c) { return Overlap(c, h); })) {
        meet.push_back(h);
      }
    }
    Atoms negated = atoms;
    if (std::optional<std::string> list = w.List(meet, true)) {
      negated.push_back(*list);
    } else if (meet.size() <= kMaxNegatedTests) {
      for (const Test& h : meet) negated.push_back(w.Negative(h));
    } else {
      continue;
    }
    if (!negated.empty()) one(negated, kIndirectCost);
  }
  // In pieces: the ranges among the paths joined, and the tests that hold
  // the other values.
  std::vector<Test> ranged, other;
  for (const Test& t : paths) (params.Range(i, t) ? ranged : other).push_back(t);
  Way split;
  if (std::optional<std::vector<std::pair<uint64_t, uint64_t>>> ranges = w.Ranges(ranged)) {
    for (const auto& r : *ranges) {
      Atoms atoms = w.RangeAtoms(r);
      split.cost += Length(atoms) + kIndirectCost + kLineCost;
      split.parts.push_back({RangeTests(i, r.first, r.second, params), atoms});
    }
  }
  for (const Test& t : in) {
    if (std::none_of(other.begin(), other.end(), [&](const Test& o) { return Overlap(o, t); })) {
      continue;
    }
    Atoms atoms = w.Positive(t);
    split.cost += Length(atoms) + kLineCost;
    split.parts.push_back({{t}, atoms});
  }
  ways.push_back(std::move(split));
  const Way& best = *std::min_element(ways.begin(), ways.end(),
                                      [](const Way& a, const Way& b) { return a.cost < b.cost; });
  std::vector<Piece> pieces;
  for (const auto& [tests, atoms] : best.parts) {
    Node part = tests.empty() ? set : Bdd::kZero;
    for (const Test& t : tests) part = bdd.Max(part, TestSet(bdd, i, t));
    pieces.push_back({part, atoms});
  }
  return pieces;
}

// ---- terms ----------------------------------------------------------------

// Per argument, a set of its values (kOne: any).
using Term = std::array<Node, 6>;

class Terms {
 public:
  Terms(Bdd& bdd, Node calls) : bdd_(bdd), calls_(calls) {}

  std::vector<Term> Find() {
    Term all;
    all.fill(Bdd::kOne);
    Cut(calls_, 0, all);
    if (terms_.size() > kMaxTerms) OnePerPath();
    Widen();
    return terms_;
  }

  Node Calls(const Term& t) {
    Node n = Bdd::kOne;
    for (Node s : t) n = bdd_.Min(n, s);
    return n;
  }

 private:
  void Cut(Node g, int arg, Term prefix) {
    if (g == Bdd::kZero || terms_.size() > kMaxTerms) return;
    if (arg == 6 || g == Bdd::kOne) {
      terms_.push_back(prefix);
      return;
    }
    if (bdd_.IsLeaf(g) || bdd_.VarOf(g) >= End(arg)) return Cut(g, arg + 1, prefix);
    std::vector<Node> residuals;
    std::unordered_set<Node> seen;
    std::function<void(Node)> walk = [&](Node n) {
      if (!seen.insert(n).second) return;
      if (bdd_.IsLeaf(n) || bdd_.VarOf(n) >= End(arg)) {
        residuals.push_back(n);
        return;
      }
      walk(bdd_.Lo(n));
      walk(bdd_.Hi(n));
    };
    walk(g);
    for (Node r : residuals) {
      if (r == Bdd::kZero) continue;
      prefix[arg] = Leading(g, arg, r);
      Cut(r, arg + 1, prefix);
    }
  }

  // The values of `arg` that lead g to r.
  Node Leading(Node g, int arg, Node r) {
    std::unordered_map<Node, Node> memo;
    std::function<Node(Node)> select = [&](Node n) -> Node {
      if (bdd_.IsLeaf(n) || bdd_.VarOf(n) >= End(arg)) return n == r ? Bdd::kOne : Bdd::kZero;
      if (auto it = memo.find(n); it != memo.end()) return it->second;
      const Node lo = select(bdd_.Lo(n)), hi = select(bdd_.Hi(n));
      return memo[n] = bdd_.Make(bdd_.VarOf(n), lo, hi);
    };
    return select(g);
  }

  // Too many terms: one per path, each a cube.
  void OnePerPath() {
    terms_.clear();
    std::vector<std::vector<std::pair<Bdd::Var, bool>>> paths;
    bdd_.ForEachPath(calls_, [&](const std::vector<std::pair<Bdd::Var, bool>>& path, uint64_t v) {
      if (v) paths.push_back(path);
    });
    for (const auto& path : paths) {
      Term t;
      t.fill(Bdd::kOne);
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        Node& s = t[ArgOf(it->first)];
        s = it->second ? bdd_.Make(it->first, Bdd::kZero, s) : bdd_.Make(it->first, s, Bdd::kZero);
      }
      terms_.push_back(t);
    }
  }

  // Drops each argument's set while the term stays inside the calls, then
  // the terms that others cover (those testing fewer arguments kept first).
  void Widen() {
    for (Term& t : terms_) {
      for (Node& s : t) {
        if (s == Bdd::kOne) continue;
        const Node was = s;
        s = Bdd::kOne;
        if (!Inside(bdd_, Calls(t), calls_)) s = was;
      }
    }
    auto tested = [](const Term& t) {
      return std::count_if(t.begin(), t.end(), [](Node s) { return s != Bdd::kOne; });
    };
    std::stable_sort(terms_.begin(), terms_.end(),
                     [&](const Term& a, const Term& b) { return tested(a) < tested(b); });
    std::vector<Term> kept;
    Node covered = Bdd::kZero;
    for (const Term& t : terms_) {
      const Node c = Calls(t);
      if (Inside(bdd_, c, covered)) continue;
      covered = bdd_.Max(covered, c);
      kept.push_back(t);
    }
    terms_ = std::move(kept);
  }

  Bdd& bdd_;
  const Node calls_;
  std::vector<Term> terms_;
};

}  // namespace

std::vector<CallCondition> DescribeCalls(Bdd& bdd, NodeMarks& marks, Node calls, Arch arch,
                                         const std::string& name) {
  const Params params(arch, name);
  Terms terms(bdd, calls);
  std::vector<CallCondition> out;
  for (const Term& t : terms.Find()) {
    // Each argument's pieces; the term's lines are their combinations.
    std::vector<CallCondition> lines = {{"", Bdd::kOne, {}, -1}};
    for (int i = 0; i < 6; ++i) {
      if (t[i] == Bdd::kOne) continue;
      std::vector<CallCondition> next;
      for (const Piece& p : Write(bdd, marks, t[i], i, params)) {
        for (const CallCondition& l : lines) {
          CallCondition c = l;
          c.text += (c.text.empty() ? "" : " and ") + Join(p.atoms, " and ");
          c.calls = bdd.Min(c.calls, p.set);
          if (c.first_arg < 0) c.first_arg = i;
          next.push_back(std::move(c));
        }
      }
      lines = std::move(next);
    }
    for (CallCondition& l : lines) {
      l.witness = FirstCall(bdd, l.calls);
      out.push_back(std::move(l));
    }
  }
  return out;
}

}  // namespace ward::ir::diff_internal
