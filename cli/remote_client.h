// The client half of ward.agent.v1 for `ward push`, `ward remove --host`,
// `ward status --host` and `ward diff --host` (cli/remote.cc). The one file
// of ward-remote that includes grpcpp is remote_client.cc; this header has
// only the messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ward/agent/v1/agent.pb.h"

namespace ward::cli {

namespace v1 = ::ward::agent::v1;

// --host and the TLS flags.
struct RemoteTarget {
  std::string url;             // unix:///PATH or tcp://HOST:PORT
  std::string ca, cert, key;   // tcp: the CA that signed the agent, our certificate and key
  int64_t timeout_ms = 30000;  // each call's deadline (--timeout)
};

// A call's outcome: `code` is a grpc::StatusCode; `text` is "CODE: message".
// `audit_head` is the agent's audit head after the call, from the response
// or, for an error, its trailing metadata ("ward-audit-head"); "" if none.
struct RemoteStatus {
  static constexpr int kNotFound = 5;  // grpc::StatusCode::NOT_FOUND, without grpcpp here
  int code = 0;
  std::string text;
  std::string audit_head;
  bool ok() const { return code == 0; }
};

// One agent. Calls are tried once more, on a fresh connection after 100 ms,
// when they fail UNAVAILABLE or DEADLINE_EXCEEDED; that retry is the
// agent's only one, whatever the number of calls (one retry per host). An
// Apply retried is harmless (the same bundle changes nothing); a Remove
// retried after wardd did remove answers "manages no policy" (or, signed, a
// replayed sequence).
class RemoteAgent {
 public:
  virtual ~RemoteAgent() = default;
  // nullptr and *error for a URL that is not unix:///PATH or tcp://HOST:PORT,
  // a tcp URL without --ca, --tls-cert and --tls-key, or unreadable files.
  // Connecting itself happens at the first call.
  static std::unique_ptr<RemoteAgent> Open(const RemoteTarget& target, std::string* error);
  virtual RemoteStatus Apply(const v1::ApplyRequest& request, v1::ApplyResponse* response) = 0;
  virtual RemoteStatus Remove(const v1::RemoveRequest& request, v1::RemoveResponse* response) = 0;
  virtual RemoteStatus List(const v1::ListRequest& request, v1::ListResponse* response) = 0;
  virtual RemoteStatus Get(const v1::GetRequest& request, v1::GetResponse* response) = 0;
  virtual RemoteStatus Check(const v1::CheckRequest& request, v1::CheckResponse* response) = 0;
};

}  // namespace ward::cli
