// `ward import --from FORMAT FILE [-o OUT]`: other formats to Ward source
// text (importers/, whose registry.cc lists the formats). The text is
// checked as `ward check` would before it is written: an import that would
// not check is a bug, reported and never written. `--strict` makes every
// warning an error.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "compiler/policy.h"
#include "enforcers/linux/files.h"
#include "importers/checked_import.h"
#include "importers/docker_seccomp.h"
#include "importers/registry.h"
#include "importers/spo_seccomp.h"
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
  std::string cwd;
  std::vector<std::string> include_dirs;
  bool strict = false;
  OutputFlags output;
};

void PrintImportDiagnostics(const std::string& file,
                            const std::vector<importers::ImportDiagnostic>& diagnostics) {
  for (const importers::ImportDiagnostic& d : diagnostics) {
    std::string at = file;
    if (d.line > 0) at += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
    if (!d.where.empty()) at += (d.line > 0 ? " #" : "#") + d.where;
    std::cerr << at << ": " << (d.severity == Severity::kError ? "error" : "warning") << ": "
              << d.message << "\n";
  }
}

int RunImport(const ImportFlags& flags) {
  // The same checks and words as for a policy file (cli/load.h).
  if (std::string problem = PolicyFileProblem(flags.file); !problem.empty()) {
    std::cerr << "ward import: " << flags.file << ": " << problem << "\n";
    return kUsage;
  }
  std::ifstream in(flags.file, std::ios::binary);
  if (!in) {
    std::cerr << "ward import: " << flags.file << ": cannot read\n";
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
  options.from = flags.from;
  options.path = flags.file;
  options.include_dirs = flags.include_dirs;
  const importers::ImportFormat* format = importers::FindImportFormat(flags.from);
  if (!format) {
    std::cerr << "ward import: unknown format '" << flags.from << "'\n";
    return kUsage;
  }
  if (format->needs_cwd) {
    if (flags.cwd.empty()) {
      std::cerr << "ward import: --from " << flags.from
                << " needs --cwd DIR: the folder the tool would run in (its relative paths "
                   "are resolved there)\n";
      return kUsage;
    }
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::absolute(flags.cwd, ec);
    options.cwd = cwd.lexically_normal().string();
    if (options.cwd.size() > 1 && options.cwd.back() == '/') options.cwd.pop_back();
  }
  importers::CheckedImport checked;
  const std::string input = buffer.str();
  checked.result = format->import(input, options);
  if (flags.from == "docker-seccomp" && !checked.result.ok &&
      importers::LooksLikeSpoSeccomp(input)) {
    checked.result.diagnostics.push_back(
        {Severity::kError, "",
         "this is a security-profiles-operator SeccompProfile: use --from spo-seccomp"});
  }
  if (flags.strict) {
    for (importers::ImportDiagnostic& d : checked.result.diagnostics) {
      if (d.severity != Severity::kWarning) continue;
      d.severity = Severity::kError;
      d.message += " (--strict)";
      checked.result.ok = false;
    }
  }
  if (checked.result.ok) importers::CheckImport(flags.std_dir, &checked);
  importers::ImportResult& result = checked.result;
  PrintImportDiagnostics(flags.file, result.diagnostics);
  if (checked.no_std || checked.internal_error) {
    PrintDiagnostics(checked.sources, checked.sink, flags.output);
  }
  if (checked.no_std) return kUsage;
  if (checked.internal_error) {
    // Ward's fault, not the input's: not a finding (1) but a failure (2).
    std::cerr << "ward import: internal error: the imported policy does not check; "
                 "nothing written\n";
    return kUsage;
  }
  if (!result.ok) {
    std::cerr << "ward import: nothing written\n";
    return kFound;
  }
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
  std::vector<std::string> formats;
  std::string help = "input format:";
  for (const importers::ImportFormat& f : importers::ImportFormats()) {
    formats.push_back(f.name);
    help += std::string(formats.size() == 1 ? " " : "; ") + f.name + " (" + f.summary + ")";
  }
  cmd->add_option("--from", flags->from, help)->required()->check(CLI::IsMember(formats));
  cmd->add_option("file", flags->file, "input file")->required();
  cmd->add_option("-o,--output", flags->out, "output file (default: stdout)");
  cmd->add_option("--name", flags->name, "policy name (default: from the file name)");
  cmd->add_option("--capabilities", flags->capabilities,
                  "capabilities the container keeps, comma-separated: decides includes/excludes "
                  "caps, and the policy keeps them (default: none)")
      ->delimiter(',');
  cmd->add_option("--kernel", flags->kernel,
                  "kernel version that decides minKernel (default: new enough for all)");
  cmd->add_option("--cwd", flags->cwd,
                  "srt: the folder srt would run in (relative paths, mandatory denies)");
  cmd->add_option("-I,--include-dir", flags->include_dirs,
                  "kafel: a folder `#include` looks in after the including file's own");
  cmd->add_flag("--strict", flags->strict, "every warning is an error: nothing is written");
  cmd->add_option("--std", flags->std_dir, "standard library folder (for the check)");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunImport(*flags); });
}

}  // namespace ward::cli
