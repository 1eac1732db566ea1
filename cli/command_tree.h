// The command tree of `ward`, read from the CLI11 apps that parse it: the
// source for did-you-mean on typos, `ward help` and `ward completion`, so
// that none of them keeps its own list of commands or flags.
//
// ward-cli parses most commands and ward-remote the commands that talk to
// wardd (push; remove, status, diff with --host): ward-cli describes both
// (cli/remote_commands.h) and merges them into one tree.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace ward::cli {

struct OptionNode {
  std::vector<std::string> names;  // "-t", "--target", in CLI11's order: short first
  std::string description;
  bool takes_value = false;
  bool list = false;                // a comma-separated list (-t linux,oci)
  std::vector<std::string> values;  // a fixed set of values, else empty
};

struct CommandNode {
  std::string name;  // "" for the root
  std::string description;
  std::vector<OptionNode> options;             // --help included
  std::vector<std::string> positionals;        // their names, in order
  std::vector<std::string> positional_values;  // the first one's fixed set (bash zsh fish)
  std::vector<CommandNode> commands;           // in registration order
};

// The tree under `app`: hidden commands and options (no group) are left out.
CommandNode DescribeApp(const CLI::App& app);

// Adds `extra`'s commands to `base`; a command in both gets the options it
// lacks, appended (ward status and its --host form).
void MergeTree(CommandNode* base, const CommandNode& extra);

// The child of `node` named `name`, or null.
const CommandNode* FindCommand(const CommandNode& node, const std::string& name);

// Optimal string alignment distance (Levenshtein plus adjacent
// transpositions): "hots" and "host" are 1 apart.
size_t EditDistance(const std::string& a, const std::string& b);

// The candidates nearest to `word`, best first, ties in alphabetical order:
// those `word` is a prefix of (two characters at least) rank first, then by
// edit distance up to a third of the word's length (at least 1, at most 3).
// Empty when none is near.
std::vector<std::string> Nearest(const std::string& word,
                                 const std::vector<std::string>& candidates);

// "did you mean 'a'?", "did you mean 'a' or 'b'?", "" for none.
std::string DidYouMean(const std::vector<std::string>& nearest);

// After a parse error of `app` on argv: prints to `err` one line for each
// word that no command or option took, in command-line order, with its
// nearest commands or options in `tree` ("ward compile: unknown option
// '--targt': did you mean '--target'?"). Returns how many it printed (0: the
// error was something else; the caller reports it as CLI11 does).
int ReportUnknownWords(const CLI::App& app, const CommandNode& tree, int argc, char** argv,
                       std::ostream& err);

// After a parse error of `app`: for each option of the chosen commands with
// a fixed set of values given one outside it, prints "ward lint: --fail-on
// 'erorr' is not one of error, warning, never: did you mean 'error'?".
// Returns how many it printed.
int ReportBadValues(const CLI::App& app, const CommandNode& tree, int argc, char** argv,
                    std::ostream& err);

}  // namespace ward::cli
