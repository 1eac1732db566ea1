#include "cli/remote_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "ward/agent/v1/agent.grpc.pb.h"

namespace ward::cli {
namespace {

static_assert(RemoteStatus::kNotFound == grpc::StatusCode::NOT_FOUND);

// Bundles of large policies: the agent accepts up to 64 MiB (server.cc).
constexpr int kMaxMessage = 64 << 20;

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK:
      return "OK";
    case grpc::CANCELLED:
      return "CANCELLED";
    case grpc::UNKNOWN:
      return "UNKNOWN";
    case grpc::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::ABORTED:
      return "ABORTED";
    case grpc::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::INTERNAL:
      return "INTERNAL";
    case grpc::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

RemoteStatus From(const grpc::Status& s) {
  RemoteStatus out;
  out.code = s.error_code();
  if (!s.ok()) out.text = std::string(CodeName(s.error_code())) + ": " + s.error_message();
  return out;
}

bool ReadFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read";
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// Whether a failed call is worth one more try: the agent could not be
// reached, or did not answer in time.
bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::UNAVAILABLE || s.error_code() == grpc::DEADLINE_EXCEEDED;
}

class GrpcAgent : public RemoteAgent {
 public:
  GrpcAgent(std::function<std::shared_ptr<grpc::Channel>()> connect, int64_t timeout_ms)
      : connect_(std::move(connect)),
        timeout_ms_(timeout_ms),
        stub_(v1::Agent::NewStub(connect_())) {}

  RemoteStatus Apply(const v1::ApplyRequest& request, v1::ApplyResponse* response) override {
    return Call(&v1::Agent::Stub::Apply, request, response);
  }
  RemoteStatus Remove(const v1::RemoveRequest& request, v1::RemoveResponse* response) override {
    return Call(&v1::Agent::Stub::Remove, request, response);
  }
  RemoteStatus List(const v1::ListRequest& request, v1::ListResponse* response) override {
    return Call(&v1::Agent::Stub::List, request, response);
  }
  RemoteStatus Get(const v1::GetRequest& request, v1::GetResponse* response) override {
    return Call(&v1::Agent::Stub::Get, request, response);
  }
  RemoteStatus Check(const v1::CheckRequest& request, v1::CheckResponse* response) override {
    return Call(&v1::Agent::Stub::Check, request, response);
  }

 private:
  template <class Request, class Response>
  using Method = grpc::Status (v1::Agent::Stub::*)(grpc::ClientContext*, const Request&, Response*);

  template <class Request, class Response>
  RemoteStatus Call(Method<Request, Response> method, const Request& request, Response* response) {
    for (;;) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms_));
      grpc::Status s = ((*stub_).*method)(&ctx, request, response);
      if (!s.ok() && Retryable(s) && !retried_) {
        // A fresh channel: the old one may sit in its reconnect backoff and
        // would fail the retry at once.
        retried_ = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stub_ = v1::Agent::NewStub(connect_());
        continue;
      }
      RemoteStatus out = From(s);
      if (s.ok()) {
        out.audit_head = response->audit_head();
      } else {
        const auto& trailers = ctx.GetServerTrailingMetadata();
        auto it = trailers.find("ward-audit-head");
        if (it != trailers.end())
          out.audit_head = std::string(it->second.data(), it->second.size());
      }
      return out;
    }
  }

  std::function<std::shared_ptr<grpc::Channel>()> connect_;
  int64_t timeout_ms_;
  std::unique_ptr<v1::Agent::Stub> stub_;
  bool retried_ = false;
};

}  // namespace

std::unique_ptr<RemoteAgent> RemoteAgent::Open(const RemoteTarget& target, std::string* error) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessage);
  args.SetMaxSendMessageSize(kMaxMessage);
  const std::string& url = target.url;
  if (url.rfind("unix://", 0) == 0) {
    const std::string path = url.substr(7);
    if (path.empty() || path[0] != '/') {
      *error = "--host " + url +
               ": a unix URL names an absolute path (unix:///run/ward/agent/agent.sock)";
      return nullptr;
    }
    return std::make_unique<GrpcAgent>(
        [path, args] {
          return grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(),
                                           args);
        },
        target.timeout_ms);
  }
  if (url.rfind("tcp://", 0) == 0) {
    const std::string hostport = url.substr(6);
    const size_t colon = hostport.rfind(':');
    if (hostport.empty() || colon == std::string::npos || colon + 1 == hostport.size() ||
        hostport.find('/') != std::string::npos) {
      *error = "--host " + url + ": a tcp URL is tcp://HOST:PORT";
      return nullptr;
    }
    std::string missing;
    if (target.ca.empty()) missing += " --ca";
    if (target.cert.empty()) missing += " --tls-cert";
    if (target.key.empty()) missing += " --tls-key";
    if (!missing.empty()) {
      *error = "--host " + url + ": the agent speaks only mutual TLS over tcp; missing" + missing;
      return nullptr;
    }
    grpc::SslCredentialsOptions ssl;
    if (!ReadFile(target.ca, &ssl.pem_root_certs, error) ||
        !ReadFile(target.cert, &ssl.pem_cert_chain, error) ||
        !ReadFile(target.key, &ssl.pem_private_key, error)) {
      return nullptr;
    }
    return std::make_unique<GrpcAgent>(
        [hostport, ssl, args] {
          return grpc::CreateCustomChannel(hostport, grpc::SslCredentials(ssl), args);
        },
        target.timeout_ms);
  }
  *error = "--host " + url + ": not unix:///PATH or tcp://HOST:PORT";
  return nullptr;
}

}  // namespace ward::cli
