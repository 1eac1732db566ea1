// `ward ir`: the IR as stable JSON (documented in compiler/README.md):
// sorted, versioned, provenance as "file:line:col" strings.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "compiler/policy.h"

namespace ward::ir {

inline constexpr int kIrJsonVersion = 1;

nlohmann::ordered_json ToJson(const Policy& policy, const SourceManager& sources);

// The reverse, for IR received from elsewhere (agent bundles): lossless for
// the canonical form, FromJson(ToJson(p)) == p; provenance is not restored.
// Untrusted input: malformed JSON or a broken invariant (overlapping pieces,
// syscall regions that overlap or do not cover every input) is an error
// naming the field, never a crash or a partial policy.
std::optional<Policy> FromJson(const nlohmann::json& j, std::string* error);
// The same for an IR stored without its syscalls section (`syscalls`
// false): the section must be absent and stays empty. The run cache keeps
// the compiled filter instead (enforcers/run/run_cache.h); the section is most of the
// IR's size and of the time to read it.
std::optional<Policy> FromJson(const nlohmann::json& j, std::string* error, bool syscalls);

// One network decision (ports by protocol, ICMP) as the IR's JSON writes
// it, and back (nullopt and *error on anything malformed): for records of
// their own that hold decisions (the run cache's source rules).
nlohmann::ordered_json DecisionToJson(const NetDecision& decision);
std::optional<NetDecision> DecisionFromJson(const nlohmann::json& j, std::string* error);

// "file:line:col" for a span.
std::string Where(const SourceManager& sources, Span span);

}  // namespace ward::ir
