// The IR of the filesystem section: every (pattern, right) that some rule
// decides, with its verdict, after the merge of a policy and its bases.
// decide() applies language.md's precedence: the most specific matching
// pattern wins (more components; then, from the root, literal > `*` > `**`);
// on a full tie, deny.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "language/ast.h"
#include "language/path_match.h"

namespace ward::ir {

enum class FsRight { kRead, kWrite, kExec };
inline constexpr std::array<FsRight, 3> kFsRights = {FsRight::kRead, FsRight::kWrite,
                                                     FsRight::kExec};

struct FsVerdict {
  bool allow = false;
  std::vector<Span> rules;  // provenance: every rule that set it (not compared)
  bool operator==(const FsVerdict& o) const { return allow == o.allow; }
};

struct FsDecision {
  bool allow = false;
  std::string pattern;  // the deciding pattern; empty when no rule matched
  std::vector<Span> rules;
};

struct FileRules {
  // Per right: normalised pattern ("/usr", "~/.ssh", "/home/*/.ssh") -> verdict.
  std::array<std::map<std::string, FsVerdict>, 3> rules;

  bool operator==(const FileRules& o) const { return rules == o.rules; }
  // Rebuilds the lookup index; call after changing `rules` by hand
  // (LowerFilesystem does).
  void BuildIndex();
  // `path` is absolute and normalised; `home` replaces a leading `~` in
  // patterns (nullopt: `~` patterns match nothing; see NeedsHome).
  FsDecision Decide(const std::string& path, FsRight right,
                    const std::optional<std::string>& home) const;
  bool NeedsHome() const;

 private:
  // Per right: the literal part of each pattern before its first glob
  // ("/srv/app", "~/.cache", "/") -> the patterns, so Decide looks only at
  // patterns rooted at one of the path's ancestors.
  // Patterns by value, so copies of FileRules stay valid.
  std::array<std::multimap<std::string, std::string>, 3> index_;
  bool needs_home_ = false;
};

FileRules LowerFilesystem(const std::vector<const ast::FilesystemSection*>& sections);

// Pattern matching (language/path_match.h) and specificity, shared by
// Decide and lint.
using ward::PatternMatchesPathOrAncestor;
// Negative when a is less specific than b, 0 on a full tie, positive else.
int CompareSpecificity(const std::string& a, const std::string& b);

}  // namespace ward::ir
