#include "cli/bundle_message.h"

#include "enforcers/agent/bundle_file.h"

namespace ward::cli {
namespace {

bool Sign(trust::Statement st, const trust::PrivateKey& key, v1::Signature* out,
          std::string* error) {
  st.key_id = key.id();
  const std::string sig = key.Sign(trust::SigningBytes(st));
  if (sig.empty()) {
    *error = "cannot sign with key " + key.id() + " (OpenSSL)";
    return false;
  }
  out->set_key_id(key.id());
  out->set_sequence(st.sequence);
  out->set_not_after(st.not_after_ms);
  out->set_ed25519(sig);
  return true;
}

trust::SignedScope ScopeOf(const v1::Scope& scope) {
  trust::SignedScope out;
  agent::SignedScopeOf(scope, &out);
  return out;
}

}  // namespace

bool CompileForAgent(const LoadedPolicy& loaded, const backend::Backend* backend,
                     const OutputFlags& output, backend::Bundle* out) {
  DiagnosticSink sink;
  const bool compiled =
      backend::CompileBundle(loaded.ir, loaded.sources, {backend}, false, {}, sink, out);
  DiagnosticSink shown;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.code != Code::kUnenforcedSection) shown.Report(d);
  }
  if (!shown.diagnostics().empty()) {
    OutputFlags text = output;
    text.format = "text";
    PrintDiagnostics(loaded.sources, shown, text);
  }
  return compiled;
}

v1::Scope ScopeMessage(const ScopeFlags& scope) {
  v1::Scope out;
  if (scope.cgroup) {
    out.set_cgroup(*scope.cgroup);
  } else if (scope.uid) {
    out.set_uid(static_cast<uint32_t>(*scope.uid));
  } else if (scope.interface) {
    out.set_interface(*scope.interface);
  }
  return out;
}

v1::Bundle BundleMessage(const backend::Bundle& bundle, const ScopeFlags& scope,
                         const std::string& enforcer) {
  v1::Bundle b;
  b.set_policy(bundle.policy);
  b.set_ir_json(bundle.ir_json);
  b.set_manifest(bundle.manifest);
  for (const backend::BundleArtifact& a : bundle.artifacts) {
    v1::Artifact* out = b.add_artifacts();
    out->set_path(a.path);
    out->set_target(a.target);
    out->set_bytes(a.bytes);
  }
  *b.mutable_scope() = ScopeMessage(scope);
  b.set_enforcer(enforcer);
  const trust::SignedScope s = ScopeOf(b.scope());
  b.set_sha256(backend::BundleHash(bundle, s.kind, s.value, enforcer));
  return b;
}

bool SignBundleMessage(v1::Bundle* bundle, const trust::PrivateKey& key, uint64_t sequence,
                       int64_t not_after_ms, std::string* error) {
  trust::Statement st;
  st.kind = trust::Statement::kBundle;
  st.policy = bundle->policy();
  st.scope = ScopeOf(bundle->scope());
  st.sha256 = bundle->sha256();
  st.sequence = sequence;
  st.not_after_ms = not_after_ms;
  return Sign(st, key, bundle->mutable_signature(), error);
}

bool SignRemoveRequest(v1::RemoveRequest* request, const trust::PrivateKey& key, uint64_t sequence,
                       int64_t not_after_ms, std::string* error) {
  trust::Statement st;
  st.kind = trust::Statement::kRemove;
  st.policy = request->policy();
  st.scope = ScopeOf(request->scope());
  st.sequence = sequence;
  st.not_after_ms = not_after_ms;
  return Sign(st, key, request->mutable_signature(), error);
}

}  // namespace ward::cli
