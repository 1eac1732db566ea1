// Each subcommand registers itself on the CLI11 app from its own file; main.cc
// calls these in one explicit list.
#pragma once

#include <CLI/CLI.hpp>

namespace ward::cli {

// Registers `ward check`; `*exit_code` receives the command's exit code.
void AddCheckCommand(CLI::App& app, int* exit_code);
// Registers `ward ir`.
void AddIrCommand(CLI::App& app, int* exit_code);
// Registers `ward explain`.
void AddExplainCommand(CLI::App& app, int* exit_code);
// Registers `ward compile`.
void AddCompileCommand(CLI::App& app, int* exit_code);
// `ward compile ... -t wardd-bundle`: a command line for ward-bundle
// (cli/wardd_bundle.cc), which has protobuf; ward-cli has not.
bool IsWarddBundleCompile(int argc, char** argv);
void AddDiffCommand(CLI::App& app, int* exit_code);
// Registers `ward import`.
void AddImportCommand(CLI::App& app, int* exit_code);
// Registers `ward apply`, `ward remove` and `ward status` (cli/apply.cc).
void AddApplyCommand(CLI::App& app, int* exit_code);
void AddRemoveCommand(CLI::App& app, int* exit_code);
void AddStatusCommand(CLI::App& app, int* exit_code);
// Registers `ward run` (cli/run.cc).
void AddRunCommand(CLI::App& app, int* exit_code);
// Registers `ward learn` (cli/learn.cc).
void AddLearnCommand(CLI::App& app, int* exit_code);
// Registers `ward lint` (cli/lint.cc).
void AddLintCommand(CLI::App& app, int* exit_code);
// Registers `ward fmt` (cli/fmt.cc).
void AddFmtCommand(CLI::App& app, int* exit_code);
// Registers `ward audit verify` (cli/audit.cc).
void AddAuditCommand(CLI::App& app, int* exit_code);
// Registers `ward doctor` (cli/doctor.cc).
void AddDoctorCommand(CLI::App& app, int* exit_code);

}  // namespace ward::cli
