// The apply-time walk (backends/landlock/walk.h) against the IR: over random
// trees and random filesystem rules, the grants it produces, read with
// Landlock's semantics (a rule on a directory covers everything under it),
// must never allow what FileRules::Decide denies, and must allow every
// existing path Decide allows except the partially granted directories the
// walk reports as lost. Seeds are printed on failure.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "backends/landlock/walk.h"

namespace ward::test {
namespace {

namespace ll = backend::landlock;

// An in-memory tree: node 0 is "/".
class FakeTree final : public ll::Tree {
 public:
  FakeTree() { nodes_.push_back({"/", Kind::kDirectory, {}}); }
  int Add(const std::string& path, Kind kind) {
    int node = 0;
    std::string prefix;
    size_t i = 1;
    while (i <= path.size()) {
      size_t j = path.find('/', i);
      if (j == std::string::npos) j = path.size();
      const std::string name = path.substr(i, j - i);
      prefix += "/" + name;
      auto it = nodes_[node].children.find(name);
      if (it == nodes_[node].children.end()) {
        nodes_.push_back({prefix, j == path.size() ? kind : Kind::kDirectory, {}});
        const int id = static_cast<int>(nodes_.size() - 1);
        nodes_[node].children[name] = id;
        node = id;
      } else {
        node = it->second;
        if (j != path.size()) nodes_[node].kind = Kind::kDirectory;  // it has children
      }
      i = j + 1;
    }
    return node;
  }
  int Child(int dir, const std::string& name) override {
    auto it = nodes_[dir].children.find(name);
    return it == nodes_[dir].children.end() ? -1 : it->second;
  }
  Kind KindOf(int node) override { return nodes_[node].kind; }
  bool List(int dir, std::vector<std::string>* out) override {
    if (unlistable.count(dir)) return false;
    for (const auto& [name, id] : nodes_[dir].children) out->push_back(name);
    return true;
  }
  std::set<int> unlistable;  // List fails (EACCES)
  std::vector<std::string> Paths() const {
    std::vector<std::string> out;
    for (const Node& n : nodes_) out.push_back(n.path);
    return out;
  }

 private:
  struct Node {
    std::string path;
    Kind kind;
    std::map<std::string, int> children;
  };
  std::vector<Node> nodes_;
};

bool Under(const std::string& path, const std::string& root) {
  return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
}

TEST_CASE("landlock walk: grants agree with decide() on random trees and rules") {
  const std::vector<std::string> names = {"a", "b", ".ssh", "h"};
  const std::string home = "/h";
  const char* fixed = std::getenv("WARD_SEED");
  const uint32_t base_seed = fixed ? uint32_t(std::stoul(fixed)) : std::random_device{}();
  for (uint32_t round = 0; round < (fixed ? 1u : 300u); ++round) {
    const uint32_t seed = base_seed + round;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    auto random_path = [&](size_t max_depth) {
      std::string p;
      const size_t depth = 1 + pick(max_depth);
      for (size_t i = 0; i < depth; ++i) p += "/" + names[pick(names.size())];
      return p;
    };
    FakeTree tree;
    for (int i = 0; i < 25; ++i) {
      tree.Add(random_path(4), pick(3) == 0 ? ll::Tree::Kind::kFile : ll::Tree::Kind::kDirectory);
    }
    ir::FileRules fs;
    const int count = 1 + static_cast<int>(pick(7));
    for (int i = 0; i < count; ++i) {
      std::string pattern = pick(5) == 0 ? "/" : random_path(3);
      if (pick(4) == 0) pattern = "~" + (pattern == "/" ? std::string() : pattern);
      if (pick(6) == 0) {  // a `*` component
        const size_t slash = pattern.rfind('/');
        if (slash != std::string::npos) pattern = pattern.substr(0, slash + 1) + "*";
      }
      const auto right = ir::kFsRights[pick(3)];
      auto [it, inserted] =
          fs.rules[static_cast<size_t>(right)].emplace(pattern, ir::FsVerdict{pick(2) == 0, {}});
      if (!inserted) it->second.allow = false;
    }
    fs.BuildIndex();
    ll::WalkResult walk = ll::Walk(fs, home, tree, 100000);
    REQUIRE(walk.ok);
    std::string dump;
    for (ir::FsRight r : ir::kFsRights) {
      for (const auto& [p, v] : fs.rules[static_cast<size_t>(r)]) {
        dump += std::to_string(static_cast<int>(r)) + (v.allow ? " allow " : " deny ") + p + "\n";
      }
    }
    for (const ll::Grant& g : walk.grants)
      dump += "grant " + g.path + " " + std::to_string(g.rights) + "\n";
    INFO(dump);
    for (const std::string& path : tree.Paths()) {
      for (ir::FsRight r : ir::kFsRights) {
        bool granted = false;
        for (const ll::Grant& g : walk.grants) {
          granted = granted || ((g.rights & ll::RightBit(r)) && Under(path, g.path));
        }
        bool lost = false;
        for (const ll::Loss& l : walk.losses) {
          lost = lost || ((l.rights & ll::RightBit(r)) && l.path == path);
        }
        const bool allowed = fs.Decide(path, r, home).allow;
        INFO(path << " right " << static_cast<int>(r) << " decide " << allowed << " granted "
                  << granted << " lost " << lost);
        CHECK((!granted || allowed));          // never wider than the policy
        CHECK((granted || !allowed || lost));  // narrower only where reported
        CHECK((!lost || (allowed && !granted)));
      }
    }
  }
}

TEST_CASE("landlock walk: a deny nested in an allow grants the siblings along the path") {
  FakeTree tree;
  for (const char* p : {"/home/u/.ssh/id", "/home/u/.ssh/config", "/home/u/src/main.c",
                        "/home/u/notes", "/home/v/x", "/etc/passwd"}) {
    tree.Add(p, ll::Tree::Kind::kFile);
  }
  ir::FileRules fs;
  fs.rules[0]["~"] = {true, {}};
  fs.rules[0]["~/.ssh"] = {false, {}};
  fs.rules[0]["~/.ssh/config"] = {true, {}};
  fs.rules[0]["~/missing"] = {true, {}};
  fs.BuildIndex();
  ll::WalkResult walk = ll::Walk(fs, std::string("/home/u"), tree, 1000);
  REQUIRE(walk.ok);
  std::string grants, losses;
  for (const ll::Grant& g : walk.grants) grants += g.path + "=" + std::to_string(g.rights) + " ";
  for (const ll::Loss& l : walk.losses) losses += l.path + ": " + l.why + "\n";
  CHECK(grants == "/home/u/.ssh/config=1 /home/u/notes=1 /home/u/src=1 ");
  // The denied subtrees inside the allowed one, for the enforcer's check
  // of other names (hard links): .ssh itself is not one (config inside it
  // is granted), its id is; nothing outside ~ (denied by default, never
  // granted above) is.
  std::string carved;
  for (const ll::Grant& c : walk.carved) carved += c.path + "=" + std::to_string(c.rights) + " ";
  CHECK(carved == "/home/u/.ssh/id=1 ");
  CHECK(losses ==
        "/home/u: partially granted (a deny below it): the directory itself and entries created "
        "in it later are not granted\n"
        "/home/u/missing: does not exist when the ruleset is built: not granted\n");
}

TEST_CASE("landlock walk: carved subtrees are reported once, per right") {
  FakeTree tree;
  for (const char* p : {"/w/.git/config", "/w/.git/HEAD", "/w/src/a.c", "/w/secret/k",
                        "/w/secret/sub/k2", "/other/x"}) {
    tree.Add(p, ll::Tree::Kind::kFile);
  }
  ir::FileRules fs;
  fs.rules[0]["/w"] = {true, {}};  // read
  fs.rules[1]["/w"] = {true, {}};  // write
  fs.rules[1]["/w/.git/config"] = {false, {}};
  fs.rules[0]["/w/secret"] = {false, {}};
  fs.rules[1]["/w/secret"] = {false, {}};
  fs.BuildIndex();
  ll::WalkResult walk = ll::Walk(fs, std::nullopt, tree, 1000);
  REQUIRE(walk.ok);
  std::string carved;
  for (const ll::Grant& c : walk.carved) carved += c.path + "=" + std::to_string(c.rights) + " ";
  // read 1, write 2: the secret tree once for both, not its children.
  CHECK(carved == "/w/.git/config=2 /w/secret=3 ");
}

TEST_CASE("landlock walk: ~ patterns need a home, and the walk is bounded") {
  FakeTree tree;
  tree.Add("/a/b", ll::Tree::Kind::kFile);
  ir::FileRules fs;
  fs.rules[0]["~/x"] = {true, {}};
  fs.BuildIndex();
  ll::WalkResult no_home = ll::Walk(fs, std::nullopt, tree, 100);
  CHECK_FALSE(no_home.ok);
  CHECK(no_home.error == "the policy has ~ patterns and no home directory was given");
  ir::FileRules carve;
  carve.rules[0]["/"] = {true, {}};
  carve.rules[0]["/a/b"] = {false, {}};
  carve.BuildIndex();
  ll::WalkResult small = ll::Walk(carve, std::nullopt, tree, 1);
  CHECK_FALSE(small.ok);
  CHECK(small.error == "resolving the patterns visits more than 1 paths (at /a)");
}

TEST_CASE("landlock walk: a directory it cannot list is reported, its entries not granted") {
  FakeTree tree;
  tree.Add("/w/a", ll::Tree::Kind::kFile);
  tree.Add("/w/secret", ll::Tree::Kind::kFile);
  tree.unlistable.insert(tree.Add("/w", ll::Tree::Kind::kDirectory));
  ir::FileRules fs;
  fs.rules[0]["/w"] = {true, {}};
  fs.rules[0]["/w/secret"] = {false, {}};
  fs.BuildIndex();
  ll::WalkResult walk = ll::Walk(fs, std::nullopt, tree, 100);
  REQUIRE(walk.ok);
  CHECK(walk.grants.empty());
  REQUIRE(walk.losses.size() == 2);
  CHECK(walk.losses[1].path == "/w");
  CHECK(walk.losses[1].why ==
        "cannot be listed when the ruleset is built: its entries are not granted");
}

}  // namespace
}  // namespace ward::test
