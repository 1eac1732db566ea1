// `ward run FILE [--policy NAME] [--dry-run] -- CMD ARGS...`: one command
// under the whole policy (enforcers/run/run.h does the work). Argument
// parsing and output only. The command's exit status passes through, so
// ward run's own failures use the codes env(1) and chroot(1) use
// (enforcers/run/run.h): 125 set-up failed, 126/127 cannot execute / not
// found, 124 a limit ended the run.
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <set>
#include <string_view>

#include "cli/commands.h"
#include "cli/dns_flags.h"
#include "cli/load.h"
#include "cli/run_cache.h"
#include "enforcers/run/run.h"

namespace ward::cli {
namespace {

struct RunFlags {
  std::string file;
  std::optional<std::string> policy;
  std::optional<std::string> home;
  std::string std_dir;
  std::vector<std::string> command;
  enforce::DnsOptions dns;  // --dns-server, --dns-port, --ttl-floor, --ttl-cap
  bool dry_run = false;
  OutputFlags output;
};

// Prepares and runs the command under `ir`; `sources` and `sink` hold what
// the policy was read from and its diagnostics so far (the plan's own are
// added and printed with them). `policy_hash` keys the caches of filters
// and programs; `filter`, when given, is the run cache's compiled filter.
// `front_end` says for --dry-run where the IR came from; `prepared` sees
// the plan before the command starts (the compiled run stores the policy
// in the run cache then).
int Run(const RunFlags& flags, const ir::Policy& ir, const SourceManager& sources,
        const std::string& policy_hash, const std::optional<std::string>& filter,
        DiagnosticSink& sink, const std::string& front_end,
        const std::function<void(const enforce::RunPlan&)>& prepared) {
  enforce::RunOptions options;
  options.home = flags.home;
  options.dns = flags.dns;
  options.policy_hash = policy_hash;
  options.filter = filter;
  options.report = [](const std::string& message) { std::cerr << "ward run: " << message << "\n"; };
  std::string error;
  enforce::RunPlanPtr plan =
      enforce::PrepareRun(ir, flags.command, options, flags.dry_run, sink, &error);
  if (!sink.diagnostics().empty()) {
    OutputFlags text = flags.output;
    text.format = "text";
    PrintDiagnostics(sources, sink, text);
  }
  if (!plan) {
    std::cerr << "ward run: " << (error.empty() ? "the policy cannot be enforced here" : error)
              << "; the command was not started\n";
    return enforce::kRunSetupFailed;
  }
  if (flags.dry_run) {
    std::cout << enforce::DescribeRun(*plan) << "front end: " << front_end << "\n";
    return kOk;
  }
  if (prepared) prepared(*plan);
  std::cerr << std::flush;
  std::cout << std::flush;
  const int code = enforce::ExecuteRun(*plan, &error);
  if (!error.empty()) {
    std::cerr << "ward run: " << error
              << (code == enforce::kRunSetupFailed ? "; the command was not started" : "") << "\n";
  }
  return code;
}

int RunRun(const RunFlags& flags) {
  if (flags.command.empty()) {
    std::cerr << "ward run: no command; usage: ward run FILE [--policy NAME] -- CMD ARGS...\n";
    return enforce::kRunSetupFailed;
  }
  if (!CheckDnsFlags("run", flags.dns)) return enforce::kRunSetupFailed;
  int exit_code = kOk;
  auto loaded = LoadPolicy(flags.file, flags.policy, flags.std_dir, flags.output, &exit_code);
  if (!loaded) return enforce::kRunSetupFailed;
  // Stored for the next run (by a real run: `prepared` is not called for a
  // dry one) only when nothing was said about the policy (a run from the
  // cache must print what this one prints) and the workload may not write
  // the cache.
  const std::string policy_hash = RunPolicyHash(loaded->ir.name, loaded->sources);
  const enforce::RunOptions defaults;
  const bool store =
      loaded->sink.diagnostics().empty() && geteuid() == 0 &&
      !loaded->ir.filesystem.Decide(defaults.run_cache_dir + "/x", ir::FsRight::kWrite, flags.home)
           .allow;
  // (The plan's own warnings are not the front end's: a run from the
  // cache prepares the plan again and prints them the same.)
  auto prepared = [&](const enforce::RunPlan& plan) {
    if (!store) return;
    const std::string key = RunCacheKey(flags.file, flags.policy, flags.std_dir);
    WriteRunCache(RunCacheEntry(defaults.run_cache_dir, key), key, *loaded, policy_hash,
                  enforce::PlannedFilter(plan));
  };
  return Run(flags, loaded->ir, loaded->sources, policy_hash, std::nullopt, loaded->sink,
             "compiled now", prepared);
}

}  // namespace

int RunFromCache(int argc, char** argv) {
  enforce::RunTrace("main");
  // Root only (the cache is root's), and the plain form of the command
  // line: FILE, --policy, --home, --std, --dry-run, then `--` and the
  // command. Anything else is CLI11's to parse.
  if (argc < 5 || std::string_view(argv[1]) != "run" || geteuid() != 0) return -1;
  if (const char* off = std::getenv("WARD_RUN_CACHE"); off && std::string_view(off) == "0") {
    return -1;
  }
  RunFlags flags;
  std::set<std::string_view> seen;
  bool have_file = false;
  int i = 2;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--dry-run") {
      if (!seen.insert(arg).second) return -1;
      flags.dry_run = true;
      continue;
    }
    bool matched = false;
    for (const char* name : {"--policy", "--home", "--std"}) {
      const std::string_view n = name;
      std::optional<std::string> value;
      if (arg == n && i + 1 < argc) {
        value = argv[++i];
      } else if (arg.size() > n.size() && arg.substr(0, n.size()) == n && arg[n.size()] == '=') {
        value = std::string(arg.substr(n.size() + 1));
      } else {
        continue;
      }
      if (!seen.insert(n).second) return -1;  // CLI11's rules for repeats
      if (n == "--policy") {
        flags.policy = value;
      } else if (n == "--home") {
        flags.home = value;
      } else {
        flags.std_dir = *value;
      }
      matched = true;
      break;
    }
    if (matched) continue;
    if (arg.empty() || arg[0] == '-' || have_file) return -1;
    flags.file = std::string(arg);
    have_file = true;
  }
  if (!have_file || i + 1 >= argc) return -1;
  for (++i; i < argc; ++i) flags.command.emplace_back(argv[i]);
  const enforce::RunOptions defaults;
  const std::string key = RunCacheKey(flags.file, flags.policy, flags.std_dir);
  const std::string entry = RunCacheEntry(defaults.run_cache_dir, key);
  enforce::RunTrace("key");
  std::optional<CachedPolicy> cached = ReadRunCache(entry, key);
  enforce::RunTrace("cache read");
  if (!cached) return -1;
  DiagnosticSink sink;
  return Run(flags, cached->ir, cached->sources, cached->policy_hash, cached->filter, sink,
             "from the run cache " + entry, nullptr);
}

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "Run one command under the whole policy");
  cmd->add_option("file", f->file, "policy file")->required();
  cmd->add_option("command", f->command, "the command and its arguments, after --");
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  cmd->add_option("--home", f->home, "what ~ stands for (default: the run user's home)");
  cmd->add_flag("--dry-run", f->dry_run, "print each layer and what it enforces; start nothing");
  AddDnsFlags(cmd, &f->dns);
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunRun(*f); });
}

}  // namespace ward::cli
