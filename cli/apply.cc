// `ward apply FILE (--cgroup P | --uid U | --interface I) [-t nftables|ebpf]`,
// `ward remove`, `ward status`: enforce a policy's network section on this
// host through a network enforcer (enforcers/linux/enforcer.h), take it
// away, and say what the host enforces. Argument parsing and output only.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/dns_flags.h"
#include "cli/load.h"
#include "cli/scope_flags.h"
#include "compiler/agent_guard.h"
#include "enforcers/agent/lock.h"
#include "enforcers/linux/enforcer.h"
#include "enforcers/run/run.h"  // LiveRun (ListRuns only with the eBPF enforcer)
#ifdef WARD_HAVE_EBPF
#include "enforcers/linux/ebpf.h"
#endif

namespace ward::cli {
namespace {

struct ApplyFlags {
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  std::string target = "nftables";
  ScopeFlags scope;
  OutputFlags output;
  // Domain grants (apply): keep resolving in the foreground; the resolver.
  bool refresh = false;
  enforce::DnsOptions dns;  // --dns-server, --dns-port, --ttl-floor, --ttl-cap
  bool follow = false;      // status: print denial events as they come
};

// SIGINT/SIGTERM end the foreground loops (--refresh, --follow); what is
// enforced stays.
std::atomic<bool> g_stop{false};
void OnStopSignal(int) { g_stop = true; }
void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Sleeps up to `seconds`, waking early when a stop signal came.
void SleepUnlessStopped(uint32_t seconds) {
  for (uint32_t i = 0; i < seconds * 10 && !g_stop; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The enforcer `-t` names; nullptr after a usage message.
const enforce::NetworkEnforcer* Enforcer(const std::string& command, const std::string& name) {
  if (const enforce::NetworkEnforcer* e = enforce::FindNetworkEnforcer(name)) return e;
  if (enforce::IsPlannedEnforcer(name)) {
    std::cerr << "ward " << command << ": enforcer '" << name
              << "' is not built yet in this ward; use -t nftables\n";
    return nullptr;
  }
  std::cerr << "ward " << command << ": unknown enforcer '" << name << "'; known:";
  for (const enforce::NetworkEnforcer* e : enforce::NetworkEnforcers())
    std::cerr << " " << e->name();
  std::cerr << "\n";
  return nullptr;
}

std::string ScopeText(const enforce::Enforcement& e) {
  if (!e.scope) return "no scope";
  switch (*e.scope) {
    case enforce::Target::Kind::kCgroup:
      return "cgroup " + (e.cgroup.empty() ? std::string("?") : e.cgroup) + " (id " +
             std::to_string(e.cgroup_id) + ")";
    case enforce::Target::Kind::kUid:
      return "uid " + std::to_string(e.uid);
    case enforce::Target::Kind::kInterface:
      return "interface " + e.interface;
  }
  return "";
}

const char* ScopeKind(enforce::Target::Kind k) {
  switch (k) {
    case enforce::Target::Kind::kCgroup:
      return "cgroup";
    case enforce::Target::Kind::kUid:
      return "uid";
    case enforce::Target::Kind::kInterface:
      return "interface";
  }
  return "";
}

// One enforcement as `ward status --format json` lists it, and `ward apply
// --format json` what it applied (cli/README.md).
Json EnforcementJson(const enforce::Enforcement& e) {
  Json j = {{"enforcer", e.enforcer},
            {"policy", e.policy},
            {"table", e.table},
            {"generation", e.generation},
            {"elements", e.elements}};
  if (!e.scope) {
    j["scope"] = nullptr;
    return j;
  }
  j["scope"] = ScopeKind(*e.scope);
  switch (*e.scope) {
    case enforce::Target::Kind::kCgroup:
      j["cgroup_id"] = e.cgroup_id;
      j["cgroup"] = e.cgroup;
      break;
    case enforce::Target::Kind::kUid:
      j["uid"] = e.uid;
      break;
    case enforce::Target::Kind::kInterface:
      j["interface"] = e.interface;
      break;
  }
  return j;
}

// `ward apply --format json` before its result: what was asked.
Json ApplyDocument(const ApplyFlags& flags, const std::string& policy) {
  Json doc = JsonDocument();
  doc["policy"] = policy.empty() ? Json(nullptr) : Json(policy);
  doc["enforcer"] = flags.target;
  Json scope;
  if (flags.scope.cgroup) {
    scope = {{"kind", "cgroup"}, {"cgroup", *flags.scope.cgroup}};
  } else if (flags.scope.uid) {
    scope = {{"kind", "uid"}, {"uid", *flags.scope.uid}};
  } else {
    scope = {{"kind", "interface"}, {"interface", *flags.scope.interface}};
  }
  doc["scope"] = std::move(scope);
  doc["applied"] = Json::array();
  doc["resolved"] = Json::array();
  return doc;
}

// The answers for domain grants the enforcer holds, in its order.
Json ResolvedJson(const std::vector<backend::ResolvedAddress>& answers) {
  Json list = Json::array();
  for (const backend::ResolvedAddress& a : answers) {
    list.push_back({{"direction", a.direction == ir::Direction::kEgress ? "egress" : "ingress"},
                    {"name", a.pattern},
                    {"address", FormatPrefix(a.address)},
                    {"ttl", a.ttl}});
  }
  return list;
}

// One writer: while a wardd holds the default state folder, it manages this
// host's policies, and `ward apply`/`remove` behind its back would be
// drift it reports (or repairs away). They refuse, saying what to do.
bool AgentManagesHost(const char* command) {
  int64_t holder = 0;
  if (!agent::AgentHolds(agent::kDefaultStateDir, &holder)) return false;
  std::cerr << "ward " << command << ": wardd"
            << (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string())
            << " manages this host's policies (it holds " << agent::kDefaultStateDir
            << "); go through it: ward " << (std::string(command) == "apply" ? "push" : command)
            << " --host unix://" << ir::kDefaultAgentSocket << " ...; nothing changed\n";
  return true;
}

int RunApply(const ApplyFlags& flags) {
  if (!CheckScopeFlags("apply", flags.scope)) return kUsage;
  const enforce::NetworkEnforcer* enforcer = Enforcer("apply", flags.target);
  if (!enforcer) return kUsage;
  if (AgentManagesHost("apply")) return kUsage;
  const bool json = flags.output.format == "json";
  int exit_code = kOk;
  auto loaded = LoadPolicyForReport(flags.file, flags.policy, flags.std_dir, flags.output,
                                    ApplyDocument(flags, ""), &exit_code);
  if (!loaded) return exit_code;
  Json doc = ApplyDocument(flags, loaded->ir.name);

  enforce::Target target;
  if (flags.scope.cgroup) {
    target.kind = enforce::Target::Kind::kCgroup;
    target.cgroup = *flags.scope.cgroup;
  } else if (flags.scope.uid) {
    target.kind = enforce::Target::Kind::kUid;
    target.uid = static_cast<uint32_t>(*flags.scope.uid);
  } else {
    target.kind = enforce::Target::Kind::kInterface;
    target.interface = *flags.scope.interface;
  }
  enforce::ApplyOptions options;
  options.dns = flags.dns;
  std::vector<backend::ResolvedAddress> resolved;
  options.resolved = &resolved;
  if (!CheckDnsFlags("apply", flags.dns)) return kUsage;
  std::string error;
  // No scope reaches wardd's listeners (compiler/agent_guard.h).
  if (!ir::GuardAgentEndpoints(&loaded->ir, ir::HostAgentEndpoints(), &error)) {
    std::cerr << "ward apply: " << error << "; nothing changed\n";
    if (json) PrintJsonDocument(doc, &loaded->sources, &loaded->sink, error);
    return kUsage;
  }
  const bool ok = enforcer->Apply(loaded->ir, target, options, loaded->sink, &error);
  if (!json && !loaded->sink.diagnostics().empty()) {
    OutputFlags text = flags.output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, loaded->sink, text);
  }
  if (!ok) {
    if (!error.empty()) {
      std::cerr << "ward apply: " << error << "; nothing changed\n";
      if (json) PrintJsonDocument(doc, &loaded->sources, &loaded->sink, error);
      return kUsage;
    }
    std::cerr << "ward apply: nothing changed\n";
    if (json) PrintJsonDocument(doc, &loaded->sources, &loaded->sink);
    return kFound;
  }
  std::vector<enforce::Enforcement> held;
  if (enforcer->Status(&held, &error)) {
    for (const enforce::Enforcement& e : held) {
      if (e.policy != loaded->ir.name) continue;
      if (json) {
        doc["applied"].push_back(EnforcementJson(e));
        continue;
      }
      std::cout << "applied " << e.policy << " with " << e.enforcer << " (table " << e.table
                << ", generation " << e.generation << ") to " << ScopeText(e) << "\n";
    }
  }
  const bool domains =
      !loaded->ir.network.egress_domains.empty() || !loaded->ir.network.ingress_domains.empty();
  // In JSON the advice goes to stderr: stdout holds the document only.
  std::ostream& notes = json ? std::cerr : std::cout;
  if (json) {
    doc["resolved"] = ResolvedJson(resolved);
    PrintJsonDocument(doc, &loaded->sources, &loaded->sink);
  }
  if (!flags.refresh) {
    if (domains) {
      notes << "note: addresses resolved for domain grants are trusted for their DNS TTL ("
            << flags.dns.ttl_floor << "-" << flags.dns.ttl_cap
            << " s); keep them fresh with `ward apply --refresh`\n";
    }
    return kOk;
  }
  // --refresh: resolve again before the answers expire, until stopped.
  CatchStopSignals();
  uint32_t next = enforce::RefreshSeconds({}, options.dns);
  notes << "refreshing domain answers until interrupted\n" << std::flush;
  while (!g_stop) {
    SleepUnlessStopped(next);
    if (g_stop) break;
    DiagnosticSink sink;
    std::string refresh_error;
    if (!enforcer->RefreshDomains(loaded->ir, options, sink, &next, &refresh_error)) {
      std::cerr << "ward apply: refresh failed: " << refresh_error << "\n";
      return kUsage;
    }
    if (!sink.diagnostics().empty()) {
      OutputFlags text = flags.output;
      text.format = "text";
      PrintDiagnostics(loaded->sources, sink, text);
    }
  }
  notes << "stopped refreshing; the policy stays applied\n";
  return kOk;
}

int RunRemove(const ApplyFlags& flags) {
  const enforce::NetworkEnforcer* enforcer = Enforcer("remove", flags.target);
  if (!enforcer) return kUsage;
  if (AgentManagesHost("remove")) return kUsage;
  const bool json = flags.output.format == "json";
  Json doc = JsonDocument();
  doc["policy"] = nullptr;
  doc["enforcer"] = std::string(enforcer->name());
  doc["removed"] = false;
  std::string name;
  std::unique_ptr<LoadedPolicy> loaded;
  if (!flags.file.empty()) {
    int exit_code = kOk;
    loaded =
        LoadPolicyForReport(flags.file, flags.policy, flags.std_dir, flags.output, doc, &exit_code);
    if (!loaded) return exit_code;
    name = loaded->ir.name;
  } else if (flags.policy) {
    name = *flags.policy;
  } else {
    std::cerr << "ward remove: name the policy: FILE [--policy NAME], or --policy NAME\n";
    return kUsage;
  }
  doc["policy"] = name;
  const SourceManager* sources = loaded ? &loaded->sources : nullptr;
  const DiagnosticSink* sink = loaded ? &loaded->sink : nullptr;
  bool removed = false;
  std::string error;
  if (!enforcer->Remove(name, &removed, &error)) {
    std::cerr << "ward remove: " << error << "\n";
    if (json) PrintJsonDocument(doc, sources, sink, error);
    return kUsage;
  }
  if (json) {
    doc["removed"] = removed;
    PrintJsonDocument(doc, sources, sink);
  } else if (removed) {
    std::cout << "removed " << name << " from " << enforcer->name() << "\n";
  } else {
    std::cout << enforcer->name() << " holds nothing for " << name << "\n";
  }
  return kOk;
}

// `ward status --follow`: the denials the eBPF programs report, one line
// each, until interrupted: the policies `ward apply` enforces, and the runs
// of `ward run` in progress (`runs`), from their pins: a run's own programs
// (a policy with names to resolve, or `--log`), or the programs runs of one
// policy share (ebpf.h, EbpfAttachShared), whose events are told apart by
// the cgroup of the pid they name. nftables keeps no event stream (its
// rejects are not logged).
#ifdef WARD_HAVE_EBPF
namespace {

// The live run whose cgroup holds `pid`, or nullptr.
const enforce::LiveRun* RunOfPid(const std::vector<enforce::LiveRun>& runs, uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string path = line.substr(3);
    for (const enforce::LiveRun& r : runs) {
      const size_t ward = r.cgroup.rfind("/ward/");
      if (ward == std::string::npos) continue;
      const std::string relative = r.cgroup.substr(ward);
      if (path == relative || path.rfind(relative + "/", 0) == 0) return &r;
    }
  }
  return nullptr;
}

std::string RunLabel(const enforce::LiveRun& r) {
  return "ward run " + std::to_string(r.supervisor) + " (policy " + r.policy + ")";
}

}  // namespace
#endif

int Follow(const std::vector<enforce::Enforcement>& held,
           const std::vector<enforce::LiveRun>& runs) {
#ifdef WARD_HAVE_EBPF
  struct Source {
    std::string label;  // a policy's name; empty: runs' events, labelled by pid
    std::unique_ptr<enforce::EbpfEventReader> reader;
  };
  std::vector<Source> sources;
  for (const enforce::Enforcement& e : held) {
    if (e.enforcer != "ebpf") continue;
    std::string error;
    auto reader = enforce::EbpfEventReader::Open(e.policy, &error);
    if (!reader) {
      std::cerr << "ward status: " << e.policy << ": " << error << "\n";
      return kUsage;
    }
    sources.push_back({e.policy, std::move(reader)});
  }
  // Runs: their own programs' ring buffers, and the shared ones of the
  // cache (one per policy run without names). A run that ends while we
  // read leaves a reader that reports nothing more.
  std::error_code ec;
  std::vector<std::string> names;
  for (const enforce::LiveRun& r : runs) {
    names.push_back(r.pins.substr(r.pins.rfind('/') + 1));
  }
  for (const auto& entry : std::filesystem::directory_iterator(enforce::EbpfPinDir(""), ec)) {
    const std::string n = entry.path().filename().string();
    if (!runs.empty() && n.rfind("cache-", 0) == 0) names.push_back(n);
  }
  for (const std::string& n : names) {
    std::string error;
    if (auto reader = enforce::EbpfEventReader::Open(n, &error)) {
      // What ended runs left unread is not news: skipped.
      std::vector<enforce::EbpfDenial> backlog;
      reader->Poll(0, &backlog, &error);
      sources.push_back({"", std::move(reader)});
    }
  }
  if (sources.empty()) {
    std::cerr << "ward status: --follow: no policy is enforced with ebpf and no ward run is in "
                 "progress (only ebpf reports denials)\n";
    return kUsage;
  }
  CatchStopSignals();
  std::cout << std::flush;
  // One wait over every ring buffer (there may be many cache entries),
  // then the ready ones read without waiting.
  std::vector<pollfd> fds;
  for (const Source& source : sources) fds.push_back({source.reader->fd(), POLLIN, 0});
  while (!g_stop) {
    if (poll(fds.data(), fds.size(), 200) <= 0) continue;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      Source& source = sources[i];
      std::vector<enforce::EbpfDenial> denials;
      std::string error;
      if (!source.reader->Poll(0, &denials, &error)) {
        std::cerr << "ward status: " << (source.label.empty() ? "ward run" : source.label) << ": "
                  << error << "\n";
        return kUsage;
      }
      for (const enforce::EbpfDenial& d : denials) {
        std::string label = source.label;
        if (label.empty()) {
          const enforce::LiveRun* run = RunOfPid(runs, d.pid);
          label = run ? RunLabel(*run) : "ward run (pid " + std::to_string(d.pid) + ", ended)";
        }
        std::cout << label << ": " << d.line << "\n" << std::flush;
      }
    }
  }
  return kOk;
#else
  (void)held;
  (void)runs;
  std::cerr << "ward status: --follow needs the ebpf enforcer, not built in this ward\n";
  return kUsage;
#endif
}

int RunStatus(const ApplyFlags& flags) {
  if (flags.follow && flags.output.format == "json") {
    // The denials --follow prints are text lines (Follow); JSON lines of
    // them are not built yet: refused rather than silently text.
    std::cerr << "ward status: --follow prints text lines; use it without --format json\n";
    return kUsage;
  }
  std::vector<const enforce::NetworkEnforcer*> chosen;
  if (flags.target.empty()) {
    chosen = enforce::NetworkEnforcers();
  } else if (const enforce::NetworkEnforcer* e = Enforcer("status", flags.target)) {
    chosen.push_back(e);
  } else {
    return kUsage;
  }
  std::vector<enforce::Enforcement> held;
  for (const enforce::NetworkEnforcer* e : chosen) {
    std::string error;
    if (!e->Status(&held, &error)) {
      std::cerr << "ward status: " << e->name() << ": " << error << "\n";
      return kUsage;
    }
  }
  // Runs of `ward run` in progress: each enforces its policy on its own
  // cgroup, with eBPF.
  std::vector<enforce::LiveRun> runs;
#ifdef WARD_HAVE_EBPF
  if (flags.target.empty() || flags.target == "ebpf") {
    runs = enforce::ListRuns(enforce::RunOptions{}.state_dir);
  }
#endif
  if (flags.output.format == "json") {
    Json run_list = Json::array();
    for (const enforce::LiveRun& r : runs) {
      run_list.push_back({{"supervisor", r.supervisor},
                          {"policy", r.policy},
                          {"pins", r.pins},
                          {"cgroup", r.cgroup},
                          {"v1", r.v1}});
    }
    Json list = Json::array();
    for (const enforce::Enforcement& e : held) list.push_back(EnforcementJson(e));
    Json doc = JsonDocument();
    doc["enforced"] = std::move(list);
    doc["runs"] = std::move(run_list);
    PrintJsonDocument(std::move(doc), nullptr, nullptr);
    return kOk;
  }
  if (held.empty() && runs.empty()) std::cout << "no ward policy is enforced on this host\n";
  for (const enforce::Enforcement& e : held) {
    std::cout << e.policy << ": " << e.enforcer << " table " << e.table << ", generation "
              << e.generation << ", " << ScopeText(e) << ", " << e.elements << " set elements\n";
  }
  for (const enforce::LiveRun& r : runs) {
    std::cout << "ward run " << r.supervisor << ": policy " << r.policy << ", cgroup " << r.cgroup;
    for (const std::string& v1 : r.v1) std::cout << ", v1 " << v1;
    std::cout << ", ebpf links " << r.pins << "\n";
  }
  return flags.follow ? Follow(held, runs) : kOk;
}

void AddTargetOption(CLI::App* cmd, ApplyFlags* flags) {
  cmd->add_option("-t,--target", flags->target, "the enforcer: nftables or ebpf");
}

void AddFormatOption(CLI::App* cmd, ApplyFlags* flags) {
  cmd->add_option("--format", flags->output.format, "output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
}

}  // namespace

void AddApplyCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ApplyFlags>();
  CLI::App* cmd = app.add_subcommand("apply", "Enforce a policy's network section on this host");
  cmd->add_option("file", f->file, "policy file")->required();
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  AddScopeFlags(cmd, &f->scope);
  AddTargetOption(cmd, f.get());
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--color", f->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  AddFormatOption(cmd, f.get());
  cmd->add_flag("--refresh", f->refresh,
                "stay in the foreground and keep domain grants' addresses fresh until "
                "interrupted (the policy stays applied)");
  AddDnsFlags(cmd, &f->dns);
  cmd->callback([f, exit_code] { *exit_code = RunApply(*f); });
}

void AddRemoveCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ApplyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "remove",
      "Take a policy's enforcement away from this host (--host URL: from a host's wardd)");
  cmd->add_option("file", f->file, "policy file (or --policy NAME alone)");
  cmd->add_option("--policy", f->policy, "the policy's name");
  AddTargetOption(cmd, f.get());
  cmd->add_option("--std", f->std_dir, "standard library folder");
  AddFormatOption(cmd, f.get());
  cmd->callback([f, exit_code] { *exit_code = RunRemove(*f); });
}

void AddStatusCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ApplyFlags>();
  f->target.clear();
  CLI::App* cmd = app.add_subcommand(
      "status", "What this host enforces (--host URL: what a host's wardd does)");
  AddTargetOption(cmd, f.get());
  AddFormatOption(cmd, f.get());
  cmd->add_flag("--follow", f->follow,
                "then print the denials the ebpf programs report, until interrupted");
  cmd->callback([f, exit_code] { *exit_code = RunStatus(*f); });
}

}  // namespace ward::cli
