// Diagnostics are data (conventions.md #8): a code, a severity, a primary
// span, up to three secondary spans, a message and a hint. Every stage reports
// into one sink; the CLI renders the sink once.
#pragma once

#include <string>
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

  // Records a diagnostic. Past the limit, one W0010 note is recorded and the
  // rest are counted but dropped.
  void Report(Diagnostic d);
  void Error(Code code, Span span, std::string message, std::string hint = {});
  void Warning(Code code, Span span, std::string message, std::string hint = {});
  // Adds a secondary span to the most recent diagnostic (ignored when that
  // diagnostic was dropped or already has kMaxRelated).
  void AddRelated(Span span, std::string message);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  size_t error_count() const { return errors_; }
  size_t warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }
  // True once the limit is reached and later diagnostics are dropped: work
  // that only serves a message (a "did you mean" search) can be skipped.
  bool full() const { return diagnostics_.size() >= limit_; }
  // Orders diagnostics by file, then position, keeping report order on ties.
  void SortByLocation();

 private:
  size_t limit_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
  bool last_dropped_ = false;
  std::vector<Diagnostic> diagnostics_;
};

struct RenderOptions {
  bool color = false;
};

// Text rendering, as `file:line:col: error[W1003]: message`, the source line,
// a `^~~~` under the span, the secondary spans the same way, then the hint.
std::string RenderText(const SourceManager& sources, const DiagnosticSink& sink,
                       const RenderOptions& options);
std::string RenderTextOne(const SourceManager& sources, const Diagnostic& d,
                          const RenderOptions& options);
// Stable JSON (documented in language/README.md), versioned.
std::string RenderJson(const SourceManager& sources, const DiagnosticSink& sink);

}  // namespace ward
