// wardd's gRPC adapter: serves ward.agent.v1.Agent (calling agent::Agent),
// grpc.health.v1.Health and server reflection (v1alpha) on the listeners of
// `--listen`. The one file that includes grpcpp is server.cc; this header
// does not, so main.cc compiles without it.
//
// Who may call: on a unix socket, the role its accept loop found
// (listen.h: uid 0 operator, the reader group reader, anyone else closed);
// over TCP, mutual TLS only, the identity of the client certificate (URI
// SAN, else CN) looked up in the roles file. Both are checked against the
// exact method path (access.h) in every handler of the Agent service, and
// over TCP also before any handler runs (so for health and reflection too).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "enforcers/agent/listen.h"
#include "enforcers/agent/service.h"

namespace ward::agent {

struct ServerOptions {
  std::vector<std::string> listen;  // URLs (listen.h); empty: kDefaultListen
  std::string tls_cert;             // PEM, watched for changes
  std::string tls_key;
  std::string client_ca;             // the CA client certificates must chain to
  std::string crl_dir;               // CRLs by hash name (`openssl rehash`)
  std::string roles_file;            // YAML (access.h); none: every TCP caller denied
  std::string reader_group;          // a group name or gid; empty: none
  int max_receive_bytes = 64 << 20;  // larger messages: RESOURCE_EXHAUSTED
};

// Checks the options before anything is opened or the agent started: the
// URLs, the roles file, the reader group, and that a TCP listener has
// --tls-cert, --tls-key and --client-ca (the error names the missing ones)
// and can read them. *urls: the listeners to open.
bool CheckServerOptions(const ServerOptions& options, std::vector<ListenUrl>* urls,
                        std::string* error);

class Server {
 public:
  // Opens the listeners and starts serving `agent` (which must outlive the
  // server); nullptr with *error when a listener cannot be opened.
  static std::unique_ptr<Server> Start(Agent* agent, const ServerOptions& options,
                                       std::string* error);
  virtual ~Server() = default;
  // What it listens on, with the port a "tcp://HOST:0" was given.
  virtual std::vector<std::string> Endpoints() const = 0;
  // Health NOT_SERVING, no new connections or calls, Watch streams ended,
  // calls still running cancelled after 2 s; the unix sockets removed.
  virtual void Shutdown() = 0;
};

}  // namespace ward::agent
