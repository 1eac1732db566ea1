// Writes Ward source text for what importers produce: policies with a
// syscalls section and, optionally, the capabilities they keep. The text is
// formatted the way `ward fmt` would lay it out by hand: four-space
// indents, long name lists continued after a comma.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ward::importers {

// A syscall action, from least to most restrictive (language.md).
enum class WardActionKind { kAllow, kLog, kNotify, kErrno, kTrap, kKillThread, kKill };

struct WardAction {
  WardActionKind kind = WardActionKind::kKill;
  int errno_value = 0;  // kErrno only
  bool operator==(const WardAction&) const = default;
  int Rank() const { return static_cast<int>(kind); }
};

// "allow", "errno EPERM" (the errno's name when it has one), ...
std::string ActionText(const WardAction& action);

struct WardRule {
  WardAction action;
  std::vector<std::string> names;
  std::vector<std::string> conditions;  // joined with `and`; empty: unconditional
  std::vector<std::string> comments;    // lines written above the rule
  std::string origin;                   // the input's place that made it (a JSON pointer)
};

struct WardPolicy {
  std::string name;
  std::vector<std::string> arches;  // empty: no `arch` line
  WardAction default_action;
  std::vector<WardRule> rules;
  // With a process section: `no_new_privileges` and `capabilities keep`.
  bool keeps_capabilities = false;
  std::vector<std::string> capabilities;
};

// Where in the Ward text a rule with an origin was written.
struct RuleOrigin {
  size_t first_line = 0;  // 1-based, the rule's first line
  size_t last_line = 0;
  std::string where;
};

// `header` lines become `//` comments at the top of the file. `origins`
// (when given) gets the lines of every rule that has an origin.
std::string WriteWard(const std::vector<std::string>& header,
                      const std::vector<WardPolicy>& policies,
                      std::vector<RuleOrigin>* origins = nullptr);

// Text made safe for a `//` comment: control characters and invalid UTF-8
// become spaces.
std::string CommentText(std::string_view text);

}  // namespace ward::importers
