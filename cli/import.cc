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
#include "importers/docker_seccomp/docker_seccomp.h"
#include "importers/registry.h"
#include "importers/spo_seccomp/spo_seccomp.h"
#include "language/check.h"

namespace ward::cli {
namespace {

struct ImportFlags {
  std::string from;
  std::vector<std::string> files;
  std::string cluster;
  std::string pod;
  std::string home;
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
    std::string at = d.file.empty() ? file : d.file;
    if (d.line > 0) at += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
    if (!d.where.empty()) at += (d.line > 0 ? " #" : "#") + d.where;
    std::cerr << at << ": " << (d.severity == Severity::kError ? "error" : "warning") << ": "
              << d.message << "\n";
  }
}

// Reads `path` whole, with the same checks and words as for a policy file
// (cli/load.h); false after saying why.
bool ReadImportInput(const std::string& path, std::string* text) {
  if (std::string problem = PolicyFileProblem(path); !problem.empty()) {
    std::cerr << "ward import: " << path << ": " << problem << "\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "ward import: " << path << ": cannot read\n";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

int RunImport(const ImportFlags& flags) {
  const importers::ImportFormat* format = importers::FindImportFormat(flags.from);
  if (!format) {
    std::cerr << "ward import: unknown format '" << flags.from << "'\n";
    return kUsage;
  }
  if (flags.files.size() > 1 && !format->many_files) {
    std::cerr << "ward import: --from " << flags.from << " reads one file, not "
              << flags.files.size() << "\n";
    return kUsage;
  }
  const bool networkpolicy = flags.from == "networkpolicy";
  if (networkpolicy && (flags.cluster.empty() || flags.pod.empty())) {
    std::cerr << "ward import: --from networkpolicy needs --cluster SNAPSHOT (what `kubectl get "
                 "namespaces,pods -A -o json` prints) and --pod NAMESPACE/NAME (the pod whose "
                 "effective policy is imported)\n";
    return kUsage;
  }
  if (!networkpolicy && (!flags.cluster.empty() || !flags.pod.empty())) {
    std::cerr << "ward import: --cluster and --pod are for --from networkpolicy\n";
    return kUsage;
  }
  if (!flags.home.empty() && flags.from != "firejail") {
    std::cerr << "ward import: --home is for --from firejail\n";
    return kUsage;
  }
  std::vector<importers::ImportInput> inputs;
  for (const std::string& file : flags.files) {
    importers::ImportInput input{file, {}};
    if (!ReadImportInput(file, &input.text)) return kUsage;
    inputs.push_back(std::move(input));
  }
  const std::string& first_file = flags.files.front();

  importers::DockerImportOptions options;
  options.name = flags.name.empty() ? importers::PolicyNameFromPath(first_file) : flags.name;
  if (networkpolicy && flags.name.empty()) {
    // The pod's name says what the policy is for; the files' names do not.
    const size_t slash = flags.pod.find('/');
    options.name = importers::PolicyNameFromPath(
        slash == std::string::npos ? flags.pod : flags.pod.substr(slash + 1));
  }
  options.source = std::filesystem::path(first_file).filename().string();
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
  options.path = first_file;
  options.include_dirs = flags.include_dirs;
  options.pod = flags.pod;
  if (!flags.cluster.empty()) {
    options.cluster.path = flags.cluster;
    if (!ReadImportInput(flags.cluster, &options.cluster.text)) return kUsage;
  }
  if (!flags.home.empty()) {
    std::error_code ec;
    options.home = std::filesystem::absolute(flags.home, ec).lexically_normal().string();
    if (options.home.size() > 1 && options.home.back() == '/') options.home.pop_back();
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
  const std::string& input = inputs.front().text;
  options.files = std::move(inputs);
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
  PrintImportDiagnostics(first_file, result.diagnostics);
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
  cmd->add_option("file", flags->files, "input file (networkpolicy: one or more)")->required();
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
  cmd->add_option("--cluster", flags->cluster,
                  "networkpolicy: the cluster's namespaces and pods, as `kubectl get "
                  "namespaces,pods -A -o json` (or -o yaml) prints them");
  cmd->add_option("--pod", flags->pod,
                  "networkpolicy: NAMESPACE/NAME of the pod whose effective policy is imported");
  cmd->add_option("--home", flags->home, "firejail: the home folder ~ and ${HOME} stand for");
  cmd->add_flag("--strict", flags->strict, "every warning is an error: nothing is written");
  cmd->add_option("--std", flags->std_dir, "standard library folder (for the check)");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunImport(*flags); });
}

}  // namespace ward::cli
