#include "language/diagnostics.h"

#include <algorithm>

namespace ward {

void DiagnosticSink::Report(Diagnostic d) {
  if (d.severity == Severity::kError) ++errors_;
  if (d.severity == Severity::kWarning) ++warnings_;
  if (diagnostics_.size() >= limit_) {
    last_dropped_ = true;
    if (diagnostics_.size() == limit_) {
      Diagnostic cap;
      cap.code = Code::kTooManyErrors;
      cap.severity = Severity::kNote;
      cap.message = "too many diagnostics; the rest are not shown";
      diagnostics_.push_back(std::move(cap));
    }
    return;
  }
  last_dropped_ = false;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticSink::Error(Code code, Span span, std::string message, std::string hint) {
  Report({code, Severity::kError, span, std::move(message), std::move(hint), {}});
}

void DiagnosticSink::Warning(Code code, Span span, std::string message, std::string hint) {
  Report({code, Severity::kWarning, span, std::move(message), std::move(hint), {}});
}

void DiagnosticSink::AddRelated(Span span, std::string message) {
  if (last_dropped_ || diagnostics_.empty()) return;
  Diagnostic& d = diagnostics_.back();
  if (d.related.size() < kMaxRelated) d.related.push_back({span, std::move(message)});
}

void DiagnosticSink::SortByLocation() {
  // The cap note stays last.
  auto end = diagnostics_.end();
  if (!diagnostics_.empty() && diagnostics_.back().code == Code::kTooManyErrors) --end;
  std::stable_sort(diagnostics_.begin(), end, [](const Diagnostic& a, const Diagnostic& b) {
    if (a.span.file != b.span.file) return a.span.file < b.span.file;
    return a.span.begin < b.span.begin;
  });
}

}  // namespace ward
