// One command, many hosts (issue 21, "Push to many hosts"): the host list
// (--hosts FILE, repeated --host), the canary and the failure budget, a
// bounded fan-out, and what is shown while it runs and after. No gRPC here:
// a host's work is the caller's task (cli/remote.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ward::cli {

// The fleet flags, as given.
struct FleetFlags {
  std::vector<std::string> hosts;  // --host, repeated
  std::string hosts_file;          // --hosts FILE
  int parallel = 32;               // --parallel N
  std::string timeout = "30s";     // --timeout DURATION: each call's deadline
  std::string canary;              // --canary N|P%
  std::string max_failures;        // --max-failures N|P%
};

// The hosts in order: --hosts FILE's lines (surrounding blanks trimmed, `#`
// to the end of a line a comment, blank lines skipped), then each --host.
// False and *error for an unreadable file, no host at all, or a host named
// twice (refused, not folded: a fleet file that names a host twice is a
// mistake, and canary and failure counts would count it twice).
bool ResolveHosts(const FleetFlags& flags, std::vector<std::string>* hosts, std::string* error);

// "N" or "P%" (0 to 100) of `total` hosts; a percentage is rounded up when
// `round_up` (a canary of 10% of 5 hosts is 1 host), down otherwise (a
// budget of 10% of 5 hosts is 0 failures). nullopt for anything else.
std::optional<size_t> ParseCount(const std::string& text, size_t total, bool round_up);

// What happened on one host.
struct HostResult {
  bool ok = false;
  bool skipped = false;  // never started: a canary failed, or the budget was spent
  uint64_t generation = 0;
  bool changed = false;
  std::string result;  // the table's result column: "ok", "drifted", "failed", ...
  std::string detail;  // the progress line after the result ("generation 3 (changed)")
  std::string generation_text = "-", changed_text = "-";  // the table's columns
  std::string error;                                      // "CODE: message", or "skipped: why"
  std::string audit_head;                                 // "SEQ:HASH", or ""
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more JSON keys
  std::vector<std::string> warnings;  // the agent's, for stderr (never in the JSON)
};

struct FleetPlan {
  size_t parallel = 32;
  size_t canary = 0;                   // the first `canary` hosts go first
  std::optional<size_t> max_failures;  // none: every host is tried
  std::string verb = "working";        // the progress line's "pushing..."
  bool terminal = false;               // live lines, rewritten in place
  bool quiet = false;                  // no progress lines (--format json)
};

// Runs `task(i)` for every host i, at most plan.parallel at a time. The
// canary hosts first, and alone: when one of them fails, no other host is
// started and each is reported skipped. Then the rest; once more than
// max_failures of them failed, no further host is started (skipped).
// Progress goes to stdout: on a terminal one line per host rewritten in
// place, otherwise one line per host as it finishes. `task` is called from
// several threads at once.
std::vector<HostResult> RunFleet(const std::vector<std::string>& hosts, const FleetPlan& plan,
                                 const std::function<HostResult(size_t)>& task);

// The summary table (host, result, generation, changed, audit head or
// error), in the hosts' order.
void PrintFleetTable(const std::vector<std::string>& hosts, const std::vector<HostResult>& results);

// {"version": 1, "hosts": [{"host", "ok", "generation", "changed", "error",
// "audit_head", ...extra}]}, in the hosts' order.
void PrintFleetJson(const std::vector<std::string>& hosts, const std::vector<HostResult>& results);

// The hosts' warnings on stderr, each once: "HOST: warning", or "N hosts:
// warning" when several gave it.
void PrintFleetWarnings(const std::vector<std::string>& hosts,
                        const std::vector<HostResult>& results);

// kOk when every host is ok, else kFound (1).
int FleetExit(const std::vector<HostResult>& results);

}  // namespace ward::cli
