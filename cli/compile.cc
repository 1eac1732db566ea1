// `ward compile FILE -t TARGET[,TARGET...] -o DIR [--partial]`: artifacts of
// the chosen backends plus manifest.json saying which target enforces each
// IR section. Fails closed: any error, and nothing is written.

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "enforcers/linux/files.h"

namespace ward::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kWarddBundleTarget = "wardd-bundle";

struct CompileFlags {
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  std::string targets;
  std::string out_dir;
  std::optional<std::string> home;  // what `~` stands for (seatbelt)
  bool partial = false;
  OutputFlags output;
};

void PrintTargets() {
  std::cout << "backends:\n";
  for (const backend::Backend* b : backend::AllBackends()) {
    std::string covers;
    for (backend::Section s : b->covers()) {
      covers += (covers.empty() ? "" : ", ") + std::string(backend::SectionName(s));
    }
    std::cout << "  " << b->name() << " - " << b->description() << " (enforces " << covers << ")\n";
  }
  std::cout << "  wardd-bundle - a signed bundle for wardd --bundle-dir and a ConfigMap for it, by "
               "itself (ward compile -t wardd-bundle --help)\n";
  std::cout << "profiles (promise the whole policy; --partial to allow gaps):\n";
  if (backend::AllProfiles().empty()) std::cout << "  none yet\n";
  for (const backend::Profile& p : backend::AllProfiles()) {
    std::cout << "  " << p.name << " - " << p.description << "\n";
  }
}

// The backends named by `-t`, in the registry's order; false after a message.
bool ResolveTargets(const std::string& spec, std::vector<const backend::Backend*>* chosen,
                    bool* profile) {
  std::set<std::string_view> names;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string name = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (const backend::Profile* p = backend::FindProfile(name)) {
      *profile = true;
      names.insert(p->backends.begin(), p->backends.end());
    } else if (const backend::Backend* b = backend::FindBackend(name)) {
      names.insert(b->name());
    } else {
      std::cerr << "ward compile: unknown target '" << name << "'; known targets:";
      for (const backend::Backend* b : backend::AllBackends()) std::cerr << " " << b->name();
      for (const backend::Profile& p : backend::AllProfiles()) std::cerr << " " << p.name;
      std::cerr << " " << kWarddBundleTarget << " (ward compile -t help)\n";
      return false;
    }
  }
  for (const backend::Backend* b : backend::AllBackends()) {
    if (names.count(b->name())) chosen->push_back(b);
  }
  return true;
}

// B3004: the policy writes no syscall rules (strictly, every syscall is
// killed), and a chosen target installs that filter: the workload would die
// at its first syscall. A warning, since the meaning is the language's.
void WarnKillsEverySyscall(LoadedPolicy& loaded,
                           const std::vector<const backend::Backend*>& chosen) {
  if (!ir::KillsEverySyscall(loaded.ir.syscalls)) return;
  std::string filtering;
  for (const backend::Backend* b : chosen) {
    const std::vector<backend::Section> covers = b->covers();
    if (std::find(covers.begin(), covers.end(), backend::Section::kSyscalls) == covers.end()) {
      continue;
    }
    filtering += (filtering.empty() ? "" : ", ") + std::string(b->name());
  }
  if (filtering.empty()) return;
  Span where;
  std::string error;
  for (const ast::Policy* p : ir::SelectPolicies(loaded.program, loaded.ir.name, &error)) {
    where = p->name.span;
  }
  loaded.sink.Warning(Code::kKillsEverySyscall, where,
                      "policy '" + loaded.ir.name +
                          "' has no syscalls section: every syscall would be killed (by the "
                          "filter of " +
                          filtering + ")",
                      "extend linux-base (`policy " + loaded.ir.name +
                          " extends linux-base`), or write a syscalls section");
}

// The JSON document of a compile (cli/README.md) before its result: what
// was asked. A failed compile prints it with "written": false.
Json CompileDocument(const CompileFlags& flags, const std::vector<const backend::Backend*>& chosen,
                     const std::string& policy) {
  Json doc = JsonDocument();
  doc["policy"] = policy.empty() ? Json(nullptr) : Json(policy);
  doc["output"] = flags.out_dir;
  Json targets = Json::array();
  for (const backend::Backend* b : chosen) targets.push_back(std::string(b->name()));
  doc["targets"] = std::move(targets);
  doc["written"] = false;
  doc["ir_sha256"] = nullptr;
  doc["artifacts"] = Json::array();
  doc["manifest"] = nullptr;
  doc["coverage"] = nullptr;
  doc["fields"] = nullptr;
  return doc;
}

// Completes `doc` with what was written: each artifact as written (its
// path under -o, the bytes' count and SHA-256), the manifest the same way,
// and the coverage and fields exactly as the manifest has them.
void AddWritten(const backend::Bundle& bundle, const std::filesystem::path& out, Json* doc) {
  const Json manifest = Json::parse(bundle.manifest, nullptr, false);
  (*doc)["written"] = true;
  (*doc)["ir_sha256"] = manifest.value("ir_sha256", "");
  Json artifacts = Json::array();
  for (const backend::BundleArtifact& a : bundle.artifacts) {
    artifacts.push_back({{"path", (out / a.path).string()},
                         {"target", a.target},
                         {"bytes", a.bytes.size()},
                         {"sha256", Sha256(a.bytes)}});
  }
  (*doc)["artifacts"] = std::move(artifacts);
  (*doc)["manifest"] = {{"path", (out / "manifest.json").string()},
                        {"bytes", bundle.manifest.size()},
                        {"sha256", Sha256(bundle.manifest)}};
  (*doc)["coverage"] = manifest.value("coverage", Json::object());
  (*doc)["fields"] = manifest.value("fields", Json::object());
}

int RunCompile(const CompileFlags& flags) {
  if (flags.targets == "help") {
    PrintTargets();
    return kOk;
  }
  if (flags.file.empty() || flags.out_dir.empty()) {
    std::cerr << "ward compile: FILE and -o DIR are required\n";
    return kUsage;
  }
  std::vector<const backend::Backend*> chosen;
  bool profile = false;
  if (!ResolveTargets(flags.targets, &chosen, &profile)) return kUsage;

  if (flags.home && (flags.home->empty() || (*flags.home)[0] != '/')) {
    std::cerr << "ward compile: --home must be an absolute path\n";
    return kUsage;
  }
  backend::Options options;
  options.home = flags.home;
  options.partial = flags.partial;

  const bool json = flags.output.format == "json";
  int exit_code = kOk;
  auto loaded = LoadPolicyForReport(flags.file, flags.policy, flags.std_dir, flags.output,
                                    CompileDocument(flags, chosen, ""), &exit_code);
  if (!loaded) return exit_code;

  DiagnosticSink& sink = loaded->sink;
  WarnKillsEverySyscall(*loaded, chosen);
  backend::Bundle bundle;
  const bool compiled =
      backend::CompileBundle(loaded->ir, loaded->sources, chosen, profile, options, sink, &bundle);
  Json doc = CompileDocument(flags, chosen, loaded->ir.name);
  if (!json && !sink.diagnostics().empty()) {
    OutputFlags text = flags.output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, sink, text);
  }
  if (!compiled) {
    std::cerr << "ward compile: nothing written\n";
    if (json) PrintJsonDocument(doc, &loaded->sources, &sink);
    return kFound;
  }

  // Every artifact staged in full before the first is renamed into place,
  // the manifest last (enforcers/linux/files.h): a failure before the
  // renames leaves the folder as it was.
  const fs::path out(flags.out_dir);
  enforce::StagedFiles staged(/*create_folders=*/true);
  std::string error;
  bool ok = true;
  for (const backend::BundleArtifact& a : bundle.artifacts) {
    ok = ok && staged.Stage((out / a.path).string(), a.bytes, &error);
  }
  ok = ok && staged.Stage((out / "manifest.json").string(), bundle.manifest, &error);
  if (!ok) {
    std::cerr << "ward compile: cannot write " << error << "; nothing written\n";
    if (json) PrintJsonDocument(doc, &loaded->sources, &sink, "cannot write " + error);
    return kUsage;
  }
  if (!staged.Commit(&error)) {
    std::cerr << "ward compile: cannot write " << error
              << "; the artifacts before it are in place, the manifest is not\n";
    if (json) PrintJsonDocument(doc, &loaded->sources, &sink, "cannot write " + error);
    return kUsage;
  }
  if (json) {
    AddWritten(bundle, out, &doc);
    PrintJsonDocument(doc, &loaded->sources, &sink);
    return kOk;
  }
  for (const backend::BundleArtifact& a : bundle.artifacts)
    std::cout << (out / a.path).string() << "\n";
  std::cout << (out / "manifest.json").string() << "\n";
  return kOk;
}

// One `-t`/`--target` value names wardd-bundle.
bool NamesWarddBundle(std::string_view targets) {
  size_t pos = 0;
  while (pos <= targets.size()) {
    size_t comma = targets.find(',', pos);
    if (comma == std::string_view::npos) comma = targets.size();
    if (targets.substr(pos, comma - pos) == kWarddBundleTarget) return true;
    pos = comma + 1;
  }
  return false;
}

}  // namespace

bool IsWarddBundleCompile(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "compile") return false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if ((arg == "-t" || arg == "--target") && i + 1 < argc && NamesWarddBundle(argv[i + 1])) {
      return true;
    }
    if (arg.rfind("--target=", 0) == 0 && NamesWarddBundle(arg.substr(9))) return true;
    if (arg.size() > 2 && arg.rfind("-t", 0) == 0 && arg[2] != '-' &&
        NamesWarddBundle(arg.substr(arg[2] == '=' ? 3 : 2))) {
      return true;
    }
  }
  return false;
}

void AddCompileCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CompileFlags>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a policy for one or more targets");
  cmd->add_option("file", flags->file, "policy file");
  cmd->add_option("-t,--target", flags->targets,
                  "targets, comma-separated (backends or profiles); `help` lists them")
      ->required();
  cmd->add_option("-o,--output", flags->out_dir, "output folder (created if missing)");
  cmd->add_flag("--partial", flags->partial,
                "with a profile: allow sections no chosen target enforces (a warning)");
  cmd->add_option("--home", flags->home,
                  "the home directory that ~ stands for (targets that resolve it ahead of "
                  "time: seatbelt)");
  cmd->add_option("--policy", flags->policy, "the policy, when the file holds several");
  cmd->add_option("--std", flags->std_dir, "standard library folder");
  cmd->add_option("--format", flags->output.format,
                  "output format: text (the paths written) or json (artifacts, coverage, "
                  "diagnostics)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", flags->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, exit_code] { *exit_code = RunCompile(*flags); });
}

}  // namespace ward::cli
