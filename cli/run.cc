// `ward run FILE [--policy NAME] [--dry-run] [--partial] [--log FILE|-] [--quiet] -- CMD ARGS...`:
// one command under the whole policy (enforcers/run/run.h does the work). Argument parsing and
// output only. The command's exit status passes through, so ward run's own failures use the codes
// env(1) and chroot(1) use (enforcers/run/run.h): 125 set-up failed, 126/127 cannot execute / not
// found, 124 a limit ended the run.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/dns_flags.h"
#include "cli/load.h"
#include "cli/programs.h"
#include "cli/run_exec.h"
#include "enforcers/run/run.h"
#include "enforcers/run/run_cache.h"

namespace ward::cli {
namespace {

int RunRun(const RunFlags& flags) {
  if (flags.command.empty()) {
    std::cerr << "ward run: no command; usage: ward run FILE [--policy NAME] -- CMD ARGS...\n";
    return enforce::kRunSetupFailed;
  }
  if (!CheckDnsFlags("run", flags.dns)) return enforce::kRunSetupFailed;
  if (flags.output.format == "json" && !flags.dry_run) {
    // A run's own output is the command's; JSON describes a plan only.
    std::cerr << "ward run: --format json needs --dry-run\n";
    return enforce::kRunSetupFailed;
  }
  if (flags.file == kStdinArg) {  // the command's standard input, not a policy
    std::cerr << "ward run: the policy cannot be - (standard input is the command's)\n";
    return enforce::kRunSetupFailed;
  }
  int exit_code = kOk;
  auto loaded = LoadPolicyForReport(flags.file, flags.policy, flags.std_dir, flags.output,
                                    DryRunDocument(), &exit_code);
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
    const std::string key =
        enforce::RunCacheKey(flags.file, flags.policy, flags.std_dir, ProgramsKey());
    enforce::WriteRunCache(enforce::RunCacheEntry(defaults.run_cache_dir, key), key, *loaded,
                           policy_hash, enforce::PlannedFilter(plan), enforce::PlannedGuard(plan));
  };
  return Run(flags, loaded->ir, loaded->sources, policy_hash, std::nullopt, std::nullopt,
             loaded->sink, "compiled now", prepared);
}

}  // namespace

std::string RunPolicyHash(const std::string& policy_name, const SourceManager& sources) {
  std::string key = std::string("ward ") + WARD_VERSION + "\npolicy " + policy_name + "\n";
  key += "exe " + ProgramsIdentity() + "\n";
  for (size_t i = 0; i < sources.size(); ++i) {
    const SourceFile& f = sources.file(static_cast<FileId>(i));
    key += f.real_path + "\n" + std::to_string(f.text.size()) + "\n" + f.text;
  }
  return Sha256(key);
}

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "Run one command under the whole policy");
  cmd->add_option("file", f->file, "policy file")->required();
  cmd->add_option("command", f->command, "the command and its arguments, after --");
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  cmd->add_option("--home", f->home, "what ~ stands for (default: the run user's home)");
  cmd->add_flag("--dry-run", f->dry_run, "print each layer and what it enforces; start nothing");
  cmd->add_option("--format", f->output.format,
                  "with --dry-run: text, or json (each layer as data)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--partial", f->partial,
                "deny whole what Landlock cannot carve out of an allow (a warning, not an error)");
  cmd->add_option("--log", f->log,
                  "every denial of the run as JSON lines to FILE (- for standard output)");
  cmd->add_flag("--quiet", f->quiet, "with --log: no line per denial on a terminal's stderr");
  AddDnsFlags(cmd, &f->dns);
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunRun(*f); });
}

}  // namespace ward::cli
