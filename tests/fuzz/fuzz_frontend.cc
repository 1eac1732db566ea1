// libFuzzer target: one input is one policy file, run through the whole front
// end (load with imports, parse, check) and both renderers. A second, fixed
// file "other.ward" is there to be imported. Beyond the
// sanitizers, it checks what every run must satisfy (language.md § Errors):
// a file that does not parse gets exactly one syntax diagnostic that stops
// the parse (after any misspelt keywords it read on from), every span
// lies inside its file, and the JSON rendering is valid JSON that agrees with
// the sink. `ward fmt` runs on every input too (CheckFormat).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "language/check.h"
#include "language/format.h"

namespace {

// Imported by inputs that write `import "other.ward"` (or "./other.ward").
constexpr const char* kOther =
    "let shared = [\"/srv\", \"/opt\"]\n"
    "group @other = [read, write, @basic-io]\n"
    "abstract policy other-base {\n"
    "  filesystem { allow read shared }\n"
    "  syscalls { arch x86_64, aarch64\n default errno EPERM\n allow @other }\n"
    "}\n"
    "policy other extends other-base {}\n";

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ward_fuzz_frontend: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// The codes that mean "this file did not parse" (W0001-W0007).
bool IsParseFailure(ward::Code code) {
  return static_cast<int>(code) <= static_cast<int>(ward::Code::kFileTooLarge);
}

void CheckSpans(const ward::SourceManager& sources, const ward::DiagnosticSink& sink,
                const std::string& text) {
  auto inside = [&](ward::Span s) {
    if (!s.valid()) return true;
    return s.file < sources.size() && s.begin <= s.end && s.end <= sources.file(s.file).text.size();
  };
  for (const ward::Diagnostic& d : sink.diagnostics()) {
    if (d.message.empty()) Fail("diagnostic without a message", text);
    if (!inside(d.span)) Fail("diagnostic span outside its file", d.message);
    for (const ward::Related& r : d.related) {
      if (!inside(r.span)) Fail("related span outside its file", r.message);
    }
  }
}

// A misspelt keyword the parser read on from (language/parser.cc).
bool IsRepairedKeyword(const ward::Diagnostic& d) {
  // Only a single candidate is repaired (a tie, "did you mean 'a' or 'b'?",
  // stops the parse there).
  return d.code == ward::Code::kSyntaxError && d.hint.rfind("did you mean '", 0) == 0 &&
         d.hint.find("' or '") == std::string::npos &&
         (d.message.rfind("unknown section '", 0) == 0 ||
          d.message.rfind("unknown keyword '", 0) == 0);
}

void CheckParseOutcome(const ward::Program& program, const ward::DiagnosticSink& sink,
                       const std::string& text) {
  if (program.roots.size() != 1) Fail("the input file was not loaded", text);
  ward::FileId root = program.roots[0];
  size_t failures = 0, repaired = 0;
  for (const ward::Diagnostic& d : sink.diagnostics()) {
    if (d.span.file != root || !IsParseFailure(d.code)) continue;
    ++(IsRepairedKeyword(d) ? repaired : failures);
  }
  bool parsed = program.file(root) != nullptr;
  // A parse that fails stops at one diagnostic: a syntax error, or a
  // misspelt keyword whose repair is still wrong where it stands ("letwork"
  // read as "network" at the top level), which is not reported twice.
  if (parsed ? failures != 0 : failures > 1 || failures + repaired == 0) {
    Fail(parsed ? "syntax diagnostic on a file that parsed"
                : "a file that did not parse needs exactly one syntax diagnostic",
         text);
  }
}

void CheckJson(const std::string& json, const ward::DiagnosticSink& sink) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Fail("RenderJson is not valid JSON", json);
  if (j["diagnostics"].size() != sink.diagnostics().size() || j["errors"] != sink.error_count() ||
      j["warnings"] != sink.warning_count()) {
    Fail("RenderJson disagrees with the sink", json);
  }
}

// `ward fmt`: a file that parses formats, and formatting is idempotent
// (FormatFile itself checks that tokens and comments survive and that the
// result parses).
void CheckFormat(const std::string& text) {
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  std::optional<std::string> once =
      ward::FormatFile(sources, sources.Add("fuzz.ward", "fuzz.ward", text), sink);
  if (!once) {
    size_t stops = 0;
    for (const ward::Diagnostic& d : sink.diagnostics()) {
      if (d.message.rfind("formatter failure", 0) == 0) Fail("fmt changed more than layout", text);
      stops += IsParseFailure(d.code) && !IsRepairedKeyword(d);
    }
    // Misspelt keywords alone refuse the file too (none stops the parse), and
    // every invalid escape is its own W0008.
    if (stops > 1 || sink.diagnostics().empty()) {
      Fail("fmt refused without exactly one diagnostic", text);
    }
    return;
  }
  ward::SourceManager again;
  ward::DiagnosticSink sink2;
  std::optional<std::string> twice =
      ward::FormatFile(again, again.Add("fuzz.ward", "fuzz.ward", *once), sink2);
  if (!twice || *twice != *once) Fail("fmt is not idempotent", text + "\n---\n" + *once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ward::FrontendOptions options;
  options.std_dir = WARD_FUZZ_STD_DIR;
  options.memory_files["fuzz.ward"] = text;
  options.memory_files["other.ward"] = kOther;
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  ward::Program program = ward::RunFrontend({"fuzz.ward"}, options, sources, sink);
  if (program.std_syscalls == ward::kNoFile) Fail("std/syscalls.ward did not load", "");
  CheckParseOutcome(program, sink, text);
  CheckSpans(sources, sink, text);
  std::string rendered = ward::RenderText(sources, sink, ward::RenderOptions{});
  if (rendered.empty() != sink.diagnostics().empty()) Fail("RenderText lost diagnostics", text);
  ward::RenderText(sources, sink, ward::RenderOptions{.color = true});
  CheckJson(ward::RenderJson(sources, sink), sink);
  CheckFormat(text);
  return 0;
}
