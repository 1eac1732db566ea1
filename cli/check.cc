// `ward check FILE...`: parse and check; diagnostics only.
#include <iostream>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "compiler/policy.h"
#include "language/check.h"

namespace ward::cli {
namespace {

struct CheckFlags {
  std::vector<std::string> files;
  std::string std_dir;
  OutputFlags output;
};

int RunCheck(const CheckFlags& flags) {
  PolicyInputs inputs;
  if (!ExpandPolicyInputs("check", flags.files, /*folders=*/true, &inputs)) return kUsage;
  const std::vector<std::string>& paths = inputs.paths;
  if (paths.empty()) {
    std::cerr << "ward check: no .ward files found\n";
    return kUsage;
  }
  SourceManager sources;
  DiagnosticSink sink;
  FrontendOptions options = FrontendFor(inputs, flags.std_dir);
  Program program = RunFrontend(paths, options, sources, sink);
  // Errors found only while lowering (syscall conflicts, too many regions)
  // are check's to report too.
  if (!sink.has_errors() && program.std_syscalls != kNoFile) ir::CheckLowering(program, sink);
  PrintDiagnostics(sources, sink, flags.output);
  if (program.std_syscalls == kNoFile) return kUsage;  // no standard library
  if (flags.output.format == "text") {
    size_t policies = 0;
    for (FileId id : program.roots) {
      if (const ast::File* f = program.file(id)) policies += f->policies.size();
    }
    std::cout << "checked " << paths.size() << " file" << (paths.size() == 1 ? "" : "s") << ", "
              << policies << " polic" << (policies == 1 ? "y" : "ies") << ": " << sink.error_count()
              << " error" << (sink.error_count() == 1 ? "" : "s") << ", " << sink.warning_count()
              << " warning" << (sink.warning_count() == 1 ? "" : "s") << "\n";
  }
  return sink.has_errors() ? kFound : kOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and check policies; print diagnostics");
  cmd->add_option("files", flags->files,
                  "policy files or folders (every .ward below); - for standard input")
      ->required();
  cmd->add_option("--std", flags->std_dir,
                  "standard library folder (default: $WARD_STD, then a vendored "
                  ".ward/std or policies/std upward, then share/ward/std beside the binary)");
  cmd->add_option("--format", flags->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunCheck(*flags); });
}

}  // namespace ward::cli
