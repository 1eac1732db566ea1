// What every importer returns: Ward source text, or why there is none.
// Importers read another format and write Ward; they depend on language/
// only (facts about syscalls, constants), never on the compiler.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "importers/ward_writer.h"
#include "language/diagnostics.h"

namespace ward::importers {

struct ImportDiagnostic {
  Severity severity = Severity::kError;
  // Where in the input: a JSON pointer ("/syscalls/3/args/0"), or empty for
  // the input as a whole.
  std::string where;
  std::string message;
  // Line and column in the input (1-based), when the reader knows them
  // (YAML); 0 otherwise.
  size_t line = 0;
  size_t column = 0;
  // Which input, when the format reads several (networkpolicy: the policy
  // files and the cluster snapshot); empty: the (first) input file.
  std::string file{};
};

// One input file of a format that reads several.
struct ImportInput {
  std::string path;  // as given on the command line
  std::string text;
};

// What `ward import` passes every importer; each reads the fields it needs.
struct ImportOptions {
  // The policy's name; with one policy per host architecture (Docker), each
  // is NAME-ARCH. Must be a Ward identifier.
  std::string name = "imported";
  // The input's name and format, for the header comment only.
  std::string source = "profile";
  std::string from = "docker-seccomp";
  // Docker, SPO: the capability (bounding) set `includes.caps` /
  // `excludes.caps` are decided for; the policy keeps exactly these. Empty:
  // Ward's default, every capability dropped.
  std::vector<std::string> capabilities;
  // Docker, SPO: the kernel `minKernel` is decided for; nullopt: new enough
  // for all.
  std::optional<std::array<uint64_t, 3>> kernel;
  // srt: the absolute folder srt would run in (relative paths and the
  // mandatory write denies are anchored there).
  std::string cwd;
  // kafel: the input's path (empty: standard input), whose folder an
  // `#include` is looked for in first, then each of `include_dirs`.
  std::string path;
  std::vector<std::string> include_dirs;
  // networkpolicy: every NetworkPolicy file given (the `input` argument is
  // the first one's text), the cluster snapshot (`kubectl get
  // namespaces,pods -A -o json|yaml`) and the pod, NAMESPACE/NAME.
  std::vector<ImportInput> files;
  ImportInput cluster;
  std::string pod;
  // firejail: the home folder `~`, `${HOME}` and the other user macros
  // stand for (absolute).
  std::string home;
};

// `key` as one JSON pointer reference token (RFC 6901: `~` is `~0`, `/`
// is `~1`), for ImportDiagnostic::where.
inline std::string JsonPointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

struct ImportResult {
  bool ok = false;   // false: at least one error, and `text` must be ignored
  std::string text;  // the Ward file
  std::vector<ImportDiagnostic> diagnostics;
  // The input's place behind each conditional rule of `text`, so that an
  // error the lowering finds at a rule is reported where the input has it.
  std::vector<RuleOrigin> origins;
};

}  // namespace ward::importers
