#include "compiler/bdd.h"

#include <algorithm>

namespace ward::ir {
namespace {

constexpr Bdd::Node kNoNode = UINT32_MAX;

uint64_t Mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

uint64_t HashEntry(uint32_t var, uint32_t lo, uint32_t hi) {
  return Mix((uint64_t{var} << 40) ^ (uint64_t{lo} << 20) ^ hi ^ (uint64_t{hi} << 44));
}

// Max, Min and Join, with the shortcuts that keep combining a large function
// with a small one proportional to the small one: 0 is the identity of Max
// and Join and absorbs Min, and all three are idempotent.
struct MaxOp {
  uint64_t operator()(uint64_t x, uint64_t y) const { return x > y ? x : y; }
  bool Shortcut(Bdd::Node a, Bdd::Node b, Bdd::Node* out) const {
    if (a == b || b == Bdd::kZero) return *out = a, true;
    if (a == Bdd::kZero) return *out = b, true;
    return false;
  }
};

struct MinOp {
  uint64_t operator()(uint64_t x, uint64_t y) const { return x < y ? x : y; }
  bool Shortcut(Bdd::Node a, Bdd::Node b, Bdd::Node* out) const {
    if (a == b) return *out = a, true;
    if (a == Bdd::kZero || b == Bdd::kZero) return *out = Bdd::kZero, true;
    return false;
  }
};

struct JoinOp {
  const Bdd::JoinFn& join;
  uint64_t operator()(uint64_t x, uint64_t y) const { return join(x, y); }
  bool Shortcut(Bdd::Node a, Bdd::Node b, Bdd::Node* out) const {
    return MaxOp{}.Shortcut(a, b, out);
  }
};

}  // namespace

// ---- Memo -------------------------------------------------------------------

void Bdd::Memo::Start() {
  used_ = 0;
  if (++operation_ != 0) return;
  // The counter wrapped: forget the old numbers for real.
  std::fill(slots_.begin(), slots_.end(), Slot{});
  operation_ = 1;
}

bool Bdd::Memo::Find(uint64_t key, uint32_t* value) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Mix(key) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.operation != operation_) return false;
    if (s.key == key) return *value = s.value, true;
  }
}

void Bdd::Memo::Put(uint64_t key, uint32_t value) {
  if (2 * (used_ + 1) > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = Mix(key) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.operation != operation_) {
      s = {key, value, operation_};
      ++used_;
      return;
    }
    if (s.key == key) return;
  }
}

void Bdd::Memo::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  used_ = 0;
  for (const Slot& s : old) {
    if (s.operation == operation_) Put(s.key, s.value);
  }
}

// ---- nodes ------------------------------------------------------------------

Bdd::Bdd() : unique_(4096, kNoNode) {
  Leaf(0);
  Leaf(1);
}

Bdd::Node Bdd::Intern(const Entry& e) {
  const size_t mask = unique_.size() - 1;
  size_t i = HashEntry(e.var, e.lo, e.hi) & mask;
  for (; unique_[i] != kNoNode; i = (i + 1) & mask) {
    if (nodes_[unique_[i]] == e) return unique_[i];
  }
  const Node n = static_cast<Node>(nodes_.size());
  nodes_.push_back(e);
  unique_[i] = n;
  if (2 * nodes_.size() > unique_.size()) GrowUnique();
  return n;
}

void Bdd::GrowUnique() {
  unique_.assign(unique_.size() * 2, kNoNode);
  const size_t mask = unique_.size() - 1;
  for (Node n = 0; n < nodes_.size(); ++n) {
    const Entry& e = nodes_[n];
    size_t i = HashEntry(e.var, e.lo, e.hi) & mask;
    while (unique_[i] != kNoNode) i = (i + 1) & mask;
    unique_[i] = n;
  }
}

Bdd::Node Bdd::Leaf(uint64_t value) {
  return Intern({kLeafVar, static_cast<Node>(value >> 32), static_cast<Node>(value)});
}

Bdd::Node Bdd::Make(Var var, Node lo, Node hi) {
  if (lo == hi) return lo;
  return Intern({var, lo, hi});
}

uint64_t Bdd::Value(Node n) const { return uint64_t{nodes_[n].lo} << 32 | nodes_[n].hi; }

// ---- operations -------------------------------------------------------------

template <typename Op>
Bdd::Node Bdd::Apply(Node a, Node b, const Op& op) {
  Node shortcut;
  if (op.Shortcut(a, b, &shortcut)) return shortcut;
  if (IsLeaf(a) && IsLeaf(b)) return Leaf(op(Value(a), Value(b)));
  if (a > b) std::swap(a, b);  // every operation commutes
  const uint64_t key = uint64_t{a} << 32 | b;
  Node result;
  if (apply_memo_.Find(key, &result)) return result;
  // Leaves carry kLeafVar, the largest number, so v is the top variable.
  const Var v = std::min(VarOf(a), VarOf(b));
  const Node a0 = VarOf(a) == v ? Lo(a) : a, a1 = VarOf(a) == v ? Hi(a) : a;
  const Node b0 = VarOf(b) == v ? Lo(b) : b, b1 = VarOf(b) == v ? Hi(b) : b;
  const Node lo = Apply(a0, b0, op);
  const Node hi = Apply(a1, b1, op);
  result = Make(v, lo, hi);
  apply_memo_.Put(key, result);
  return result;
}

Bdd::Node Bdd::Max(Node a, Node b) {
  apply_memo_.Start();
  return Apply(a, b, MaxOp{});
}

Bdd::Node Bdd::Min(Node a, Node b) {
  apply_memo_.Start();
  return Apply(a, b, MinOp{});
}

Bdd::Node Bdd::Join(Node a, Node b, const JoinFn& join) {
  apply_memo_.Start();
  return Apply(a, b, JoinOp{join});
}

Bdd::Node Bdd::MapLeaves(Node n, const MapFn& f) {
  map_memo_.Start();
  return Map(n, f);
}

Bdd::Node Bdd::Map(Node n, const MapFn& f) {
  if (IsLeaf(n)) return Leaf(f(Value(n)));
  Node result;
  if (map_memo_.Find(n, &result)) return result;
  const Var v = VarOf(n);
  const Node lo = Map(Lo(n), f);
  const Node hi = Map(Hi(n), f);
  result = Make(v, lo, hi);
  map_memo_.Put(n, result);
  return result;
}

void Bdd::Frontier(Node n, std::span<const int8_t> cube, Var last,
                   const std::function<void(Node)>& visit) {
  walk_memo_.Start();
  Walk(n, cube, last, visit);
}

void Bdd::Walk(Node n, std::span<const int8_t> cube, Var last,
               const std::function<void(Node)>& visit) {
  uint32_t seen;
  if (walk_memo_.Find(n, &seen)) return;
  walk_memo_.Put(n, 1);
  if (IsLeaf(n) || VarOf(n) > last) {
    visit(n);
    return;
  }
  const int8_t fixed = cube[VarOf(n)];
  if (fixed != 1) Walk(Lo(n), cube, last, visit);
  if (fixed != 0) Walk(Hi(n), cube, last, visit);
}

uint64_t Bdd::CountPaths(Node n, uint32_t limit) {
  walk_memo_.Start();
  return Count(n, limit);
}

uint32_t Bdd::Count(Node n, uint32_t limit) {
  if (IsLeaf(n)) return 1;
  uint32_t count;
  if (walk_memo_.Find(n, &count)) return count;
  const uint64_t sum = uint64_t{Count(Lo(n), limit)} + Count(Hi(n), limit);
  count = static_cast<uint32_t>(std::min<uint64_t>(limit, sum));
  walk_memo_.Put(n, count);
  return count;
}

void Bdd::Paths(Node n, std::vector<std::pair<Var, bool>>& path, const PathVisitor& visit) const {
  if (IsLeaf(n)) {
    visit(path, Value(n));
    return;
  }
  path.emplace_back(VarOf(n), false);
  Paths(Lo(n), path, visit);
  path.back().second = true;
  Paths(Hi(n), path, visit);
  path.pop_back();
}

void Bdd::ForEachPath(Node n, const PathVisitor& visit) const {
  std::vector<std::pair<Var, bool>> path;
  Paths(n, path, visit);
}

}  // namespace ward::ir
