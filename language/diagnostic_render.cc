// Rendering of a DiagnosticSink as text or JSON (declared in diagnostics.h).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "language/diagnostics.h"

namespace ward {
namespace {

constexpr const char* kBold = "\033[1m";
constexpr const char* kRed = "\033[1;31m";
constexpr const char* kYellow = "\033[1;33m";
constexpr const char* kCyan = "\033[1;36m";
constexpr const char* kGreen = "\033[1;32m";
constexpr const char* kReset = "\033[0m";

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

const char* SeverityColor(Severity s) {
  switch (s) {
    case Severity::kError:
      return kRed;
    case Severity::kWarning:
      return kYellow;
    case Severity::kNote:
      return kCyan;
  }
  return kRed;
}

// The length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 when the
// bytes there are not one.
size_t Utf8Length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80             ? 1
               : (c & 0xE0) == 0xC0 ? 2
               : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4
                                    : 0;
  if (len == 0 || i + len > s.size() || (len == 2 && c < 0xC2)) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

// A binary file or an escape sequence in a string is never echoed raw.
std::string Printable(std::string_view s, bool keep_newlines, std::vector<size_t>* widths) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = Utf8Length(s, i);
    bool plain = len > 1 || (len == 1 && (c >= 0x20 || c == '\t' || (keep_newlines && c == '\n')) &&
                             c != 0x7F);
    if (plain) {
      out.append(s.substr(i, len));
      if (widths) {
        widths->push_back(1);
        widths->insert(widths->end(), len - 1, 0);
      }
      i += len;
    } else {
      out += {'\\', 'x', kDigits[c >> 4], kDigits[c & 15]};
      if (widths) widths->push_back(4);
      ++i;
    }
  }
  return out;
}

namespace {

class TextRenderer {
 public:
  TextRenderer(const SourceManager& sources, const RenderOptions& options)
      : sources_(sources), color_(options.color) {}

  void Render(const Diagnostic& d) {
    size_t width = GutterWidth(d);
    Header(d.span, d.severity,
           std::string(SeverityName(d.severity)) + "[" + std::string(CodeString(d.code)) + "]",
           Printable(d.message, true));
    Excerpt(d.span, width);
    for (const Related& r : d.related) {
      Header(r.span, Severity::kNote, "note", Printable(r.message, true));
      Excerpt(r.span, width);
    }
    if (!d.hint.empty()) {
      out_ += std::string(width + 1, ' ') + "= " + Paint(kBold, "hint") + ": " +
              Printable(d.hint, true) + "\n";
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string Paint(const char* color, const std::string& s) const {
    return color_ ? std::string(color) + s + kReset : s;
  }

  size_t GutterWidth(const Diagnostic& d) const {
    uint32_t max_line = 0;
    auto consider = [&](Span s) {
      if (s.valid()) max_line = std::max(max_line, sources_.LocationOf(s.file, s.begin).line);
    };
    consider(d.span);
    for (const Related& r : d.related) consider(r.span);
    return std::to_string(max_line).size();
  }

  void Header(Span span, Severity severity, const std::string& label, const std::string& message) {
    std::string where;
    if (span.valid()) {
      Location loc = sources_.LocationOf(span.file, span.begin);
      where = Printable(sources_.file(span.file).display_path, false) + ":" +
              std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": ";
    }
    out_ += Paint(kBold, where) + Paint(SeverityColor(severity), label) + ": " +
            Paint(kBold, message) + "\n";
  }

  void Excerpt(Span span, size_t width) {
    if (!span.valid()) return;
    Location loc = sources_.LocationOf(span.file, span.begin);
    std::string_view line = sources_.LineText(span.file, loc.line);
    std::string number = std::to_string(loc.line);
    size_t line_begin = static_cast<size_t>(line.data() - sources_.file(span.file).text.data());
    size_t begin = std::min<size_t>(span.begin - line_begin, line.size());
    size_t end = std::min<size_t>(std::max(span.end, span.begin) - line_begin, line.size());
    // A long line (a minified or binary file: up to 16 MiB) is shown as a
    // window around the span, cut at character boundaries and marked "...",
    // so the excerpt stays readable and its cost does not grow with the line.
    std::string before_mark, after_mark;
    if (line.size() > kExcerptMax) {
      // At most 3 bytes back to a character's first byte: invalid input
      // (a run of continuation bytes) is cut anywhere, and escaped.
      auto continuation = [&](size_t i) {
        return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
      };
      size_t from = begin > kExcerptLead ? begin - kExcerptLead : 0;
      for (int k = 0; k < 3 && from > 0 && continuation(from); ++k) --from;
      size_t to = std::min(line.size(), from + kExcerptMax);
      for (int k = 0; k < 3 && to < line.size() && continuation(to); ++k) --to;
      if (from > 0) before_mark = "...";
      if (to < line.size()) after_mark = "...";
      line = line.substr(from, to - from);
      begin -= from;
      end = std::min(end - from, line.size());
    }
    std::vector<size_t> widths;
    out_ += std::string(width - number.size() + 1, ' ') + number + " | ";
    out_ += before_mark + Printable(line, false, &widths) + after_mark + "\n";
    // Pad under the characters before the span, keeping tabs so the caret
    // lines up whatever the tab width; an escaped byte is 4 wide.
    std::string pad(before_mark.size(), ' ');
    for (size_t i = 0; i < begin; ++i) pad += line[i] == '\t' ? "\t" : std::string(widths[i], ' ');
    // Underline up to the end of the span or of the shown line.
    size_t chars = 0;
    for (size_t i = begin; i < end; ++i) chars += widths[i];
    std::string marks = "^" + std::string(chars > 1 ? chars - 1 : 0, '~');
    out_ += std::string(width + 1, ' ') + " | " + pad + Paint(kGreen, marks) + "\n";
  }

  // Lines longer than kExcerptMax bytes are shown from kExcerptLead bytes
  // before the span.
  static constexpr size_t kExcerptMax = 200;
  static constexpr size_t kExcerptLead = 60;

  const SourceManager& sources_;
  bool color_;
  std::string out_;
};

}  // namespace

std::string RenderTextOne(const SourceManager& sources, const Diagnostic& d,
                          const RenderOptions& options) {
  TextRenderer r(sources, options);
  r.Render(d);
  return r.Take();
}

std::string RenderText(const SourceManager& sources, const DiagnosticSink& sink,
                       const RenderOptions& options) {
  TextRenderer r(sources, options);
  for (const Diagnostic& d : sink.Shown()) r.Render(d);
  return r.Take();
}

std::string RenderJson(const SourceManager& sources, const DiagnosticSink& sink) {
  using nlohmann::ordered_json;
  auto place = [&](ordered_json& j, Span span) {
    if (!span.valid()) return;
    Location b = sources.LocationOf(span.file, span.begin);
    Location e = sources.LocationOf(span.file, std::max(span.begin, span.end));
    j["file"] = sources.file(span.file).display_path;
    j["line"] = b.line;
    j["column"] = b.column;
    j["end_line"] = e.line;
    j["end_column"] = e.column;
  };
  ordered_json list = ordered_json::array();
  for (const Diagnostic& d : sink.diagnostics()) {
    ordered_json j;
    j["code"] = std::string(CodeString(d.code));
    j["severity"] = SeverityName(d.severity);
    j["message"] = d.message;
    place(j, d.span);
    if (!d.hint.empty()) j["hint"] = d.hint;
    if (!d.related.empty()) {
      ordered_json rel = ordered_json::array();
      for (const Related& r : d.related) {
        ordered_json rj;
        rj["message"] = r.message;
        place(rj, r.span);
        rel.push_back(std::move(rj));
      }
      j["related"] = std::move(rel);
    }
    list.push_back(std::move(j));
  }
  ordered_json root;
  root["version"] = 1;
  root["diagnostics"] = std::move(list);
  root["errors"] = sink.error_count();
  root["warnings"] = sink.warning_count();
  // Invalid UTF-8 in messages (quoted source bytes) is replaced, never thrown.
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace ward
