// ward-remote: the commands that talk to wardd (enforcers/agent/), in a
// program of their own so that gRPC stays out of every other command's start
// (ward-cli hands these command lines here unchanged, cli/main.cc):
//   ward push HOSTS [-t nftables|ebpf] (--cgroup P|--uid U|--interface I) FILE [--policy NAME]
//             [--sign-key KEY [--sequence N] [--valid-for D]] [--record-heads FILE]
//             [--format text|json]
//   ward remove HOSTS (NAME | --policy NAME) [--sign-key KEY [--sequence N] [--valid-for D]
//             [--cgroup P|--uid U|--interface I]]
//   ward status HOSTS [--format json]
//   ward diff HOSTS FILE [--policy NAME] [--format json] [--fail-on widen|any]
// HOSTS: --host URL (unix:///PATH, tcp://HOST:PORT), repeatable, and/or
// --hosts FILE (one URL a line; `#` starts a comment; blank lines skipped; a
// host named twice is refused). --ca F, --tls-cert F, --tls-key F (tcp:
// mutual TLS, the same for every host).
//
// Signing (backends/signing.h): --sign-key is an Ed25519 private key (PEM,
// `openssl genpkey -algorithm ed25519`); anything else is a usage error
// before any host is contacted. The bundle's signature covers policy, scope,
// content hash, --sequence (default: now, Unix milliseconds) and not_after
// (now + --valid-for, default 7d). A removal is a signed tombstone: its
// scope is --cgroup/--uid/--interface when given, else the scope the host
// has in force for the policy (a Get to each host first; a host that
// manages no such policy has nothing to remove).
//
// Many hosts (more than one --host, or --hosts): the bundle is compiled and
// signed once, and the same bytes go to every host, at most --parallel N
// (default 32) at a time. Each call has a deadline of --timeout DURATION
// (default 30s) and each host one retry, on a fresh connection, when a call
// fails UNAVAILABLE or DEADLINE_EXCEEDED. --canary N|P% (a percentage
// rounded up): that many hosts first, in the list's order; if one fails,
// no other host is started. Then the rest; with --max-failures N|P% (a
// percentage of all hosts, rounded down; default: no limit) no further host
// is started once more than that many failed. Hosts not started are
// reported "skipped" (in JSON ok=false, error "skipped: a canary failed" or
// "skipped: more than N hosts failed"). Output: on a terminal one line per
// host rewritten in place as it goes; otherwise one line per host as it
// finishes; then a table (host, result, generation, changed, audit head or
// error). --format json prints only {"version": 1, "hosts": [{"host", "ok",
// "generation", "changed", "error", "audit_head"}]} in the list's order
// (status adds "in_sync" and "policies", diff "changes"). Exit 1 when a host
// failed or was skipped (for diff: also when --fail-on matched), 2 for a
// usage error (nothing contacted).
//
// One --host alone keeps the single-host output (and exit 2 when the call
// fails); push adds the line "audit head: SEQ:HASH" ("none" from a wardd
// without an audit log), and `push`/`remove --format json` are the fleet form.
// --record-heads FILE (push) appends "HOST SEQ:HASH" for each host that
// answered with a head, for `ward audit verify --head`; FILE is created
// 0600 if absent and only ever appended to (a pipe or /dev/stdout works).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "backends/signing.h"
#include "cli/bundle_message.h"
#include "cli/command_tree.h"
#include "cli/diff_print.h"
#include "cli/fleet.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/remote_client.h"
#include "cli/remote_commands.h"
#include "cli/scope_flags.h"
#include "compiler/diff.h"
#include "compiler/ir_json.h"

namespace ward::cli {
namespace {

// The hosts, opened (no connection yet), and the plan; false after saying
// why on stderr.
struct Fleet {
  std::vector<std::string> hosts;
  std::vector<std::unique_ptr<RemoteAgent>> agents;
  FleetPlan plan;
  bool single = false;  // one --host alone: the single-host output
};

bool OpenFleet(const char* command, const RemoteFlags& f, const char* verb, Fleet* out) {
  std::string error;
  auto fail = [&](const std::string& why) {
    std::cerr << "ward " << command << ": " << why << "\n";
    return false;
  };
  if (!ResolveHosts(f.fleet, &out->hosts, &error)) return fail(error);
  const std::optional<int64_t> timeout = trust::ParseDuration(f.fleet.timeout);
  if (!timeout) return fail("--timeout " + f.fleet.timeout + ": not a duration (30s, 2m, 1500ms)");
  const size_t n = out->hosts.size();
  if (!f.fleet.canary.empty()) {
    std::optional<size_t> c = ParseCount(f.fleet.canary, n, true);
    if (!c) return fail("--canary " + f.fleet.canary + ": not N or P%");
    out->plan.canary = *c;
  }
  if (!f.fleet.max_failures.empty()) {
    out->plan.max_failures = ParseCount(f.fleet.max_failures, n, false);
    if (!out->plan.max_failures)
      return fail("--max-failures " + f.fleet.max_failures + ": not N or P%");
  }
  out->plan.parallel = static_cast<size_t>(f.fleet.parallel);
  out->plan.verb = verb;
  out->plan.terminal = isatty(STDOUT_FILENO) && f.output.format != "json";
  out->plan.quiet = f.output.format == "json";
  out->single = f.fleet.hosts.size() == 1 && f.fleet.hosts_file.empty();
  for (const std::string& url : out->hosts) {
    RemoteTarget target{url, f.ca, f.cert, f.key, *timeout};
    auto agent = RemoteAgent::Open(target, &error);
    if (!agent) return fail(error);
    out->agents.push_back(std::move(agent));
  }
  return true;
}

std::string ScopeText(const v1::Scope& s) {
  switch (s.kind_case()) {
    case v1::Scope::kCgroup:
      return "cgroup " + s.cgroup();
    case v1::Scope::kUid:
      return "uid " + std::to_string(s.uid());
    case v1::Scope::kInterface:
      return "interface " + s.interface();
    default:
      return "no scope";
  }
}

// --sign-key and its companions, checked before any host is contacted.
struct Signer {
  std::optional<trust::PrivateKey> key;
  uint64_t sequence = 0;
  int64_t not_after_ms = 0;
};

bool PrepareSigner(const char* command, const RemoteFlags& f, Signer* signer) {
  if (f.sign_key.empty()) {
    if (f.sequence || !f.valid_for.empty()) {
      std::cerr << "ward " << command << ": --sequence and --valid-for need --sign-key\n";
      return false;
    }
    return true;
  }
  std::string error;
  signer->key = trust::PrivateKey::Load(f.sign_key, &error);
  if (!signer->key) {
    std::cerr << "ward " << command << ": --sign-key " << error << "; nothing sent\n";
    return false;
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::string valid_for = f.valid_for.empty() ? "7d" : f.valid_for;
  const std::optional<int64_t> lifetime = trust::ParseDuration(valid_for);
  if (!lifetime) {
    std::cerr << "ward " << command << ": --valid-for " << valid_for
              << ": not a duration (7d, 12h, 90m)\n";
    return false;
  }
  signer->sequence = f.sequence ? *f.sequence : static_cast<uint64_t>(now);
  if (signer->sequence == 0) {
    std::cerr << "ward " << command << ": --sequence 0: a sequence starts at 1\n";
    return false;
  }
  signer->not_after_ms = now + *lifetime;
  return true;
}

// --record-heads: opened before anything is sent, so that a path that
// cannot take the heads changes nothing. Appended to, never replaced.
int OpenHeads(const std::string& path) {
  if (path.empty()) return -1;
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) {
    std::cerr << "ward push: --record-heads " << path << ": " << std::strerror(errno)
              << "; nothing sent\n";
  }
  return fd;
}

bool RecordHeads(int fd, const std::string& path, const std::vector<std::string>& hosts,
                 const std::vector<HostResult>& results) {
  if (fd < 0) return true;
  std::string text;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!results[i].audit_head.empty()) text += hosts[i] + " " + results[i].audit_head + "\n";
  }
  // One write: the lines of one push stay together beside another's.
  const ssize_t n = write(fd, text.data(), text.size());
  const bool ok = n == static_cast<ssize_t>(text.size()) && close(fd) == 0;
  if (!ok)
    std::cerr << "ward push: --record-heads " << path << ": " << std::strerror(errno) << "\n";
  return ok;
}

HostResult Failed(const RemoteStatus& status) {
  HostResult r;
  r.error = status.text;
  r.audit_head = status.audit_head;
  return r;
}

int RunPush(const RemoteFlags& f) {
  if (!CheckScopeFlags("push", f.scope)) return kUsage;
  if (f.target != "nftables" && f.target != "ebpf") {
    std::cerr << "ward push: unknown enforcer '" << f.target << "'; known: nftables ebpf\n";
    return kUsage;
  }
  const backend::Backend* backend = backend::FindBackend(f.target);
  if (!backend) {
    std::cerr << "ward push: the " << f.target << " backend is not built in this ward\n";
    return kUsage;
  }
  Signer signer;
  if (!PrepareSigner("push", f, &signer)) return kUsage;
  Fleet fleet;
  if (!OpenFleet("push", f, "pushing", &fleet)) return kUsage;
  const int heads_fd = OpenHeads(f.record_heads);
  if (!f.record_heads.empty() && heads_fd < 0) return kUsage;
  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  backend::Bundle bundle;
  const bool compiled = CompileForAgent(*loaded, backend, f.output, &bundle);
  if (!compiled) {
    std::cerr << "ward push: nothing sent\n";
    return kFound;
  }
  // Compiled and signed once: every host gets the same bytes.
  v1::ApplyRequest request;
  v1::Bundle* b = request.mutable_bundle();
  *b = BundleMessage(bundle, f.scope, f.target);
  std::string sign_error;
  if (signer.key &&
      !SignBundleMessage(b, *signer.key, signer.sequence, signer.not_after_ms, &sign_error)) {
    std::cerr << "ward push: " << sign_error << "; nothing sent\n";
    return kFound;
  }

  if (fleet.single && f.output.format != "json") {
    v1::ApplyResponse response;
    RemoteStatus status = fleet.agents[0]->Apply(request, &response);
    const std::string& host = fleet.hosts[0];
    HostResult r;
    r.audit_head = status.audit_head;
    if (!status.ok()) {
      RecordHeads(heads_fd, f.record_heads, fleet.hosts, {r});
      std::cerr << "ward push: " << host << ": " << status.text << "\n";
      return kUsage;
    }
    for (const std::string& w : response.warnings()) std::cerr << w << "\n";
    std::cout << (response.changed() ? "applied " : "unchanged ") << bundle.policy << " on " << host
              << " with " << f.target << " to " << ScopeText(b->scope()) << ": generation "
              << response.generation() << ", sha256 " << response.sha256() << "\n"
              << "audit head: " << (status.audit_head.empty() ? "none" : status.audit_head) << "\n"
              << std::flush;
    return RecordHeads(heads_fd, f.record_heads, fleet.hosts, {r}) ? kOk : kFound;
  }

  std::vector<HostResult> results = RunFleet(fleet.hosts, fleet.plan, [&](size_t i) {
    v1::ApplyResponse response;
    RemoteStatus status = fleet.agents[i]->Apply(request, &response);
    if (!status.ok()) return Failed(status);
    HostResult r;
    r.ok = true;
    r.result = "ok";
    r.generation = response.generation();
    r.changed = response.changed();
    r.generation_text = std::to_string(r.generation);
    r.changed_text = r.changed ? "yes" : "no";
    r.detail = "generation " + r.generation_text + (r.changed ? " (changed)" : " (unchanged)");
    r.audit_head = status.audit_head;
    r.warnings.assign(response.warnings().begin(), response.warnings().end());
    return r;
  });
  PrintFleetWarnings(fleet.hosts, results);
  if (f.output.format == "json") {
    PrintFleetJson(fleet.hosts, results);
  } else {
    PrintFleetTable(fleet.hosts, results);
  }
  std::cout << std::flush;
  const bool recorded = RecordHeads(heads_fd, f.record_heads, fleet.hosts, results);
  return recorded ? FleetExit(results) : kFound;
}

// The tombstone for `policy` on one host: the scope given, or the one the
// host has in force (Get). *none when the host manages no such policy.
RemoteStatus Tombstone(RemoteAgent* agent, const RemoteFlags& f, const Signer& signer,
                       const std::string& policy, v1::RemoveRequest* request, bool* none) {
  request->set_policy(policy);
  *none = false;
  const bool scoped = f.scope.cgroup || f.scope.uid || f.scope.interface;
  if (scoped) *request->mutable_scope() = ScopeMessage(f.scope);
  if (!signer.key) return {};
  if (!scoped) {
    v1::GetRequest get;
    get.set_policy(policy);
    v1::GetResponse got;
    RemoteStatus status = agent->Get(get, &got);
    if (status.code == RemoteStatus::kNotFound) {  // nothing to remove
      *none = true;
      return {};
    }
    if (!status.ok()) return status;
    *request->mutable_scope() = got.state().scope();
  }
  std::string error;
  if (!SignRemoveRequest(request, *signer.key, signer.sequence, signer.not_after_ms, &error)) {
    return {13, "INTERNAL: " + error, ""};  // grpc::StatusCode::INTERNAL
  }
  return {};
}

int RunRemoteRemove(const RemoteFlags& f) {
  std::string name = f.policy ? *f.policy : f.file;
  if (name.empty() || (f.policy && !f.file.empty() && f.file != *f.policy)) {
    std::cerr << "ward remove: name the policy once: NAME or --policy NAME\n";
    return kUsage;
  }
  if ((f.scope.cgroup || f.scope.uid || f.scope.interface) && !CheckScopeFlags("remove", f.scope)) {
    return kUsage;
  }
  Signer signer;
  if (!PrepareSigner("remove", f, &signer)) return kUsage;
  Fleet fleet;
  if (!OpenFleet("remove", f, "removing", &fleet)) return kUsage;
  auto remove = [&](size_t i, v1::RemoveResponse* response) {
    v1::RemoveRequest request;
    bool none = false;
    RemoteStatus status = Tombstone(fleet.agents[i].get(), f, signer, name, &request, &none);
    if (status.ok() && !none) status = fleet.agents[i]->Remove(request, response);
    return status;
  };
  if (fleet.single && f.output.format != "json") {
    v1::RemoveResponse response;
    RemoteStatus status = remove(0, &response);
    if (!status.ok()) {
      std::cerr << "ward remove: " << fleet.hosts[0] << ": " << status.text << "\n";
      return kUsage;
    }
    if (response.removed()) {
      std::cout << "removed " << name << " from " << fleet.hosts[0] << "\n";
    } else {
      std::cout << fleet.hosts[0] << " manages no policy " << name << "\n";
    }
    return kOk;
  }
  std::vector<HostResult> results = RunFleet(fleet.hosts, fleet.plan, [&](size_t i) {
    v1::RemoveResponse response;
    RemoteStatus status = remove(i, &response);
    if (!status.ok()) return Failed(status);
    HostResult r;
    r.ok = true;
    r.result = "ok";
    r.changed = response.removed();
    r.changed_text = r.changed ? "yes" : "no";
    r.detail = r.changed ? "removed " + name : "manages no policy " + name;
    r.audit_head = status.audit_head;
    return r;
  });
  if (f.output.format == "json") {
    PrintFleetJson(fleet.hosts, results);
  } else {
    PrintFleetTable(fleet.hosts, results);
  }
  return FleetExit(results);
}

nlohmann::ordered_json Lines(const google::protobuf::RepeatedPtrField<v1::Change>& changes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const v1::Change& c : changes) out.push_back(c.line());
  return out;
}

// One host's List and Check.
struct HostStatus {
  v1::ListResponse list;
  v1::CheckResponse check;
  std::map<std::string, const v1::PolicyCheck*> checks;
};

RemoteStatus ReadStatus(RemoteAgent* agent, HostStatus* out) {
  RemoteStatus status = agent->List({}, &out->list);
  if (status.ok()) status = agent->Check({}, &out->check);
  for (const v1::PolicyCheck& c : out->check.policies()) out->checks[c.policy()] = &c;
  return status;
}

nlohmann::ordered_json PoliciesJson(const HostStatus& s) {
  nlohmann::ordered_json policies = nlohmann::ordered_json::array();
  for (const v1::PolicyState& p : s.list.policies()) {
    nlohmann::ordered_json j = {{"policy", p.policy()},         {"enforcer", p.enforcer()},
                                {"generation", p.generation()}, {"scope", ScopeText(p.scope())},
                                {"sha256", p.sha256()},         {"applied_at", p.applied_at()}};
    auto it = s.checks.find(p.policy());
    if (it != s.checks.end()) {
      j["in_sync"] = it->second->in_sync();
      j["gained"] = Lines(it->second->gained());
      j["lost"] = Lines(it->second->lost());
      j["changed"] = Lines(it->second->changed());
      j["unknown"] = it->second->unknown();
      if (!it->second->error().empty()) j["error"] = it->second->error();
    }
    policies.push_back(std::move(j));
  }
  return policies;
}

void PrintStatusJson(const std::string& host, const HostStatus& s) {
  nlohmann::ordered_json unmanaged = nlohmann::ordered_json::array();
  for (const v1::Unmanaged& u : s.check.unmanaged())
    unmanaged.push_back({{"enforcer", u.enforcer()}, {"policy", u.policy()}, {"what", u.what()}});
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const v1::Run& r : s.check.runs())
    runs.push_back({{"supervisor", r.supervisor()},
                    {"policy", r.policy()},
                    {"cgroup", r.cgroup()},
                    {"seccomp", r.seccomp()}});
  std::cout << nlohmann::ordered_json{{"version", 1},
                                      {"host", host},
                                      {"policies", PoliciesJson(s)},
                                      {"unmanaged", unmanaged},
                                      {"runs", runs}}
                   .dump(2)
            << "\n";
}

void PrintStatusText(const std::string& host, const HostStatus& s) {
  if (s.list.policies().empty()) std::cout << host << " manages no policy\n";
  for (const v1::PolicyState& p : s.list.policies()) {
    auto it = s.checks.find(p.policy());
    std::string state = "not checked";
    if (it != s.checks.end()) {
      state = !it->second->error().empty() ? "unreadable: " + it->second->error()
              : it->second->in_sync()      ? "in sync"
                                           : "drifted";
    }
    std::cout << p.policy() << ": " << p.enforcer() << ", generation " << p.generation() << ", "
              << ScopeText(p.scope()) << ", " << state << ", sha256 " << p.sha256().substr(0, 12)
              << ", applied " << p.applied_at() << "\n";
    if (it == s.checks.end()) continue;
    for (const v1::Change& c : it->second->gained()) std::cout << "  gained: " << c.line() << "\n";
    for (const v1::Change& c : it->second->lost()) std::cout << "  lost: " << c.line() << "\n";
    for (const v1::Change& c : it->second->changed())
      std::cout << "  changed: " << c.line() << "\n";
    for (const std::string& u : it->second->unknown()) std::cout << "  unknown: " << u << "\n";
  }
  for (const v1::Unmanaged& u : s.check.unmanaged()) {
    std::cout << "unmanaged: " << u.enforcer() << " " << u.what()
              << (u.policy().empty() ? "" : " (policy " + u.policy() + ")") << "\n";
  }
  for (const v1::Run& r : s.check.runs()) {
    std::cout << "ward run " << r.supervisor() << ": policy " << r.policy() << ", cgroup "
              << r.cgroup() << (r.seccomp().empty() ? "" : ", seccomp filter " + r.seccomp())
              << "\n";
  }
}

// A host of a fleet status: ok when it answered; its result "in sync",
// "drifted" (a policy out of sync or unreadable) or "no policy".
HostResult StatusResult(const HostStatus& s, const RemoteStatus& status) {
  HostResult r;
  r.ok = true;
  r.audit_head = status.audit_head;
  std::vector<std::string> drifted;
  for (const v1::PolicyState& p : s.list.policies()) {
    auto it = s.checks.find(p.policy());
    if (it == s.checks.end() || !it->second->in_sync() || !it->second->error().empty())
      drifted.push_back(p.policy());
  }
  const size_t n = s.list.policies_size();
  const std::string count = std::to_string(n) + (n == 1 ? " policy" : " policies");
  if (n == 0) {
    r.result = "no policy";
  } else if (drifted.empty()) {
    r.result = "in sync";
    r.detail = count;
  } else {
    r.result = "drifted";
    std::string names;
    for (const std::string& d : drifted) names += (names.empty() ? "" : ", ") + d;
    r.detail = count + ", drifted: " + names;
  }
  r.extra["in_sync"] = drifted.empty();
  r.extra["policies"] = PoliciesJson(s);
  return r;
}

int RunRemoteStatus(const RemoteFlags& f) {
  Fleet fleet;
  if (!OpenFleet("status", f, "checking", &fleet)) return kUsage;
  if (fleet.single) {
    HostStatus s;
    RemoteStatus status = ReadStatus(fleet.agents[0].get(), &s);
    if (!status.ok()) {
      std::cerr << "ward status: " << fleet.hosts[0] << ": " << status.text << "\n";
      return kUsage;
    }
    if (f.output.format == "json") {
      PrintStatusJson(fleet.hosts[0], s);
    } else {
      PrintStatusText(fleet.hosts[0], s);
    }
    return kOk;
  }
  std::vector<HostResult> results = RunFleet(fleet.hosts, fleet.plan, [&](size_t i) {
    HostStatus s;
    RemoteStatus status = ReadStatus(fleet.agents[i].get(), &s);
    return status.ok() ? StatusResult(s, status) : Failed(status);
  });
  if (f.output.format == "json") {
    PrintFleetJson(fleet.hosts, results);
  } else {
    PrintFleetTable(fleet.hosts, results);
  }
  return FleetExit(results);
}

// One host against the file: the diff over the sections the scope
// enforces (the others are the file's own on both sides, "not enforced
// here"). False and *error ("HOST: why") when it cannot be had.
struct HostDiff {
  ir::DiffResult result;
  std::vector<std::string> not_enforced, unknown;
  std::string audit_head;
};

bool DiffHost(RemoteAgent* agent, const std::string& url, const LoadedPolicy& loaded,
              const std::string& policy, HostDiff* out, std::string* error) {
  v1::CheckRequest request;
  request.set_policy(policy);
  v1::CheckResponse response;
  RemoteStatus status = agent->Check(request, &response);
  out->audit_head = status.audit_head;
  if (!status.ok()) {
    *error = url + ": " + status.text;
    return false;
  }
  const v1::PolicyCheck* check = nullptr;
  for (const v1::PolicyCheck& c : response.policies()) {
    if (c.policy() == policy) check = &c;
  }
  if (!check) {
    *error = url + " manages no policy " + policy;
    return false;
  }
  if (!check->error().empty()) {
    *error = url + ": " + check->error();
    return false;
  }
  nlohmann::json j = nlohmann::json::parse(check->live_ir_json(), nullptr, false);
  std::string why;
  std::optional<ir::Policy> live = j.is_discarded() ? std::nullopt : ir::FromJson(j, &why);
  if (!live) {
    *error = url + ": the live IR is not valid: " + why;
    return false;
  }
  ir::Policy host = loaded.ir;
  std::set<std::string> enforced(check->enforced_sections().begin(),
                                 check->enforced_sections().end());
  if (enforced.count("network")) host.network = live->network;
  for (const char* s : {"syscalls", "filesystem", "network", "process", "limits"}) {
    if (!enforced.count(s)) out->not_enforced.push_back(s);
  }
  out->unknown.assign(check->unknown().begin(), check->unknown().end());
  out->result = ir::Diff(loaded.ir, host);
  return true;
}

bool DiffMatches(const HostDiff& d, const std::string& fail_on) {
  return (!d.unknown.empty() && fail_on == "any") || DiffFails(d.result, fail_on);
}

int RunRemoteDiff(const RemoteFlags& f) {
  Fleet fleet;
  if (!OpenFleet("diff", f, "comparing", &fleet)) return kUsage;
  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  const std::string policy = f.policy ? *f.policy : loaded->ir.name;
  if (fleet.single) {
    HostDiff d;
    std::string error;
    if (!DiffHost(fleet.agents[0].get(), fleet.hosts[0], *loaded, policy, &d, &error)) {
      std::cerr << "ward diff: " << error << "\n";
      return kUsage;
    }
    if (f.output.format == "json") {
      PrintDiffJson(d.result, loaded->sources, SourceManager{}, d.not_enforced);
    } else {
      PrintDiffText(d.result, loaded->sources, SourceManager{}, UseColor(f.output, STDOUT_FILENO));
      if (!d.not_enforced.empty()) {
        std::string list;
        for (const std::string& s : d.not_enforced) list += (list.empty() ? "" : ", ") + s;
        std::cout << "not enforced here (not drift): " << list << "\n";
      }
      for (const std::string& u : d.unknown) std::cout << "unknown: " << u << "\n";
    }
    return DiffMatches(d, f.fail_on) ? kFound : kOk;
  }
  // A host differing is a failure only under --fail-on, as for one host.
  std::vector<HostResult> results = RunFleet(fleet.hosts, fleet.plan, [&](size_t i) {
    HostDiff d;
    HostResult r;
    if (!DiffHost(fleet.agents[i].get(), fleet.hosts[i], *loaded, policy, &d, &r.error)) {
      r.audit_head = d.audit_head;
      return r;
    }
    r.audit_head = d.audit_head;
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    size_t widened = 0;
    for (const ir::Change& c : d.result.changes) {
      widened += c.kind == ir::ChangeKind::kWidened;
      changes.push_back({{"section", ir::SectionName(c.section)},
                         {"kind", ir::KindName(c.kind)},
                         {"line", c.line}});
    }
    r.extra["changes"] = changes;
    r.extra["unknown"] = d.unknown;
    const size_t n = d.result.changes.size();
    r.result = n == 0 && d.unknown.empty() ? "no changes" : "differs";
    r.detail = n == 0 && d.unknown.empty() ? ""
                                           : std::to_string(n) + (n == 1 ? " change" : " changes") +
                                                 " (" + std::to_string(widened) + " widened), " +
                                                 std::to_string(d.unknown.size()) + " unknown";
    r.ok = !DiffMatches(d, f.fail_on);
    if (!r.ok) r.error = "differs (--fail-on " + f.fail_on + "): " + r.detail;
    return r;
  });
  if (f.output.format == "json") {
    PrintFleetJson(fleet.hosts, results);
  } else {
    PrintFleetTable(fleet.hosts, results);
  }
  return FleetExit(results);
}

}  // namespace
}  // namespace ward::cli

int main(int argc, char** argv) {
  using namespace ward::cli;
  CLI::App app{"Ward's remote commands (wardd)", "ward"};
  app.require_subcommand(1, 1);
  int exit_code = kOk;

  const RemoteRunners runners{RunPush, RunRemoteRemove, RunRemoteStatus, RunRemoteDiff};
  AddRemoteCommands(app, &runners, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      const CommandNode tree = DescribeApp(app);
      if (ReportUnknownWords(app, tree, argc, argv, std::cerr) > 0 ||
          ReportBadValues(app, tree, argc, argv, std::cerr) > 0) {
        return kUsage;
      }
    }
    return app.exit(e) == 0 ? 0 : kUsage;
  }
  return exit_code;
}
