// What every lint rule sees, and the helpers rules use to report. Internal to
// compiler/lint/.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "compiler/lint/lint.h"
#include "compiler/policy.h"

namespace ward::lint {

// One non-abstract policy under lint.
struct PolicyContext {
  const Program& program;
  const SourceManager& sources;
  const Options& options;
  const ast::Policy& policy;
  std::vector<const ast::Policy*> order;  // ExtendsOrder: bases first, the policy last
  const ir::Policy& ir;
};

// One root file (lets, groups).
struct FileContext {
  const Program& program;
  const SourceManager& sources;
  const ast::File& file;
};

class Findings {
 public:
  // Starts a finding of rule `id` (which must be in the catalogue).
  Finding& Add(std::string_view id, Span span, std::string message, std::string hint = {});
  std::vector<Finding>& all() { return findings_; }

 private:
  std::vector<Finding> findings_;
};

// Adds a secondary span (ignored past DiagnosticSink::kMaxRelated).
void AddRelated(Finding& f, Span span, std::string message);

// The policy (of `order`) whose text holds `span`, or nullptr.
const ast::Policy* PolicyOf(const std::vector<const ast::Policy*>& order, Span span);

// A filesystem (pattern, rule) as written in the policy or a base; the IR
// folds these (and drops redundant ones), so rules about how the policy was
// written read them.
struct FsEntry {
  std::string pattern;
  bool allow = true;
  Span rule;
  Span atom;
  const ast::Policy* policy = nullptr;
};
// Per right (ir::FsRight order), pattern -> its entries, in pool order.
using FsEntries = std::array<std::map<std::string, std::vector<FsEntry>>, 3>;
FsEntries CollectFsEntries(const PolicyContext& ctx);
// The patterns in `entries` that match `pattern` (as a path) or one of its
// ancestors, itself excluded: its literal ancestors, and globs.
std::vector<const std::string*> EnclosingPatterns(
    const std::map<std::string, std::vector<FsEntry>>& entries,
    const std::vector<std::string>& globs, const std::string& pattern);

// The family entry points (one file each).
void LintSyscalls(const PolicyContext& ctx, Findings& out);
void LintNetwork(const PolicyContext& ctx, Findings& out);
void LintFilesystem(const PolicyContext& ctx, Findings& out);
void LintProcess(const PolicyContext& ctx, Findings& out);
void LintHygiene(const PolicyContext& ctx, Findings& out);
void LintFileHygiene(const FileContext& ctx, Findings& out);

}  // namespace ward::lint
