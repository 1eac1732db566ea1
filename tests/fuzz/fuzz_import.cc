// libFuzzer target for the Docker seccomp importer: one input is one profile.
// Beyond the sanitizers, it checks what every import must satisfy: a
// refusal says why (at least one error, every message non-empty); an
// accepted profile gives the same text twice, and that text passes the
// whole front end and the lowering without errors (what `ward check` runs),
// as the importer promises.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/policy.h"
#include "importers/docker_seccomp.h"
#include "language/check.h"

namespace {

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ward_fuzz_import: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void CheckImported(const std::string& text) {
  ward::FrontendOptions options;
  options.std_dir = WARD_FUZZ_STD_DIR;
  options.memory_files["imported.ward"] = text;
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  ward::Program program = ward::RunFrontend({"imported.ward"}, options, sources, sink);
  const ward::ast::File* file = program.roots.empty() ? nullptr : program.file(program.roots[0]);
  if (!sink.has_errors() && file) {
    for (const ward::ast::Policy& p : file->policies) ward::ir::Lower(program, p, sink);
  }
  if (sink.has_errors() || !file || file->policies.empty()) {
    Fail("the imported text does not check",
         text + "\n" + ward::RenderText(sources, sink, ward::RenderOptions{}));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  ward::importers::DockerImportOptions options;
  // Half the inputs are read for a container with CAP_SYS_ADMIN on an old
  // kernel, so that both sides of includes/excludes are explored.
  if (size % 2) {
    options.capabilities = {"CAP_SYS_ADMIN"};
    options.kernel = std::array<uint64_t, 3>{4, 4, 0};
  }
  const ward::importers::ImportResult r = ward::importers::ImportDockerSeccomp(json, options);
  for (const auto& d : r.diagnostics) {
    if (d.message.empty()) Fail("a diagnostic without a message", json);
  }
  if (!r.ok) {
    bool error = false;
    for (const auto& d : r.diagnostics) error |= d.severity == ward::Severity::kError;
    if (!error) Fail("refused without an error", json);
    return 0;
  }
  if (ward::importers::ImportDockerSeccomp(json, options).text != r.text) {
    Fail("two imports of one input differ", json);
  }
  CheckImported(r.text);
  return 0;
}
