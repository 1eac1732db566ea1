// ward-remote: the commands that talk to wardd (enforcers/agent/), in a
// program of their own so that gRPC stays out of every other command's start
// (ward-cli hands these command lines here unchanged, cli/main.cc):
//   ward push --host URL [-t nftables|ebpf] (--cgroup P|--uid U|--interface I) FILE [--policy NAME]
//   ward remove --host URL NAME | --policy NAME
//   ward status --host URL [--format json]
//   ward diff --host URL FILE [--policy NAME] [--format json] [--fail-on widen|any]
// Client flags: --host URL (unix:///PATH, tcp://HOST:PORT), --ca F,
// --tls-cert F, --tls-key F (tcp: mutual TLS).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "cli/diff_print.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/remote_client.h"
#include "cli/scope_flags.h"
#include "compiler/diff.h"
#include "compiler/ir_json.h"

namespace ward::cli {
namespace {

struct RemoteFlags {
  RemoteTarget host;
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  std::string target = "nftables";
  ScopeFlags scope;
  std::string fail_on;
  OutputFlags output;
};

void AddHostFlags(CLI::App* cmd, RemoteFlags* f) {
  cmd->add_option("--host", f->host.url, "the agent: unix:///PATH or tcp://HOST:PORT")->required();
  cmd->add_option("--ca", f->host.ca, "tcp: the CA certificate that signed the agent's");
  cmd->add_option("--tls-cert", f->host.cert, "tcp: this client's certificate");
  cmd->add_option("--tls-key", f->host.key, "tcp: this client's private key");
}

std::unique_ptr<RemoteAgent> Connect(const std::string& command, const RemoteTarget& host) {
  std::string error;
  auto agent = RemoteAgent::Open(host, &error);
  if (!agent) std::cerr << "ward " << command << ": " << error << "\n";
  return agent;
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
  auto agent = Connect("push", f.host);
  if (!agent) return kUsage;
  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  // The artifacts of the enforcer's backend travel with the IR: the agent
  // renders from the IR and cross-checks them. The other sections are not
  // the agent's (B3005 would say so at every push): only errors are shown.
  backend::Bundle bundle;
  DiagnosticSink sink;
  const bool compiled =
      backend::CompileBundle(loaded->ir, loaded->sources, {backend}, false, {}, sink, &bundle);
  DiagnosticSink shown;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.code != Code::kUnenforcedSection) shown.Report(d);
  }
  if (!shown.diagnostics().empty()) {
    OutputFlags text = f.output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, shown, text);
  }
  if (!compiled) {
    std::cerr << "ward push: nothing sent\n";
    return kFound;
  }
  v1::ApplyRequest request;
  v1::Bundle* b = request.mutable_bundle();
  b->set_policy(bundle.policy);
  b->set_ir_json(bundle.ir_json);
  b->set_manifest(bundle.manifest);
  for (const backend::BundleArtifact& a : bundle.artifacts) {
    v1::Artifact* out = b->add_artifacts();
    out->set_path(a.path);
    out->set_target(a.target);
    out->set_bytes(a.bytes);
  }
  std::string kind, value;
  if (f.scope.cgroup) {
    b->mutable_scope()->set_cgroup(*f.scope.cgroup);
    kind = "cgroup";
    value = *f.scope.cgroup;
  } else if (f.scope.uid) {
    b->mutable_scope()->set_uid(static_cast<uint32_t>(*f.scope.uid));
    kind = "uid";
    value = std::to_string(*f.scope.uid);
  } else {
    b->mutable_scope()->set_interface(*f.scope.interface);
    kind = "interface";
    value = *f.scope.interface;
  }
  b->set_enforcer(f.target);
  b->set_sha256(backend::BundleHash(bundle, kind, value, f.target));
  v1::ApplyResponse response;
  RemoteStatus status = agent->Apply(request, &response);
  if (!status.ok()) {
    std::cerr << "ward push: " << f.host.url << ": " << status.text << "\n";
    return kUsage;
  }
  for (const std::string& w : response.warnings()) std::cerr << w << "\n";
  std::cout << (response.changed() ? "applied " : "unchanged ") << bundle.policy << " on "
            << f.host.url << " with " << f.target << " to " << ScopeText(b->scope())
            << ": generation " << response.generation() << ", sha256 " << response.sha256() << "\n";
  return kOk;
}

int RunRemoteRemove(const RemoteFlags& f) {
  std::string name = f.policy ? *f.policy : f.file;
  if (name.empty() || (f.policy && !f.file.empty() && f.file != *f.policy)) {
    std::cerr << "ward remove: name the policy once: NAME or --policy NAME\n";
    return kUsage;
  }
  auto agent = Connect("remove", f.host);
  if (!agent) return kUsage;
  v1::RemoveRequest request;
  request.set_policy(name);
  v1::RemoveResponse response;
  RemoteStatus status = agent->Remove(request, &response);
  if (!status.ok()) {
    std::cerr << "ward remove: " << f.host.url << ": " << status.text << "\n";
    return kUsage;
  }
  if (response.removed()) {
    std::cout << "removed " << name << " from " << f.host.url << "\n";
  } else {
    std::cout << f.host.url << " manages no policy " << name << "\n";
  }
  return kOk;
}

nlohmann::ordered_json Lines(const google::protobuf::RepeatedPtrField<v1::Change>& changes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const v1::Change& c : changes) out.push_back(c.line());
  return out;
}

int RunRemoteStatus(const RemoteFlags& f) {
  auto agent = Connect("status", f.host);
  if (!agent) return kUsage;
  v1::ListResponse list;
  RemoteStatus status = agent->List({}, &list);
  v1::CheckResponse check;
  if (status.ok()) status = agent->Check({}, &check);
  if (!status.ok()) {
    std::cerr << "ward status: " << f.host.url << ": " << status.text << "\n";
    return kUsage;
  }
  std::map<std::string, const v1::PolicyCheck*> checks;
  for (const v1::PolicyCheck& c : check.policies()) checks[c.policy()] = &c;
  if (f.output.format == "json") {
    nlohmann::ordered_json policies = nlohmann::ordered_json::array();
    for (const v1::PolicyState& p : list.policies()) {
      nlohmann::ordered_json j = {{"policy", p.policy()},         {"enforcer", p.enforcer()},
                                  {"generation", p.generation()}, {"scope", ScopeText(p.scope())},
                                  {"sha256", p.sha256()},         {"applied_at", p.applied_at()}};
      auto it = checks.find(p.policy());
      if (it != checks.end()) {
        j["in_sync"] = it->second->in_sync();
        j["gained"] = Lines(it->second->gained());
        j["lost"] = Lines(it->second->lost());
        j["changed"] = Lines(it->second->changed());
        j["unknown"] = it->second->unknown();
        if (!it->second->error().empty()) j["error"] = it->second->error();
      }
      policies.push_back(std::move(j));
    }
    nlohmann::ordered_json unmanaged = nlohmann::ordered_json::array();
    for (const v1::Unmanaged& u : check.unmanaged())
      unmanaged.push_back({{"enforcer", u.enforcer()}, {"policy", u.policy()}, {"what", u.what()}});
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const v1::Run& r : check.runs())
      runs.push_back({{"supervisor", r.supervisor()},
                      {"policy", r.policy()},
                      {"cgroup", r.cgroup()},
                      {"seccomp", r.seccomp()}});
    std::cout << nlohmann::ordered_json{{"version", 1},
                                        {"host", f.host.url},
                                        {"policies", policies},
                                        {"unmanaged", unmanaged},
                                        {"runs", runs}}
                     .dump(2)
              << "\n";
    return kOk;
  }
  if (list.policies().empty()) std::cout << f.host.url << " manages no policy\n";
  for (const v1::PolicyState& p : list.policies()) {
    auto it = checks.find(p.policy());
    std::string state = "not checked";
    if (it != checks.end()) {
      state = !it->second->error().empty() ? "unreadable: " + it->second->error()
              : it->second->in_sync()      ? "in sync"
                                           : "drifted";
    }
    std::cout << p.policy() << ": " << p.enforcer() << ", generation " << p.generation() << ", "
              << ScopeText(p.scope()) << ", " << state << ", sha256 " << p.sha256().substr(0, 12)
              << ", applied " << p.applied_at() << "\n";
    if (it == checks.end()) continue;
    for (const v1::Change& c : it->second->gained()) std::cout << "  gained: " << c.line() << "\n";
    for (const v1::Change& c : it->second->lost()) std::cout << "  lost: " << c.line() << "\n";
    for (const v1::Change& c : it->second->changed())
      std::cout << "  changed: " << c.line() << "\n";
    for (const std::string& u : it->second->unknown()) std::cout << "  unknown: " << u << "\n";
  }
  for (const v1::Unmanaged& u : check.unmanaged()) {
    std::cout << "unmanaged: " << u.enforcer() << " " << u.what()
              << (u.policy().empty() ? "" : " (policy " + u.policy() + ")") << "\n";
  }
  for (const v1::Run& r : check.runs()) {
    std::cout << "ward run " << r.supervisor() << ": policy " << r.policy() << ", cgroup "
              << r.cgroup() << (r.seccomp().empty() ? "" : ", seccomp filter " + r.seccomp())
              << "\n";
  }
  return kOk;
}

int RunRemoteDiff(const RemoteFlags& f) {
  auto agent = Connect("diff", f.host);
  if (!agent) return kUsage;
  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  v1::CheckRequest request;
  request.set_policy(f.policy ? *f.policy : loaded->ir.name);
  v1::CheckResponse response;
  RemoteStatus status = agent->Check(request, &response);
  if (!status.ok()) {
    std::cerr << "ward diff: " << f.host.url << ": " << status.text << "\n";
    return kUsage;
  }
  const v1::PolicyCheck* check = nullptr;
  for (const v1::PolicyCheck& c : response.policies()) {
    if (c.policy() == request.policy()) check = &c;
  }
  if (!check) {
    std::cerr << "ward diff: " << f.host.url << " manages no policy " << request.policy() << "\n";
    return kUsage;
  }
  if (!check->error().empty()) {
    std::cerr << "ward diff: " << f.host.url << ": " << check->error() << "\n";
    return kUsage;
  }
  nlohmann::json j = nlohmann::json::parse(check->live_ir_json(), nullptr, false);
  std::string error;
  std::optional<ir::Policy> live = j.is_discarded() ? std::nullopt : ir::FromJson(j, &error);
  if (!live) {
    std::cerr << "ward diff: " << f.host.url << ": the live IR is not valid: " << error << "\n";
    return kUsage;
  }
  // The host against the file, over the sections the scope enforces; the
  // others are the file's own on both sides ("not enforced here").
  ir::Policy host = loaded->ir;
  std::set<std::string> enforced(check->enforced_sections().begin(),
                                 check->enforced_sections().end());
  if (enforced.count("network")) host.network = live->network;
  std::vector<std::string> not_enforced;
  for (const char* s : {"syscalls", "filesystem", "network", "process", "limits"}) {
    if (!enforced.count(s)) not_enforced.push_back(s);
  }
  ir::DiffResult result = ir::Diff(loaded->ir, host);
  if (f.output.format == "json") {
    PrintDiffJson(result, loaded->sources, SourceManager{}, not_enforced);
  } else {
    PrintDiffText(result, loaded->sources, SourceManager{}, UseColor(f.output, STDOUT_FILENO));
    if (!not_enforced.empty()) {
      std::string list;
      for (const std::string& s : not_enforced) list += (list.empty() ? "" : ", ") + s;
      std::cout << "not enforced here (not drift): " << list << "\n";
    }
    for (const std::string& u : check->unknown()) std::cout << "unknown: " << u << "\n";
  }
  if (!check->unknown().empty() && f.fail_on == "any") return kFound;
  return DiffFails(result, f.fail_on) ? kFound : kOk;
}

}  // namespace
}  // namespace ward::cli

int main(int argc, char** argv) {
  using namespace ward::cli;
  CLI::App app{"Ward's remote commands (wardd)", "ward"};
  app.require_subcommand(1, 1);
  int exit_code = kOk;

  auto push = std::make_shared<RemoteFlags>();
  CLI::App* cmd = app.add_subcommand("push", "Send a policy to a host's wardd, which enforces it");
  AddHostFlags(cmd, push.get());
  cmd->add_option("file", push->file, "policy file")->required();
  cmd->add_option("--policy", push->policy, "the policy, when the file holds several");
  cmd->add_option("-t,--target", push->target, "the enforcer: nftables or ebpf");
  AddScopeFlags(cmd, &push->scope);
  cmd->add_option("--std", push->std_dir, "standard library folder");
  cmd->callback([push, &exit_code] { exit_code = RunPush(*push); });

  auto remove = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("remove", "Take a policy away from a host's wardd");
  AddHostFlags(cmd, remove.get());
  cmd->add_option("name", remove->file, "the policy's name");
  cmd->add_option("--policy", remove->policy, "the policy's name");
  cmd->callback([remove, &exit_code] { exit_code = RunRemoteRemove(*remove); });

  auto status = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("status", "What a host's wardd enforces, and whether it drifted");
  AddHostFlags(cmd, status.get());
  cmd->add_option("--format", status->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([status, &exit_code] { exit_code = RunRemoteStatus(*status); });

  auto diff = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("diff", "How a host's live state differs from a policy");
  AddHostFlags(cmd, diff.get());
  cmd->add_option("file", diff->file, "policy file")->required();
  cmd->add_option("--policy", diff->policy, "the policy (in the file, and on the host)");
  cmd->add_option("--std", diff->std_dir, "standard library folder");
  cmd->add_option("--fail-on", diff->fail_on,
                  "exit 1 when the host grants more (widen) or differs at all (any)")
      ->check(CLI::IsMember({"widen", "any"}));
  cmd->add_option("--format", diff->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", diff->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([diff, &exit_code] { exit_code = RunRemoteDiff(*diff); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsage;
  }
  return exit_code;
}
