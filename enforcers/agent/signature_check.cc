#include "enforcers/agent/signature_check.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "backends/bundle.h"
#include "enforcers/agent/bundle_file.h"

namespace ward::agent {
namespace {

RpcStatus Denied(std::string message) {
  return RpcStatus{RpcStatus::kPermissionDenied, std::move(message)};
}
RpcStatus Invalid(std::string message) {
  return RpcStatus{RpcStatus::kInvalidArgument, std::move(message)};
}

// Unix milliseconds as RFC 3339 in UTC, for the expiry message.
std::string Rfc3339(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
  const int millis = static_cast<int>(((ms % 1000) + 1000) % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

// The content hash of backends/bundle.h, recomputed from the bundle's fields.
std::string ContentHash(const v1::Bundle& b, const trust::SignedScope& scope) {
  return backend::BundleHash(ToBackendBundle(b), scope.kind, scope.value, b.enforcer());
}

// The checks bundles and tombstones share, first: a signature of the right
// shape, by a key held. `field`: "bundle.signature" or "remove.signature".
RpcStatus CheckShape(const BundleKeys& keys, const std::string& field, bool present,
                     const v1::Signature& sig, trust::Statement::Kind kind) {
  if (!present) {
    return Denied(field + ": missing: this wardd takes only signed " +
                  (kind == trust::Statement::kBundle ? "bundles" : "removals"));
  }
  if (sig.key_id().empty()) return Denied(field + ".key_id: missing");
  if (!keys.Find(sig.key_id())) {
    return Denied(field + ".key_id: '" + sig.key_id() + "' is not a key this wardd holds");
  }
  if (sig.ed25519().size() != 64) {
    return Invalid(field + ".ed25519: " + std::to_string(sig.ed25519().size()) +
                   " bytes, not the 64 of an Ed25519 signature");
  }
  return {};
}

// Then: the signature is over `statement` (its key id, sequence and
// not_after filled in here from the signature), and not expired.
RpcStatus CheckStatement(const BundleKeys& keys, const std::string& field, const v1::Signature& sig,
                         trust::Statement statement, int64_t now_ms, Verified* out) {
  const trust::PublicKey* key = keys.Find(sig.key_id());
  statement.sequence = sig.sequence();
  statement.not_after_ms = sig.not_after();
  statement.key_id = sig.key_id();
  if (!key->Verify(trust::SigningBytes(statement), sig.ed25519())) {
    return Denied(field + ": does not verify with key " + sig.key_id() +
                  (statement.kind == trust::Statement::kBundle
                       ? " over this bundle's policy, scope, content, sequence and not_after"
                       : " over this removal's policy, scope, sequence and not_after"));
  }
  // Checked after the signature, so that only an authentic statement is
  // ever told it came too late.
  if (sig.not_after() < now_ms) {
    return Denied(field + ".not_after: expired at " + Rfc3339(sig.not_after()));
  }
  out->sequence = sig.sequence();
  out->key_id = sig.key_id();
  return {};
}

}  // namespace

backend::Bundle ToBackendBundle(const v1::Bundle& b) {
  backend::Bundle out;
  out.policy = b.policy();
  out.ir_json = b.ir_json();
  out.manifest = b.manifest();
  for (const v1::Artifact& a : b.artifacts())
    out.artifacts.push_back({a.path(), a.target(), a.bytes()});
  return out;
}

bool BundleKeys::Load(const std::vector<std::string>& paths, std::string* error) {
  keys_.clear();
  for (const std::string& path : paths) {
    std::string why;
    std::optional<trust::PublicKey> key = trust::PublicKey::Load(path, &why);
    if (!key) {
      // PublicKey::Load names the file.
      *error = "--bundle-key " + why;
      keys_.clear();
      return false;
    }
    if (!Find(key->id())) keys_.push_back(std::move(*key));
  }
  return true;
}

const trust::PublicKey* BundleKeys::Find(const std::string& key_id) const {
  for (const trust::PublicKey& k : keys_) {
    if (k.id() == key_id) return &k;
  }
  return nullptr;
}

RpcStatus CheckBundleSignature(const BundleKeys& keys, const v1::Bundle& bundle, int64_t now_ms,
                               Verified* out) {
  if (RpcStatus st = CheckShape(keys, "bundle.signature", bundle.has_signature(),
                                bundle.signature(), trust::Statement::kBundle);
      !st.ok()) {
    return st;
  }
  trust::Statement s;
  s.kind = trust::Statement::kBundle;
  s.policy = bundle.policy();
  if (!SignedScopeOf(bundle.scope(), &s.scope)) return Invalid("bundle.scope: missing");
  s.sha256 = ContentHash(bundle, s.scope);
  RpcStatus st = CheckStatement(keys, "bundle.signature", bundle.signature(), s, now_ms, out);
  if (st.ok()) out->content_sha256 = s.sha256;
  return st;
}

RpcStatus CheckRemoveSignature(const BundleKeys& keys, const v1::RemoveRequest& request,
                               int64_t now_ms, Verified* out) {
  if (RpcStatus st = CheckShape(keys, "remove.signature", request.has_signature(),
                                request.signature(), trust::Statement::kRemove);
      !st.ok()) {
    return st;
  }
  trust::Statement s;
  s.kind = trust::Statement::kRemove;
  s.policy = request.policy();
  if (!SignedScopeOf(request.scope(), &s.scope)) {
    return Invalid("remove.scope: missing: a signed removal names the policy's scope");
  }
  return CheckStatement(keys, "remove.signature", request.signature(), s, now_ms, out);
}

RpcStatus CheckTombstoneScope(const v1::RemoveRequest& request, const v1::Scope& in_force) {
  trust::SignedScope asked, held;
  SignedScopeOf(request.scope(), &asked);
  SignedScopeOf(in_force, &held);
  if (asked.kind == held.kind && asked.value == held.value) return {};
  return Denied("remove.scope: " + asked.kind + " '" + asked.value + "' is not the scope of '" +
                request.policy() + "' in force (" + held.kind + " '" + held.value + "')");
}

RpcStatus CheckSequence(const std::string& field, const std::string& policy, uint64_t sequence,
                        uint64_t highest, bool same_in_force) {
  if (sequence > highest || (same_in_force && sequence == highest)) return {};
  return Denied(field + ".sequence: " + std::to_string(sequence) + " is not higher than " +
                std::to_string(highest) + ", the highest this wardd accepted for '" + policy +
                "' (a replay or a rollback)");
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ward::agent
