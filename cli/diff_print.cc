// The output of `ward diff` (text and JSON, described in cli/diff.cc),
// shared by `ward diff OLD NEW` and `ward diff --host` (cli/remote.cc).
#include "cli/diff_print.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/ir_json.h"

namespace ward::cli {
namespace {

nlohmann::ordered_json Locations(const SourceManager& sources, const std::vector<Span>& spans) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (sources.size() == 0) return out;  // an IR read back from a host: no sources
  for (Span s : spans) out.push_back(ir::Where(sources, s));
  return out;
}

}  // namespace

void PrintDiffJson(const ir::DiffResult& result, const SourceManager& before,
                   const SourceManager& after, const std::vector<std::string>& not_enforced) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  nlohmann::ordered_json changes = nlohmann::ordered_json::array();
  for (const ir::Change& c : result.changes) {
    nlohmann::ordered_json o;
    o["section"] = ir::SectionName(c.section);
    o["kind"] = ir::KindName(c.kind);
    o["line"] = c.line;
    o["old_rules"] = Locations(before, c.old_rules);
    o["new_rules"] = Locations(after, c.new_rules);
    if (!c.example.empty()) o["example"] = c.example;
    changes.push_back(std::move(o));
  }
  j["changes"] = std::move(changes);
  if (!not_enforced.empty()) j["not_enforced"] = not_enforced;
  std::cout << j.dump(2) << "\n";
}

namespace {

void PrintRules(const SourceManager& sources, const std::vector<Span>& spans) {
  if (sources.size() == 0) return;  // an IR read back from a host: no sources
  for (Span s : spans) {
    std::string text(sources.Text(s));
    size_t nl = text.find('\n');
    if (nl != std::string::npos) text = text.substr(0, nl) + " ...";
    std::cout << "  " << ir::Where(sources, s) << ": " << text << "\n";
  }
}

}  // namespace

void PrintDiffText(const ir::DiffResult& result, const SourceManager& before,
                   const SourceManager& after, bool color) {
  if (result.changes.empty()) {
    std::cout << "no changes\n";
    return;
  }
  for (const ir::Change& c : result.changes) {
    const char* paint = c.line[0] == '+' ? "\033[32m" : c.line[0] == '-' ? "\033[31m" : "\033[33m";
    std::cout << (color ? paint : "") << c.line << (color ? "\033[0m" : "") << "\n";
    if (c.kind == ir::ChangeKind::kNarrowed) {
      PrintRules(before, c.old_rules);
      PrintRules(after, c.new_rules);
    } else {
      PrintRules(after, c.new_rules);
      PrintRules(before, c.old_rules);
    }
  }
}

bool DiffFails(const ir::DiffResult& result, const std::string& fail_on) {
  if (fail_on.empty()) return false;
  return std::any_of(result.changes.begin(), result.changes.end(), [&](const ir::Change& c) {
    return fail_on == "any" || c.kind == ir::ChangeKind::kWidened;
  });
}

}  // namespace ward::cli
