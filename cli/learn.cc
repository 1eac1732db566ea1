// `ward learn [--merge EXISTING.ward] [-o OUT.ward] [--name NAME] -- CMD
// ARGS...`: runs the command once under ward run's cgroup, no_new_privs,
// dropped capabilities, guard and hidden state, records what it does
// (enforcers/learn/recorder.h) and writes a draft policy extending
// linux-base (enforcers/learn/draft.h), checked, linted and formatted. With
// --merge, the additions go into EXISTING's policy and `ward diff` of the
// two is printed for review. Argument parsing and output only.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/diff_print.h"
#include "cli/load.h"
#include "compiler/lint/lint.h"
#include "enforcers/learn/draft.h"
#include "enforcers/learn/recorder.h"
#include "enforcers/linux/files.h"
#include "enforcers/run/run.h"
#include "language/format.h"

namespace ward::cli {
namespace {

struct LearnFlags {
  std::vector<std::string> command;
  std::string merge;
  std::string out;
  std::string name;
  std::optional<std::string> home;
  std::string std_dir;
  OutputFlags output;
};

// What the command runs under while it is learned: everything open, so
// that what it does is what it needs; ward run's own layers stay (the
// cgroup and its limits, no_new_privs, no capabilities, its guard filter,
// its hidden state).
constexpr const char* kLearningPolicy = R"(ward 1
policy ward-learn {
  filesystem {
    allow read write exec "/"
  }
  network {
    allow to any
    allow ingress from any
  }
  syscalls {
    default allow
  }
}
)";

// A policy's text in a temporary file beside `dir` (so that relative
// imports resolve as they would there), loaded and removed.
std::unique_ptr<ir::LoadedPolicy> LoadText(const std::string& text, const std::string& dir,
                                           const std::string& std_dir, std::string* path_out,
                                           std::string* error) {
  std::string path = dir + "/.ward-learn-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    *error = dir + ": cannot create a temporary file: " + strerror(errno);
    return nullptr;
  }
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(path.c_str());
    *error = path + ": cannot write";
    return nullptr;
  }
  ir::LoadStatus status;
  auto loaded = ir::LoadPolicyFile(path, std::nullopt, std_dir, &status, error);
  unlink(path.c_str());
  if (path_out) *path_out = path;
  if (status != ir::LoadStatus::kOk) {
    if (error->empty() && loaded) {
      for (const Diagnostic& d : loaded->sink.diagnostics()) *error += d.message + "; ";
    }
    return nullptr;
  }
  return loaded;
}

std::string CgroupV2Mount() {
  std::ifstream mounts("/proc/self/mounts");
  std::string dev, dir, type, rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest)) {
    if (type == "cgroup2") return dir;
  }
  return "";
}

std::set<std::string> HomeDirectories(const std::optional<std::string>& home) {
  std::set<std::string> homes;
  setpwent();
  while (const passwd* pw = getpwent()) {
    if (pw->pw_dir && pw->pw_dir[0] == '/' && std::string(pw->pw_dir) != "/") {
      homes.insert(pw->pw_dir);
    }
  }
  endpwent();
  if (const char* h = std::getenv("HOME"); h && h[0] == '/' && std::string(h) != "/") {
    homes.insert(h);
  }
  if (home) homes.insert(*home);
  return homes;
}

std::string DefaultName(const std::string& argv0) {
  std::string base = argv0.substr(argv0.rfind('/') + 1);
  std::string name;
  for (char c : base) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  }
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) name = "cmd-" + name;
  return name + "-learned";
}

// Why a learned rule draws a lint finding, and what to do: the trial run
// did it, so the rule is there; whether the workload should is the
// reviewer's call.
std::string LintWhy(std::string_view id) {
  static const std::map<std::string_view, std::string_view> kWhy = {
      {"L2102", "Learned on this machine only: list the other architectures it runs on"},
      {"L2301", "The trial run wrote there; narrow it to the files it must write"},
      {"L2302",
       "The trial run read inside that tree, not necessarily the credentials: "
       "narrow the grant to what it needs"},
      {"L2205", "The trial run connected there: name the hosts instead if you can"},
      {"L2210",
       "The trial run connected to that socket: grant it only if the workload "
       "must reach that daemon"},
      {"L2212", "The trial run opened such a socket"},
      {"L2503", "Learned apart from the rule that already decides it: remove one"},
  };
  auto it = kWhy.find(id);
  if (it != kWhy.end()) return std::string(it->second);
  return "Learned from the trial run, which did this: keep it if the workload needs it, "
         "else narrow or remove the rule";
}

// The lint findings of a draft as comments above the lines they are about.
std::string WithLintComments(const std::string& text, const ir::LoadedPolicy& loaded, FileId file,
                             size_t* count) {
  DiagnosticSink sink;
  lint::Options options;
  const auto findings = lint::Lint(loaded.program, loaded.sources, options, sink);
  // line -> rule -> its messages there, in order
  std::map<uint32_t, std::map<std::string, std::vector<std::string>>> found;
  for (const lint::Finding& f : findings) {
    if (f.suppressed || !f.rule || f.span.file != file) continue;
    const uint32_t line = loaded.sources.LocationOf(file, f.span.begin).line;
    found[line][std::string(f.rule->id)].push_back(f.message);
  }
  // One comment per rule and line: its first message, and how many more.
  std::map<uint32_t, std::vector<std::string>> above;
  for (const auto& [line, rules] : found) {
    for (const auto& [id, messages] : rules) {
      const lint::RuleInfo* rule = lint::FindRule(id);
      std::string c =
          "lint " + id + " (" + std::string(rule ? rule->name : "") + "): " + messages.front();
      if (messages.size() > 1) {
        c += " (and " + std::to_string(messages.size() - 1) + " more of this rule here)";
      }
      above[line].push_back(c + ". " + LintWhy(id));
    }
  }
  *count = above.size();
  std::istringstream in(text);
  std::string out, line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    if (auto it = above.find(n); it != above.end()) {
      const std::string indent = line.substr(0, line.find_first_not_of(' '));
      for (const std::string& c : it->second) out += indent + "// " + c + "\n";
    }
    out += line + "\n";
  }
  return out;
}

// The Ward file formatted as `ward fmt` would (or as it is, should the
// formatter refuse it).
std::string Formatted(const std::string& text) {
  SourceManager sources;
  const FileId id = sources.Add("<draft>", "<draft>", text);
  DiagnosticSink sink;
  auto out = FormatFile(sources, id, sink);
  return out ? *out : text;
}

void PrintStart(const std::vector<std::string>& command, const ir::Policy& policy) {
  std::string cmd;
  for (const std::string& a : command) cmd += (cmd.empty() ? "" : " ") + a;
  std::cerr << "ward learn: recording `" << cmd << "`\n"
            << "ward learn: enforced while learning: a cgroup of its own"
            << (policy.limits.empty() ? "" : " with the policy's limits")
            << ", no_new_privs, every capability dropped, ward run's guard filter, Ward's "
               "state hidden\n"
            << "ward learn: warning: nothing else is enforced: the workload runs unconfined "
               "(files, network, syscalls) while it is learned; learn only what you trust\n";
}

void PrintFigures(const learn::Records& r, int exit_code) {
  std::cerr << "ward learn: the command exited " << exit_code << "; recorded " << r.events
            << " events: " << r.read.size() + r.read_dirs.size() << " paths read, "
            << r.write.size() << " written, " << r.exec.size() << " executed, "
            << r.created.size() + r.deleted.size() + r.renamed.size()
            << " created, deleted or renamed, " << r.connects.size() << " connections, "
            << r.syscalls.size() << " distinct syscalls, " << r.dns_replies << " DNS replies; "
            << r.drops << " dropped\n";
  if (r.drops > 0) {
    std::cerr << "ward learn: warning: " << r.drops
              << " events were dropped (the recorder's ring buffer was full): the policy may "
                 "be incomplete; run the command again with --merge\n";
  }
  if (exit_code != 0) {
    std::cerr << "ward learn: warning: the command failed (exit " << exit_code
              << "): the draft holds only what it did before\n";
  }
}

// Spans of the merged policy's own sections in its root file.
learn::PolicySpans SpansOf(const ir::LoadedPolicy& loaded, const std::string& name) {
  learn::PolicySpans s;
  if (loaded.program.roots.empty()) return s;
  const ast::File* file = loaded.program.file(loaded.program.roots[0]);
  if (!file) return s;
  for (const ast::Policy& p : file->policies) {
    if (p.name.text != name) continue;
    s.policy_end = p.span.end;
    if (p.filesystem)
      s.filesystem[0] = p.filesystem->span.begin, s.filesystem[1] = p.filesystem->span.end;
    if (p.network) s.network[0] = p.network->span.begin, s.network[1] = p.network->span.end;
    if (p.syscalls) s.syscalls[0] = p.syscalls->span.begin, s.syscalls[1] = p.syscalls->span.end;
  }
  return s;
}

bool Output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return true;
  }
  std::string error;
  if (!enforce::WriteUserFile(path, text, &error)) {
    std::cerr << "ward learn: " << error << "\n";
    return false;
  }
  return true;
}

int RunLearn(const LearnFlags& flags) {
  if (flags.command.empty()) {
    std::cerr << "ward learn: no command; usage: ward learn [--merge FILE] [-o OUT] -- CMD "
                 "ARGS...\n";
    return kUsage;
  }
  if (geteuid() != 0) {
    std::cerr << "ward learn: needs root (cgroups, BPF programs)\n";
    return kUsage;
  }
  int exit_code = kOk;
  std::unique_ptr<ir::LoadedPolicy> existing;
  if (!flags.merge.empty()) {
    existing = LoadPolicy(flags.merge, std::nullopt, flags.std_dir, flags.output, &exit_code);
    if (!existing) return exit_code;
  }
  char cwd_buf[4096];
  const std::string cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : "/";
  std::string error;
  auto learning = LoadText(kLearningPolicy, "/tmp", flags.std_dir, nullptr, &error);
  if (!learning) {
    std::cerr << "ward learn: the learning policy: " << error << "\n";
    return kUsage;
  }
  ir::Policy learn_ir = learning->ir;
  if (existing) learn_ir.limits = existing->ir.limits;  // its cgroup limits hold while learning

  enforce::RunOptions options;
  options.home = flags.home;
  options.report = [](const std::string& m) { std::cerr << "ward learn: " << m << "\n"; };
  DiagnosticSink sink;
  auto plan = enforce::PrepareRun(learn_ir, flags.command, options, false, sink, &error);
  if (!plan) {
    std::cerr << "ward learn: " << (error.empty() ? "the run could not be prepared" : error)
              << "\n";
    return kUsage;
  }
  learn::RecorderOptions ro;
  ro.cgroup_path = CgroupV2Mount() + "/ward/run-" + std::to_string(getpid());
  struct stat st;
  if (stat(ro.cgroup_path.c_str(), &st) != 0) {
    std::cerr << "ward learn: recorder: the run's cgroup " << ro.cgroup_path << ": "
              << strerror(errno) << "\n";
    return kUsage;
  }
  ro.cgroup_id = st.st_ino;
  ro.cgroup_level = 2;  // <v2 root>/ward/run-<id>
  if (const char* ring = std::getenv("WARD_LEARN_RING_BYTES")) {
    ro.ring_bytes = static_cast<uint32_t>(std::strtoul(ring, nullptr, 10));
  }
  learn::Recorder recorder;
  if (!recorder.Start(ro, &error)) {
    std::cerr << "ward learn: " << error << "\n";
    return kUsage;
  }
  PrintStart(flags.command, learn_ir);
  std::string run_error;
  const int rc = enforce::ExecuteRun(*plan, &run_error);
  learn::Records records = recorder.Stop();
  plan.reset();
  if (!run_error.empty()) std::cerr << "ward learn: " << run_error << "\n";
  if (rc >= enforce::kRunSetupFailed && rc <= enforce::kRunNotFound && !run_error.empty()) {
    return kUsage;  // the command never ran: nothing learned
  }
  PrintFigures(records, rc);

  // What is granted already: linux-base, or the policy merged into.
  std::unique_ptr<ir::LoadedPolicy> base;
  if (!existing) {
    base = LoadText("ward 1\nimport \"std/linux.ward\"\npolicy base extends linux-base {}\n",
                    "/tmp", flags.std_dir, nullptr, &error);
    if (!base) {
      std::cerr << "ward learn: linux-base: " << error << "\n";
      return kUsage;
    }
  }
  learn::DraftOptions dopt;
  dopt.cwd = cwd;
  dopt.homes = HomeDirectories(flags.home);
  dopt.base = existing ? &existing->ir : &base->ir;
  dopt.home = flags.home;
  if (!dopt.home) {
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) dopt.home = pw->pw_dir;
  }
  learn::Draft draft = learn::MakeDraft(records, dopt);
  // Learned on this machine: the filter is pinned to it (a merge keeps the
  // policy's own choice).
  if (!existing) draft.arch = learn::MachineArchName();

  // The command as one comment line: line breaks in it escaped.
  std::string cmd;
  for (const std::string& a : flags.command) cmd += (cmd.empty() ? "" : " ") + a;
  for (size_t at = 0; (at = cmd.find('\n', at)) != std::string::npos; at += 2) {
    cmd.replace(at, 1, "\\n");
  }
  const std::string name = existing
                               ? existing->ir.name
                               : (flags.name.empty() ? DefaultName(flags.command[0]) : flags.name);
  const size_t slash = flags.merge.rfind('/');
  std::string dir = flags.merge.empty()          ? "/tmp"
                    : slash == std::string::npos ? "."
                    : slash == 0                 ? "/"
                                                 : flags.merge.substr(0, slash);
  const auto compose = [&]() {
    if (existing) {
      const SourceFile& f = existing->sources.file(existing->program.roots[0]);
      return learn::MergeInto(f.text, SpansOf(*existing, name), draft);
    }
    return learn::DraftFile(name,
                            {"Drafted by `ward learn` from one run of: " + cmd,
                             "in " + cwd + ". Review it: it grants what that run did, no more."},
                            draft);
  };
  // Compiled once to find what the base still refuses, once more as written.
  auto compiled = LoadText(compose(), dir, flags.std_dir, nullptr, &error);
  if (!compiled) {
    std::cerr << "ward learn: the draft does not compile (a bug): " << error << "\n";
    return kUsage;
  }
  learn::StillRefused(records, compiled->ir, &draft);
  std::string text = compose();
  compiled = LoadText(text, dir, flags.std_dir, nullptr, &error);
  if (!compiled) {
    std::cerr << "ward learn: the draft does not compile (a bug): " << error << "\n";
    return kUsage;
  }
  // A merge adds no lint comments to a policy its author wrote: the diff
  // below is what is reviewed.
  size_t findings = 0;
  text = Formatted(
      existing ? text : WithLintComments(text, *compiled, compiled->program.roots[0], &findings));
  if (!Output(flags.out, text)) return kUsage;
  if (!flags.out.empty()) {
    std::cerr << "ward learn: wrote " << flags.out << " (policy " << name << ", "
              << draft.filesystem.size() << " filesystem, " << draft.network.size()
              << " network rules, " << draft.syscalls.size() << " syscalls beyond the base, "
              << findings << " lines with lint findings explained)\n";
  }
  if (existing) {
    // Cited by the name it was written to.
    std::unique_ptr<ir::LoadedPolicy> merged;
    if (!flags.out.empty() && flags.out != "-") {
      ir::LoadStatus status;
      merged = ir::LoadPolicyFile(flags.out, std::nullopt, flags.std_dir, &status, &error);
      if (status != ir::LoadStatus::kOk) merged.reset();
    } else {
      merged = LoadText(text, dir, flags.std_dir, nullptr, &error);
    }
    if (!merged) {
      std::cerr << "ward learn: the merged policy does not compile (a bug): " << error << "\n";
      return kUsage;
    }
    ir::DiffOptions diff_options;
    if (flags.home) diff_options.home = *flags.home;
    const ir::DiffResult result = ir::Diff(existing->ir, merged->ir, diff_options);
    std::cerr << "ward learn: ward diff " << flags.merge << " "
              << (flags.out.empty() || flags.out == "-" ? "<stdout>" : flags.out) << ":\n";
    std::cerr.flush();
    // The policy went to stdout without -o: the diff goes to stderr then.
    if (flags.out.empty() || flags.out == "-") {
      std::streambuf* saved = std::cout.rdbuf(std::cerr.rdbuf());
      PrintDiffText(result, existing->sources, merged->sources, false);
      std::cout.rdbuf(saved);
    } else {
      PrintDiffText(result, existing->sources, merged->sources,
                    UseColor(flags.output, STDOUT_FILENO));
    }
  }
  return kOk;
}

}  // namespace

void AddLearnCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<LearnFlags>();
  CLI::App* cmd =
      app.add_subcommand("learn", "Run a command once and draft the policy it needs (root)");
  cmd->add_option("command", f->command, "the command and its arguments, after --");
  cmd->add_option("--merge", f->merge,
                  "add what this run needed to the policy in FILE; prints the ward diff");
  cmd->add_option("-o,--output", f->out, "write the policy to FILE (default: standard output)");
  cmd->add_option("--name", f->name, "the draft's policy name (default: CMD-learned)");
  cmd->add_option("--home", f->home, "what ~ stands for (default: the caller's home)");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunLearn(*f); });
}

}  // namespace ward::cli
