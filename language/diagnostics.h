// Diagnostics are data (conventions.md #8): a code, a severity, a primary
// span, up to three secondary spans, a message and a hint. Every stage reports
// into one sink; the CLI renders the sink once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "language/codes.h"
#include "language/source.h"

namespace ward {

enum class Severity { kError, kWarning, kNote };

struct Related {
  Span span;
  std::string message;
};

struct Diagnostic {
  Code code = Code::kSyntaxError;
  Severity severity = Severity::kError;
  Span span;
  std::string message;
  std::string hint;
  std::vector<Related> related;  // at most kMaxRelated
};

class DiagnosticSink {
 public:
  static constexpr size_t kMaxRelated = 3;
  static constexpr size_t kDefaultLimit = 50;

  explicit DiagnosticSink(size_t limit = kDefaultLimit) : limit_(limit) {}

  // Records a diagnostic. Every one is kept (JSON and SARIF list them all);
  // only the text rendering is capped (Shown).
  void Report(Diagnostic d);
  void Error(Code code, Span span, std::string message, std::string hint = {});
  void Warning(Code code, Span span, std::string message, std::string hint = {});
  void Note(Code code, Span span, std::string message, std::string hint = {});
  // Adds a secondary span to the most recent diagnostic (ignored when it
  // already has kMaxRelated).
  void AddRelated(Span span, std::string message);

  // Every diagnostic recorded, in report order (location order after
  // SortByLocation), without a cap note.
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // What the text rendering shows: at most `limit` of diagnostics(), chosen
  // by rank (errors, then security warnings: B3xxx, then the rest) and in
  // order within a rank, listed in diagnostics() order; then, when some were
  // left out, one W0010 note counting them per code ("dropped 12 W1011, 3
  // W1020").
  std::vector<Diagnostic> Shown() const;
  size_t error_count() const { return errors_; }
  size_t warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }
  // True once `limit` errors are recorded: nothing reported later can be
  // shown as text, so work that only serves a message (a "did you mean"
  // search) can be skipped.
  bool full() const { return errors_ >= limit_; }
  // Orders diagnostics by file, then position, keeping report order on ties.
  void SortByLocation();

 private:
  size_t limit_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
  std::vector<Diagnostic> diagnostics_;
};

struct RenderOptions {
  bool color = false;
};

// Text rendering of sink.Shown(), as `file:line:col: error[W1003]: message`,
// the source line, a `^~~~` under the span, the secondary spans the same
// way, then the hint.
// Text as it may reach a terminal: control characters (but tab, and line
// breaks where `keep_newlines`) and bytes that are not UTF-8 become `\xNN`.
// `widths`, when given, gets each byte's width in the result (0 for a
// character's continuation bytes), for lining carets up.
std::string Printable(std::string_view s, bool keep_newlines,
                      std::vector<size_t>* widths = nullptr);

std::string RenderText(const SourceManager& sources, const DiagnosticSink& sink,
                       const RenderOptions& options);
std::string RenderTextOne(const SourceManager& sources, const Diagnostic& d,
                          const RenderOptions& options);
// Stable JSON (documented in language/README.md), versioned: every
// diagnostic, never capped.
std::string RenderJson(const SourceManager& sources, const DiagnosticSink& sink);

}  // namespace ward
