// wardd's service: what each RPC of ward.agent.v1 does, with no gRPC in it
// (only the generated protobuf messages, agent.pb.h). The one adapter layer
// that includes grpcpp (server.cc) authenticates the caller, checks the
// role against the exact method path, and calls these.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "enforcers/agent/lock.h"
#include "ward/agent/v1/agent.pb.h"

namespace ward::agent {

enum class Role { kNone, kReader, kOperator };

struct Caller {
  std::string identity;  // "uid:0", "uid:1000", or the certificate's URI SAN / CN
  Role role = Role::kNone;
};

// A gRPC status without gRPC: `code` is a grpc::StatusCode value.
struct RpcStatus {
  enum Code {
    kOk = 0,
    kCancelled = 1,
    kInvalidArgument = 3,
    kNotFound = 5,
    kPermissionDenied = 7,
    kResourceExhausted = 8,
    kFailedPrecondition = 9,
    kAborted = 10,
    kInternal = 13,
    kUnavailable = 14,
  };
  int code = kOk;
  std::string message;
  bool ok() const { return code == kOk; }
};

struct AgentOptions {
  std::string state_dir = "/var/lib/ward";
  bool repair = false;  // repair drift found while running (default: report only)
  // Implicit denies the enforcers add so that no sandbox reaches wardd: its
  // unix socket paths and TCP listener ports.
  std::vector<std::string> socket_paths;
  std::vector<uint16_t> tcp_ports;
  // The records of the host's `ward run`s (enforce::RunOptions::state_dir)
  // that List lists and Check compares (their seccomp filters, byte for
  // byte); empty: none. wardd sets it for the default state folder only.
  std::string runs_dir;

  // Trust and fleet (issue 21; README.md, "Signed bundles", "Audit log",
  // "Pull mode").
  // --bundle-key: Ed25519 public keys (PEM files). Non-empty: Apply takes
  // only bundles signed by one of them, with a sequence higher than any
  // accepted for the policy and not expired; Remove needs a signed
  // tombstone. Agent::Open fails when one cannot be read.
  std::vector<std::string> bundle_keys;
  // --audit-log: the audit log; empty: STATE/audit.log.
  std::string audit_log;
  // --audit-key: the host's Ed25519 key that signs checkpoints; empty:
  // STATE/audit.key, generated (0600) when absent.
  std::string audit_key;
  // A checkpoint after this many records, or this long after the last
  // record not yet covered by one, whichever comes first.
  uint64_t checkpoint_every = 1000;
  std::chrono::milliseconds checkpoint_interval{std::chrono::minutes(5)};
  // --bundle-dir: a folder of signed bundles (a ConfigMap or Secret volume)
  // applied as they change; requires bundle_keys.
  std::string bundle_dir;
};

// What the Prometheus endpoint (metrics.h) serves: a snapshot of counters
// the service keeps.
struct MetricsSnapshot {
  struct Policy {
    std::string policy, enforcer;
    uint64_t generation = 0;
    bool in_sync = false;
  };
  std::vector<Policy> policies;
  // (method, result) -> calls; method "apply" or "remove"; result "applied",
  // "unchanged", "removed", "refused", "failed".
  std::map<std::pair<std::string, std::string>, uint64_t> calls;
  uint64_t drift_found = 0;  // times a policy was found out of sync
  // (policy, rule) -> denials read from the enforcers' event buffers.
  std::map<std::pair<std::string, std::string>, uint64_t> denials;
};

inline constexpr char kDefaultRunsDir[] = "/run/ward/runs";

class Subscription {
 public:
  virtual ~Subscription() = default;
  // The next event; false when none came within `timeout` (call again) or
  // the agent is shutting down (`*closed`).
  virtual bool Next(v1::Event* event, std::chrono::milliseconds timeout, bool* closed) = 0;
};

class Agent {
 public:
  virtual ~Agent() = default;
  // Takes the state folder's lock (a second agent on it is refused, with
  // *error saying which process holds it), rolls every intent record
  // forward to what the kernel holds, then re-applies the desired state.
  static std::unique_ptr<Agent> Open(const AgentOptions& options, std::string* error);

  virtual RpcStatus Apply(const Caller& caller, const v1::ApplyRequest& request,
                          v1::ApplyResponse* response) = 0;
  virtual RpcStatus Remove(const Caller& caller, const v1::RemoveRequest& request,
                           v1::RemoveResponse* response) = 0;
  virtual RpcStatus List(const Caller& caller, const v1::ListRequest& request,
                         v1::ListResponse* response) = 0;
  virtual RpcStatus Get(const Caller& caller, const v1::GetRequest& request,
                        v1::GetResponse* response) = 0;
  virtual RpcStatus Check(const Caller& caller, const v1::CheckRequest& request,
                          v1::CheckResponse* response) = 0;
  virtual std::unique_ptr<Subscription> Watch(const Caller& caller) = 0;
  // The counters and gauges of the metrics endpoint.
  virtual MetricsSnapshot Metrics() { return {}; }
  // A call to Apply or Remove that the adapter refused before the service
  // saw it (the caller's role may not make it): audited and published as
  // `refused`, as every refused call that would change state is.
  virtual void AuditRefused(const Caller& caller, const std::string& method,
                            const std::string& reason) {
    (void)caller, (void)method, (void)reason;
  }
  // The audit log's head, "SEQ:HASH" ("0:" and 64 zeros for an empty log).
  virtual std::string AuditHead() { return ""; }
  // Ends every subscription and background thread; then the object may go.
  virtual void Shutdown() = 0;
};

}  // namespace ward::agent
