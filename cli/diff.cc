// `ward diff OLD NEW [--policy NAME] [--format text|json] [--fail-on widen|any]`:
// the permissions gained and lost between two versions of a policy, each
// change with the rules behind it (compiler/diff.h has the line formats).
//
// Text: one line per change, then one indented line per rule: the OLD rules
// behind a loss first, the NEW rules behind a gain first, each as
// `file:line:col: rule text`; equivalent policies print `no changes`.
// JSON: {"version": 1, "changes": [{"section", "kind", "line", "old_rules",
// "new_rules"}]} with rules as "file:line:col", plus "example" on filesystem
// changes (a path whose decision changed) and syscall changes (a call whose
// action changed: "x86_64 clone(arg0=0x10000000)").
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/load.h"
#include "compiler/diff.h"
#include "compiler/ir_json.h"

namespace ward::cli {
namespace {

struct DiffFlags {
  std::string old_file;
  std::string new_file;
  std::optional<std::string> policy;
  std::optional<std::string> home;
  std::string std_dir;
  std::string fail_on;
  OutputFlags output;
};

nlohmann::ordered_json Locations(const SourceManager& sources, const std::vector<Span>& spans) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (Span s : spans) out.push_back(ir::Where(sources, s));
  return out;
}

void PrintJson(const ir::DiffResult& result, const LoadedPolicy& before,
               const LoadedPolicy& after) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  nlohmann::ordered_json changes = nlohmann::ordered_json::array();
  for (const ir::Change& c : result.changes) {
    nlohmann::ordered_json o;
    o["section"] = ir::SectionName(c.section);
    o["kind"] = ir::KindName(c.kind);
    o["line"] = c.line;
    o["old_rules"] = Locations(before.sources, c.old_rules);
    o["new_rules"] = Locations(after.sources, c.new_rules);
    if (!c.example.empty()) o["example"] = c.example;
    changes.push_back(std::move(o));
  }
  j["changes"] = std::move(changes);
  std::cout << j.dump(2) << "\n";
}

void PrintRules(const SourceManager& sources, const std::vector<Span>& spans) {
  for (Span s : spans) {
    std::string text(sources.Text(s));
    size_t nl = text.find('\n');
    if (nl != std::string::npos) text = text.substr(0, nl) + " ...";
    std::cout << "  " << ir::Where(sources, s) << ": " << text << "\n";
  }
}

void PrintText(const ir::DiffResult& result, const LoadedPolicy& before, const LoadedPolicy& after,
               bool color) {
  if (result.changes.empty()) {
    std::cout << "no changes\n";
    return;
  }
  for (const ir::Change& c : result.changes) {
    const char* paint = c.line[0] == '+' ? "\033[32m" : c.line[0] == '-' ? "\033[31m" : "\033[33m";
    std::cout << (color ? paint : "") << c.line << (color ? "\033[0m" : "") << "\n";
    if (c.kind == ir::ChangeKind::kNarrowed) {
      PrintRules(before.sources, c.old_rules);
      PrintRules(after.sources, c.new_rules);
    } else {
      PrintRules(after.sources, c.new_rules);
      PrintRules(before.sources, c.old_rules);
    }
  }
}

bool Fails(const ir::DiffResult& result, const std::string& fail_on) {
  if (fail_on.empty()) return false;
  return std::any_of(result.changes.begin(), result.changes.end(), [&](const ir::Change& c) {
    return fail_on == "any" || c.kind == ir::ChangeKind::kWidened;
  });
}

int RunDiff(const DiffFlags& f) {
  for (const std::string& file : {f.old_file, f.new_file}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      std::cerr << "ward diff: " << file << ": no such file\n";
      return kUsage;
    }
  }
  if (f.home && (f.home->empty() || (*f.home)[0] != '/')) {
    std::cerr << "ward diff: --home must be an absolute path\n";
    return kUsage;
  }
  int exit_code = kOk;
  auto before = LoadPolicy(f.old_file, f.policy, f.std_dir, f.output, &exit_code);
  if (!before) return exit_code;
  auto after = LoadPolicy(f.new_file, f.policy, f.std_dir, f.output, &exit_code);
  if (!after) return exit_code;
  ir::DiffOptions options;
  if (f.home) options.home = *f.home;
  ir::DiffResult result = ir::Diff(before->ir, after->ir, options);
  if (f.output.format == "json") {
    PrintJson(result, *before, *after);
  } else {
    PrintText(result, *before, *after, UseColor(f.output, STDOUT_FILENO));
  }
  return Fails(result, f.fail_on) ? kFound : kOk;
}

}  // namespace

void AddDiffCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<DiffFlags>();
  CLI::App* cmd =
      app.add_subcommand("diff", "Show the permissions gained and lost between two policies");
  cmd->add_option("old", f->old_file, "the policy before")->required();
  cmd->add_option("new", f->new_file, "the policy after")->required();
  cmd->add_option("--policy", f->policy, "the policy, when the files hold several (both files)");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--home", f->home,
                  "the home directory that ~ stands for (default: one no rule names)");
  cmd->add_option("--fail-on", f->fail_on,
                  "exit 1 when there is a widening (widen) or any change (any)")
      ->check(CLI::IsMember({"widen", "any"}));
  cmd->add_option("--format", f->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunDiff(*f); });
}

}  // namespace ward::cli
