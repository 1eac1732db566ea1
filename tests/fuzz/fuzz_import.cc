// libFuzzer target for the Docker seccomp importer: one input is one profile.
// Beyond the sanitizers, it checks what every import must satisfy: a
// refusal says why and where (at least one error, every error at a place
// in the input, every message non-empty); an accepted profile gives the
// same text twice, and that text passes the whole front end and the
// lowering without errors (what `ward check` runs), as the importer
// promises. The import is the one `ward import` runs (checked_import.h):
// what the lowering cannot hold is refused at the entry; text the check
// finds wrong for any other reason is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/policy.h"
#include "importers/checked_import.h"
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
  ward::importers::CheckedImport checked;
  ward::importers::ImportDockerSeccompChecked(json, options, WARD_FUZZ_STD_DIR, &checked);
  if (checked.internal_error || checked.no_std) {
    Fail("the imported text does not check",
         json + "\n" + ward::RenderText(checked.sources, checked.sink, ward::RenderOptions{}));
  }
  const ward::importers::ImportResult& r = checked.result;
  for (const auto& d : r.diagnostics) {
    if (d.message.empty()) Fail("a diagnostic without a message", json);
  }
  if (!r.ok) {
    bool error = false;
    for (const auto& d : r.diagnostics) {
      if (d.severity != ward::Severity::kError) continue;
      error = true;
      // An error is at a place in the input, except for what concerns it
      // as a whole: not JSON, not an object, too large, or a check
      // between fields at the top.
      if (d.where.empty() && d.message.find("not valid JSON") == std::string::npos &&
          d.message.find("expected an object") == std::string::npos &&
          d.message.find("larger than") == std::string::npos &&
          d.message.find("are both given") == std::string::npos) {
        Fail("an error with no place in the input", json + "\n" + d.message);
      }
    }
    if (!error) Fail("refused without an error", json);
    // To measure how long the fuzzer takes to reach the class of the
    // W1043 finding (README): with WARD_FUZZ_IMPORT_STOP_AT_REGIONS=1, the
    // first refusal for too many regions stops the run. (Matched on the
    // message's start too: libFuzzer plants compared strings in inputs,
    // and an unknown key's warning would quote them.)
    static const bool stop = std::getenv("WARD_FUZZ_IMPORT_STOP_AT_REGIONS") != nullptr;
    for (const auto& d : r.diagnostics) {
      if (stop && d.severity == ward::Severity::kError &&
          d.message.rfind("the conditions on '", 0) == 0 &&
          d.message.find("' split its arguments into more than ") != std::string::npos) {
        Fail("reached a refusal for too many regions", json + "\n" + d.message);
      }
    }
    return 0;
  }
  if (ward::importers::ImportDockerSeccomp(json, options).text != r.text) {
    Fail("two imports of one input differ", json);
  }
  CheckImported(r.text);
  return 0;
}
