#include "cli/run_exec.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "cli/programs.h"
#include "compiler/agent_guard.h"
#include "compiler/ir_json.h"
#include "enforcers/run/run_cache.h"

namespace ward::cli {

namespace {

// A run from the run cache has no syscall rules to cite: `ward explain`
// (ward-cli, with the front end) answers for the syscall that was killed,
// after the run, so a SIGSYS says the same from the cache as compiled.
// False when it could not.
bool ExplainKill(const RunFlags& flags, const SourceManager& sources, enforce::Denial* kill) {
  const std::string cli = WardCliPath();
  if (cli.empty()) return false;
  std::vector<std::string> args = {cli, "explain", flags.file};
  if (flags.policy) args.insert(args.end(), {"--policy", *flags.policy});
  if (!flags.std_dir.empty()) args.insert(args.end(), {"--std", flags.std_dir});
  args.insert(args.end(), {"--syscall", kill->syscall, "--arch", kill->arch, "--format", "json"});
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return false;
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("rules") || !j["rules"].is_array()) return false;
  if (!j["rules"].empty()) {
    kill->rule = j["rules"][0].value("location", "");
    kill->rule_text = j["rules"][0].value("text", "");
    return !kill->rule.empty();
  }
  kill->rule = "default";
  kill->default_at = j.value("default_rule", "");
  // The statement's text, from the line the location names.
  const size_t colon = kill->default_at.rfind(':', kill->default_at.rfind(':') - 1);
  for (size_t i = 0; colon != std::string::npos && i < sources.size(); ++i) {
    const SourceFile& f = sources.file(static_cast<FileId>(i));
    if (kill->default_at.compare(0, colon, f.display_path) != 0) continue;
    unsigned line = 0, col = 0;
    if (std::sscanf(kill->default_at.c_str() + colon, ":%u:%u", &line, &col) != 2) break;
    std::string l(sources.LineText(static_cast<FileId>(i), line));
    l = col > 0 && col <= l.size() ? l.substr(col - 1) : l;
    l = l.substr(0, l.find("//"));
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t')) l.pop_back();
    kill->rule_text = l;
  }
  return true;
}

}  // namespace

int Run(const RunFlags& flags, ir::Policy ir, const SourceManager& sources,
        const std::string& policy_hash, const std::optional<std::string>& filter,
        const std::optional<std::string>& guard, DiagnosticSink& sink, const std::string& front_end,
        const std::function<void(const enforce::RunPlan&)>& prepared) {
  // A run from the cache brings its compiled filter, and its IR carries no
  // syscall regions; only a run whose policy passed this check stored one.
  const bool json = flags.output.format == "json";  // with --dry-run only (cli/run.cc)
  if (!filter && ir::KillsEverySyscall(ir.syscalls)) {
    // Strictly meant, and fatal: the command would die (SIGSYS, exit 159) at
    // its first syscall without a word.
    if (json) {
      PrintJsonDocument(DryRunDocument(), &sources, &sink,
                        "policy " + ir.name +
                            " has no syscalls section: every syscall would be killed; extend "
                            "linux-base");
    } else if (!sink.diagnostics().empty()) {
      OutputFlags text = flags.output;
      text.format = "text";
      PrintDiagnostics(sources, sink, text);
    }
    std::cerr << "ward run: policy " << ir.name
              << " has no syscalls section: every syscall would be killed; extend linux-base; "
                 "the command was not started\n";
    return enforce::kRunSetupFailed;
  }
  enforce::RunOptions options;
  options.home = flags.home;
  options.dns = flags.dns;
  options.policy_hash = policy_hash;
  // No workload reaches wardd: its default socket always, and the listeners
  // a running agent publishes. Those change the network section without
  // changing the policy's hash, so a run that meets them keys no cache by
  // it (the shared eBPF programs, the filter cache): slower, never stale.
  const ir::AgentEndpoints endpoints = ir::HostAgentEndpoints();
  std::string guard_error;
  if (!ir::GuardAgentEndpoints(&ir, endpoints, &guard_error)) {
    std::cerr << "ward run: " << guard_error << "; the command was not started\n";
    if (json) PrintJsonDocument(DryRunDocument(), &sources, &sink, guard_error);
    return enforce::kRunSetupFailed;
  }
  if (endpoints != ir::DefaultAgentEndpoints()) options.policy_hash.clear();
  options.filter = filter;
  options.guard = guard;
  options.partial = flags.partial;
  options.report = [](const std::string& message) {
    // One write: the workload may write to the same stream meanwhile.
    const std::string line = "ward run: " + message + "\n";
    std::cerr << std::flush;
    (void)!write(2, line.data(), line.size());
  };
  options.where = [&sources](Span s) { return ir::Where(sources, s); };
  options.text = [&sources](Span s) { return std::string(sources.Text(s)); };
  // The run cache's IR has no syscall rules: a SIGSYS names no rule then.
  options.syscalls_unknown = filter.has_value();
  // --log: the file opened before anything runs (as the shell's `>` would
  // open it: a FIFO streams), close-on-exec, never inherited by the
  // workload.
  int log_fd = -1;
  const bool human = flags.log && !flags.quiet && isatty(2);
  if (flags.log && !flags.dry_run) {
    log_fd = *flags.log == "-"
                 ? 1
                 : open(flags.log->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (log_fd < 0) {
      std::cerr << "ward run: log: cannot open " << *flags.log << ": " << std::strerror(errno)
                << "; the command was not started\n";
      return enforce::kRunSetupFailed;
    }
    options.on_denial = [log_fd, human](const enforce::Denial& d) {
      const std::string line = enforce::DenialJson(d) + "\n";
      if (log_fd == 1) std::cout << std::flush;
      (void)!write(log_fd, line.data(), line.size());
      // One write: the workload writes to the same terminal meanwhile.
      if (human) {
        const std::string text = enforce::DenialText(d) + "\n";
        (void)!write(2, text.data(), text.size());
      }
    };
  }
  std::string error;
  enforce::RunPlanPtr plan =
      enforce::PrepareRun(ir, flags.command, options, flags.dry_run, sink, &error);
  if (!json && !sink.diagnostics().empty()) {
    OutputFlags text = flags.output;
    text.format = "text";
    PrintDiagnostics(sources, sink, text);
  }
  if (!plan) {
    std::cerr << "ward run: " << (error.empty() ? "the policy cannot be enforced here" : error)
              << "; the command was not started\n";
    if (json) PrintJsonDocument(DryRunDocument(), &sources, &sink, error);
    return enforce::kRunSetupFailed;
  }
  if (flags.dry_run && json) {
    Json doc = JsonDocument();
    doc.update(
        enforce::DescribeRunJson(*plan, [&sources](Span span) { return SpanJson(sources, span); }));
    doc["front_end"] = front_end;
    PrintJsonDocument(std::move(doc), &sources, &sink);
    return kOk;
  }
  if (flags.dry_run) {
    std::cout << enforce::DescribeRun(*plan) << "front end: " << front_end << "\n";
    return kOk;
  }
  if (prepared) prepared(*plan);
  std::cerr << std::flush;
  std::cout << std::flush;
  const int code = enforce::ExecuteRun(*plan, &error);
  if (!error.empty()) {
    std::cerr << "ward run: " << error
              << (code == enforce::kRunSetupFailed ? "; the command was not started" : "") << "\n";
  }
  enforce::RunOutcome outcome = enforce::Outcome(*plan);
  if (outcome.sigsys) {
    bool unknown = options.syscalls_unknown;
    if (unknown && outcome.kill && outcome.kill->layer == "seccomp" &&
        ExplainKill(flags, sources, &*outcome.kill)) {
      unknown = false;
    }
    std::cerr << enforce::SigsysMessage(outcome, unknown) << "\n";
  }
  if (flags.log && log_fd >= 0) {
    if (!outcome.audit_unreachable.empty()) {
      std::cerr << "ward run: log: seccomp and file denials are missing: "
                << outcome.audit_unreachable << "\n";
    } else if (!outcome.files_unlogged.empty()) {
      std::cerr << "ward run: log: file denials are not logged: " << outcome.files_unlogged << "\n";
    }
    const std::string count =
        std::to_string(outcome.denials) + (outcome.denials == 1 ? " denial" : " denials");
    if (outcome.lost > 0) {
      std::cerr << "ward run: log: " << count << ", " << outcome.lost
                << (outcome.lost == 1 ? " record" : " records")
                << " lost: the log may be incomplete\n";
    } else if (!flags.quiet) {
      std::cerr << "ward run: log: " << count << "\n";
    }
    if (log_fd != 1) close(log_fd);
  }
  return code;
}

Json DryRunDocument() {
  Json doc = JsonDocument();
  doc["policy"] = nullptr;
  doc["command"] = nullptr;
  doc["layers"] = Json::array();
  doc["front_end"] = nullptr;
  return doc;
}

int RunFromCache(int argc, char** argv) {
  enforce::RunTrace("main");
  // Root only (the cache is root's), and the plain form of the command
  // line: FILE, --policy, --home, --std, --dry-run, --partial, then `--` and the
  // command. Anything else is CLI11's to parse.
  if (argc < 5 || std::string_view(argv[1]) != "run" || geteuid() != 0) return -1;
  if (const char* off = std::getenv("WARD_RUN_CACHE"); off && std::string_view(off) == "0") {
    return -1;
  }
  RunFlags flags;
  std::set<std::string_view> seen;
  bool have_file = false;
  int i = 2;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--dry-run" || arg == "--partial") {
      if (!seen.insert(arg).second) return -1;
      (arg == "--dry-run" ? flags.dry_run : flags.partial) = true;
      continue;
    }
    bool matched = false;
    for (const char* name : {"--policy", "--home", "--std"}) {
      const std::string_view n = name;
      std::optional<std::string> value;
      if (arg == n && i + 1 < argc) {
        value = argv[++i];
      } else if (arg.size() > n.size() && arg.substr(0, n.size()) == n && arg[n.size()] == '=') {
        value = std::string(arg.substr(n.size() + 1));
      } else {
        continue;
      }
      if (!seen.insert(n).second) return -1;  // CLI11's rules for repeats
      if (n == "--policy") {
        flags.policy = value;
      } else if (n == "--home") {
        flags.home = value;
      } else {
        flags.std_dir = *value;
      }
      matched = true;
      break;
    }
    if (matched) continue;
    if (arg.empty() || arg[0] == '-' || have_file) return -1;
    flags.file = std::string(arg);
    have_file = true;
  }
  if (!have_file || i + 1 >= argc) return -1;
  for (++i; i < argc; ++i) flags.command.emplace_back(argv[i]);
  const enforce::RunOptions defaults;
  const std::string key =
      enforce::RunCacheKey(flags.file, flags.policy, flags.std_dir, ProgramsKey());
  const std::string entry = enforce::RunCacheEntry(defaults.run_cache_dir, key);
  enforce::RunTrace("key");
  std::optional<enforce::CachedPolicy> cached = enforce::ReadRunCache(entry, key);
  enforce::RunTrace("cache read");
  if (!cached) return -1;
  DiagnosticSink sink;
  return Run(flags, std::move(cached->ir), cached->sources, cached->policy_hash, cached->filter,
             cached->guard, sink, "from the run cache " + entry, nullptr);
}

std::string ProgramsKey() {
  return std::string("ward ") + WARD_VERSION + "\nexe " + ProgramsIdentity();
}

}  // namespace ward::cli
