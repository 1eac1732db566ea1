// wardd, the host agent (enforcers/agent/README.md): flags, then the
// service (service.h) behind the gRPC adapter (server.h) until SIGTERM or
// SIGINT.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "backends/signing.h"
#include "compiler/agent_guard.h"
#include "enforcers/agent/metrics.h"
#include "enforcers/agent/server.h"

int main(int argc, char** argv) {
  namespace agent = ward::agent;
  agent::ServerOptions server;
  agent::AgentOptions options;
  CLI::App app("wardd: the Ward host agent (gRPC ward.agent.v1)", "wardd");
  app.add_option("--listen", server.listen,
                 "unix:///PATH or tcp://HOST:PORT, repeatable (default: " +
                     std::string(agent::kDefaultListen) + ")");
  app.add_option("--state-dir", options.state_dir, "desired state, lock and audit log")
      ->capture_default_str();
  app.add_option("--tls-cert", server.tls_cert, "server certificate (PEM), for tcp://");
  app.add_option("--tls-key", server.tls_key, "its private key (PEM)");
  app.add_option("--client-ca", server.client_ca, "CA that client certificates must chain to");
  app.add_option("--crl-dir", server.crl_dir, "CRLs of that CA, by hash name (openssl rehash)");
  app.add_option("--roles", server.roles_file, "YAML: operator: [...], reader: [...] identities");
  app.add_option("--reader-group", server.reader_group, "a group whose members may read");
  app.add_flag("--repair", options.repair, "repair drift found while running");
  app.add_option("--bundle-key", options.bundle_keys,
                 "Ed25519 public key (PEM) bundles must be signed with, repeatable");
  app.add_option("--audit-log", options.audit_log, "the audit log (default: STATE/audit.log)");
  app.add_option(
      "--audit-key", options.audit_key,
      "the host's Ed25519 key for checkpoints (default: STATE/audit.key, made if absent)");
  app.add_option("--checkpoint-every", options.checkpoint_every,
                 "a signed checkpoint after this many audit records")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string checkpoint_interval = "5m";
  app.add_option("--checkpoint-interval", checkpoint_interval,
                 "or this long after the first record a checkpoint does not cover")
      ->capture_default_str();
  app.add_option("--bundle-dir", options.bundle_dir,
                 "pull mode: apply the signed bundles in this folder as they change");
  std::string metrics;
  app.add_option("--metrics", metrics, "serve Prometheus metrics on tcp://HOST:PORT (off)");
  CLI11_PARSE(app, argc, argv);
  if (auto ms = ward::trust::ParseDuration(checkpoint_interval)) {
    options.checkpoint_interval = std::chrono::milliseconds(*ms);
  } else {
    std::cerr << "wardd: --checkpoint-interval: '" << checkpoint_interval
              << "' is not a duration (such as 30s, 5m, 1h)\n";
    return 2;
  }
  if (!options.bundle_dir.empty() && options.bundle_keys.empty()) {
    std::cerr << "wardd: --bundle-dir needs --bundle-key: pulled bundles are applied only when "
                 "signed\n";
    return 2;
  }

  // Blocked before any thread starts, so that only sigwait below sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::vector<agent::ListenUrl> urls;
  std::string error;
  if (!agent::CheckServerOptions(server, &urls, &error)) {
    std::cerr << "wardd: " << error << "\n";
    return 2;
  }
  for (const auto& u : urls) {
    if (u.kind == agent::ListenUrl::kUnix) options.socket_paths.push_back(u.path);
    if (u.kind == agent::ListenUrl::kTcp && u.port != 0) options.tcp_ports.push_back(u.port);
  }
  agent::MetricsUrl metrics_url;
  if (!metrics.empty()) {
    if (!agent::ParseMetricsUrl(metrics, &metrics_url, &error)) {
      std::cerr << "wardd: " << error << "\n";
      return 2;
    }
    // Denied to the policies wardd applies, as its other ports are.
    if (metrics_url.port != 0) options.tcp_ports.push_back(metrics_url.port);
  }
  // The agent of the host's default state: its listeners are published for
  // the implicit denies that keep every sandbox away from them, and it
  // checks the host's `ward run`s (an agent of a folder of its own, a test's
  // or a benchmark's, leaves other runs alone: the check stops each
  // workload for a moment to read its filters).
  const bool publish = std::filesystem::weakly_canonical(options.state_dir) ==
                       std::filesystem::weakly_canonical(agent::AgentOptions().state_dir);
  if (publish) options.runs_dir = agent::kDefaultRunsDir;
  std::unique_ptr<agent::Agent> service = agent::Agent::Open(options, &error);
  if (!service) {
    std::cerr << "wardd: " << error << "\n";
    return 1;
  }
  // Bound before the gRPC listeners open, so that a port in use stops
  // wardd before any caller reaches it.
  std::unique_ptr<agent::MetricsServer> metrics_server;
  if (!metrics.empty()) {
    metrics_server = agent::MetricsServer::Start(service.get(), metrics, &error);
    if (!metrics_server) {
      std::cerr << "wardd: " << error << "\n";
      service->Shutdown();
      return 1;
    }
  }
  std::unique_ptr<agent::Server> grpc = agent::Server::Start(service.get(), server, &error);
  if (!grpc) {
    std::cerr << "wardd: " << error << "\n";
    metrics_server.reset();
    service->Shutdown();
    return 1;
  }
  // The metrics port is published with the listeners: no sandbox reaches it.
  std::vector<std::string> published = grpc->Endpoints();
  if (metrics_server) published.push_back(metrics_server->endpoint());
  if (publish && !agent::PublishEndpoints(ward::ir::kAgentEndpointsFile, published, &error)) {
    std::cerr << "wardd: " << error << "\n";
    metrics_server.reset();
    grpc->Shutdown();
    service->Shutdown();
    return 1;
  }
  for (const auto& e : grpc->Endpoints()) std::cout << "wardd: listening on " << e << "\n";
  if (metrics_server) std::cout << "wardd: metrics on " << metrics_server->endpoint() << "\n";
  // The public half of the key that signs the audit log's checkpoints,
  // which the service wrote into the state folder: what `ward audit verify
  // --key` takes.
  const std::string pub = options.state_dir + "/audit.pub";
  if (access(pub.c_str(), F_OK) == 0) {
    if (auto key = ward::trust::PublicKey::Load(pub, &error)) {
      std::cout << "wardd: audit key " << key->id() << "\n" << key->Pem();
    } else {
      std::cerr << "wardd: " << error << "\n";
    }
  }
  std::cout << std::flush;
  int signal = 0;
  sigwait(&stop, &signal);
  std::cout << "wardd: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down\n";
  metrics_server.reset();
  grpc->Shutdown();
  if (publish) unlink(ward::ir::kAgentEndpointsFile);
  service->Shutdown();
  return 0;
}
