// A store of multi-terminal reduced ordered binary decision diagrams: each
// node tests one boolean variable, each leaf holds a 64-bit value. Nodes are
// hash-consed and reduced, so within one store a function has exactly one
// node whatever the order of the operations that built it: equal functions
// are equal node numbers.
//
// Variables are numbered; a smaller number sits closer to the root. Leaf
// values are opaque to the store except that Max and Min compare them as
// unsigned integers (0 and 1 make boolean functions: Max is `or`, Min `and`).
//
// Callbacks passed to an operation may read the store (Value, Lo, ...) but
// must not start another operation on it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace ward::ir {

class Bdd {
 public:
  using Node = uint32_t;
  using Var = uint32_t;
  static constexpr Node kZero = 0;  // Leaf(0), made by the constructor
  static constexpr Node kOne = 1;   // Leaf(1), likewise

  Bdd();

  // The constant function `value`.
  Node Leaf(uint64_t value);
  // The function "if `var` then `hi` else `lo`"; `lo` itself when both are
  // equal. `var` must be smaller than every variable tested in lo and hi.
  Node Make(Var var, Node lo, Node hi);

  bool IsLeaf(Node n) const { return nodes_[n].var == kLeafVar; }
  uint64_t Value(Node n) const;                      // a leaf's value
  Var VarOf(Node n) const { return nodes_[n].var; }  // not for leaves
  Node Lo(Node n) const { return nodes_[n].lo; }
  Node Hi(Node n) const { return nodes_[n].hi; }
  size_t size() const { return nodes_.size(); }

  // Pointwise maximum and minimum of the leaf values.
  Node Max(Node a, Node b);
  Node Min(Node a, Node b);
  // Pointwise join(x, y) of the leaf values. join must be commutative,
  // associative and idempotent, with 0 as its identity.
  using JoinFn = std::function<uint64_t(uint64_t, uint64_t)>;
  Node Join(Node a, Node b, const JoinFn& join);
  // Every leaf value v replaced by f(v).
  using MapFn = std::function<uint64_t(uint64_t)>;
  Node MapLeaves(Node n, const MapFn& f);

  // Calls visit(m) once for every distinct node m that an input agreeing
  // with `cube` reaches first among the nodes that are leaves or test a
  // variable after `last`. cube[v] is 0 or 1 for a fixed variable, -1 for a
  // free one; it must cover every variable up to `last`.
  void Frontier(Node n, std::span<const int8_t> cube, Var last,
                const std::function<void(Node)>& visit);

  // The number of paths from n to a leaf, or `limit` if there are more.
  uint64_t CountPaths(Node n, uint32_t limit);

  // Calls visit(path, leaf value) for every path from n to a leaf, 0-branch
  // before 1-branch; path lists the (variable, value) tests taken, root
  // first. The paths of a reduced diagram are pairwise disjoint and together
  // cover every input.
  using PathVisitor = std::function<void(const std::vector<std::pair<Var, bool>>&, uint64_t)>;
  void ForEachPath(Node n, const PathVisitor& visit) const;

 private:
  static constexpr Var kLeafVar = UINT32_MAX;

  struct Entry {
    Var var;
    Node lo, hi;  // a leaf keeps its value in lo (high half) and hi (low half)
    bool operator==(const Entry&) const = default;
  };

  // An open-addressing map from 64-bit keys to 32-bit values for the memo
  // of one operation. Start() forgets every entry without touching them
  // (each carries the number of the operation that wrote it), so a store
  // makes no allocation per operation once its tables have grown.
  class Memo {
   public:
    void Start();
    bool Find(uint64_t key, uint32_t* value) const;
    void Put(uint64_t key, uint32_t value);

   private:
    struct Slot {
      uint64_t key = 0;
      uint32_t value = 0;
      uint32_t operation = 0;  // 0: never written
    };
    void Grow();
    std::vector<Slot> slots_ = std::vector<Slot>(1024);  // a power of two
    size_t used_ = 0;
    uint32_t operation_ = 0;
  };

  Node Intern(const Entry& e);
  void GrowUnique();
  template <typename Op>
  Node Apply(Node a, Node b, const Op& op);
  Node Map(Node n, const MapFn& f);
  void Walk(Node n, std::span<const int8_t> cube, Var last, const std::function<void(Node)>& visit);
  uint32_t Count(Node n, uint32_t limit);
  void Paths(Node n, std::vector<std::pair<Var, bool>>& path, const PathVisitor& visit) const;

  std::vector<Entry> nodes_;
  std::vector<Node> unique_;  // open addressing over nodes_; kNoNode when free
  Memo apply_memo_, map_memo_, walk_memo_;
};

}  // namespace ward::ir
