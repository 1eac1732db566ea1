// `ward diff OLD NEW [--policy NAME] [--format text|json] [--fail-on widen|any]`:
// the permissions gained and lost between two versions of a policy, each
// change with the rules behind it (compiler/diff.h has the line formats).
//
// Text: one line per change, then one indented line per rule: the OLD rules
// behind a loss first, the NEW rules behind a gain first, each as
// `file:line:col: rule text`; equivalent policies print `no changes`.
// JSON: {"version": 1, "changes": [{"section", "kind", "line", "old_rules",
// "new_rules"}]} with rules as "file:line:col", plus "example" on filesystem
// changes (a path whose decision changed) and syscall changes (a call whose
// action changed: "x86_64 clone(arg0=0x10000000)").
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/diff_print.h"
#include "cli/load.h"
#include "compiler/diff.h"

namespace ward::cli {
namespace {

struct DiffFlags {
  std::string old_file;
  std::string new_file;
  std::optional<std::string> policy;
  std::optional<std::string> home;
  std::string std_dir;
  std::string fail_on;
  OutputFlags output;
};

int RunDiff(const DiffFlags& f) {
  // Both files before either is loaded: no diagnostics for OLD when NEW is
  // not there.
  for (const std::string& file : {f.old_file, f.new_file}) {
    if (file == kStdinArg) continue;
    if (std::string problem = PolicyFileProblem(file); !problem.empty()) {
      std::cerr << "ward diff: " << file << ": " << problem << "\n";
      return kUsage;
    }
  }
  if (f.old_file == kStdinArg && f.new_file == kStdinArg) {
    std::cerr << "ward diff: only one of OLD and NEW can be - (standard input)\n";
    return kUsage;
  }
  if (f.home && (f.home->empty() || (*f.home)[0] != '/')) {
    std::cerr << "ward diff: --home must be an absolute path\n";
    return kUsage;
  }
  int exit_code = kOk;
  auto before = LoadPolicy(f.old_file, f.policy, f.std_dir, f.output, &exit_code);
  if (!before) return exit_code;
  auto after = LoadPolicy(f.new_file, f.policy, f.std_dir, f.output, &exit_code);
  if (!after) return exit_code;
  ir::DiffOptions options;
  if (f.home) options.home = *f.home;
  ir::DiffResult result = ir::Diff(before->ir, after->ir, options);
  if (f.output.format == "json") {
    PrintDiffJson(result, before->sources, after->sources, {});
  } else {
    PrintDiffText(result, before->sources, after->sources, UseColor(f.output, STDOUT_FILENO));
  }
  return DiffFails(result, f.fail_on) ? kFound : kOk;
}

}  // namespace

void AddDiffCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<DiffFlags>();
  CLI::App* cmd =
      app.add_subcommand("diff",
                         "Show the permissions gained and lost between two policies (--host URL "
                         "FILE: between a policy and what a host's wardd enforces)");
  cmd->add_option("old", f->old_file, "the policy before")->required();
  cmd->add_option("new", f->new_file, "the policy after")->required();
  cmd->add_option("--policy", f->policy, "the policy, when the files hold several (both files)");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--home", f->home,
                  "the home directory that ~ stands for (default: one no rule names)");
  cmd->add_option("--fail-on", f->fail_on,
                  "exit 1 when there is a widening (widen) or any change (any)")
      ->check(CLI::IsMember({"widen", "any"}));
  cmd->add_option("--format", f->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunDiff(*f); });
}

}  // namespace ward::cli
