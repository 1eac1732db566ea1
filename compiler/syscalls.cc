#include "compiler/syscalls.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <unordered_map>

#include "compiler/bdd.h"

namespace ward::ir {
namespace {

using Node = Bdd::Node;

// ---- actions as leaf values ---------------------------------------------
//
// A syscall's action is a function of its argument bits to leaf values: 0
// where no rule matches, else the action's code, its restrictiveness rank
// (bits 16-18) above its errno number, so that the pointwise maximum of two
// functions is precedence rule 2 (most restrictive wins). While rules are
// combined, bits 32-63 also name the set of rules that give that action
// there (provenance); the canonical function keeps only the code.

constexpr uint64_t kNoRule = 0;

int Rank(SysAction::Kind kind) {
  switch (kind) {
    case SysAction::Kind::kAllow:
      return 1;
    case SysAction::Kind::kLog:
      return 2;
    case SysAction::Kind::kNotify:
      return 3;
    case SysAction::Kind::kErrno:
      return 4;
    case SysAction::Kind::kTrap:
      return 5;
    case SysAction::Kind::kKillThread:
      return 6;
    case SysAction::Kind::kKill:
      return 7;
  }
  return 7;
}

uint32_t Encode(const SysAction& a) {
  return static_cast<uint32_t>(Rank(a.kind)) << 16 | static_cast<uint32_t>(a.errno_value & 0xffff);
}

SysAction Decode(uint32_t code) {
  static constexpr SysAction::Kind kByRank[] = {
      SysAction::Kind::kKill,       SysAction::Kind::kAllow, SysAction::Kind::kLog,
      SysAction::Kind::kNotify,     SysAction::Kind::kErrno, SysAction::Kind::kTrap,
      SysAction::Kind::kKillThread, SysAction::Kind::kKill};
  return {kByRank[code >> 16 & 7], static_cast<int>(code & 0xffff)};
}

uint32_t CodeOf(uint64_t leaf) { return static_cast<uint32_t>(leaf); }
uint32_t SetOf(uint64_t leaf) { return static_cast<uint32_t>(leaf >> 32); }
uint64_t Tag(uint32_t set, uint32_t code) { return uint64_t{set} << 32 | code; }

// Interned sets of pool indices (provenance); id 0 is the empty set.
class RuleSets {
 public:
  RuleSets() { Intern({}); }

  uint32_t Single(uint32_t rule) { return Intern({rule}); }

  uint32_t Union(uint32_t a, uint32_t b) {
    if (a == b || b == 0) return a;
    if (a == 0) return b;
    if (a > b) std::swap(a, b);
    const uint64_t key = uint64_t{a} << 32 | b;
    if (auto it = unions_.find(key); it != unions_.end()) return it->second;
    std::vector<uint32_t> u;
    std::set_union(sets_[a].begin(), sets_[a].end(), sets_[b].begin(), sets_[b].end(),
                   std::back_inserter(u));
    const uint32_t id = Intern(std::move(u));
    unions_.emplace(key, id);
    return id;
  }

  const std::vector<uint32_t>& Rules(uint32_t id) const { return sets_[id]; }

 private:
  uint32_t Intern(std::vector<uint32_t> rules) {
    auto [it, inserted] = ids_.emplace(rules, static_cast<uint32_t>(sets_.size()));
    if (inserted) sets_.push_back(std::move(rules));
    return it->second;
  }

  std::vector<std::vector<uint32_t>> sets_;
  std::map<std::vector<uint32_t>, uint32_t> ids_;
  std::unordered_map<uint64_t, uint32_t> unions_;
};

SysAction FromAst(const ast::SysAction& a) {
  switch (a.kind) {
    case ast::ActionKind::kAllow:
      return {SysAction::Kind::kAllow, 0};
    case ast::ActionKind::kErrno:
      return {SysAction::Kind::kErrno, a.errno_value};
    case ast::ActionKind::kKill:
      return {SysAction::Kind::kKill, 0};
    case ast::ActionKind::kKillThread:
      return {SysAction::Kind::kKillThread, 0};
    case ast::ActionKind::kTrap:
      return {SysAction::Kind::kTrap, 0};
    case ast::ActionKind::kLog:
      return {SysAction::Kind::kLog, 0};
    case ast::ActionKind::kNotify:
      return {SysAction::Kind::kNotify, 0};
  }
  return {};
}

// As written, for messages: "errno EPERM".
std::string ActionText(const ast::SysAction& a) {
  std::string kind(KindName(FromAst(a).kind));
  return a.kind == ast::ActionKind::kErrno ? kind + " " + a.errno_text : kind;
}

// ---- sources ------------------------------------------------------------

// The last explicit `arch` in extends order, else x86_64.
std::vector<Arch> EffectiveArches(const std::vector<const ast::Policy*>& sources) {
  std::vector<Arch> arches = {kDefaultArch};
  for (const ast::Policy* p : sources) {
    if (!p->syscalls || p->syscalls->arches.empty()) continue;
    arches.clear();
    for (const ast::Name& n : p->syscalls->arches) {
      if (auto a = ParseArch(n.text)) arches.push_back(*a);
    }
  }
  std::sort(arches.begin(), arches.end());
  arches.erase(std::unique(arches.begin(), arches.end()), arches.end());
  return arches;
}

// The last explicit `default` in extends order; absent everywhere, kill.
const ast::SysAction* EffectiveDefault(const std::vector<const ast::Policy*>& sources) {
  const ast::SysAction* found = nullptr;
  for (const ast::Policy* p : sources) {
    if (p->syscalls && p->syscalls->default_action) found = &*p->syscalls->default_action;
  }
  return found;
}

// Group members, expanded recursively; group names are global.
class GroupExpander {
 public:
  explicit GroupExpander(const Program& program) {
    for (const auto& file : program.files) {
      if (!file) continue;
      for (const ast::Group& g : file->groups) groups_.emplace(g.name.text, &g);
    }
  }

  // The syscalls the group reaches, sorted; empty for an unknown group (and
  // for a cycle, which the checker refused).
  const std::vector<std::string>& Members(const std::string& name) {
    if (auto it = memo_.find(name); it != memo_.end()) return it->second;
    auto group = groups_.find(name);
    if (group == groups_.end() || !open_.insert(name).second) return empty_;
    std::set<std::string> out;
    for (const ast::SysTarget& m : group->second->members) {
      if (!m.is_group) {
        out.insert(m.name);
        continue;
      }
      for (const std::string& s : Members(m.name)) out.insert(s);
    }
    open_.erase(name);
    return memo_[name] = std::vector<std::string>(out.begin(), out.end());
  }

 private:
  std::map<std::string, const ast::Group*> groups_;
  std::map<std::string, std::vector<std::string>> memo_;
  std::set<std::string> open_;
  const std::vector<std::string> empty_;
};

struct Pooled {
  const ast::SysRule* rule;
  const ast::Policy* policy;
};

// How one pooled rule reaches one syscall.
struct Use {
  size_t rule;  // index in the pool
  bool direct;  // named directly (else only through a group)
};

// Per syscall name, the rules that reach it, in pool order, each once.
std::map<std::string, std::vector<Use>> IndexRules(const std::vector<Pooled>& pool,
                                                   GroupExpander& groups) {
  std::map<std::string, std::vector<Use>> index;
  auto add = [&](const std::string& name, size_t rule, bool direct) {
    std::vector<Use>& uses = index[name];
    // Rules arrive in pool order, so a repeat of this rule is the last use.
    if (!uses.empty() && uses.back().rule == rule) {
      uses.back().direct |= direct;
    } else {
      uses.push_back({rule, direct});
    }
  };
  for (size_t i = 0; i < pool.size(); ++i) {
    for (const ast::SysTarget& t : pool[i].rule->targets) {
      if (!t.is_group) {
        add(t.name, i, true);
        continue;
      }
      for (const std::string& name : groups.Members(t.name)) add(name, i, false);
    }
  }
  return index;
}

// ---- conditions as decision diagrams -------------------------------------

// Argument bits as variables: arg0's most significant bit first.
Bdd::Var BitVar(int arg, int bit) { return static_cast<Bdd::Var>(arg * 64 + (63 - bit)); }
constexpr int kVars = 6 * 64;

uint64_t WidthMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// One condition on one parameter as the kernel reads it: its low `bits`
// bits, signed or unsigned. Builders take the leaves for true and false, so
// a negated comparison costs nothing.
class ConditionBuilder {
 public:
  ConditionBuilder(Bdd& bdd, int arg, const ParamType& type)
      : bdd_(bdd), arg_(arg), bits_(type.bits), signed_(type.is_signed) {}

  Node Build(const ast::Condition& c) {
    const Node t = Bdd::kOne, f = Bdd::kZero;
    const uint64_t v = c.values.empty() ? 0 : Truncate(c.values[0].value);
    switch (c.op) {
      case ast::CondOp::kEq:
        return Equal(v, t, f);
      case ast::CondOp::kNe:
        return Equal(v, f, t);
      case ast::CondOp::kLt:
        return Less(v, false, t, f);
      case ast::CondOp::kLe:
        return Less(v, true, t, f);
      case ast::CondOp::kGt:
        return Less(v, true, f, t);
      case ast::CondOp::kGe:
        return Less(v, false, f, t);
      case ast::CondOp::kMaskedEq:
        return MaskedEqual(Truncate(c.mask.value), v, t, f);
      case ast::CondOp::kIn:
        return AnyEqual(c.values, t, f);
      case ast::CondOp::kNotIn:
        return AnyEqual(c.values, f, t);
    }
    return t;
  }

 private:
  uint64_t Truncate(uint64_t v) const { return v & WidthMask(bits_); }

  Node Equal(uint64_t c, Node t, Node f) { return MaskedEqual(WidthMask(bits_), c, t, f); }

  // Built from bit 0 up, so every node's children test lower bits.
  Node MaskedEqual(uint64_t mask, uint64_t c, Node t, Node f) {
    Node node = t;
    for (int bit = 0; bit < bits_; ++bit) {
      if (!(mask >> bit & 1)) continue;
      node = (c >> bit & 1) ? bdd_.Make(BitVar(arg_, bit), f, node)
                            : bdd_.Make(BitVar(arg_, bit), node, f);
    }
    return node;
  }

  // `in`: t where any value is equal (the other leaf is f, for `not in`).
  Node AnyEqual(const std::vector<ast::Expr>& values, Node t, Node f) {
    Node any = Bdd::kZero;
    for (const ast::Expr& e : values) {
      any = bdd_.Max(any, Equal(Truncate(e.value), Bdd::kOne, Bdd::kZero));
    }
    return bdd_.MapLeaves(any, [&](uint64_t x) { return bdd_.Value(x ? t : f); });
  }

  // x < c, or x <= c. Signed: x < c exactly when (x ^ sign) < (c ^ sign)
  // unsigned, so the sign bit's branches swap.
  Node Less(uint64_t c, bool or_equal, Node t, Node f) {
    if (signed_) c ^= uint64_t{1} << (bits_ - 1);
    Node node = or_equal ? t : f;  // every bit equal
    for (int bit = 0; bit < bits_; ++bit) {
      // The branches for this bit of (x ^ sign) being 0 and 1.
      const Node zero = (c >> bit & 1) ? t : node;
      const Node one = (c >> bit & 1) ? node : f;
      const bool flip = signed_ && bit == bits_ - 1;
      node = bdd_.Make(BitVar(arg_, bit), flip ? one : zero, flip ? zero : one);
    }
    return node;
  }

  Bdd& bdd_;
  int arg_;
  int bits_;
  bool signed_;
};

// ---- lowering -------------------------------------------------------------

// A path of argument bits as one (mask, value) test per argument, by arg.
std::vector<ArgTest> TestsOf(const std::vector<std::pair<Bdd::Var, bool>>& path) {
  std::array<uint64_t, 6> mask{}, value{};
  for (auto [var, bit] : path) {
    const int arg = static_cast<int>(var / 64), b = 63 - static_cast<int>(var % 64);
    mask[arg] |= uint64_t{1} << b;
    if (bit) value[arg] |= uint64_t{1} << b;
  }
  std::vector<ArgTest> tests;
  for (int arg = 0; arg < 6; ++arg) {
    if (mask[arg]) tests.push_back({arg, mask[arg], value[arg]});
  }
  return tests;
}

bool LetsRun(const SysAction& a) {
  return a.kind == SysAction::Kind::kAllow || a.kind == SysAction::Kind::kLog;
}

// A rule in effect for one syscall on one architecture.
struct Active {
  size_t rule;
  bool direct;
  Node predicate;  // 1 where it applies (its conditions hold, and rule 1), else 0
  uint32_t code;   // Encode(its action)
};

class Lowerer {
 public:
  Lowerer(const std::vector<Pooled>& pool, uint32_t default_code, std::vector<Conflict>* conflicts)
      : pool_(pool), default_code_(default_code), conflicts_(conflicts) {}

  uint32_t default_code() const { return default_code_; }

  // The regions of one syscall on one architecture; empty when the default
  // decides every call, unless `keep_default` (then one region with the
  // rules behind it). `fallback` decides where no rule applies.
  std::vector<Region> Lower(Arch arch, const std::string& name, const std::vector<Use>& uses,
                            uint32_t fallback, bool keep_default = false) {
    std::vector<Active> active = Activate(arch, name, uses);
    CheckUnconditional(name, active);
    CheckErrnoOverlaps(name, active);
    std::vector<Node> parts;
    for (const Active& a : active) {
      const uint64_t tag = Tag(sets_.Single(static_cast<uint32_t>(a.rule)), a.code);
      parts.push_back(a.predicate == Bdd::kOne ? bdd_.Leaf(tag)
                                               : bdd_.MapLeaves(a.predicate, [&](uint64_t x) {
                                                   return x ? tag : kNoRule;
                                                 }));
    }
    const Node tagged = Combine(parts);
    const Node f = bdd_.MapLeaves(tagged, [&](uint64_t x) -> uint64_t {
      return CodeOf(x) == kNoRule ? fallback : CodeOf(x);
    });
    if (f == bdd_.Leaf(default_code_) && !keep_default) return {};
    if (bdd_.CountPaths(f, static_cast<uint32_t>(kMaxRegions + 1)) > kMaxRegions)
      return TooComplex(arch, name, active);
    return Regions(f, tagged);
  }

 private:
  // Precedence rule 1. A direct grant (allow, log) of the syscall, with
  // conditions or without, removes every grant that reaches it through a
  // group: the direct rules then say which of its calls may run. Elsewhere
  // (and always for a group's refusing rules), a group rule decides only the
  // calls that no direct rule matches, so a direct refusing rule decides
  // only where its condition holds.
  std::vector<Active> Activate(Arch arch, const std::string& name, const std::vector<Use>& uses) {
    auto signature = SyscallSignature(name);
    std::vector<Active> active;
    Node direct_cover = Bdd::kZero;
    bool direct_grant = false;
    for (const Use& u : uses) {
      const ast::SysRule& rule = *pool_[u.rule].rule;
      const SysAction action = FromAst(rule.action);
      active.push_back({u.rule, u.direct, Conditions(rule, arch, signature), Encode(action)});
      if (!u.direct) continue;
      direct_cover = bdd_.Max(direct_cover, active.back().predicate);
      direct_grant |= LetsRun(action);
    }
    if (direct_cover == Bdd::kZero && !direct_grant) return active;
    const Node uncovered = bdd_.MapLeaves(direct_cover, [](uint64_t x) { return x ? 0 : 1; });
    for (Active& a : active) {
      if (a.direct) continue;
      const bool grant = LetsRun(FromAst(pool_[a.rule].rule->action));
      a.predicate = direct_grant && grant ? Bdd::kZero : bdd_.Min(a.predicate, uncovered);
    }
    std::erase_if(active, [](const Active& a) { return a.predicate == Bdd::kZero; });
    return active;
  }

  // 1 where all the rule's conditions hold, else 0.
  Node Conditions(const ast::SysRule& rule, Arch arch,
                  const std::optional<std::vector<std::string>>& signature) {
    Node predicate = Bdd::kOne;
    for (const ast::Condition& c : rule.conditions) {
      // The checker refuses conditions on anything but a known scalar.
      if (!signature || c.arg < 0 || static_cast<size_t>(c.arg) >= signature->size()) continue;
      const ParamType type = ClassifyParam((*signature)[c.arg], arch);
      if (type.kind != ParamKind::kScalar || type.bits <= 0) continue;
      predicate = bdd_.Min(predicate, ConditionBuilder(bdd_, c.arg, type).Build(c));
    }
    return predicate;
  }

  // Most restrictive wins, uniting the provenance of equal actions.
  uint64_t Join(uint64_t x, uint64_t y) {
    if (x == kNoRule) return y;
    if (y == kNoRule) return x;
    if (CodeOf(x) != CodeOf(y)) return CodeOf(x) > CodeOf(y) ? x : y;
    return Tag(sets_.Union(SetOf(x), SetOf(y)), CodeOf(x));
  }

  // The join of every part, combined pairwise so that each step joins
  // diagrams of similar size.
  Node Combine(std::vector<Node> parts) {
    if (parts.empty()) return Bdd::kZero;
    const Bdd::JoinFn join = [this](uint64_t x, uint64_t y) { return Join(x, y); };
    while (parts.size() > 1) {
      std::vector<Node> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2) {
        next.push_back(bdd_.Join(parts[i], parts[i + 1], join));
      }
      if (parts.size() % 2) next.push_back(parts.back());
      parts.swap(next);
    }
    return parts[0];
  }

  // The paths of the canonical function f; the provenance of each comes
  // from the leaves of `tagged` (which refines f) inside it.
  std::vector<Region> Regions(Node f, Node tagged) {
    std::vector<Region> regions;
    std::vector<int8_t> cube(kVars, -1);
    bdd_.ForEachPath(f, [&](const std::vector<std::pair<Bdd::Var, bool>>& path, uint64_t leaf) {
      Region region;
      region.action = Decode(CodeOf(leaf));
      region.tests = TestsOf(path);
      for (auto [var, bit] : path) cube[var] = bit;
      // Below the region's last test every input is in the region, and so
      // is every leaf reachable from there.
      uint32_t rules = 0;
      auto add = [&](Node m) { rules = sets_.Union(rules, Reach(m)); };
      if (path.empty()) {
        add(tagged);
      } else {
        bdd_.Frontier(tagged, cube, path.back().first, add);
      }
      for (uint32_t r : sets_.Rules(rules)) region.rules.push_back(pool_[r].rule->span);
      if (!region.rules.empty()) region.cited = Cite(tagged, cube, &region.cited_capped);
      for (auto [var, bit] : path) cube[var] = -1;
      regions.push_back(std::move(region));
    });
    return regions;
  }

  // The pieces of `tagged` inside the cube, with their rules; empty when
  // they all have the same rules or number more than kMaxCited (`capped`).
  std::vector<Region::Cited> Cite(Node tagged, const std::vector<int8_t>& cube, bool* capped) {
    std::vector<std::pair<std::vector<std::pair<Bdd::Var, bool>>, uint32_t>> pieces;
    std::vector<std::pair<Bdd::Var, bool>> extra;
    bool overflow = false;
    std::function<void(Node)> walk = [&](Node n) {
      if (overflow) return;
      if (bdd_.IsLeaf(n)) {
        if (pieces.size() == kMaxCited) overflow = true;
        pieces.push_back({extra, SetOf(bdd_.Value(n))});
        return;
      }
      const Bdd::Var v = bdd_.VarOf(n);
      if (cube[v] != -1) return walk(cube[v] ? bdd_.Hi(n) : bdd_.Lo(n));
      for (bool bit : {false, true}) {
        extra.push_back({v, bit});
        walk(bit ? bdd_.Hi(n) : bdd_.Lo(n));
        extra.pop_back();
      }
    };
    walk(tagged);
    const bool same = std::all_of(pieces.begin(), pieces.end(),
                                  [&](const auto& p) { return p.second == pieces[0].second; });
    *capped = overflow;
    if (overflow || same) return {};
    std::vector<Region::Cited> cited;
    for (const auto& [tests, set] : pieces) {
      Region::Cited c;
      c.tests = TestsOf(tests);
      for (uint32_t r : sets_.Rules(set)) c.rules.push_back(pool_[r].rule->span);
      cited.push_back(std::move(c));
    }
    return cited;
  }

  // The union of the rule sets of every leaf reachable from n.
  uint32_t Reach(Node n) {
    if (bdd_.IsLeaf(n)) return SetOf(bdd_.Value(n));
    if (auto it = reach_.find(n); it != reach_.end()) return it->second;
    const uint32_t lo = Reach(bdd_.Lo(n));
    const uint32_t set = sets_.Union(lo, Reach(bdd_.Hi(n)));
    reach_.emplace(n, set);
    return set;
  }

  // More regions than a filter could hold: an error naming the syscall's
  // first and last conditional rules. The IR then kills every call, so
  // that an artifact built despite the error fails closed.
  std::vector<Region> TooComplex(Arch arch, const std::string& name,
                                 const std::vector<Active>& active) {
    std::vector<size_t> conditional;
    for (const Active& a : active) {
      if (!pool_[a.rule].rule->conditions.empty()) conditional.push_back(a.rule);
    }
    if (!conditional.empty() && too_complex_.insert(name).second) {
      Add(conditional.front(), conditional.back(),
          "the conditions on '" + name + "' split its arguments into more than " +
              std::to_string(kMaxRegions) + " regions on " + std::string(ArchName(arch)) +
              "; combine fewer conditions on different arguments");
    }
    return {Region{{}, SysAction{SysAction::Kind::kKill, 0}, {}}};
  }

  // Precedence rule 3, first half: two direct unconditional rules of one
  // policy with different actions. Each rule is paired with the first
  // earlier one that disagrees.
  void CheckUnconditional(const std::string& name, const std::vector<Active>& active) {
    auto plain = [&](const Active& a) {
      return a.direct && pool_[a.rule].rule->conditions.empty();
    };
    for (size_t i = 0; i < active.size(); ++i) {
      if (!plain(active[i])) continue;
      const Pooled& later = pool_[active[i].rule];
      for (size_t j = 0; j < i; ++j) {
        const Pooled& earlier = pool_[active[j].rule];
        if (!plain(active[j]) || earlier.policy != later.policy ||
            active[j].code == active[i].code) {
          continue;
        }
        Report(active[j].rule, active[i].rule,
               "policy '" + later.policy->name.text + "' gives '" + name +
                   "' two unconditional actions: " + ActionText(earlier.rule->action) + " and " +
                   ActionText(later.rule->action));
        break;
      }
    }
  }

  // Precedence rule 3, second half: rules with different errno values that
  // apply together somewhere. The union per errno value finds the pairs of
  // values that overlap without testing every pair of rules.
  void CheckErrnoOverlaps(const std::string& name, const std::vector<Active>& active) {
    std::map<int, std::vector<const Active*>> by_errno;
    std::map<int, Node> unions;
    for (const Active& a : active) {
      const ast::SysAction& action = pool_[a.rule].rule->action;
      if (action.kind != ast::ActionKind::kErrno) continue;
      by_errno[action.errno_value].push_back(&a);
      auto [it, inserted] = unions.emplace(action.errno_value, a.predicate);
      if (!inserted) it->second = bdd_.Max(it->second, a.predicate);
    }
    for (auto v = unions.begin(); v != unions.end(); ++v) {
      for (auto w = std::next(v); w != unions.end(); ++w) {
        if (!Overlap(v->second, w->second)) continue;
        for (const Active* r : by_errno[v->first]) {
          if (!Overlap(r->predicate, w->second)) continue;
          for (const Active* s : by_errno[w->first]) {
            if (Overlap(r->predicate, s->predicate)) ReportErrnos(name, r->rule, s->rule);
          }
        }
      }
    }
  }

  bool Overlap(Node a, Node b) { return bdd_.Min(a, b) != Bdd::kZero; }

  void ReportErrnos(const std::string& name, size_t r, size_t s) {
    const size_t a = std::min(r, s), b = std::max(r, s);
    Report(a, b,
           "overlapping rules give '" + name + "' two errno values: " +
               pool_[a].rule->action.errno_text + " and " + pool_[b].rule->action.errno_text);
  }

  // A conflict, once per pair of rules.
  void Report(size_t a, size_t b, std::string message) {
    if (!reported_pairs_.emplace(a, b).second) return;
    Add(a, b, std::move(message));
  }

  void Add(size_t a, size_t b, std::string message) {
    if (reported_ >= kMaxConflicts) return;
    ++reported_;
    conflicts_->push_back({pool_[a].rule->span, pool_[b].rule->span, std::move(message)});
  }

  Bdd bdd_;
  RuleSets sets_;
  const std::vector<Pooled>& pool_;
  const uint32_t default_code_;
  std::vector<Conflict>* conflicts_;
  std::unordered_map<Node, uint32_t> reach_;  // Reach() memo
  std::set<std::pair<size_t, size_t>> reported_pairs_;
  std::set<std::string> too_complex_;  // syscalls reported as such, on any architecture
  size_t reported_ = 0;
};

// ---- bypass classes ----------------------------------------------------------

struct BypassSyscall {
  const char* name;
  Bypass bypass;
};
constexpr BypassSyscall kBypassSyscalls[] = {
    {"io_uring_setup", Bypass::kIoUring},    {"io_uring_enter", Bypass::kIoUring},
    {"io_uring_register", Bypass::kIoUring}, {"clone3", Bypass::kClone3},
    {"socketcall", Bypass::kSocketcall},     {"ipc", Bypass::kIpc}};

bool IsBypassProne(const std::string& name) {
  for (const BypassSyscall& b : kBypassSyscalls) {
    if (name == b.name) return true;
  }
  return false;
}

// Lowers the bypass-prone syscalls of one architecture, after the others
// (clone3's closure reads clone's regions).
class BypassCloser {
 public:
  BypassCloser(const std::vector<Pooled>& pool,
               const std::map<std::string, std::vector<Use>>& index, Lowerer& lowerer,
               SyscallRules& out)
      : pool_(pool),
        index_(index),
        lowerer_(lowerer),
        probe_(pool, lowerer.default_code(), &scratch_),
        out_(out) {}

  void Lower(Arch arch) {
    for (const BypassSyscall& b : kBypassSyscalls) {
      const std::string name = b.name;
      if (!SyscallNumber(arch, name)) continue;
      const std::vector<Use>& uses = UsesOf(name);
      if (!Closed(arch, b.bypass)) {
        Store(arch, name, lowerer_.Lower(arch, name, uses, lowerer_.default_code()));
        continue;
      }
      // A group cannot open the syscall; it can still refuse it.
      std::vector<Use> applying;
      std::copy_if(uses.begin(), uses.end(), std::back_inserter(applying), [&](const Use& u) {
        return u.direct || !LetsRun(FromAst(pool_[u.rule].rule->action));
      });
      Closure closure{b.bypass, Fallback(b.bypass), {}};
      std::vector<Region> regions =
          lowerer_.Lower(arch, name, applying, Encode(closure.fallback), /*keep_default=*/true);
      for (const Region& r : regions) {
        if (!LetsRun(r.action)) continue;
        for (Span s : r.rules) {
          auto same = [&](Span t) { return t.file == s.file && t.begin == s.begin; };
          if (std::none_of(closure.reopened.begin(), closure.reopened.end(), same)) {
            closure.reopened.push_back(s);
          }
        }
      }
      if (regions.size() == 1 && regions[0].tests.empty() &&
          regions[0].action == out_.default_action) {
        regions.clear();
      }
      out_.closed[arch].emplace(name, std::move(closure));
      Store(arch, name, std::move(regions));
    }
  }

 private:
  const std::vector<Use>& UsesOf(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? none_ : it->second;
  }

  void Store(Arch arch, const std::string& name, std::vector<Region> regions) {
    if (!regions.empty()) out_.syscalls[arch].emplace(name, std::move(regions));
  }

  SysAction Fallback(Bypass bypass) const {
    if (bypass == Bypass::kClone3 || LetsRun(out_.default_action)) {
      return {SysAction::Kind::kErrno, kEnosys};
    }
    return out_.default_action;
  }

  bool Closed(Arch arch, Bypass bypass) {
    switch (bypass) {
      case Bypass::kIoUring:
        return true;
      case Bypass::kClone3: {
        const auto& per_arch = out_.syscalls[arch];
        auto clone = per_arch.find("clone");
        return clone != per_arch.end() && clone->second.size() > 1;
      }
      case Bypass::kSocketcall:
      case Bypass::kIpc:
        return !Uniform(arch, bypass);
    }
    return true;
  }

  // The multiplexer and every call it reaches are decided unconditionally
  // with one action.
  bool Uniform(Arch arch, Bypass bypass) {
    const std::optional<SysAction> mux =
        Unconditional(arch, bypass == Bypass::kSocketcall ? "socketcall" : "ipc");
    if (!mux) return false;
    for (const std::string& call : MultiplexedCalls(bypass)) {
      if (Unconditional(arch, call) != mux) return false;
    }
    return true;
  }

  // The syscall's action when it does not depend on the arguments, as if it
  // existed on the architecture (a call may be reachable only through the
  // multiplexer there).
  std::optional<SysAction> Unconditional(Arch arch, const std::string& name) {
    const std::vector<Use>& uses = UsesOf(name);
    if (uses.empty()) return out_.default_action;
    std::vector<Region> regions = probe_.Lower(arch, name, uses, probe_.default_code());
    if (regions.empty()) return out_.default_action;
    if (regions.size() == 1 && regions[0].tests.empty()) return regions[0].action;
    return std::nullopt;
  }

  const std::vector<Pooled>& pool_;
  const std::map<std::string, std::vector<Use>>& index_;
  Lowerer& lowerer_;
  std::vector<Conflict> scratch_;  // the probe's: reported by lowerer_ where they count
  Lowerer probe_;
  SyscallRules& out_;
  const std::vector<Use> none_;
};

}  // namespace

std::string_view BypassName(Bypass bypass) {
  switch (bypass) {
    case Bypass::kIoUring:
      return "io_uring";
    case Bypass::kClone3:
      return "clone3";
    case Bypass::kSocketcall:
      return "socketcall";
    case Bypass::kIpc:
      return "ipc";
  }
  return "io_uring";
}

// SYS_SOCKET..SYS_SENDMMSG of linux/net.h, and the SysV IPC calls of ipc(2).
const std::vector<std::string>& MultiplexedCalls(Bypass bypass) {
  static const std::vector<std::string> kSocket = {
      "socket",     "bind",    "connect", "listen",  "accept",   "getsockname", "getpeername",
      "socketpair", "send",    "recv",    "sendto",  "recvfrom", "shutdown",    "setsockopt",
      "getsockopt", "sendmsg", "recvmsg", "accept4", "recvmmsg", "sendmmsg"};
  static const std::vector<std::string> kIpc = {"semop",  "semget", "semctl", "semtimedop",
                                                "msgsnd", "msgrcv", "msgget", "msgctl",
                                                "shmat",  "shmdt",  "shmget", "shmctl"};
  static const std::vector<std::string> kNone;
  return bypass == Bypass::kSocketcall ? kSocket : bypass == Bypass::kIpc ? kIpc : kNone;
}

std::string_view KindName(SysAction::Kind kind) {
  switch (kind) {
    case SysAction::Kind::kAllow:
      return "allow";
    case SysAction::Kind::kLog:
      return "log";
    case SysAction::Kind::kNotify:
      return "notify";
    case SysAction::Kind::kErrno:
      return "errno";
    case SysAction::Kind::kTrap:
      return "trap";
    case SysAction::Kind::kKillThread:
      return "kill-thread";
    case SysAction::Kind::kKill:
      return "kill";
  }
  return "kill";
}

std::string ToString(const SysAction& action) {
  std::string s(KindName(action.kind));
  return action.kind == SysAction::Kind::kErrno ? s + " " + std::to_string(action.errno_value) : s;
}

bool Region::Matches(const std::array<uint64_t, 6>& args) const {
  return std::all_of(tests.begin(), tests.end(),
                     [&](const ArgTest& t) { return (args[t.arg] & t.mask) == t.value; });
}

bool SyscallRules::operator==(const SyscallRules& o) const {
  return arches == o.arches && default_action == o.default_action && syscalls == o.syscalls;
}

const Region* SyscallRules::Find(Arch arch, const std::string& name,
                                 const std::array<uint64_t, 6>& args) const {
  auto per_arch = syscalls.find(arch);
  if (per_arch == syscalls.end()) return nullptr;
  auto regions = per_arch->second.find(name);
  if (regions == per_arch->second.end()) return nullptr;
  for (const Region& r : regions->second) {
    if (r.Matches(args)) return &r;
  }
  return nullptr;  // unreachable: the regions cover every input
}

const std::vector<Span>& Region::RulesFor(const std::array<uint64_t, 6>& args) const {
  for (const Cited& c : cited) {
    const bool holds = std::all_of(c.tests.begin(), c.tests.end(), [&](const ArgTest& t) {
      return (args[t.arg] & t.mask) == t.value;
    });
    if (holds) return c.rules;
  }
  return rules;
}

SysAction SyscallRules::Decide(Arch arch, const std::string& name,
                               const std::array<uint64_t, 6>& args) const {
  if (std::find(arches.begin(), arches.end(), arch) == arches.end()) return {};
  const Region* r = Find(arch, name, args);
  return r ? r->action : default_action;
}

SyscallRules LowerSyscalls(const Program& program, const std::vector<const ast::Policy*>& sources,
                           std::vector<Conflict>* conflicts) {
  SyscallRules out;
  out.arches = EffectiveArches(sources);
  if (const ast::SysAction* d = EffectiveDefault(sources)) {
    out.default_action = FromAst(*d);
    out.default_span = d->span;
  }
  std::vector<Pooled> pool;
  for (const ast::Policy* p : sources) {
    if (!p->syscalls) continue;
    for (const ast::SysRule& r : p->syscalls->rules) pool.push_back({&r, p});
  }
  GroupExpander groups(program);
  const auto index = IndexRules(pool, groups);
  Lowerer lowerer(pool, Encode(out.default_action), conflicts);
  BypassCloser closer(pool, index, lowerer, out);
  for (Arch arch : out.arches) {
    std::map<std::string, std::vector<Region>>& per_arch = out.syscalls[arch];
    for (const auto& [name, uses] : index) {
      if (!SyscallNumber(arch, name) || IsBypassProne(name)) continue;
      std::vector<Region> regions = lowerer.Lower(arch, name, uses, lowerer.default_code());
      if (!regions.empty()) per_arch.emplace(name, std::move(regions));
    }
    closer.Lower(arch);
    if (out.syscalls[arch].empty()) out.syscalls.erase(arch);
  }
  return out;
}

bool KillsEverySyscall(const SyscallRules& rules) {
  if (rules.default_action.kind != SysAction::Kind::kKill) return false;
  for (const auto& [arch, per_name] : rules.syscalls) {
    for (const auto& [name, regions] : per_name) {
      for (const Region& r : regions) {
        if (r.action.kind != SysAction::Kind::kKill) return false;
      }
    }
  }
  return true;
}

}  // namespace ward::ir
