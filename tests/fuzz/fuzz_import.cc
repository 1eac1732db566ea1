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
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
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

// One change a profile's author could make to a syscall entry's
// comparisons: add one, move one to another argument, change its operator
// or value. Byte mutations rarely keep JSON valid and entries meaningful;
// these reach conditions on several arguments (the W1043 class) in
// seconds, where byte mutations alone took more than ten minutes.
bool MutateEntry(nlohmann::json* profile, std::mt19937* rng) {
  using nlohmann::json;
  if (!profile->is_object()) return false;
  auto syscalls = profile->find("syscalls");
  if (syscalls == profile->end() || !syscalls->is_array() || syscalls->empty()) return false;
  json& e = (*syscalls)[(*rng)() % syscalls->size()];
  if (!e.is_object()) return false;
  static const char* kOps[] = {"SCMP_CMP_EQ", "SCMP_CMP_NE", "SCMP_CMP_LT",       "SCMP_CMP_LE",
                               "SCMP_CMP_GT", "SCMP_CMP_GE", "SCMP_CMP_MASKED_EQ"};
  static const uint64_t kValues[] = {
      0, 1, 8, 38, 40, 0x406, 0x20000, 0x7e020000, 0xffffffff, uint64_t{1} << 63, ~uint64_t{0}};
  static const char* kNames[] = {"clone", "socket", "personality", "prctl", "kill", "mmap"};
  auto value = [&] { return (*rng)() % 4 ? kValues[(*rng)() % std::size(kValues)] : (*rng)(); };
  json& args = e["args"];
  if (!args.is_array()) args = json::array();
  const unsigned what = args.empty() ? 0 : (*rng)() % 5;
  if (what == 0) {
    args.push_back(
        {{"index", (*rng)() % 6}, {"value", value()}, {"op", kOps[(*rng)() % std::size(kOps)]}});
    return true;
  }
  json& a = args[(*rng)() % args.size()];
  if (!a.is_object()) return false;
  if (what == 1) a["index"] = (*rng)() % 6;
  if (what == 2) a["op"] = kOps[(*rng)() % std::size(kOps)];
  if (what == 3) a["value"] = value();
  if (what == 4) e["names"] = json::array({kNames[(*rng)() % std::size(kNames)]});
  return true;
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// Half the mutations are libFuzzer's own (bytes, the dictionary); the other
// half edit one entry's comparisons of a profile that parses.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded() || !MutateEntry(&j, &rng)) return LLVMFuzzerMutate(data, size, max_size);
  const std::string out = j.dump();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

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
