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
void AddDiffCommand(CLI::App& app, int* exit_code);
// Registers `ward import`.
void AddImportCommand(CLI::App& app, int* exit_code);

}  // namespace ward::cli
