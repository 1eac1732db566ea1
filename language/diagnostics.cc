#include "language/diagnostics.h"

#include <algorithm>
#include <array>

namespace ward {
namespace {

// The cap's ranks: errors first, then what weakens the policy's security
// (B3xxx warnings: a bypass re-opened, a section not enforced), then the rest.
int Rank(const Diagnostic& d) {
  if (d.severity == Severity::kError) return 0;
  if (d.severity == Severity::kWarning && CodeString(d.code)[0] == 'B') return 1;
  return 2;
}

}  // namespace

void DiagnosticSink::Report(Diagnostic d) {
  if (d.severity == Severity::kError) ++errors_;
  if (d.severity == Severity::kWarning) ++warnings_;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticSink::Error(Code code, Span span, std::string message, std::string hint) {
  Report({code, Severity::kError, span, std::move(message), std::move(hint), {}});
}

void DiagnosticSink::Warning(Code code, Span span, std::string message, std::string hint) {
  Report({code, Severity::kWarning, span, std::move(message), std::move(hint), {}});
}

void DiagnosticSink::Note(Code code, Span span, std::string message, std::string hint) {
  Report({code, Severity::kNote, span, std::move(message), std::move(hint), {}});
}

void DiagnosticSink::AddRelated(Span span, std::string message) {
  if (diagnostics_.empty()) return;
  Diagnostic& d = diagnostics_.back();
  if (d.related.size() < kMaxRelated) d.related.push_back({span, std::move(message)});
}

std::vector<Diagnostic> DiagnosticSink::Shown() const {
  if (diagnostics_.size() <= limit_) return diagnostics_;
  // Fill the limit rank by rank, each rank in order; the chosen keep their
  // place in diagnostics().
  std::array<size_t, 3> per_rank = {};
  for (const Diagnostic& d : diagnostics_) ++per_rank[Rank(d)];
  std::array<size_t, 3> quota = {};
  size_t left = limit_;
  for (size_t r = 0; r < quota.size(); ++r) {
    quota[r] = std::min(left, per_rank[r]);
    left -= quota[r];
  }
  std::vector<Diagnostic> shown;
  std::array<size_t, static_cast<size_t>(Code::kCount)> dropped = {};
  size_t total = 0;
  for (const Diagnostic& d : diagnostics_) {
    size_t& q = quota[Rank(d)];
    if (q > 0) {
      --q;
      shown.push_back(d);
    } else {
      ++dropped[static_cast<size_t>(d.code)];
      ++total;
    }
  }
  std::string counts;
  for (size_t c = 0; c < dropped.size(); ++c) {
    if (dropped[c] == 0) continue;
    counts += (counts.empty() ? "" : ", ") + std::to_string(dropped[c]) + " " +
              std::string(CodeString(static_cast<Code>(c)));
  }
  Diagnostic cap;
  cap.code = Code::kTooManyErrors;
  cap.severity = Severity::kNote;
  cap.message =
      "too many diagnostics; " + std::to_string(total) + " not shown (dropped " + counts + ")";
  cap.hint = "errors are shown first, then security warnings (B3xxx); JSON output lists every one";
  shown.push_back(std::move(cap));
  return shown;
}

void DiagnosticSink::SortByLocation() {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.span.file != b.span.file) return a.span.file < b.span.file;
                     return a.span.begin < b.span.begin;
                   });
}

}  // namespace ward
