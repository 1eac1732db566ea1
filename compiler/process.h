// The IR of the process and limits sections, the description, labels and
// target blocks, merged over the extends order as language.md § Extends says.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "language/ast.h"

namespace ward::ir {

struct ProcessRules {
  // On when the process section is absent from every source (the strictest
  // reading) or any source sets it; nothing switches it off again.
  bool no_new_privileges = true;
  // Capabilities kept (a union over sources); every other one is dropped.
  // `drop all` keeps none and so adds nothing.
  std::set<std::string> capabilities_kept;
  std::optional<std::pair<uint32_t, uint32_t>> user;  // last writer wins
  std::set<std::string> env_allowed;                  // union; "LC_*" prefixes
  bool operator==(const ProcessRules&) const = default;
};

struct LimitValue {
  uint64_t value = 0;  // bytes, count, milli-CPUs or milliseconds
  Span span;           // provenance (not compared)
  bool operator==(const LimitValue& o) const { return value == o.value; }
};

// Keyed by the limit's name ("cpus", "memory", ...); last writer wins.
using Limits = std::map<std::string, LimitValue>;

struct TargetSetting {
  std::string value;                          // a scalar setting, as written
  std::map<std::string, std::string> labels;  // a block setting
  std::vector<std::string> flags;
  Span span;  // provenance (not compared)
  bool operator==(const TargetSetting& o) const {
    return value == o.value && labels == o.labels && flags == o.flags;
  }
};

// target name -> key -> setting; last writer wins, key by key.
using Targets = std::map<std::string, std::map<std::string, TargetSetting>>;

struct Metadata {
  std::string description;                    // last writer wins
  std::map<std::string, std::string> labels;  // last writer wins, key by key
  bool operator==(const Metadata&) const = default;
};

ProcessRules LowerProcess(const std::vector<const ast::Policy*>& sources);
Limits LowerLimits(const std::vector<const ast::Policy*>& sources);
Targets LowerTargets(const std::vector<const ast::Policy*>& sources);
Metadata LowerMetadata(const std::vector<const ast::Policy*>& sources);

}  // namespace ward::ir
