// `ward run`'s way from a parsed command line to the command's exit status
// (Run), and the run cache's fast path that skips the command line parser
// and the front end (RunFromCache). Kept apart from the CLI11 subcommand
// (cli/run.cc) so that a program holding only this part links none of the
// front end (the ANTLR parser) nor CLI11.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/output.h"
#include "compiler/policy.h"
#include "enforcers/linux/dns.h"
#include "enforcers/run/run.h"
#include "language/diagnostics.h"
#include "language/source.h"

namespace ward::cli {

struct RunFlags {
  std::string file;
  std::optional<std::string> policy;
  std::optional<std::string> home;
  std::string std_dir;
  std::vector<std::string> command;
  enforce::DnsOptions dns;  // --dns-server, --dns-port, --ttl-floor, --ttl-cap
  bool dry_run = false;
  bool partial = false;  // --partial: Landlock's gaps denied whole (RunOptions)
  // --log FILE|-: every denial as a JSON line (enforcers/run/run_log.h);
  // --quiet: no human line per denial on a terminal's stderr.
  std::optional<std::string> log;
  bool quiet = false;
  OutputFlags output;
};

// Prepares and runs the command under `ir`; `sources` and `sink` hold what
// the policy was read from and its diagnostics so far (the plan's own are
// added and printed with them). `policy_hash` keys the caches of filters
// and programs; `filter` and `guard`, when given, are the run cache's
// compiled filter and guard filter.
// `front_end` says for --dry-run where the IR came from; `prepared` sees
// the plan before the command starts (the compiled run stores the policy
// in the run cache then).
// The IR is taken whole: the run refuses wardd's endpoints in it
// (compiler/agent_guard.h) before it prepares anything.
int Run(const RunFlags& flags, ir::Policy ir, const SourceManager& sources,
        const std::string& policy_hash, const std::optional<std::string>& filter,
        const std::optional<std::string>& guard, DiagnosticSink& sink, const std::string& front_end,
        const std::function<void(const enforce::RunPlan&)>& prepared);

// `ward run --dry-run --format json`'s document when nothing was planned:
// what DescribeRunJson fills, empty (cli/README.md).
Json DryRunDocument();

// `ward run` from the run cache (enforcers/run/run_cache.h), before any argument
// parsing: its exit code, or -1 when the cache does not serve this command
// line (then the normal path compiles the policy).
int RunFromCache(int argc, char** argv);

// What the run cache's entries are for (enforcers/run/run_cache.h): Ward's
// version and the identity of its two executables (cli/programs.h).
std::string ProgramsKey();

// The key of the caches keyed by a policy (seccomp filters, loaded eBPF
// programs): Ward's version, its two executables (cli/programs.h), the
// policy chosen and every text it was read from. Defined in cli/run.cc, with
// the compiled run that stores it (it needs SHA-256, OpenSSL, which the
// `ward` launcher does not link).
std::string RunPolicyHash(const std::string& policy_name, const SourceManager& sources);

}  // namespace ward::cli
