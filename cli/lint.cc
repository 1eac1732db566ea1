// `ward lint [--format text|json|sarif] [--fail-on error|warning|never]
// [--config FILE] FILE...`: check, then the lint rules (compiler/lint/).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
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

// Reads --config, or .ward-lint.yaml in the current folder when present.
bool LoadConfig(const LintFlags& flags, lint::Config* config) {
  std::string path = flags.config;
  std::error_code ec;
  if (path.empty()) {
    if (!std::filesystem::is_regular_file(kDefaultConfig, ec)) return true;
    path = kDefaultConfig;
  }
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
  if (!LoadConfig(flags, &options.config)) return kUsage;
  std::vector<std::string> paths;
  if (!ExpandPolicyPaths(flags.files, &paths)) return kUsage;
  if (paths.empty()) {
    std::cerr << "ward lint: no .ward files found\n";
    return kUsage;
  }
  SourceManager sources;
  DiagnosticSink sink;
  FrontendOptions frontend;
  frontend.std_dir = flags.std_dir;
  Program program = RunFrontend(paths, frontend, sources, sink);
  if (program.std_syscalls == kNoFile) {
    PrintDiagnostics(sources, sink, {"text", flags.output.color});
    return kUsage;
  }
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
  cmd->add_option("files", flags->files, "policy files or folders (every .ward below)")->required();
  cmd->add_option("--std", flags->std_dir,
                  "standard library folder (default: $WARD_STD, "
                  "then share/ward/std beside the binary)");
  cmd->add_option("--format", flags->output.format, "output format: text, json or sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  cmd->add_option("--fail-on", flags->fail_on,
                  "exit 1 on findings at this level or above: error (default), warning, never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  cmd->add_option("--config", flags->config,
                  "rule levels (default: .ward-lint.yaml in the current folder, if any)");
  cmd->add_option(
      "--home", flags->home,
      "the home directory `~` stands for in the filesystem probes (default /home/user)");
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunLint(*flags); });
}

}  // namespace ward::cli
