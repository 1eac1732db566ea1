// The lint driver: lowers each policy, runs every family, then applies the
// configuration and the suppression comments, and sorts.
#include "compiler/lint/lint.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "compiler/extends.h"
#include "compiler/lint/context.h"

namespace ward::lint {

Finding& Findings::Add(std::string_view id, Span span, std::string message, std::string hint) {
  Finding f;
  f.rule = FindRule(id);
  f.level = f.rule ? f.rule->level : Level::kWarning;
  f.span = span;
  f.message = std::move(message);
  f.hint = hint.empty() && f.rule ? std::string(f.rule->help) : std::move(hint);
  findings_.push_back(std::move(f));
  return findings_.back();
}

void AddRelated(Finding& f, Span span, std::string message) {
  if (f.related.size() < DiagnosticSink::kMaxRelated && span.valid()) {
    f.related.push_back({span, std::move(message)});
  }
}

const ast::Policy* PolicyOf(const std::vector<const ast::Policy*>& order, Span span) {
  for (const ast::Policy* p : order) {
    if (p->span.file == span.file && p->span.begin <= span.begin && span.end <= p->span.end) {
      return p;
    }
  }
  return nullptr;
}

namespace {

// `// ward:allow L2101, L2206 reason` (or `#`): on its own line.
struct Suppression {
  std::vector<std::string> codes;
  std::string reason;
  Span span;
};

using SuppressionMap = std::map<std::pair<FileId, uint32_t>, Suppression>;

bool IsCodeChar(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); }

// Parses one line; false when it holds no suppression comment.
bool ParseSuppression(std::string_view line, Suppression* s, uint32_t* marker) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return false;
  if (line.compare(i, 2, "//") == 0) {
    i += 2;
  } else if (line[i] == '#') {
    i += 1;
  } else {
    return false;
  }
  i = line.find_first_not_of(" \t", i);
  constexpr std::string_view kMarker = "ward:allow";
  if (i == std::string_view::npos || line.compare(i, kMarker.size(), kMarker) != 0) return false;
  *marker = static_cast<uint32_t>(i);
  i += kMarker.size();
  // Codes: words of capitals and digits, separated by spaces or commas.
  while (true) {
    size_t j = line.find_first_not_of(" \t,", i);
    if (j == std::string_view::npos) {
      i = line.size();
      break;
    }
    size_t k = j;
    while (k < line.size() && IsCodeChar(line[k])) ++k;
    bool is_code = k - j == 5 && line[j] == 'L' &&
                   (k == line.size() || line[k] == ' ' || line[k] == '\t' || line[k] == ',');
    if (!is_code) {
      i = j;
      break;
    }
    s->codes.emplace_back(line.substr(j, 5));
    i = k;
  }
  std::string_view reason = line.substr(std::min(i, line.size()));
  while (!reason.empty() &&
         (reason.back() == ' ' || reason.back() == '\t' || reason.back() == '\r')) {
    reason.remove_suffix(1);
  }
  s->reason = std::string(reason);
  return true;
}

SuppressionMap CollectSuppressions(const Program& program, const SourceManager& sources,
                                   Findings& out) {
  SuppressionMap map;
  for (FileId id : program.roots) {
    const SourceFile& file = sources.file(id);
    for (uint32_t line = 1; line <= file.line_starts.size(); ++line) {
      std::string_view text = sources.LineText(id, line);
      if (text.find("ward:allow") == std::string_view::npos) continue;
      Suppression s;
      uint32_t marker = 0;
      if (!ParseSuppression(text, &s, &marker)) continue;
      uint32_t begin = file.line_starts[line - 1];
      s.span = {id, begin + marker, begin + static_cast<uint32_t>(text.size())};
      if (s.codes.empty()) {
        out.Add("L2506", s.span, "the suppression names no rule");
        continue;
      }
      for (const std::string& code : s.codes) {
        if (!FindRule(code)) {
          out.Add("L2506", s.span, "'" + code + "' is not a lint rule");
        }
      }
      if (s.reason.empty()) {
        out.Add("L2505", s.span, "the suppression of " + s.codes[0] + " gives no reason");
        continue;  // not honoured: a reason is required
      }
      map[{id, line}] = std::move(s);
    }
  }
  return map;
}

uint32_t LineOf(const SourceManager& sources, Span span) {
  return sources.LocationOf(span.file, span.begin).line;
}

void ApplySuppressions(const SourceManager& sources, const SuppressionMap& map,
                       std::vector<Finding>& findings) {
  auto lookup = [&](Span span, const std::string& id) -> const Suppression* {
    if (!span.valid()) return nullptr;
    uint32_t line = LineOf(sources, span);
    if (line < 2) return nullptr;
    auto it = map.find({span.file, line - 1});
    if (it == map.end()) return nullptr;
    const auto& codes = it->second.codes;
    return std::find(codes.begin(), codes.end(), id) != codes.end() ? &it->second : nullptr;
  };
  for (Finding& f : findings) {
    if (f.suppressed) continue;
    const std::string id(f.rule->id);
    const Suppression* s = lookup(f.span, id);
    if (!s) s = lookup(f.anchor, id);
    if (!s) continue;
    f.suppressed = true;
    f.suppressed_in_source = true;
    f.suppression_reason = s->reason;
    f.suppression_span = s->span;
  }
}

void ApplyConfig(const Options& options, std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    auto own = options.file_configs.find(f.span.file);
    const Config& config = own != options.file_configs.end() ? own->second : options.config;
    auto it = config.levels.find(f.rule->id);
    if (it == config.levels.end()) continue;
    if (it->second == Level::kOff) {
      f.suppressed = true;
      f.suppression_reason = "rule " + std::string(f.rule->id) + " is off in the configuration";
    } else {
      f.level = it->second;
    }
  }
}

void SortAndDedupe(std::vector<Finding>& findings) {
  auto key = [](const Finding& f) {
    return std::make_tuple(f.span.file, f.span.begin, f.span.end, f.rule->id,
                           std::string_view(f.message));
  };
  std::stable_sort(findings.begin(), findings.end(),
                   [&](const Finding& a, const Finding& b) { return key(a) < key(b); });
  findings.erase(std::unique(findings.begin(), findings.end(),
                             [&](const Finding& a, const Finding& b) { return key(a) == key(b); }),
                 findings.end());
}

}  // namespace

std::vector<Finding> Lint(const Program& program, const SourceManager& sources,
                          const Options& options, DiagnosticSink& sink) {
  Findings out;
  for (FileId id : program.roots) {
    const ast::File* file = program.file(id);
    if (!file) continue;
    LintFileHygiene({program, sources, *file}, out);
    for (const ast::Policy& policy : file->policies) {
      if (policy.is_abstract) continue;
      const size_t errors = sink.error_count();
      ir::Policy ir = ir::Lower(program, policy, sink);
      if (sink.error_count() > errors) continue;
      PolicyContext ctx{program, sources, options, policy, ir::ExtendsOrder(program, policy), ir};
      LintSyscalls(ctx, out);
      LintNetwork(ctx, out);
      LintFilesystem(ctx, out);
      LintProcess(ctx, out);
      LintHygiene(ctx, out);
    }
  }
  SuppressionMap suppressions = CollectSuppressions(program, sources, out);
  std::vector<Finding> findings = std::move(out.all());
  SortAndDedupe(findings);
  ApplyConfig(options, findings);
  ApplySuppressions(sources, suppressions, findings);
  return findings;
}

}  // namespace ward::lint
