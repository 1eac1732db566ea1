// An import checked as `ward check` checks it: the importer's text through
// the front end and the lowering. What the lowering cannot represent (a
// syscall whose conditions need more than 4,096 argument regions, W1043)
// becomes a refusal at the input's rule that made it; anything else that
// does not check is the importer's bug, reported as such. `ward import` and
// the import fuzzer both run this. Unlike the importers, it depends on the
// compiler.
#pragma once

#include <string>
#include <string_view>

#include "importers/docker_seccomp/docker_seccomp.h"
#include "language/check.h"

namespace ward::importers {

struct CheckedImport {
  // ok: `result.text` checks. Not ok: refused, `result.diagnostics` says
  // why (at least one error), unless `internal_error`.
  ImportResult result;
  // The importer wrote text that does not check (a bug in the importer);
  // `sources` and `sink` hold what the check found.
  bool internal_error = false;
  // No standard library was found to check with (a usage error).
  bool no_std = false;
  SourceManager sources;
  DiagnosticSink sink;
};

// `text` as an importer wrote it, with the rules' origins: `checked`'s
// result is updated (an error per rule the lowering cannot represent).
void CheckImport(const std::string& std_dir, CheckedImport* checked);

// ImportDockerSeccomp, then CheckImport.
void ImportDockerSeccompChecked(std::string_view json, const DockerImportOptions& options,
                                const std::string& std_dir, CheckedImport* out);

}  // namespace ward::importers
