// `ward lint [--format text|json|sarif] [--fail-on error|warning|never]
// [--config FILE] FILE...`: check, then the lint rules (compiler/lint/).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "compiler/lint/report.h"
#include "language/check.h"

namespace ward::cli {
namespace {

struct LintFlags {
  std::vector<std::string> files;
  std::string std_dir;
  std::string fail_on = "error";
  std::string config;
  std::string home = "/home/user";
  OutputFlags output;
};

constexpr const char* kDefaultConfig = ".ward-lint.yaml";

bool ParseConfigFile(const std::string& path, lint::Config* config) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "ward lint: " << path << ": cannot read the configuration\n";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (!lint::ParseConfig(text.str(), config, &error)) {
    std::cerr << "ward lint: " << path << ": " << error << "\n";
    return false;
  }
  return true;
}

// The nearest .ward-lint.yaml from `dir` upwards, stopping after the
// repository root (a folder holding `.git`) or at `/`; empty if none.
std::string FindConfig(std::filesystem::path dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (;;) {
    if (fs::is_regular_file(dir / kDefaultConfig, ec)) return (dir / kDefaultConfig).string();
    if (fs::exists(dir / ".git", ec) || dir == dir.root_path() || !dir.has_parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

// The configuration of each file: --config for all of them, else each
// file's nearest .ward-lint.yaml (FindConfig from its folder; the current
// folder's for standard input and for findings in no file).
class Configs {
 public:
  explicit Configs(const LintFlags& flags) : flags_(flags) {}

  bool Resolve(const SourceManager& sources, lint::Options* options) {
    if (!flags_.config.empty()) return ParseConfigFile(flags_.config, &options->config);
    std::error_code ec;
    if (!Get(FindConfig(std::filesystem::current_path(ec)), &options->config)) return false;
    for (FileId id = 0; id < sources.size(); ++id) {
      const std::string& real = sources.file(id).real_path;
      if (real == kStdinName) continue;  // the current folder's, above
      std::filesystem::path dir = std::filesystem::absolute(real, ec).parent_path();
      if (ec || !Get(FindConfig(dir), &options->file_configs[id])) return false;
    }
    return true;
  }

 private:
  bool Get(const std::string& path, lint::Config* config) {
    if (path.empty()) return true;
    auto it = parsed_.find(path);
    if (it == parsed_.end()) {
      lint::Config parsed;
      if (!ParseConfigFile(path, &parsed)) return false;
      it = parsed_.emplace(path, std::move(parsed)).first;
    }
    *config = it->second;
    return true;
  }

  const LintFlags& flags_;
  std::map<std::string, lint::Config> parsed_;
};

bool Fails(const LintFlags& flags, const DiagnosticSink& sink,
           const std::vector<lint::Finding>& findings) {
  if (sink.has_errors()) return true;
  if (flags.fail_on == "never") return false;
  const lint::Level threshold =
      flags.fail_on == "warning" ? lint::Level::kWarning : lint::Level::kError;
  if (threshold == lint::Level::kWarning && sink.warning_count() > 0) return true;
  for (const lint::Finding& f : findings) {
    if (!f.suppressed && f.level >= threshold) return true;
  }
  return false;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void PrintSummary(size_t files, const Program& program, const DiagnosticSink& sink,
                  const std::vector<lint::Finding>& findings) {
  size_t policies = 0, errors = sink.error_count(), warnings = sink.warning_count(), notes = 0,
         suppressed = 0;
  for (FileId id : program.roots) {
    if (const ast::File* f = program.file(id)) policies += f->policies.size();
  }
  for (const lint::Finding& f : findings) {
    if (f.suppressed) {
      ++suppressed;
    } else {
      errors += f.level == lint::Level::kError;
      warnings += f.level == lint::Level::kWarning;
      notes += f.level == lint::Level::kNote;
    }
  }
  std::cout << "linted " << Plural(files, "file", "files") << ", "
            << Plural(policies, "policy", "policies") << ": " << Plural(errors, "error", "errors")
            << ", " << Plural(warnings, "warning", "warnings") << ", "
            << Plural(notes, "note", "notes") << ", " << suppressed << " suppressed\n";
}

int RunLint(const LintFlags& flags) {
  lint::Options options;
  options.home = flags.home;
  // An explicit --config is read (and refused if bad) before any file.
  Configs configs(flags);
  if (!flags.config.empty() && !configs.Resolve({}, &options)) return kUsage;
  PolicyInputs inputs;
  if (!ExpandPolicyInputs("lint", flags.files, /*folders=*/true, &inputs)) return kUsage;
  const std::vector<std::string>& paths = inputs.paths;
  if (paths.empty()) {
    std::cerr << "ward lint: no .ward files found\n";
    return kUsage;
  }
  SourceManager sources;
  DiagnosticSink sink;
  FrontendOptions frontend = FrontendFor(inputs, flags.std_dir);
  Program program = RunFrontend(paths, frontend, sources, sink);
  if (program.std_syscalls == kNoFile) {
    PrintDiagnostics(sources, sink, {"text", flags.output.color});
    return kUsage;
  }
  if (flags.config.empty() && !configs.Resolve(sources, &options)) return kUsage;
  std::vector<lint::Finding> findings;
  if (!sink.has_errors()) findings = lint::Lint(program, sources, options, sink);
  sink.SortByLocation();
  lint::ReportOptions report;
  report.tool_version = WARD_VERSION;
  if (flags.output.format == "json") {
    std::cout << lint::RenderFindingsJson(sources, sink, findings);
  } else if (flags.output.format == "sarif") {
    std::cout << lint::RenderFindingsSarif(sources, sink, findings, report);
  } else {
    PrintDiagnostics(sources, sink, {"text", flags.output.color});
    report.color = UseColor(flags.output, STDOUT_FILENO);
    std::cout << lint::RenderFindingsText(sources, findings, report);
    PrintSummary(paths.size(), program, sink, findings);
  }
  return Fails(flags, sink, findings) ? kFound : kOk;
}

}  // namespace

void AddLintCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LintFlags>();
  CLI::App* cmd = app.add_subcommand("lint", "Check policies and run the lint rules");
  cmd->add_option("files", flags->files,
                  "policy files or folders (every .ward below); - for standard input")
      ->required();
  cmd->add_option("--std", flags->std_dir,
                  "standard library folder (default: $WARD_STD, then a vendored "
                  ".ward/std or policies/std upward, then share/ward/std beside the binary)");
  cmd->add_option("--format", flags->output.format, "output format: text, json or sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  cmd->add_option("--fail-on", flags->fail_on,
                  "exit 1 on findings at this level or above: error (default), warning, never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  cmd->add_option("--config", flags->config,
                  "rule levels for every file (default: each file's nearest .ward-lint.yaml, "
                  "from its folder up to the repository root)");
  cmd->add_option(
      "--home", flags->home,
      "the home directory `~` stands for in the filesystem probes (default /home/user)");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunLint(*flags); });
}

}  // namespace ward::cli
