// The apply-time resolution of a ruleset's filesystem patterns into
// Landlock path-beneath grants, over an abstract directory tree (the
// enforcer's is the real file system opened with O_PATH|O_NOFOLLOW; the
// tests use an in-memory one). Pure: no I/O of its own.
//
// Landlock can only grant: a rule on a directory covers everything under
// it. So a node whose whole subtree has one decision gets one rule (when
// allowed); a node whose subtree mixes decisions is not granted itself and
// its children are visited instead. Where the node itself is allowed (a
// deny nested in an allow) that loses the node's own operations and
// entries created in it later: a Loss, towards deny (language.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/filesystem.h"

namespace ward::backend::landlock {

// Ward's rights as bits: 1 read, 2 write, 4 exec.
inline constexpr uint8_t RightBit(ir::FsRight r) { return uint8_t(1u << static_cast<int>(r)); }
// RightBit()s as "read,write,exec" (those set, in that order).
std::string RightNames(uint8_t rights);

class Tree {
 public:
  enum class Kind { kDirectory, kFile, kSymlink, kOther };
  virtual ~Tree() = default;
  // Node 0 is the root directory "/".
  // The entry `name` of directory `dir`, never following a symlink (the
  // walk never descends through one); -1 when there is none.
  virtual int Child(int dir, const std::string& name) = 0;
  virtual Kind KindOf(int node) = 0;
  // The names in a directory; false when it cannot be listed.
  virtual bool List(int dir, std::vector<std::string>* names) = 0;
  // Called once per granted node, as soon as it is decided (the enforcer
  // adds the rule then); false stops the walk with *error.
  virtual bool Grant(int node, const std::string& path, uint8_t rights, std::string* error) {
    (void)node, (void)path, (void)rights, (void)error;
    return true;
  }
  // Called once per carved node: a node whose whole subtree is denied
  // `rights` that one of its ancestors is allowed (a deny nested in an
  // allow). Landlock decides by the path walked, so another name of a file
  // in there (a hard link planted in a granted tree) would reach it with
  // the grant of the tree it lies in; the enforcer checks that no file in
  // there has another name. false stops the walk with *error.
  virtual bool Carved(int node, const std::string& path, uint8_t rights, std::string* error) {
    (void)node, (void)path, (void)rights, (void)error;
    return true;
  }
  // The walk is done with a node (the enforcer closes its fd).
  virtual void Release(int node) { (void)node; }
};

struct Grant {
  int node = 0;
  std::string path;
  uint8_t rights = 0;  // RightBit()s
};

struct Loss {
  std::string path;
  uint8_t rights = 0;
  std::string why;
};

struct WalkResult {
  bool ok = false;
  std::string error;
  std::vector<Grant> grants;  // in path order, one per node
  std::vector<Grant> carved;  // Tree::Carved's nodes, in path order
  std::vector<Loss> losses;   // in path order
};

// `home` expands `~` patterns (required when fs.NeedsHome()). Visits at most
// `max_nodes` nodes, else fails.
WalkResult Walk(const ir::FileRules& fs, const std::optional<std::string>& home, Tree& tree,
                size_t max_nodes);

// `~` in front of a pattern replaced by `home`; "" when it needs a home and
// there is none.
std::string ExpandHome(const std::string& pattern, const std::optional<std::string>& home);

// Pattern helpers shared with the backend's checks. Patterns are absolute
// (after `~` expansion) and normalised.
// Could the pattern match some path strictly below `path`?
bool CanMatchBelow(const std::string& pattern, const std::string& path);
// The names of the children of `path` a pattern could go through; *any is
// set when a glob makes every name possible.
void NextNames(const std::string& pattern, const std::string& path, std::vector<std::string>* out,
               bool* any);

}  // namespace ward::backend::landlock
