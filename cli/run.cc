// `ward run FILE [--policy NAME] [--dry-run] -- CMD ARGS...`: one command
// under the whole policy (enforcers/run/run.h does the work). Argument
// parsing and output only. The command's exit status passes through, so
// ward run's own failures use the codes env(1) and chroot(1) use
// (enforcers/run/run.h): 125 set-up failed, 126/127 cannot execute / not
// found, 124 a limit ended the run.
#include <sys/stat.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/dns_flags.h"
#include "cli/load.h"
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

int RunRun(const RunFlags& flags) {
  if (flags.command.empty()) {
    std::cerr << "ward run: no command; usage: ward run FILE [--policy NAME] -- CMD ARGS...\n";
    return enforce::kRunSetupFailed;
  }
  int exit_code = kOk;
  auto loaded = LoadPolicy(flags.file, flags.policy, flags.std_dir, flags.output, &exit_code);
  if (!loaded) return enforce::kRunSetupFailed;

  enforce::RunOptions options;
  options.home = flags.home;
  options.dns = flags.dns;
  if (!CheckDnsFlags("run", flags.dns)) return enforce::kRunSetupFailed;
  // The key of the caches (seccomp filter, loaded programs): the texts the
  // policy was read from and the policy chosen, which fix its IR; hashing
  // the IR itself would cost more than the rest of the start-up.
  std::string key = std::string("ward ") + WARD_VERSION + "\npolicy " + loaded->ir.name + "\n";
  // And this very binary: another build of the same version may compile
  // the same policy differently.
  struct stat exe;
  if (stat("/proc/self/exe", &exe) == 0) {
    key += "exe " + std::to_string(exe.st_dev) + ":" + std::to_string(exe.st_ino) + ":" +
           std::to_string(exe.st_size) + ":" + std::to_string(exe.st_mtim.tv_sec) + "." +
           std::to_string(exe.st_mtim.tv_nsec) + "\n";
  }
  for (size_t i = 0; i < loaded->sources.size(); ++i) {
    const SourceFile& f = loaded->sources.file(static_cast<FileId>(i));
    key += f.real_path + "\n" + std::to_string(f.text.size()) + "\n" + f.text;
  }
  options.policy_hash = Sha256(key);
  options.report = [](const std::string& message) { std::cerr << "ward run: " << message << "\n"; };
  std::string error;
  enforce::RunPlanPtr plan =
      enforce::PrepareRun(loaded->ir, flags.command, options, flags.dry_run, loaded->sink, &error);
  if (!loaded->sink.diagnostics().empty()) {
    OutputFlags text = flags.output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, loaded->sink, text);
  }
  if (!plan) {
    std::cerr << "ward run: " << (error.empty() ? "the policy cannot be enforced here" : error)
              << "; the command was not started\n";
    return enforce::kRunSetupFailed;
  }
  if (flags.dry_run) {
    std::cout << enforce::DescribeRun(*plan);
    return kOk;
  }
  std::cerr << std::flush;
  std::cout << std::flush;
  const int code = enforce::ExecuteRun(*plan, &error);
  if (!error.empty()) {
    std::cerr << "ward run: " << error
              << (code == enforce::kRunSetupFailed ? "; the command was not started" : "") << "\n";
  }
  return code;
}

}  // namespace

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
