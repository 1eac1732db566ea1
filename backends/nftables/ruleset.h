// The nftables ruleset of one policy (README.md): one `inet` table
// `ward_<policy>` holding the IR's network partition in named sets, the
// policy chains that look them up, and the base chains a scope dispatches
// from. Rendered as nft text and as libnftables JSON, byte for byte
// deterministic. Pure: no kernel, no files, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/resolved.h"
#include "compiler/policy.h"
#include "language/diagnostics.h"

namespace ward::backend::nftables {

// Who the table applies to; chosen by `ward apply`, absent in `ward
// compile`'s artifacts (their base chains then dispatch nothing).
struct Scope {
  enum class Kind { kCgroup, kUid, kInterface };
  Kind kind = Kind::kCgroup;
  // kCgroup: the path relative to the cgroup v2 root ("a/b") and its depth
  // (2), as `socket cgroupv2 level N "PATH"` takes them.
  std::string cgroup_path;
  int cgroup_level = 0;
  uint32_t uid = 0;       // kUid
  std::string interface;  // kInterface: a VM's tap
};

using backend::ResolvedAddress;

struct RenderOptions {
  // The flow generation: every flow a chain allows gets this ct mark, and a
  // packet of a flow marked with it passes without another lookup. `ward
  // apply` raises it by one on each apply.
  uint32_t generation = 1;
  std::optional<Scope> scope;
  // The domain sets' elements (none in `ward compile`'s artifacts).
  std::vector<ResolvedAddress> resolved;
  // Ruleset::json too (`ward apply` loads the text only: building the JSON
  // value tree as well doubled the render time of a large table).
  bool render_json = true;
};

struct Ruleset {
  std::string table;    // "ward_<policy>"
  std::string text;     // nft -f input: replaces the table in one transaction
  std::string json;     // the same transaction as libnftables JSON (if render_json)
  size_t elements = 0;  // set elements in all
};

// Fails (false, diagnostics in `sink`) for what nftables cannot enforce
// exactly: a deny by domain (B3002). Domain allows are warned about: they are
// not in the table (approximated towards deny).
bool RenderRuleset(const ir::Policy& policy, const RenderOptions& options, Ruleset* out,
                   DiagnosticSink& sink);

// Whether the policy has domain grants this backend turns into timed sets
// (allows of names without a wildcard).
bool HasResolvableDomains(const ir::Policy& policy);

// The commands that replace the domain sets' elements in one transaction
// (flush, then add with timeouts), for a table RenderRuleset made from the
// same policy: how `ward apply --refresh` keeps the sets fresh, and how a
// DNS-aware resolver would add answers without reloading the table.
std::string DomainRefreshText(const ir::Policy& policy,
                              const std::vector<ResolvedAddress>& resolved);

// The text that deletes the table (absent or not) in one transaction.
std::string RemoveText(const std::string& table);

// "ward_" + the policy name (letters, digits, '-', '_').
std::string TableName(const std::string& policy);

}  // namespace ward::backend::nftables
