// `ward lint`: rules that find holes in a policy that compiles. Each rule
// (one file per family: syscalls, network, filesystem, process/limits,
// hygiene) reads the IR, and the AST where it is about how something was
// written, and reports findings: the rule, spans, a one-line why, a hint and,
// where the edit is mechanical, a fix. Suppression comments (`// ward:allow
// L2xxx reason` on the line above) and configured levels are applied here, so
// every consumer (the CLI, the agent) sees the same findings; suppressed ones
// are kept and marked, never dropped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "language/diagnostics.h"
#include "language/loader.h"

namespace ward::lint {

enum class Level { kOff, kNote, kWarning, kError };
std::string_view LevelName(Level level);  // "off", "note", "warning", "error"
// Parses "off", "note", "warning" or "error".
std::optional<Level> ParseLevel(std::string_view text);

enum class Family { kSyscalls, kNetwork, kFilesystem, kProcess, kHygiene };

struct RuleInfo {
  std::string_view id;    // "L2101"
  std::string_view name;  // "default-allow"
  Family family;
  Level level;                 // the default level
  std::string_view rationale;  // one line: why it matters
  std::string_view help;       // what to do about it
};

// The catalogue, sorted by id (rules.cc). Every rule a finding names is here.
const std::vector<RuleInfo>& AllRules();
const RuleInfo* FindRule(std::string_view id);

// A mechanical edit: replace the bytes of `span` (empty for an insertion)
// with `replacement`.
struct Fix {
  std::string description;
  Span span;
  std::string replacement;
};

struct Finding {
  const RuleInfo* rule = nullptr;
  Level level = Level::kWarning;  // after configuration
  Span span;                      // primary
  // The statement the finding is about, when it starts on another line than
  // `span`: a suppression above either line applies.
  Span anchor;
  std::string message;
  std::string hint;
  std::vector<Related> related;  // at most DiagnosticSink::kMaxRelated
  std::optional<Fix> fix;
  // Set by suppression comments and by rules configured `off`.
  bool suppressed = false;
  bool suppressed_in_source = false;  // a comment (else the configuration)
  std::string suppression_reason;
  Span suppression_span;  // the comment
};

struct Config {
  std::map<std::string, Level, std::less<>> levels;  // rule id -> level
};

// Parses `.ward-lint.yaml` text: `rules: {L2101: error, L2502: off}`.
// Returns false with *error set (unknown rule, unknown level, bad YAML).
bool ParseConfig(const std::string& text, Config* config, std::string* error);

struct Options {
  Config config;
  // A configuration per file (`ward lint` finds one upward from each file):
  // a finding takes the one of the file it is in, else `config`.
  std::map<FileId, Config> file_configs;
  // Where `~` points for the filesystem probes (credentials, shell files).
  std::string home = "/home/user";
};

// Lints every non-abstract policy of the program's root files (bases are
// linted through the policies that extend them), plus the root files' lets,
// groups and suppression comments. The program must have checked without
// errors; errors found while lowering (W1043) go to `sink` and that policy is
// not linted. Findings come back sorted by file, position and rule, each once.
std::vector<Finding> Lint(const Program& program, const SourceManager& sources,
                          const Options& options, DiagnosticSink& sink);

}  // namespace ward::lint
