// wardd, the host agent (enforcers/agent/README.md): flags, then the
// service (service.h) behind the gRPC adapter (server.h) until SIGTERM or
// SIGINT.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "compiler/agent_guard.h"
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
  CLI11_PARSE(app, argc, argv);

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
  std::unique_ptr<agent::Server> grpc = agent::Server::Start(service.get(), server, &error);
  if (!grpc) {
    std::cerr << "wardd: " << error << "\n";
    service->Shutdown();
    return 1;
  }
  if (publish &&
      !agent::PublishEndpoints(ward::ir::kAgentEndpointsFile, grpc->Endpoints(), &error)) {
    std::cerr << "wardd: " << error << "\n";
    grpc->Shutdown();
    service->Shutdown();
    return 1;
  }
  for (const auto& e : grpc->Endpoints()) std::cout << "wardd: listening on " << e << "\n";
  std::cout << std::flush;
  int signal = 0;
  sigwait(&stop, &signal);
  std::cout << "wardd: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down\n";
  grpc->Shutdown();
  if (publish) unlink(ward::ir::kAgentEndpointsFile);
  service->Shutdown();
  return 0;
}
