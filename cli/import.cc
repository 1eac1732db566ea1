// `ward import --from FORMAT FILE [-o OUT]`: other formats to Ward source
// text (importers/). The text is checked as `ward check` would before it is
// written: an import that would not check is a bug, reported and never
// written.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/output.h"
#include "compiler/policy.h"
#include "enforcers/linux/files.h"
#include "importers/docker_seccomp.h"
#include "language/check.h"

namespace ward::cli {
namespace {

struct ImportFlags {
  std::string from;
  std::string file;
  std::string out;
  std::string name;
  std::vector<std::string> capabilities;
  std::string kernel;
  std::string std_dir;
  OutputFlags output;
};

void PrintImportDiagnostics(const std::string& file,
                            const std::vector<importers::ImportDiagnostic>& diagnostics) {
  for (const importers::ImportDiagnostic& d : diagnostics) {
    std::cerr << file << (d.where.empty() ? "" : "#" + d.where) << ": "
              << (d.severity == Severity::kError ? "error" : "warning") << ": " << d.message
              << "\n";
  }
}

// The front end and the lowering on the imported text; false after
// printing what they found.
bool Verify(const std::string& text, const ImportFlags& flags, int* exit_code) {
  SourceManager sources;
  DiagnosticSink sink;
  FrontendOptions options;
  options.std_dir = flags.std_dir;
  options.memory_files["imported.ward"] = text;
  Program program = RunFrontend({"imported.ward"}, options, sources, sink);
  if (!sink.has_errors()) ir::CheckLowering(program, sink);
  if (!sink.has_errors()) return true;
  PrintDiagnostics(sources, sink, flags.output);
  if (program.std_syscalls == kNoFile) {
    *exit_code = kUsage;
  } else {
    std::cerr << "ward import: internal error: the imported policy does not check; "
                 "nothing written\n";
    *exit_code = kFound;
  }
  return false;
}

int RunImport(const ImportFlags& flags) {
  std::ifstream in(flags.file, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(flags.file, ec)) {
    std::cerr << "ward: " << flags.file << ": no such file\n";
    return kUsage;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();

  importers::DockerImportOptions options;
  options.name = flags.name.empty() ? importers::PolicyNameFromPath(flags.file) : flags.name;
  options.source = std::filesystem::path(flags.file).filename().string();
  options.capabilities = flags.capabilities;
  std::sort(options.capabilities.begin(), options.capabilities.end());
  options.capabilities.erase(std::unique(options.capabilities.begin(), options.capabilities.end()),
                             options.capabilities.end());
  if (!flags.kernel.empty()) {
    options.kernel = importers::ParseKernelVersion(flags.kernel);
    if (!options.kernel) {
      std::cerr << "ward import: --kernel takes MAJOR.MINOR[.PATCH], not '" << flags.kernel
                << "'\n";
      return kUsage;
    }
  }
  importers::ImportResult result = importers::ImportDockerSeccomp(buffer.str(), options);
  PrintImportDiagnostics(flags.file, result.diagnostics);
  if (!result.ok) {
    std::cerr << "ward import: nothing written\n";
    return kFound;
  }
  int exit_code = kOk;
  if (!Verify(result.text, flags, &exit_code)) return exit_code;
  if (flags.out.empty()) {
    std::cout << result.text;
    return kOk;
  }
  std::string error;
  if (!enforce::WriteUserFile(flags.out, result.text, &error)) {
    std::cerr << "ward import: cannot write " << error << "\n";
    return kUsage;
  }
  return kOk;
}

}  // namespace

void AddImportCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand("import", "Translate another format to Ward source text");
  cmd->add_option("--from", flags->from, "input format")
      ->required()
      ->check(CLI::IsMember({"docker-seccomp"}));
  cmd->add_option("file", flags->file, "input file")->required();
  cmd->add_option("-o,--output", flags->out, "output file (default: stdout)");
  cmd->add_option("--name", flags->name, "policy name (default: from the file name)");
  cmd->add_option("--capabilities", flags->capabilities,
                  "capabilities the container keeps, comma-separated: decides includes/excludes "
                  "caps, and the policy keeps them (default: none)")
      ->delimiter(',');
  cmd->add_option("--kernel", flags->kernel,
                  "kernel version that decides minKernel (default: new enough for all)");
  cmd->add_option("--std", flags->std_dir, "standard library folder (for the check)");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunImport(*flags); });
}

}  // namespace ward::cli
