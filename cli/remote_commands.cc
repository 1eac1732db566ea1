#include "cli/remote_commands.h"

#include <memory>

namespace ward::cli {
namespace {

void AddHostFlags(CLI::App* cmd, RemoteFlags* f) {
  // One URL per --host: a positional argument after it is not a host.
  cmd->add_option("--host", f->fleet.hosts,
                  "an agent: unix:///PATH or tcp://HOST:PORT (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--hosts", f->fleet.hosts_file, "a file of agents, one URL a line (# comments)");
  cmd->add_option("--parallel", f->fleet.parallel, "hosts at a time (default 32)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--timeout", f->fleet.timeout, "each call's deadline (default 30s)");
  cmd->add_option("--canary", f->fleet.canary, "N or P% hosts first; stop if one fails");
  cmd->add_option("--max-failures", f->fleet.max_failures,
                  "N or P%: start no further host once more failed (default: no limit)");
  cmd->add_option("--ca", f->ca, "tcp: the CA certificate that signed the agent's");
  cmd->add_option("--tls-cert", f->cert, "tcp: this client's certificate");
  cmd->add_option("--tls-key", f->key, "tcp: this client's private key");
}

void AddSignFlags(CLI::App* cmd, RemoteFlags* f) {
  cmd->add_option("--sign-key", f->sign_key, "sign with this Ed25519 private key (PEM)");
  cmd->add_option("--sequence", f->sequence, "the signature's sequence (default: now, in ms)");
  cmd->add_option("--valid-for", f->valid_for, "the signature's lifetime (default 7d)");
}

}  // namespace

// Each command's callback holds its flags, which its options write to, as
// long as the app lives (with no runners too).
void AddRemoteCommands(CLI::App& app, const RemoteRunners* runners, int* exit_code) {
  auto push = std::make_shared<RemoteFlags>();
  CLI::App* cmd = app.add_subcommand("push", "Send a policy to hosts' wardd, which enforce it");
  AddHostFlags(cmd, push.get());
  cmd->add_option("file", push->file, "policy file")->required();
  cmd->add_option("--policy", push->policy, "the policy, when the file holds several");
  cmd->add_option("-t,--target", push->target, "the enforcer: nftables or ebpf");
  AddScopeFlags(cmd, &push->scope);
  cmd->add_option("--std", push->std_dir, "standard library folder");
  AddSignFlags(cmd, push.get());
  cmd->add_option("--record-heads", push->record_heads, "append each host's audit head to FILE");
  cmd->add_option("--format", push->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([push, runners, exit_code] {
    if (runners) *exit_code = runners->push(*push);
  });

  auto remove = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("remove", "Take a policy away from hosts' wardd");
  AddHostFlags(cmd, remove.get());
  cmd->add_option("name", remove->file, "the policy's name");
  cmd->add_option("--policy", remove->policy, "the policy's name");
  AddScopeFlags(cmd, &remove->scope);
  AddSignFlags(cmd, remove.get());
  cmd->add_option("--format", remove->output.format, "output format (many hosts)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([remove, runners, exit_code] {
    if (runners) *exit_code = runners->remove(*remove);
  });

  auto status = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("status", "What hosts' wardd enforce, and whether it drifted");
  AddHostFlags(cmd, status.get());
  cmd->add_option("--format", status->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([status, runners, exit_code] {
    if (runners) *exit_code = runners->status(*status);
  });

  auto diff = std::make_shared<RemoteFlags>();
  cmd = app.add_subcommand("diff", "How hosts' live state differs from a policy");
  AddHostFlags(cmd, diff.get());
  cmd->add_option("file", diff->file, "policy file")->required();
  cmd->add_option("--policy", diff->policy, "the policy (in the file, and on the host)");
  cmd->add_option("--std", diff->std_dir, "standard library folder");
  cmd->add_option("--fail-on", diff->fail_on,
                  "exit 1 when a host grants more (widen) or differs at all (any)")
      ->check(CLI::IsMember({"widen", "any"}));
  cmd->add_option("--format", diff->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--color", diff->output.color, "colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([diff, runners, exit_code] {
    if (runners) *exit_code = runners->diff(*diff);
  });
}

}  // namespace ward::cli
