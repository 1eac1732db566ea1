// `ward fmt [--check] [--diff] FILE...`: rewrites policy files in the
// canonical layout (language/format.h; the rules are in language/README.md).
//
// Without --check or --diff, every file whose text changes is replaced
// atomically (a temporary file beside it, then rename) and named on stdout as
// `reformatted FILE`; files already canonical are not touched. With --check
// nothing is written: each file that would change is named as
// `would reformat FILE`, followed by a short unified-style hint (the first
// differing lines). With --diff nothing is written either: stdout is the
// whole unified diff of every file that would change (`--- a/FILE`,
// `+++ b/FILE`, as `patch -p1` applies it; cli/unified_diff.h), and nothing
// else. A file that does not parse is refused with its diagnostic (stderr)
// and left as it is.
//
// `-` as FILE formats standard input: the formatted text goes to stdout
// (with --check or --diff: the hint or the diff instead), named `<stdin>`.
//
// `--format json` prints one document instead (no hints, no diff):
// {"version": 1, "files": [{"file", "status"}], "diagnostics": [...]}, status
// one of "unchanged", "reformatted", "would-reformat", "error"; `<stdin>`'s
// entry also has "formatted" (the text) unless --check; diagnostics as in
// `ward check --format json`.
//
// Exit codes: 0 all files canonical (or rewritten); 1 a file does not parse,
// or with --check a file would change; 2 usage or I/O errors.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/unified_diff.h"
#include "enforcers/linux/files.h"
#include "language/format.h"

namespace ward::cli {
namespace {

constexpr size_t kHintContext = 2;  // unchanged lines shown around a change
constexpr size_t kHintLines = 12;   // changed lines shown at most

struct FmtFlags {
  std::vector<std::string> files;
  bool check = false;
  bool diff = false;
  OutputFlags output;
};

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines from the first to the last difference as a unified-style hunk:
// a line diff (longest common subsequence) where the files are small enough,
// unchanged runs longer than twice the context shown as "...", cut short
// after kHintLines lines.
void PrintHint(const std::string& path, const std::string& before, const std::string& after) {
  std::vector<std::string> a = SplitLines(before), b = SplitLines(after);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  size_t from = prefix > kHintContext ? prefix - kHintContext : 0;
  size_t a_end = std::min(a.size(), a.size() - suffix + kHintContext);
  size_t b_end = std::min(b.size(), b.size() - suffix + kHintContext);
  std::cout << "--- " << path << "\n+++ " << path << " (formatted)\n"
            << "@@ -" << from + 1 << "," << a_end - from << " +" << from + 1 << "," << b_end - from
            << " @@\n";
  // The edit script of the middle part: ' ' kept, '-' removed, '+' added.
  size_t n = a.size() - suffix - prefix, m = b.size() - suffix - prefix;
  std::vector<std::pair<char, const std::string*>> script;
  if (n * m <= 4'000'000) {
    std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        lcs[i][j] = a[prefix + i] == b[prefix + j] ? lcs[i + 1][j + 1] + 1
                                                   : std::max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        script.push_back({' ', &a[prefix + i++]});
        ++j;
      } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        script.push_back({'-', &a[prefix + i++]});
      } else {
        script.push_back({'+', &b[prefix + j++]});
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) script.push_back({'-', &a[prefix + i]});
    for (size_t j = 0; j < m; ++j) script.push_back({'+', &b[prefix + j]});
  }
  size_t shown = 0;
  auto line = [&](char mark, const std::string& text) {
    if (shown++ < kHintLines) std::cout << mark << text << "\n";
  };
  for (size_t i = from; i < prefix; ++i) line(' ', a[i]);
  // Kept runs inside the middle part always lie between two changes.
  for (size_t k = 0; k < script.size();) {
    if (script[k].first != ' ') {
      line(script[k].first, *script[k].second);
      ++k;
      continue;
    }
    size_t run = k;
    while (run < script.size() && script[run].first == ' ') ++run;
    bool cut = run - k > 2 * kHintContext;
    for (size_t r = k; r < run; ++r) {
      if (cut && r == k + kHintContext) {
        line(' ', "...");
        r = run - kHintContext;
      }
      line(' ', *script[r].second);
    }
    k = run;
  }
  for (size_t i = a.size() - suffix; i < a_end; ++i) line(' ', a[i]);
  if (shown > kHintLines) std::cout << "  ... (" << shown - kHintLines << " more lines)\n";
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return !in.bad();
}

// `a/FILE` and `b/FILE`, as git names them (patch -p1 strips the prefix).
std::string DiffName(char side, const std::string& path) {
  return std::string(1, side) + (path.empty() || path[0] != '/' ? "/" : "") + path;
}

int RunFmt(const FmtFlags& flags) {
  PolicyInputs inputs;
  if (!ExpandPolicyInputs("fmt", flags.files, /*folders=*/true, &inputs)) return kUsage;
  const std::vector<std::string>& paths = inputs.paths;
  if (paths.empty()) {
    std::cerr << "ward fmt: no .ward files found\n";
    return kUsage;
  }
  SourceManager sources;
  DiagnosticSink sink;
  bool io_error = false;
  bool json = flags.output.format == "json";
  const bool write = !flags.check && !flags.diff;
  size_t changed = 0;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  auto status = [&](const std::string& path, const char* what) {
    files.push_back({{"file", path}, {"status", what}});
  };
  for (const std::string& path : paths) {
    const bool from_stdin = inputs.stdin_text && path == kStdinName;
    std::string text;
    if (from_stdin) {
      text = *inputs.stdin_text;
    } else if (!ReadFile(path, &text)) {
      std::cerr << "ward fmt: " << path << ": cannot read: " << std::strerror(errno) << "\n";
      io_error = true;
      status(path, "error");
      continue;
    }
    FileId id = sources.Add(path, path, text);
    std::optional<std::string> formatted = FormatFile(sources, id, sink);
    if (!formatted || *formatted == text) {
      status(path, formatted ? "unchanged" : "error");
      if (from_stdin && formatted && write) {
        if (json) {
          files.back()["formatted"] = *formatted;
        } else {
          std::cout << *formatted;
        }
      }
      continue;
    }
    ++changed;
    if (!write) {
      status(path, "would-reformat");
      if (json) continue;
      if (flags.diff) {
        std::cout << UnifiedDiff(DiffName('a', path), DiffName('b', path), text, *formatted);
        continue;
      }
      std::cout << "would reformat " << path << "\n";
      PrintHint(path, text, *formatted);
      continue;
    }
    if (from_stdin) {
      status(path, "reformatted");
      if (json) {
        files.back()["formatted"] = *formatted;
      } else {
        std::cout << *formatted;
      }
      continue;
    }
    std::string error;
    if (!enforce::WriteUserFile(path, *formatted, &error)) {
      std::cerr << "ward fmt: cannot write " << error << "\n";
      io_error = true;
      status(path, "error");
      continue;
    }
    status(path, "reformatted");
    if (!json) std::cout << "reformatted " << path << "\n";
  }
  if (json) {
    nlohmann::ordered_json out;
    out["version"] = 1;
    out["files"] = std::move(files);
    out["diagnostics"] = nlohmann::ordered_json::parse(RenderJson(sources, sink))["diagnostics"];
    std::cout << out.dump(2) << "\n";
  } else {
    PrintDiagnostics(sources, sink, flags.output);
  }
  if (!write && changed > 0 && !json) {
    std::cerr << "ward fmt: " << changed << " of " << paths.size() << " file"
              << (paths.size() == 1 ? "" : "s") << " would be reformatted\n";
  }
  if (io_error) return kUsage;
  return sink.has_errors() || (flags.check && changed > 0) ? kFound : kOk;
}

}  // namespace

void AddFmtCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<FmtFlags>();
  CLI::App* cmd = app.add_subcommand("fmt", "Rewrite policies in the canonical layout");
  cmd->add_option("files", flags->files,
                  "policy files or folders (every .ward below); - for standard input (the "
                  "formatted text to stdout)")
      ->required();
  cmd->add_flag("--check", flags->check,
                "change nothing; list the files that would change and exit 1 if any");
  cmd->add_flag("--diff", flags->diff,
                "change nothing; print the unified diff of every file that would change "
                "(patch -p1 applies it)");
  cmd->add_option("--format", flags->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunFmt(*flags); });
}

}  // namespace ward::cli
