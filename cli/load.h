// Shared by the subcommands that read policy files: the file checks every
// command makes before the front end runs (what a path is, `-` for standard
// input), where the standard library is found, and the loader
// (compiler/load.h) with its diagnostics printed and its failure turned into
// an exit code (cli/README.md has the table).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/bundle.h"
#include "cli/output.h"
#include "compiler/load.h"

namespace ward::cli {

using backend::Sha256;
using ir::LoadedPolicy;

// `-` as FILE is the standard input, named `<stdin>` in diagnostics; its
// relative imports resolve against the current folder.
inline constexpr char kStdinArg[] = "-";
inline constexpr char kStdinName[] = "<stdin>";

// Why `path` cannot be read as a policy file, or empty when it can:
// "no such file or directory", "is a directory", "is a FIFO, not a policy
// file" (a socket, a character or block device likewise), "too many levels
// of symbolic links", "permission denied", or "is N bytes, over the limit of
// 16 MiB". Never blocks: the path is stat'ed first and only a regular file
// is opened (O_NONBLOCK, closed at once).
std::string PolicyFileProblem(const std::string& path);

// The policy files of a command line: folders expanded (when `folders`) into
// the `.ward` files below them, sorted; files kept as given, each checked
// with PolicyFileProblem; `-` read from standard input (once) into `stdin`.
struct PolicyInputs {
  std::vector<std::string> paths;  // `<stdin>` for `-`
  std::optional<std::string> stdin_text;
};
// Returns false after printing `ward CMD: PATH: PROBLEM` on stderr.
bool ExpandPolicyInputs(const std::string& command, const std::vector<std::string>& args,
                        bool folders, PolicyInputs* inputs);

// The front end's options for `inputs`: the standard library (StdDirFor the
// first file) and standard input served from memory.
FrontendOptions FrontendFor(const PolicyInputs& inputs, const std::string& std_flag);

// The standard library folder to use for a policy at `file`: `std_flag`
// (--std) when given; empty when $WARD_STD is set (the loader takes it); else
// a vendored copy found upward from the file's folder (the current folder for
// standard input) to the repository root (a folder holding `.git`) or `/`:
// at each level `.ward/std`, then `policies/std`, either only when it holds
// syscalls.ward; else empty (the loader looks beside the binary).
std::string StdDirFor(const std::string& std_flag, const std::string& file);

// Returns nullptr after printing why (diagnostics or a usage error);
// `*exit_code` is then kFound (policy errors) or kUsage. `file` may be `-`.
std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code);

// As LoadPolicy, for a command whose --format is json: a policy that does
// not load because of its diagnostics (errors, no standard library) is
// reported as the command's JSON document, `doc` ended by PrintJsonDocument,
// on stdout, not as text on stderr. Text, and a missing file or policy,
// as LoadPolicy.
std::unique_ptr<LoadedPolicy> LoadPolicyForReport(const std::string& file,
                                                  const std::optional<std::string>& policy,
                                                  const std::string& std_dir,
                                                  const OutputFlags& output, const Json& doc,
                                                  int* exit_code);

}  // namespace ward::cli
