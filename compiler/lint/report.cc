#include "compiler/lint/report.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

namespace ward::lint {
namespace {

using nlohmann::ordered_json;

constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

const char* LevelColor(Level l) {
  switch (l) {
    case Level::kError:
      return "\033[1;31m";
    case Level::kWarning:
      return "\033[1;33m";
    case Level::kNote:
    case Level::kOff:
      return "\033[1;36m";
  }
  return "";
}

class TextWriter {
 public:
  TextWriter(const SourceManager& sources, bool color) : sources_(sources), color_(color) {}

  void Render(const Finding& f) {
    Header(f.span,
           Paint(LevelColor(f.level), std::string(LevelName(f.level))) + " " +
               Paint(kBold, std::string(f.rule->id) + " " + std::string(f.rule->name)),
           f.message);
    Excerpt(f.span);
    for (const Related& r : f.related) {
      Header(r.span, Paint(LevelColor(Level::kNote), "note"), r.message);
      Excerpt(r.span);
    }
    if (!f.hint.empty()) out_ += "  = " + Paint(kBold, "hint") + ": " + f.hint + "\n";
    if (f.fix) {
      out_ += "  = " + Paint(kBold, "fix") + ": " + f.fix->description;
      if (!f.fix->replacement.empty()) out_ += ": `" + Trimmed(f.fix->replacement) + "`";
      out_ += "\n";
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  static std::string Trimmed(const std::string& s) {
    size_t b = s.find_first_not_of(" \n");
    return b == std::string::npos ? s : s.substr(b);
  }

  std::string Paint(const char* c, const std::string& s) const {
    return color_ ? std::string(c) + s + kReset : s;
  }

  void Header(Span span, const std::string& label, const std::string& message) {
    std::string where;
    if (span.valid()) {
      Location loc = sources_.LocationOf(span.file, span.begin);
      where = sources_.file(span.file).display_path + ":" + std::to_string(loc.line) + ":" +
              std::to_string(loc.column) + ": ";
    }
    out_ += Paint(kBold, Printable(where, false)) + label + ": " + Printable(message, true) + "\n";
  }

  void Excerpt(Span span) {
    if (!span.valid()) return;
    Location loc = sources_.LocationOf(span.file, span.begin);
    std::string_view line = sources_.LineText(span.file, loc.line);
    std::string number = std::to_string(loc.line);
    std::vector<size_t> widths;
    out_ += " " + number + " | " + Printable(line, false, &widths) + "\n";
    // Control bytes are shown escaped (4 columns): pad and underline by
    // the widths they are shown with.
    std::string pad;
    size_t col = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (col + 1 >= loc.column) break;
      if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
      pad += line[i] == '\t' ? "\t" : std::string(widths[i], ' ');
      ++col;
    }
    // The span's characters on this line.
    size_t start = 0, seen = 0;
    for (; start < line.size() && seen + 1 < loc.column; ++start) {
      if ((static_cast<unsigned char>(line[start]) & 0xC0) != 0x80) ++seen;
    }
    while (start < line.size() && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) ++start;
    size_t length = std::min<size_t>(span.end - span.begin, line.size() - start);
    size_t shown = 0;
    for (size_t i = start; i < start + length; ++i) shown += widths[i];
    size_t width = std::max<size_t>(1, shown);
    out_ += std::string(number.size() + 2, ' ') + "| " + pad +
            Paint(kBold, "^" + std::string(width - 1, '~')) + "\n";
  }

  const SourceManager& sources_;
  bool color_;
  std::string out_;
};

void Place(const SourceManager& sources, ordered_json& j, Span span) {
  if (!span.valid()) return;
  Location b = sources.LocationOf(span.file, span.begin);
  Location e = sources.LocationOf(span.file, span.end);
  j["file"] = sources.file(span.file).display_path;
  j["line"] = b.line;
  j["column"] = b.column;
  j["end_line"] = e.line;
  j["end_column"] = e.column;
}

std::string Dump(const ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

const char* SarifLevel(Level l) {
  switch (l) {
    case Level::kError:
      return "error";
    case Level::kWarning:
      return "warning";
    case Level::kNote:
      return "note";
    case Level::kOff:
      return "none";
  }
  return "none";
}

std::string FamilyName(Family f) {
  switch (f) {
    case Family::kSyscalls:
      return "syscalls";
    case Family::kNetwork:
      return "network";
    case Family::kFilesystem:
      return "filesystem";
    case Family::kProcess:
      return "process";
    case Family::kHygiene:
      return "hygiene";
  }
  return "hygiene";
}

class Sarif {
 public:
  Sarif(const SourceManager& sources, const ReportOptions& options)
      : sources_(sources), options_(options) {}

  std::string Uri(FileId file) const {
    auto it = uris_.find(file);
    if (it == uris_.end()) it = uris_.emplace(file, ComputeUri(file)).first;
    return it->second;
  }

  std::string ComputeUri(FileId file) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path abs = fs::absolute(sources_.file(file).display_path, ec).lexically_normal();
    fs::path base = options_.base_dir.empty() ? fs::current_path(ec) : fs::path(options_.base_dir);
    fs::path rel = abs.lexically_relative(fs::absolute(base, ec).lexically_normal());
    std::string text = rel.empty() || *rel.begin() == ".." ? "file://" + abs.generic_string()
                                                           : rel.generic_string();
    std::string out;
    for (char c : text) {
      if (c == ' ' || c == '%' || c == '#' || c == '?') {
        static const char* kHex = "0123456789ABCDEF";
        out += '%';
        out += kHex[(static_cast<unsigned char>(c) >> 4) & 15];
        out += kHex[static_cast<unsigned char>(c) & 15];
      } else {
        out += c;
      }
    }
    return out;
  }

  ordered_json Region(Span span) const {
    Location b = sources_.LocationOf(span.file, span.begin);
    Location e = sources_.LocationOf(span.file, span.end);
    ordered_json r;
    r["startLine"] = b.line;
    r["startColumn"] = b.column;
    r["endLine"] = e.line;
    r["endColumn"] = e.column;
    return r;
  }

  ordered_json Physical(Span span) const {
    ordered_json p;
    p["artifactLocation"]["uri"] = Uri(span.file);
    p["region"] = Region(span);
    return p;
  }

  ordered_json Loc(Span span) const {
    ordered_json l;
    l["physicalLocation"] = Physical(span);
    return l;
  }

 private:
  const SourceManager& sources_;
  const ReportOptions& options_;
  mutable std::map<FileId, std::string> uris_;
};

const char* SeverityLevel(Severity s) {
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

}  // namespace

std::string RenderFindingsText(const SourceManager& sources, const std::vector<Finding>& findings,
                               const ReportOptions& options) {
  TextWriter w(sources, options.color);
  for (const Finding& f : findings) {
    if (!f.suppressed) w.Render(f);
  }
  return w.Take();
}

std::string RenderFindingsJson(const SourceManager& sources, const DiagnosticSink& diagnostics,
                               const std::vector<Finding>& findings) {
  ordered_json list = ordered_json::array();
  size_t counts[4] = {0, 0, 0, 0};
  size_t suppressed = 0;
  for (const Finding& f : findings) {
    ordered_json j;
    j["rule"] = std::string(f.rule->id);
    j["name"] = std::string(f.rule->name);
    j["severity"] = std::string(LevelName(f.level));
    j["message"] = f.message;
    Place(sources, j, f.span);
    if (!f.hint.empty()) j["hint"] = f.hint;
    if (!f.related.empty()) {
      ordered_json rel = ordered_json::array();
      for (const Related& r : f.related) {
        ordered_json rj;
        rj["message"] = r.message;
        Place(sources, rj, r.span);
        rel.push_back(std::move(rj));
      }
      j["related"] = std::move(rel);
    }
    if (f.fix) {
      ordered_json fix;
      fix["description"] = f.fix->description;
      Place(sources, fix, f.fix->span);
      fix["replacement"] = f.fix->replacement;
      j["fix"] = std::move(fix);
    }
    j["suppressed"] = f.suppressed;
    if (f.suppressed) {
      ordered_json s;
      s["kind"] = f.suppressed_in_source ? "comment" : "config";
      s["reason"] = f.suppression_reason;
      Place(sources, s, f.suppression_span);
      j["suppression"] = std::move(s);
      ++suppressed;
    } else {
      ++counts[static_cast<int>(f.level)];
    }
    list.push_back(std::move(j));
  }
  ordered_json root;
  root["version"] = 1;
  root["findings"] = std::move(list);
  ordered_json diags = ordered_json::parse(RenderJson(sources, diagnostics), nullptr, false);
  root["diagnostics"] = diags.is_object() ? diags["diagnostics"] : ordered_json::array();
  root["errors"] = counts[static_cast<int>(Level::kError)] + diagnostics.error_count();
  root["warnings"] = counts[static_cast<int>(Level::kWarning)] + diagnostics.warning_count();
  root["notes"] = counts[static_cast<int>(Level::kNote)];
  root["suppressed"] = suppressed;
  return Dump(root);
}

std::string RenderFindingsSarif(const SourceManager& sources, const DiagnosticSink& diagnostics,
                                const std::vector<Finding>& findings,
                                const ReportOptions& options) {
  Sarif sarif(sources, options);
  ordered_json rules = ordered_json::array();
  std::map<std::string, size_t> index;
  for (const RuleInfo& r : AllRules()) {
    ordered_json j;
    j["id"] = std::string(r.id);
    j["name"] = std::string(r.name);
    j["shortDescription"]["text"] = std::string(r.rationale);
    j["fullDescription"]["text"] = std::string(r.rationale) + ".";
    j["help"]["text"] = std::string(r.help);
    j["defaultConfiguration"]["level"] = SarifLevel(r.level);
    j["properties"]["tags"] = {"security", FamilyName(r.family)};
    index[std::string(r.id)] = rules.size();
    rules.push_back(std::move(j));
  }
  ordered_json results = ordered_json::array();
  for (const Diagnostic& d : diagnostics.diagnostics()) {
    const std::string id(CodeString(d.code));
    if (!index.count(id)) {
      ordered_json j;
      j["id"] = id;
      j["name"] = std::string(CodeTitle(d.code));
      j["shortDescription"]["text"] = std::string(CodeTitle(d.code));
      j["defaultConfiguration"]["level"] = SeverityLevel(d.severity);
      index[id] = rules.size();
      rules.push_back(std::move(j));
    }
    ordered_json r;
    r["ruleId"] = id;
    r["ruleIndex"] = index[id];
    r["level"] = SeverityLevel(d.severity);
    r["message"]["text"] = d.message + (d.hint.empty() ? "" : " (hint: " + d.hint + ")");
    if (d.span.valid()) r["locations"] = ordered_json::array({sarif.Loc(d.span)});
    results.push_back(std::move(r));
  }
  for (const Finding& f : findings) {
    const std::string id(f.rule->id);
    ordered_json r;
    r["ruleId"] = id;
    r["ruleIndex"] = index[id];
    r["level"] = SarifLevel(f.level);
    r["message"]["text"] = f.message + (f.hint.empty() ? "" : " (hint: " + f.hint + ")");
    if (f.span.valid()) r["locations"] = ordered_json::array({sarif.Loc(f.span)});
    if (!f.related.empty()) {
      ordered_json rel = ordered_json::array();
      int n = 1;
      for (const Related& x : f.related) {
        ordered_json l = sarif.Loc(x.span);
        l["id"] = n++;
        l["message"]["text"] = x.message;
        rel.push_back(std::move(l));
      }
      r["relatedLocations"] = std::move(rel);
    }
    if (f.fix) {
      ordered_json repl;
      repl["deletedRegion"] = sarif.Region(f.fix->span);
      repl["insertedContent"]["text"] = f.fix->replacement;
      ordered_json change;
      change["artifactLocation"]["uri"] = sarif.Uri(f.fix->span.file);
      change["replacements"] = ordered_json::array({repl});
      ordered_json fix;
      fix["description"]["text"] = f.fix->description;
      fix["artifactChanges"] = ordered_json::array({change});
      r["fixes"] = ordered_json::array({fix});
    }
    if (f.suppressed) {
      ordered_json s;
      s["kind"] = f.suppressed_in_source ? "inSource" : "external";
      s["justification"] = f.suppression_reason;
      if (f.suppression_span.valid()) s["location"] = sarif.Loc(f.suppression_span);
      r["suppressions"] = ordered_json::array({s});
    }
    results.push_back(std::move(r));
  }
  ordered_json driver;
  driver["name"] = "ward";
  if (!options.tool_version.empty()) driver["version"] = options.tool_version;
  driver["rules"] = std::move(rules);
  ordered_json run;
  run["tool"]["driver"] = std::move(driver);
  run["columnKind"] = "unicodeCodePoints";
  run["results"] = std::move(results);
  ordered_json root;
  root["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  root["version"] = "2.1.0";
  root["runs"] = ordered_json::array({run});
  return Dump(root);
}

}  // namespace ward::lint
