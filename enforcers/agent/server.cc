// The only file of wardd that includes grpcpp (each one costs 5-7 s to
// compile, more under ASan).
#include "enforcers/agent/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/server_posix.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <utility>

#include "enforcers/agent/access.h"
#include "ward/agent/v1/agent.grpc.pb.h"

namespace ward::agent {

namespace {

constexpr const char* kServiceName = "ward.agent.v1.Agent";
// The synchronous server's threads (each call holds one) and, of those,
// how many Watch streams may hold.
constexpr int kMaxThreads = 64;
constexpr int kMaxWatches = 32;
// The trailing metadata of an error that carries the audit log's head.
constexpr const char* kAuditHeadKey = "ward-audit-head";

grpc::Status ToGrpc(const RpcStatus& s) {
  if (s.code < 0 || s.code > 16) return grpc::Status(grpc::StatusCode::INTERNAL, s.message);
  return grpc::Status(static_cast<grpc::StatusCode>(s.code), s.message);
}

// The identity of a TLS peer (URI SAN, else CN) and its role; false when
// the connection carries no verified client certificate.
bool FromTls(const grpc::AuthContext& auth, const Roles& roles, Caller* caller) {
  if (!auth.IsPeerAuthenticated()) return false;
  auto type = auth.FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  // "tls" from TlsServerCredentials ("ssl" from the older SslServerCredentials).
  if (type.empty() || (type[0] != "tls" && type[0] != "ssl")) return false;
  auto uri = auth.FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME);
  auto cn = auth.FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  if (!uri.empty()) {
    caller->identity.assign(uri[0].data(), uri[0].size());
  } else if (!cn.empty()) {
    caller->identity.assign(cn[0].data(), cn[0].size());
  } else {
    return false;
  }
  caller->role = roles.Of(caller->identity);
  return true;
}

// The status of a caller that may not call `path`; the path itself is
// named only when it is one of the table's (never raw bytes of a request).
grpc::Status Denied(const Caller& caller, std::string_view path) {
  std::string what =
      RequiredRole(path) == Role::kNone ? std::string("this method") : std::string(path);
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      Printable(caller.identity) + " (" + RoleName(caller.role) + ") may not call " + what);
}

// Denied, and audited when the call would have changed state (Apply,
// Remove): the audit log records every refused call of those.
grpc::Status Refused(Agent* agent, const Caller& caller, std::string_view path) {
  grpc::Status status = Denied(caller, path);
  if (path == kApplyMethod || path == kRemoveMethod) {
    agent->AuditRefused(caller, path == kApplyMethod ? "Apply" : "Remove", status.error_message());
  }
  return status;
}

// Over TCP, before any handler (health and reflection included): the exact
// path against the table, for the certificate's identity.
class TcpGate final : public grpc::AuthMetadataProcessor {
 public:
  TcpGate(const Roles* roles, Agent* agent) : roles_(roles), agent_(agent) {}
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext* context, OutputMetadata*,
                       OutputMetadata*) override {
    Caller caller;
    if (!FromTls(*context, *roles_, &caller))
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no verified client certificate");
    auto it = metadata.find(":path");
    if (it == metadata.end())
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no method path");
    std::string_view path(it->second.data(), it->second.size());
    if (!Allowed(caller.role, path)) return Refused(agent_, caller, path);
    return grpc::Status::OK;
  }

 private:
  const Roles* roles_;
  Agent* agent_;
};

class AgentService final : public v1::Agent::Service {
 public:
  AgentService(Agent* agent, const UnixPeers* peers, const Roles* roles,
               const std::atomic<bool>* stopping)
      : agent_(agent), peers_(peers), roles_(roles), stopping_(stopping) {}

  grpc::Status Apply(grpc::ServerContext* ctx, const v1::ApplyRequest* request,
                     v1::ApplyResponse* response) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kApplyMethod, &caller);
    return s.ok() ? Answer(ctx, agent_->Apply(caller, *request, response)) : s;
  }
  grpc::Status Remove(grpc::ServerContext* ctx, const v1::RemoveRequest* request,
                      v1::RemoveResponse* response) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kRemoveMethod, &caller);
    return s.ok() ? Answer(ctx, agent_->Remove(caller, *request, response)) : s;
  }
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListRequest* request,
                    v1::ListResponse* response) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kListMethod, &caller);
    return s.ok() ? Answer(ctx, agent_->List(caller, *request, response)) : s;
  }
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetRequest* request,
                   v1::GetResponse* response) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kGetMethod, &caller);
    return s.ok() ? Answer(ctx, agent_->Get(caller, *request, response)) : s;
  }
  grpc::Status Check(grpc::ServerContext* ctx, const v1::CheckRequest* request,
                     v1::CheckResponse* response) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kCheckMethod, &caller);
    return s.ok() ? Answer(ctx, agent_->Check(caller, *request, response)) : s;
  }
  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest*,
                     grpc::ServerWriter<v1::Event>* writer) override {
    Caller caller;
    grpc::Status s = Authorize(*ctx, kWatchMethod, &caller);
    if (!s.ok()) return s;
    // Watch streams hold a thread each for as long as they last: capped below
    // the thread quota, so that they cannot starve Apply and the rest.
    if (watches_.fetch_add(1) >= kMaxWatches) {
      watches_.fetch_sub(1);
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "wardd serves at most " + std::to_string(kMaxWatches) + " Watch streams");
    }
    struct Release {
      std::atomic<int>* n;
      ~Release() { n->fetch_sub(1); }
    } release{&watches_};
    std::unique_ptr<Subscription> sub = agent_->Watch(caller);
    if (!sub) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "wardd is shutting down");
    // Polled, so that a cancelled call or a shutdown ends the stream soon.
    while (!ctx->IsCancelled() && !stopping_->load()) {
      v1::Event event;
      bool closed = false;
      if (sub->Next(&event, std::chrono::milliseconds(250), &closed)) {
        if (!writer->Write(event)) break;
      } else if (closed) {
        break;
      }
    }
    return grpc::Status::OK;
  }

 private:
  // An error of the service, with the audit log's head after it in the
  // trailing metadata (a response carries it in its audit_head field).
  grpc::Status Answer(grpc::ServerContext* ctx, const RpcStatus& s) const {
    if (!s.ok()) {
      const std::string head = agent_->AuditHead();
      if (!head.empty()) ctx->AddTrailingMetadata(kAuditHeadKey, head);
    }
    return ToGrpc(s);
  }

  // The caller of this call and whether it may call `path`: a unix
  // connection's role comes from its accept ("fd:N"), a TCP one's from its
  // certificate.
  grpc::Status Authorize(const grpc::ServerContext& ctx, std::string_view path,
                         Caller* caller) const {
    if (!peers_->Lookup(ctx.peer(), caller) && !FromTls(*ctx.auth_context(), *roles_, caller))
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no verified caller");
    if (!Allowed(caller->role, path)) return Refused(agent_, *caller, path);
    return grpc::Status::OK;
  }

  Agent* agent_;
  std::atomic<int> watches_{0};
  const UnixPeers* peers_;
  const Roles* roles_;
  const std::atomic<bool>* stopping_;
};

bool Readable(const std::string& flag, const std::string& path, std::string* error) {
  std::ifstream in(path);
  std::string first;
  if (!in || !std::getline(in, first)) {
    *error = flag + " " + path + ": cannot read it";
    return false;
  }
  return true;
}

std::shared_ptr<grpc::ServerCredentials> TlsCredentials(const ServerOptions& o,
                                                        std::string* error) {
  if (!Readable("--tls-cert", o.tls_cert, error) || !Readable("--tls-key", o.tls_key, error) ||
      !Readable("--client-ca", o.client_ca, error))
    return nullptr;  // (CheckServerOptions saw them; they may have gone since)
  // Re-read every minute: renewed certificates need no restart.
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      o.tls_key, o.tls_cert, o.client_ca, 60);
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_root_certs();
  tls.watch_identity_key_cert_pairs();
  tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!o.crl_dir.empty()) tls.set_crl_directory(o.crl_dir);
  // TLS 1.2 is gRPC 1.51's minimum already; its public API has no setter.
  return grpc::experimental::TlsServerCredentials(tls);
}

class GrpcServer final : public Server {
 public:
  std::vector<std::string> Endpoints() const override { return endpoints_; }

  void Shutdown() override {
    if (stopping_.exchange(true)) return;
    for (auto& l : unix_) l->Stop();
    if (server_) {
      if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
      server_->Wait();
    }
    unix_.clear();  // removes the sockets
  }

  ~GrpcServer() override { Shutdown(); }

  bool Open(Agent* agent, const ServerOptions& o, std::string* error);

 private:
  Roles roles_;
  UnixPeers peers_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<AgentService> service_;
  std::shared_ptr<TcpGate> gate_;
  std::vector<std::unique_ptr<UnixListener>> unix_;
  std::unique_ptr<grpc::Server> server_;
  std::vector<std::string> endpoints_;
};

bool GrpcServer::Open(Agent* agent, const ServerOptions& o, std::string* error) {
  std::vector<ListenUrl> urls;
  if (!CheckServerOptions(o, &urls, error)) return false;
  if (!o.roles_file.empty() && !LoadRoles(o.roles_file, &roles_, error)) return false;
  int64_t group = -1;
  if (!o.reader_group.empty() && !ResolveGroup(o.reader_group, &group, error)) return false;
  for (const auto& u : urls) {
    if (u.kind != ListenUrl::kUnix) continue;
    auto l = UnixListener::Open(u.path, group, error);
    if (!l) return false;
    unix_.push_back(std::move(l));
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(o.max_receive_bytes);
  builder.SetMaxSendMessageSize(o.max_receive_bytes);
  // Each call holds a thread of the synchronous server: beyond these, calls
  // get RESOURCE_EXHAUSTED ("Server Threadpool Exhausted").
  grpc::ResourceQuota quota("wardd");
  quota.SetMaxThreads(kMaxThreads);
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 16);
  // No SO_REUSEPORT: a second wardd on the same port fails, not shares it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  gate_ = std::make_shared<TcpGate>(&roles_, agent);
  std::vector<int> ports(urls.size(), 0);
  for (size_t i = 0; i < urls.size(); ++i) {
    if (urls[i].kind != ListenUrl::kTcp) continue;
    auto creds = TlsCredentials(o, error);
    if (!creds) return false;
    creds->SetAuthMetadataProcessor(gate_);
    builder.AddListeningPort(urls[i].address, creds, &ports[i]);
  }
  service_ = std::make_unique<AgentService>(agent, &peers_, &roles_, &stopping_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) {
    *error = "cannot start the gRPC server (a TCP address in use or not local?)";
    return false;
  }
  for (size_t i = 0; i < urls.size(); ++i) {
    if (urls[i].kind == ListenUrl::kUnix) {
      endpoints_.push_back("unix://" + urls[i].path);
      continue;
    }
    if (ports[i] == 0) {
      *error = "--listen " + urls[i].url + ": cannot listen there";
      return false;
    }
    std::string host = urls[i].address.substr(0, urls[i].address.rfind(':'));
    endpoints_.push_back("tcp://" + host + ":" + std::to_string(ports[i]));
  }
  if (auto* health = server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
    health->SetServingStatus(kServiceName, true);
  }
  grpc::Server* raw = server_.get();
  for (auto& l : unix_)
    l->Start(&peers_, [raw](int fd) { grpc::AddInsecureChannelFromFd(raw, fd); });
  return true;
}

}  // namespace

bool CheckServerOptions(const ServerOptions& o, std::vector<ListenUrl>* urls, std::string* error) {
  Roles roles;
  int64_t group = -1;
  if (!o.roles_file.empty() && !LoadRoles(o.roles_file, &roles, error)) return false;
  if (!o.reader_group.empty() && !ResolveGroup(o.reader_group, &group, error)) return false;
  std::vector<std::string> listen = o.listen;
  if (listen.empty()) listen.push_back(kDefaultListen);
  urls->clear();
  bool tcp = false;
  std::string first_tcp;
  for (const auto& url : listen) {
    ListenUrl u;
    if (!ParseListenUrl(url, &u, error)) return false;
    if (u.kind == ListenUrl::kTcp && !tcp) {
      tcp = true;
      first_tcp = url;
    }
    urls->push_back(std::move(u));
  }
  if (!tcp) return true;
  std::string missing;
  for (auto [flag, value] : {std::pair<const char*, const std::string*>{"--tls-cert", &o.tls_cert},
                             {"--tls-key", &o.tls_key},
                             {"--client-ca", &o.client_ca}}) {
    if (!value->empty()) continue;
    missing += missing.empty() ? "" : ", ";
    missing += flag;
  }
  if (!missing.empty()) {
    *error = "--listen " + Printable(first_tcp) + ": TCP is served with mutual TLS only; missing " +
             missing;
    return false;
  }
  struct stat st;
  if (!o.crl_dir.empty() && (stat(o.crl_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    *error = "--crl-dir " + o.crl_dir + ": not a folder";
    return false;
  }
  return Readable("--tls-cert", o.tls_cert, error) && Readable("--tls-key", o.tls_key, error) &&
         Readable("--client-ca", o.client_ca, error);
}

std::unique_ptr<Server> Server::Start(Agent* agent, const ServerOptions& options,
                                      std::string* error) {
  auto server = std::make_unique<GrpcServer>();
  if (!server->Open(agent, options, error)) return nullptr;
  return server;
}

}  // namespace ward::agent
