// A compiled bundle as wardd takes it (ward.agent.v1.Bundle): what `ward
// push` sends and `ward compile -t wardd-bundle` writes to a file. Shared so
// that both make the same message, hash and signature from the same input.
#pragma once

#include <cstdint>
#include <string>

#include "backends/bundle.h"
#include "backends/signing.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/scope_flags.h"
#include "ward/agent/v1/agent.pb.h"

namespace ward::cli {

namespace v1 = ::ward::agent::v1;

// Compiles `loaded` with the enforcer's `backend` for wardd: its artifacts
// travel with the IR (the agent renders from the IR and cross-checks
// them). The other sections are not the agent's (B3005 would say so every
// time): only the other diagnostics are printed, as text. False on errors.
bool CompileForAgent(const LoadedPolicy& loaded, const backend::Backend* backend,
                     const OutputFlags& output, backend::Bundle* out);

// The scope flags (checked by CheckScopeFlags) as the proto's Scope.
v1::Scope ScopeMessage(const ScopeFlags& scope);

// The message for `bundle` applied with `enforcer` ("nftables", "ebpf") to
// `scope` (checked by CheckScopeFlags), its sha256 set (BundleHash); no
// signature.
v1::Bundle BundleMessage(const backend::Bundle& bundle, const ScopeFlags& scope,
                         const std::string& enforcer);

// Signs `*bundle` as it is (policy, scope, sha256) with `key`: sets its
// signature (key id, sequence, not_after, Ed25519 over trust::SigningBytes
// of kind kBundle). False and *error when OpenSSL fails.
bool SignBundleMessage(v1::Bundle* bundle, const trust::PrivateKey& key, uint64_t sequence,
                       int64_t not_after_ms, std::string* error);

// Signs `*request` as a tombstone for its policy and scope (both set):
// what `Remove` takes from wardd with --bundle-key (kind kRemove, sha256
// ""). False and *error when OpenSSL fails.
bool SignRemoveRequest(v1::RemoveRequest* request, const trust::PrivateKey& key, uint64_t sequence,
                       int64_t not_after_ms, std::string* error);

}  // namespace ward::cli
