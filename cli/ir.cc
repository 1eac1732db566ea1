// `ward ir FILE [--policy NAME]`: the canonical IR as stable JSON.
#include <iostream>

#include "cli/commands.h"
#include "cli/load.h"
#include "compiler/ir_json.h"

namespace ward::cli {
namespace {

struct IrFlags {
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  OutputFlags output;
};

int RunIr(const IrFlags& flags) {
  int exit_code = kOk;
  auto loaded = LoadPolicy(flags.file, flags.policy, flags.std_dir, flags.output, &exit_code);
  if (!loaded) return exit_code;
  std::cout << ir::ToJson(loaded->ir, loaded->sources).dump(2) << "\n";
  return kOk;
}

}  // namespace

void AddIrCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<IrFlags>();
  CLI::App* cmd = app.add_subcommand("ir", "Print a policy's canonical IR as JSON");
  cmd->add_option("file", flags->file, "policy file; - for standard input")->required();
  cmd->add_option("--policy", flags->policy, "the policy, when the file holds several");
  cmd->add_option("--std", flags->std_dir, "standard library folder");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunIr(*flags); });
}

}  // namespace ward::cli
