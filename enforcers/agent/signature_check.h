// wardd's check of signed bundles and tombstones (README.md, "Signed
// bundles"): the keys of --bundle-key, and what Apply and Remove ask of a
// request's Signature before anything is touched. The signature covers
// backends/signing.h's SigningBytes over the statement rebuilt here from
// the request itself (the bundle's content hash recomputed, never taken
// from its sha256 field), so that no field can be changed, added or
// stripped without the check failing.
//
// Codes: INVALID_ARGUMENT for a request malformed whatever the agent's
// keys (a signature of the wrong shape, a tombstone without its scope);
// PERMISSION_DENIED for a well-formed request that carries no authority
// this wardd accepts (no signature, a foreign key, a signature that does
// not verify, an expired statement, a sequence already spent, a tombstone
// for another scope).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/bundle.h"
#include "backends/signing.h"
#include "enforcers/agent/service.h"

namespace ward::agent {

class BundleKeys {
 public:
  // Reads every key of --bundle-key; false and *error naming the file when
  // one cannot be read or is not an Ed25519 public key.
  bool Load(const std::vector<std::string>& paths, std::string* error);
  // No keys: signatures are not checked (nor their sequences recorded).
  bool empty() const { return keys_.empty(); }
  const trust::PublicKey* Find(const std::string& key_id) const;

 private:
  std::vector<trust::PublicKey> keys_;
};

// The bundle message as backends/bundle.h has it (for BundleHash and
// CrossCheck).
backend::Bundle ToBackendBundle(const v1::Bundle& b);

// What a valid signature says beyond the statement it covers.
struct Verified {
  uint64_t sequence = 0;
  std::string key_id;
  // A bundle's content hash as the check recomputed it (BundleHash over its
  // content, scope and enforcer), so that Apply need not compute it again.
  std::string content_sha256;
};

// Apply: `bundle` carries a signature by one of `keys` over its policy,
// scope, content hash (recomputed from the content), sequence and
// not_after, and is not expired at `now_ms`. The sequence is for the
// caller to compare (CheckSequence), under its own lock.
RpcStatus CheckBundleSignature(const BundleKeys& keys, const v1::Bundle& bundle, int64_t now_ms,
                               Verified* out);

// Remove: `request` carries a scope and a tombstone signed by one of
// `keys` (kind kRemove, sha256 ""), not expired at `now_ms`. Whether the
// scope is the one in force is CheckTombstoneScope's.
RpcStatus CheckRemoveSignature(const BundleKeys& keys, const v1::RemoveRequest& request,
                               int64_t now_ms, Verified* out);

// The tombstone's scope equals `in_force`, the scope of the policy's
// bundle in force.
RpcStatus CheckTombstoneScope(const v1::RemoveRequest& request, const v1::Scope& in_force);

// The sequence rule, shared by bundles and tombstones of a policy:
// `sequence` must be higher than `highest`, the highest accepted for the
// policy (kept in its state record, removed or not). One exception: the
// bundle in force sent again with its own sequence (`same_in_force`) is
// no rollback but the same statement, answered unchanged. `field`:
// "bundle.signature" or "remove.signature".
RpcStatus CheckSequence(const std::string& field, const std::string& policy, uint64_t sequence,
                        uint64_t highest, bool same_in_force);

// Unix time in milliseconds.
int64_t NowMs();

}  // namespace ward::agent
