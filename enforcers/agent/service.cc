// wardd's RPCs without gRPC (service.h): validation of bundles, the apply
// with its intent and commit records (state.h), recovery at start, drift
// (enforcers/linux/drift.h), the audit chain (audit.h) and Watch (events.h).
#include "enforcers/agent/service.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/bundle.h"
#include "compiler/agent_guard.h"
#include "compiler/diff.h"
#include "compiler/ir_json.h"
#include "enforcers/agent/audit.h"
#include "enforcers/agent/bundle_dir.h"
#include "enforcers/agent/events.h"
#include "enforcers/agent/signature_check.h"
#include "enforcers/agent/state.h"
#include "enforcers/linux/drift.h"
#include "enforcers/linux/enforcer.h"
#ifdef WARD_HAVE_EBPF
#include "enforcers/run/run_check.h"
#endif
#ifdef WARD_HAVE_EBPF
#include "enforcers/linux/ebpf.h"
#endif

namespace ward::agent {
namespace {

RpcStatus Status(int code, std::string message) { return RpcStatus{code, std::move(message)}; }
RpcStatus Invalid(std::string message) {
  return Status(RpcStatus::kInvalidArgument, std::move(message));
}

// What a valid bundle says, parsed.
struct Parsed {
  ir::Policy ir;
  enforce::Target target;
  std::string scope_kind, scope_value;
  const enforce::NetworkEnforcer* enforcer = nullptr;
};

RpcStatus ParseScope(const v1::Scope& scope, Parsed* out) {
  switch (scope.kind_case()) {
    case v1::Scope::kCgroup:
      if (scope.cgroup().empty()) return Invalid("bundle.scope.cgroup: empty");
      if (scope.cgroup().find('\0') != std::string::npos) {
        return Invalid("bundle.scope.cgroup: holds a NUL byte");
      }
      out->target.kind = enforce::Target::Kind::kCgroup;
      out->target.cgroup = scope.cgroup();
      out->scope_kind = "cgroup";
      out->scope_value = scope.cgroup();
      return {};
    case v1::Scope::kUid:
      if (scope.uid() == 0xffffffffu) return Invalid("bundle.scope.uid: 4294967295 is not a uid");
      out->target.kind = enforce::Target::Kind::kUid;
      out->target.uid = scope.uid();
      out->scope_kind = "uid";
      out->scope_value = std::to_string(scope.uid());
      return {};
    case v1::Scope::kInterface: {
      const std::string& i = scope.interface();
      if (i.empty() || i.size() > 15 || i.find_first_of(std::string("/ \t\n\0", 5)) != i.npos) {
        return Invalid("bundle.scope.interface: '" + i + "' is not an interface name");
      }
      out->target.kind = enforce::Target::Kind::kInterface;
      out->target.interface = i;
      out->scope_kind = "interface";
      out->scope_value = i;
      return {};
    }
    case v1::Scope::KIND_NOT_SET:
      break;
  }
  return Invalid("bundle.scope: missing");
}

// The IR of a bundle, checked by the IR's own invariants.
RpcStatus ParseIr(const std::string& bytes, ir::Policy* out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string what = e.what();
    const size_t at = what.find(" at ");
    return Invalid("bundle.ir_json: not valid JSON" +
                   (at == std::string::npos ? ": " + what : what.substr(at)));
  }
  std::string error;
  std::optional<ir::Policy> ir = ir::FromJson(j, &error);
  if (!ir) return Invalid("bundle.ir_json: " + error);
  *out = std::move(*ir);
  return {};
}

// Every check a bundle passes before anything is touched. `check_hash`:
// false for the bundles sealed in the state folder (checked on receipt).
// `content_sha256`: the content hash already recomputed (by the signature
// check), or "" to compute it here.
RpcStatus ParseBundle(const v1::Bundle& b, bool check_hash, Parsed* out,
                      const std::string& content_sha256 = "") {
  if (b.policy().empty()) return Invalid("bundle.policy: missing");
  if (!ValidPolicyName(b.policy())) {
    return Invalid("bundle.policy: '" + b.policy() +
                   "' is not a policy name wardd keeps (1 to 128 of A-Z a-z 0-9 _ . : -, not "
                   "starting with .)");
  }
  if (b.ir_json().empty()) return Invalid("bundle.ir_json: missing");
  if (RpcStatus s = ParseIr(b.ir_json(), &out->ir); !s.ok()) return s;
  if (out->ir.name != b.policy()) {
    return Invalid("bundle.policy: '" + b.policy() + "' is not the IR's name '" + out->ir.name +
                   "'");
  }
  if (RpcStatus s = ParseScope(b.scope(), out); !s.ok()) return s;
  if (b.enforcer().empty()) return Invalid("bundle.enforcer: missing");
  if (b.enforcer() != "nftables" && b.enforcer() != "ebpf") {
    return Invalid("bundle.enforcer: '" + b.enforcer() + "' is not nftables or ebpf");
  }
  out->enforcer = enforce::FindNetworkEnforcer(b.enforcer());
  if (!out->enforcer) {
    return Status(RpcStatus::kFailedPrecondition,
                  "bundle.enforcer: " + b.enforcer() + " is not built in this wardd");
  }
  if (b.manifest().empty()) return Invalid("bundle.manifest: missing");
  const backend::Bundle bundle = ToBackendBundle(b);
  if (std::string error; !backend::CrossCheck(bundle, &error)) {
    return Invalid("bundle.manifest: " + error);
  }
  if (!check_hash) return {};
  if (b.sha256().empty()) return Invalid("bundle.sha256: missing");
  const std::string content =
      content_sha256.empty()
          ? backend::BundleHash(bundle, out->scope_kind, out->scope_value, b.enforcer())
          : content_sha256;
  if (b.sha256() != content) {
    return Invalid("bundle.sha256: does not match the content");
  }
  return {};
}

// What `enforcer` holds for `policy` now: *held and its own generation.
bool KernelHolds(const enforce::NetworkEnforcer& enforcer, const std::string& policy, bool* held,
                 uint32_t* generation, std::string* error) {
  std::vector<enforce::Enforcement> status;
  *held = false;
  *generation = 0;
  if (!enforcer.Status(&status, error)) return false;
  for (const enforce::Enforcement& e : status) {
    if (e.policy != policy) continue;
    *held = true;
    *generation = e.generation;
  }
  return true;
}

std::string Messages(const DiagnosticSink& sink, Severity severity) {
  std::string out;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity != severity) continue;
    if (!out.empty()) out += "; ";
    out += d.message;
  }
  return out;
}

bool Allowed(const Caller& caller, Role needed) {
  if (caller.role == Role::kOperator) return true;
  return needed == Role::kReader && caller.role == Role::kReader;
}

// One policy wardd manages: its commit record and the sealed bundle, parsed.
struct Managed {
  PolicyRecord record;
  v1::Bundle bundle;
  Parsed parsed;
  bool in_sync = false;
  // Domain grants: when to resolve their names again (0: no domain grants).
  std::chrono::steady_clock::time_point refresh_at{};
};

bool HasDomainGrants(const ir::Policy& p) {
  return !p.network.egress_domains.empty() || !p.network.ingress_domains.empty();
}

// When the addresses a fresh apply resolved are to be resolved again.
std::chrono::steady_clock::time_point FirstRefresh(const ir::Policy& p) {
  if (!HasDomainGrants(p)) return {};
  return std::chrono::steady_clock::now() +
         std::chrono::seconds(enforce::RefreshSeconds({}, enforce::ApplyOptions{}.dns));
}

// What no policy wardd applies may reach: the default socket, and this
// agent's own sockets and TCP ports (on every address: compiler/agent_guard.h).
ir::AgentEndpoints OwnEndpoints(const AgentOptions& options) {
  ir::AgentEndpoints e = ir::DefaultAgentEndpoints();
  for (const std::string& p : options.socket_paths) {
    if (std::find(e.unix_paths.begin(), e.unix_paths.end(), p) == e.unix_paths.end()) {
      e.unix_paths.push_back(p);
    }
  }
  for (uint16_t port : options.tcp_ports) {
    e.tcp.push_back({"0.0.0.0", port});
    e.tcp.push_back({"::", port});
  }
  return e;
}

class AgentImpl : public Agent {
 public:
  AgentImpl(const AgentOptions& options, BundleKeys keys, std::unique_ptr<State> state)
      : options_(options),
        endpoints_(OwnEndpoints(options)),
        keys_(std::move(keys)),
        state_(std::move(state)) {}
  ~AgentImpl() override { Shutdown(); }

  bool Start(std::string* error);
  // Pull mode (--bundle-dir), once Start has returned: its thread calls Apply.
  bool StartPull(std::string* error);

  RpcStatus Apply(const Caller& caller, const v1::ApplyRequest& request,
                  v1::ApplyResponse* response) override;
  RpcStatus Remove(const Caller& caller, const v1::RemoveRequest& request,
                   v1::RemoveResponse* response) override;
  RpcStatus List(const Caller& caller, const v1::ListRequest& request,
                 v1::ListResponse* response) override;
  RpcStatus Get(const Caller& caller, const v1::GetRequest& request,
                v1::GetResponse* response) override;
  RpcStatus Check(const Caller& caller, const v1::CheckRequest& request,
                  v1::CheckResponse* response) override;
  std::unique_ptr<Subscription> Watch(const Caller& caller) override;
  MetricsSnapshot Metrics() override;
  std::string AuditHead() override { return audit_.Head(); }
  void AuditRefused(const Caller& caller, const std::string& method,
                    const std::string& reason) override {
    Refuse(caller, method == "Apply" ? "Apply" : "Remove", "", "",
           Status(RpcStatus::kPermissionDenied, reason));
  }
  void Shutdown() override;

 private:
  void RollForward(const IntentRecord& intent);
  void Converge();
  void Audit(const Caller& caller, const char* action, const std::string& policy,
             const std::string& sha256, uint64_t generation, const std::string& result);
  void PublishError(const std::string& message);
  RpcStatus Refuse(const Caller& caller, const char* method, const std::string& policy,
                   const std::string& sha256, RpcStatus status);
  void CountCall(const char* action, const std::string& result);
  void CountDrift();
  void CountDenial(const std::string& policy, const std::string& line);
  void Unmanaged(google::protobuf::RepeatedPtrField<v1::Unmanaged>* out);
  v1::PolicyState StateOf(const Managed& m) const;
  v1::PolicyCheck CheckOne(Managed& m);
  void Background();
  void PollDenials();
  void PeriodicCheck();
  void RefreshDue();
  void Repair(Managed& m);

  // The implicit denies of compiler/agent_guard.h, added to every IR before
  // it is applied or compared, as `ward apply` adds them.
  bool Guard(Parsed* parsed, std::string* error) const {
    return ir::GuardAgentEndpoints(&parsed->ir, endpoints_, error);
  }

  const AgentOptions options_;
  const ir::AgentEndpoints endpoints_;
  const BundleKeys keys_;  // --bundle-key; empty: signatures are not checked
  std::unique_ptr<State> state_;
  AuditLog audit_;
  EventHub hub_;
  std::mutex mu_;  // managed_, generations_, and every change to the kernel
  std::map<std::string, Managed> managed_;
  std::map<std::string, uint64_t> generations_;  // the last generation of every policy ever kept
  // The highest signature sequence accepted for every policy ever kept
  // (PolicyRecord::sequence).
  std::map<std::string, uint64_t> sequences_;
  std::atomic<bool> stop_{false};
  std::thread background_;
#ifdef WARD_HAVE_EBPF
  std::map<std::string, std::unique_ptr<enforce::EbpfEventReader>> readers_;
#endif
  std::unique_ptr<BundleDir> pull_;
  std::once_flag shutdown_;
  // The counters of Metrics(); a lock of their own, as the denial reader
  // counts without mu_.
  std::mutex counters_mu_;
  MetricsSnapshot counters_;
};

void AgentImpl::Audit(const Caller& caller, const char* action, const std::string& policy,
                      const std::string& sha256, uint64_t generation, const std::string& result) {
  CountCall(action, result);
  std::string error;
  if (!audit_.Append({caller.identity, action, policy, sha256, generation, result}, &error)) {
    PublishError("audit log: " + error);
  }
}

// A call refused before it changed anything: audited, and told to Watch.
RpcStatus AgentImpl::Refuse(const Caller& caller, const char* method, const std::string& policy,
                            const std::string& sha256, RpcStatus status) {
  const std::string action = method == std::string("Apply") ? "apply" : "remove";
  Audit(caller, action.c_str(), policy, sha256, 0, "refused: " + status.message);
  v1::Event e;
  v1::Refused* r = e.mutable_refused();
  r->set_method(method);
  r->set_policy(policy);
  r->set_reason(status.message);
  r->set_by(caller.identity);
  hub_.Publish(std::move(e));
  return status;
}

// Every Apply and Remove outcome is audited, so counted here: the result's
// first word ("ok", "unchanged", "refused: ...", "failed: ...") names it.
void AgentImpl::CountCall(const char* action, const std::string& result) {
  const std::string method = action;
  if (method != "apply" && method != "remove") return;  // recover, repair
  std::string outcome = result.substr(0, result.find(':'));
  if (outcome == "ok") outcome = method == "apply" ? "applied" : "removed";
  std::lock_guard<std::mutex> lock(counters_mu_);
  ++counters_.calls[{method, outcome}];
}

void AgentImpl::CountDrift() {
  std::lock_guard<std::mutex> lock(counters_mu_);
  ++counters_.drift_found;
}

// By the rule number the line names (EbpfEventReader::Poll: "... denied
// (rule 4: TEXT)"), or "none" when no rule matched. The line's start (a unix
// name) is the workload's to choose, its end the formatter's: the end is
// read first, and the last " denied (rule " taken (TEXT is the policy's).
void AgentImpl::CountDenial(const std::string& policy, const std::string& line) {
  std::string rule = "none";
  if (line.ends_with("(no rule matched)") || line.ends_with("(no rule grants this socket type)")) {
    // none
  } else if (size_t at = line.rfind(" denied (rule "); at != std::string::npos) {
    at += std::strlen(" denied (rule ");
    const size_t end = line.find_first_not_of("0123456789", at);
    if (end != at) rule = line.substr(at, end - at);
  }
  std::lock_guard<std::mutex> lock(counters_mu_);
  ++counters_.denials[{policy, rule}];
}

MetricsSnapshot AgentImpl::Metrics() {
  MetricsSnapshot s;
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    s = counters_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, m] : managed_) {
    s.policies.push_back({name, m.record.enforcer, m.record.generation, m.in_sync});
  }
  return s;
}

void AgentImpl::PublishError(const std::string& message) {
  v1::Event e;
  e.set_error(message);
  hub_.Publish(std::move(e));
}

bool AgentImpl::Start(std::string* error) {
  AuditConfig audit{state_->dir(),
                    options_.audit_log,
                    options_.audit_key,
                    options_.checkpoint_every,
                    options_.checkpoint_interval,
                    [this](const std::string& e) { PublishError("audit log: " + e); }};
  if (!audit_.Open(state_->dir_fd(), audit, error)) return false;
  if (!audit_.notice().empty()) std::cerr << "wardd: " << audit_.notice() << "\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> errors;
  for (const IntentRecord& intent : state_->Intents(&errors)) RollForward(intent);
  for (const PolicyRecord& r : state_->Records(&errors)) {
    generations_[r.policy] = r.generation;
    sequences_[r.policy] = r.sequence;
    if (r.removed) continue;
    Managed m;
    m.record = r;
    std::string read_error;
    if (!state_->ReadBundle(r.policy, r.sha256, &m.bundle, &read_error)) {
      errors.push_back(read_error);
      continue;
    }
    if (RpcStatus s = ParseBundle(m.bundle, false, &m.parsed); !s.ok()) {
      errors.push_back("policy." + r.policy + ": " + s.message);
      continue;
    }
    if (!Guard(&m.parsed, &read_error)) {
      errors.push_back("policy." + r.policy + ": " + read_error);
      continue;
    }
    managed_.emplace(r.policy, std::move(m));
  }
  state_->CollectGarbage();
  for (const std::string& e : errors) std::cerr << "wardd: " << state_->dir() << ": " << e << "\n";
  Converge();
  background_ = std::thread([this] { Background(); });
  return true;
}

bool AgentImpl::StartPull(std::string* error) {
  if (options_.bundle_dir.empty()) return true;
  // A file that is not a bundle never reaches Apply: refused here as
  // Apply refuses (audited, told to Watch).
  auto refuse = [this](const Caller& caller, const std::string& policy, const std::string& why) {
    Refuse(caller, "Apply", policy, "", Invalid(why));
  };
  pull_ = BundleDir::Start(options_.bundle_dir, this, refuse, error);
  return pull_ != nullptr;
}

// An intent left by a crash: the new bundle is in force when the enforcer's
// own generation moved (or it holds the policy and held nothing before);
// otherwise the previous one still is. Either way the records say so after.
void AgentImpl::RollForward(const IntentRecord& intent) {
  const Caller wardd{"wardd", Role::kOperator};
  std::string error;
  std::optional<PolicyRecord> committed = state_->Record(intent.policy);
  if (committed && !committed->removed && committed->sha256 == intent.sha256) {
    state_->DropIntent(intent.policy, &error);  // committed; only the clean-up was left
    return;
  }
  const enforce::NetworkEnforcer* enforcer = enforce::FindNetworkEnforcer(intent.enforcer);
  bool held = false;
  uint32_t generation = 0;
  if (!enforcer || !KernelHolds(*enforcer, intent.policy, &held, &generation, &error)) {
    // Unknown: taken as the previous bundle, which the converge step
    // applies again, so that the kernel agrees with the records.
    std::cerr << "wardd: intent." << intent.policy << ": cannot read the kernel: " << error << "\n";
  }
  const bool new_in_force = held && (!intent.kernel_held || generation != intent.kernel_generation);
  if (new_in_force) {
    PolicyRecord r{intent.policy,
                   intent.sha256,
                   intent.generation,
                   intent.enforcer,
                   NowRfc3339(),
                   false,
                   std::max(intent.sequence, committed ? committed->sequence : 0)};
    if (!state_->WriteRecord(r, &error)) {
      std::cerr << "wardd: policy." << intent.policy << ": " << error << "\n";
      return;
    }
    Audit(wardd, "recover", intent.policy, intent.sha256, intent.generation,
          "rolled forward: the new bundle was in force");
    if (!intent.previous_sha256.empty() && intent.previous_sha256 != intent.sha256) {
      state_->DropBundle(intent.policy, intent.previous_sha256);
    }
    // The crash came before the previous enforcer let go of it.
    if (!intent.previous_enforcer.empty() && intent.previous_enforcer != intent.enforcer) {
      if (const enforce::NetworkEnforcer* old =
              enforce::FindNetworkEnforcer(intent.previous_enforcer)) {
        bool removed = false;
        old->Remove(intent.policy, &removed, &error);
      }
    }
  } else {
    Audit(wardd, "recover", intent.policy, intent.sha256, intent.generation,
          "rolled back: the previous bundle was in force");
  }
  state_->DropIntent(intent.policy, &error);
}

// The desired state, applied again (start only): each policy through its
// enforcer. What other enforcers hold under the same names is left alone
// (reported as unmanaged), unless an intent says wardd put it there.
void AgentImpl::Converge() {
  for (auto& [name, m] : managed_) {
    DiagnosticSink sink;
    std::string error;
    m.in_sync = m.parsed.enforcer->Apply(m.parsed.ir, m.parsed.target, enforce::ApplyOptions{},
                                         sink, &error);
    m.refresh_at = FirstRefresh(m.parsed.ir);
    if (!m.in_sync) {
      const std::string why = error.empty() ? Messages(sink, Severity::kError) : error;
      std::cerr << "wardd: " << name << ": cannot apply the desired state: " << why << "\n";
      PublishError(name + ": cannot apply the desired state: " + why);
    }
  }
}

RpcStatus AgentImpl::Apply(const Caller& caller, const v1::ApplyRequest& request,
                           v1::ApplyResponse* response) {
  if (!Allowed(caller, Role::kOperator)) {
    return Refuse(caller, "Apply", request.bundle().policy(), "",
                  Status(RpcStatus::kPermissionDenied, "Apply needs the operator role"));
  }
  if (!request.has_bundle()) return Refuse(caller, "Apply", "", "", Invalid("bundle: missing"));
  const v1::Bundle& bundle = request.bundle();
  const std::string& name = bundle.policy();
  // With --bundle-key, the signature first, before the bundle is read
  // further (README.md, "Signed bundles"); without, it is not looked at.
  const bool checked = !keys_.empty();
  Verified verified;
  if (checked) {
    if (RpcStatus s = CheckBundleSignature(keys_, bundle, NowMs(), &verified); !s.ok()) {
      return Refuse(caller, "Apply", name, bundle.sha256(), s);
    }
  }
  // Under mu_. A signed re-push of the bundle in force with a higher
  // sequence (ward push's default, the signing time) changes nothing but
  // the sequence recorded, so that older statements stay refused.
  auto unchanged = [&](Managed& m) {
    if (checked) {
      if (RpcStatus s =
              CheckSequence("bundle.signature", name, verified.sequence, sequences_[name], true);
          !s.ok()) {
        return Refuse(caller, "Apply", name, bundle.sha256(), s);
      }
      if (verified.sequence > m.record.sequence) {
        PolicyRecord r = m.record;
        r.sequence = verified.sequence;
        if (std::string error; !state_->WriteRecord(r, &error)) {
          Audit(caller, "apply", name, bundle.sha256(), m.record.generation, "failed: " + error);
          return Status(RpcStatus::kInternal, "the sequence not recorded: " + error);
        }
        m.record = r;
        sequences_[name] = r.sequence;
      }
    }
    response->set_generation(m.record.generation);
    response->set_changed(false);
    response->set_sha256(bundle.sha256());
    Audit(caller, "apply", name, bundle.sha256(), m.record.generation, "unchanged");
    response->set_audit_head(audit_.Head());
    return RpcStatus{};
  };
  // The bundle in force again (the content hash, recomputed, equals it):
  // it was checked when it came; answered without reading the IR again.
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto in_force = managed_.find(name);
    if (in_force != managed_.end() && in_force->second.record.sha256 == bundle.sha256()) {
      Parsed scope;
      if (checked
              ? verified.content_sha256 == bundle.sha256()
              : ParseScope(bundle.scope(), &scope).ok() &&
                    backend::BundleHash(ToBackendBundle(bundle), scope.scope_kind,
                                        scope.scope_value, bundle.enforcer()) == bundle.sha256()) {
        return unchanged(in_force->second);
      }
    }
  }
  Parsed parsed;
  if (RpcStatus s = ParseBundle(bundle, true, &parsed, verified.content_sha256); !s.ok()) {
    return Refuse(caller, "Apply", name, bundle.sha256(), s);
  }
  if (std::string error; !Guard(&parsed, &error)) {
    Audit(caller, "apply", name, bundle.sha256(), 0, "failed: " + error);
    return Status(RpcStatus::kInternal, "the agent's own endpoints: " + error);
  }

  std::lock_guard<std::mutex> lock(mu_);
  auto previous = managed_.find(name);
  if (previous != managed_.end() && previous->second.record.sha256 == bundle.sha256()) {
    return unchanged(previous->second);
  }
  if (checked) {
    if (RpcStatus s =
            CheckSequence("bundle.signature", name, verified.sequence, sequences_[name], false);
        !s.ok()) {
      return Refuse(caller, "Apply", name, bundle.sha256(), s);
    }
  }
  // Unsigned (no keys): the highest sequence stays what it was.
  const uint64_t sequence = checked ? verified.sequence : sequences_[name];
  const uint64_t generation = generations_[name] + 1;
  auto fail = [&](int code, const std::string& message) {
    Audit(caller, "apply", name, bundle.sha256(), generation, "failed: " + message);
    PublishError(name + ": apply failed: " + message);
    return Status(code, message);
  };

  std::string error;
  if (!state_->SealBundle(bundle, &error)) return fail(RpcStatus::kInternal, error);
  CrashPoint("after-seal");
  IntentRecord intent;
  intent.policy = name;
  intent.sha256 = bundle.sha256();
  intent.generation = generation;
  intent.enforcer = bundle.enforcer();
  intent.sequence = sequence;
  if (!KernelHolds(*parsed.enforcer, name, &intent.kernel_held, &intent.kernel_generation,
                   &error)) {
    state_->DropBundle(name, bundle.sha256());
    return fail(RpcStatus::kUnavailable, error);
  }
  if (previous != managed_.end()) {
    intent.previous_sha256 = previous->second.record.sha256;
    intent.previous_enforcer = previous->second.record.enforcer;
  }
  if (!state_->WriteIntent(intent, &error)) {
    state_->DropBundle(name, bundle.sha256());
    return fail(RpcStatus::kInternal, error);
  }
  CrashPoint("after-intent");

  DiagnosticSink sink;
  const bool applied =
      parsed.enforcer->Apply(parsed.ir, parsed.target, enforce::ApplyOptions{}, sink, &error);
  if (!applied) {
    // All or nothing: the previous generation is still in force.
    std::string ignored;
    state_->DropIntent(name, &ignored);
    state_->DropBundle(name, bundle.sha256());
    return fail(RpcStatus::kFailedPrecondition,
                error.empty() ? Messages(sink, Severity::kError) : error);
  }
  CrashPoint("after-enforce");
  // Another enforcer held it before: take that away only now, so that the
  // policy stays enforced throughout (both at once are narrower than either).
  if (!intent.previous_enforcer.empty() && intent.previous_enforcer != bundle.enforcer()) {
    if (const enforce::NetworkEnforcer* old =
            enforce::FindNetworkEnforcer(intent.previous_enforcer)) {
      bool removed = false;
      if (!old->Remove(name, &removed, &error)) {
        PublishError(name + ": " + intent.previous_enforcer + " still holds it: " + error);
      }
    }
    CrashPoint("after-remove-old");
  }

  Managed m;
  m.record = {name, bundle.sha256(), generation, bundle.enforcer(), NowRfc3339(), false, sequence};
  m.bundle = bundle;
  m.parsed = std::move(parsed);
  m.in_sync = true;
  m.refresh_at = FirstRefresh(m.parsed.ir);
  if (!state_->WriteRecord(m.record, &error)) {
    // The kernel holds the new bundle, the intent says so: the next start
    // rolls it forward. Until then, this agent knows it is in force.
    managed_[name] = std::move(m);
    generations_[name] = generation;
    sequences_[name] = sequence;
    return fail(RpcStatus::kInternal, "applied, but not recorded: " + error);
  }
  CrashPoint("after-commit");
  state_->DropIntent(name, &error);
  CrashPoint("after-drop-intent");
  if (!intent.previous_sha256.empty()) state_->DropBundle(name, intent.previous_sha256);
  CrashPoint("after-cleanup");

  managed_[name] = std::move(m);
  generations_[name] = generation;
  sequences_[name] = sequence;
  Audit(caller, "apply", name, bundle.sha256(), generation, "ok");
  v1::Event e;
  v1::Applied* a = e.mutable_applied();
  a->set_policy(name);
  a->set_generation(generation);
  a->set_sha256(bundle.sha256());
  a->set_by(caller.identity);
  hub_.Publish(std::move(e));

  response->set_generation(generation);
  response->set_changed(true);
  response->set_sha256(bundle.sha256());
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity != Severity::kError) response->add_warnings(d.message);
  }
  response->set_audit_head(audit_.Head());
  return {};
}

RpcStatus AgentImpl::Remove(const Caller& caller, const v1::RemoveRequest& request,
                            v1::RemoveResponse* response) {
  if (!Allowed(caller, Role::kOperator)) {
    return Refuse(caller, "Remove", request.policy(), "",
                  Status(RpcStatus::kPermissionDenied, "Remove needs the operator role"));
  }
  if (request.policy().empty()) return Refuse(caller, "Remove", "", "", Invalid("policy: missing"));
  // With --bundle-key, a signed tombstone: checked as a bundle's signature
  // is, its sequence on the policy's counter, its scope the one in force.
  const bool checked = !keys_.empty();
  Verified verified;
  if (checked) {
    if (RpcStatus s = CheckRemoveSignature(keys_, request, NowMs(), &verified); !s.ok()) {
      return Refuse(caller, "Remove", request.policy(), "", s);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (checked) {
    if (RpcStatus s = CheckSequence("remove.signature", request.policy(), verified.sequence,
                                    sequences_[request.policy()], false);
        !s.ok()) {
      return Refuse(caller, "Remove", request.policy(), "", s);
    }
  }
  auto it = managed_.find(request.policy());
  if (it == managed_.end()) {
    response->set_removed(false);
    response->set_audit_head(audit_.Head());
    return {};
  }
  Managed& m = it->second;
  const std::string name = m.record.policy;
  if (checked) {
    if (RpcStatus s = CheckTombstoneScope(request, m.bundle.scope()); !s.ok()) {
      return Refuse(caller, "Remove", name, m.record.sha256, s);
    }
  }
  const uint64_t sequence = checked ? verified.sequence : sequences_[name];
  bool removed = false;
  std::string error;
  if (!m.parsed.enforcer->Remove(name, &removed, &error)) {
    Audit(caller, "remove", name, m.record.sha256, m.record.generation, "failed: " + error);
    PublishError(name + ": remove failed: " + error);
    return Status(RpcStatus::kFailedPrecondition, error);
  }
  // A crash before this record is written leaves the policy desired: the
  // next start applies it again (the remove did not happen).
  PolicyRecord tombstone{name, "",      m.record.generation, m.record.enforcer, NowRfc3339(),
                         true, sequence};
  if (!state_->WriteRecord(tombstone, &error)) {
    PublishError(name + ": removed, but not recorded: " + error);
    return Status(RpcStatus::kInternal, "removed, but not recorded: " + error);
  }
  sequences_[name] = sequence;
  state_->DropBundle(name, m.record.sha256);
  Audit(caller, "remove", name, m.record.sha256, m.record.generation, "ok");
  managed_.erase(it);
  v1::Event e;
  e.mutable_removed()->set_policy(name);
  e.mutable_removed()->set_by(caller.identity);
  hub_.Publish(std::move(e));
  response->set_removed(true);
  response->set_audit_head(audit_.Head());
  return {};
}

v1::PolicyState AgentImpl::StateOf(const Managed& m) const {
  v1::PolicyState s;
  s.set_policy(m.record.policy);
  s.set_sha256(m.record.sha256);
  s.set_generation(m.record.generation);
  *s.mutable_scope() = m.bundle.scope();
  s.set_enforcer(m.record.enforcer);
  s.set_applied_at(m.record.applied_at);
  s.set_in_sync(m.in_sync);
  return s;
}

// What the enforcers hold for policies wardd does not manage (with them).
void AgentImpl::Unmanaged(google::protobuf::RepeatedPtrField<v1::Unmanaged>* out) {
  for (const enforce::NetworkEnforcer* e : enforce::NetworkEnforcers()) {
    std::vector<enforce::Enforcement> held;
    std::string error;
    if (!e->Status(&held, &error)) continue;
    for (const enforce::Enforcement& h : held) {
      auto it = managed_.find(h.policy);
      if (it != managed_.end() && it->second.parsed.enforcer == e) continue;
      v1::Unmanaged* u = out->Add();
      u->set_enforcer(h.enforcer);
      u->set_policy(h.policy);
      u->set_what(h.enforcer == "nftables" ? "table inet " + h.table : h.enforcer + " " + h.table);
    }
  }
}

RpcStatus AgentImpl::List(const Caller& caller, const v1::ListRequest&,
                          v1::ListResponse* response) {
  if (!Allowed(caller, Role::kReader))
    return Status(RpcStatus::kPermissionDenied, "List needs a role");
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, m] : managed_) *response->add_policies() = StateOf(m);
  Unmanaged(response->mutable_unmanaged());
#ifdef WARD_HAVE_EBPF
  if (!options_.runs_dir.empty()) {
    for (const enforce::LiveRun& r : enforce::ListRuns(options_.runs_dir)) {
      v1::Run* out = response->add_runs();
      out->set_supervisor(r.supervisor);
      out->set_policy(r.policy);
      out->set_cgroup(r.cgroup);
    }
  }
#endif
  response->set_audit_head(audit_.Head());
  return {};
}

RpcStatus AgentImpl::Get(const Caller& caller, const v1::GetRequest& request,
                         v1::GetResponse* response) {
  if (!Allowed(caller, Role::kReader))
    return Status(RpcStatus::kPermissionDenied, "Get needs a role");
  if (request.policy().empty()) return Invalid("policy: missing");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = managed_.find(request.policy());
  if (it == managed_.end()) {
    return Status(RpcStatus::kNotFound,
                  "policy: wardd manages no policy '" + request.policy() + "'");
  }
  *response->mutable_state() = StateOf(it->second);
  *response->mutable_bundle() = it->second.bundle;
  response->set_audit_head(audit_.Head());
  return {};
}

v1::PolicyCheck AgentImpl::CheckOne(Managed& m) {
  v1::PolicyCheck c;
  c.set_policy(m.record.policy);
  c.set_generation(m.record.generation);
  c.add_enforced_sections("network");
  enforce::LiveState live;
  std::string error;
  if (!enforce::ReadLive(m.parsed.ir, m.parsed.target, m.record.enforcer, enforce::ApplyOptions{},
                         &live, &error)) {
    c.set_error(error);
    m.in_sync = false;
    return c;
  }
  for (const std::string& u : live.unknown) c.add_unknown(u);
  auto nothing_held = [&] {
    v1::Change* ch = c.add_gained();
    ch->set_section("network");
    ch->set_kind("widened");
    ch->set_line("+ everything: " + m.record.enforcer + " holds nothing for this policy");
  };
  // nftables' `live` is what the scope gets also when the table is gone
  // (everything allowed: the diff lists the gains); otherwise an absent
  // policy is one line.
  if (!live.present && m.record.enforcer != "nftables") {
    nothing_held();
    m.in_sync = false;
    return c;
  }
  // The desired IR came from JSON, which keeps no provenance for network
  // rules: `rules` stays empty until bundles carry their sources.
  const SourceManager no_sources;
  for (const ir::Change& d : ir::Diff(m.parsed.ir, live.live).changes) {
    v1::Change* ch = nullptr;
    switch (d.kind) {
      case ir::ChangeKind::kWidened:
        ch = c.add_gained();
        break;
      case ir::ChangeKind::kNarrowed:
        ch = c.add_lost();
        break;
      case ir::ChangeKind::kChanged:
        ch = c.add_changed();
        break;
    }
    ch->set_section(ir::SectionName(d.section));
    ch->set_kind(ir::KindName(d.kind));
    ch->set_line(d.line);
    for (const Span& s : d.old_rules) {
      if (s.valid() && s.file < no_sources.size()) ch->add_rules(ir::Where(no_sources, s));
    }
  }
  if (!live.present && c.gained().empty()) nothing_held();
  c.set_in_sync(live.present && live.in_sync && c.gained().empty() && c.lost().empty() &&
                c.changed().empty() && c.unknown().empty());
  c.set_live_ir_json(ir::ToJson(live.live, no_sources).dump());
  m.in_sync = c.in_sync();
  return c;
}

RpcStatus AgentImpl::Check(const Caller& caller, const v1::CheckRequest& request,
                           v1::CheckResponse* response) {
  if (!Allowed(caller, Role::kReader))
    return Status(RpcStatus::kPermissionDenied, "Check needs a role");
  std::lock_guard<std::mutex> lock(mu_);
  if (!request.policy().empty() && !managed_.count(request.policy())) {
    return Status(RpcStatus::kNotFound,
                  "policy: wardd manages no policy '" + request.policy() + "'");
  }
  for (auto& [name, m] : managed_) {
    if (!request.policy().empty() && name != request.policy()) continue;
    const bool was_in_sync = m.in_sync;
    v1::PolicyCheck c = CheckOne(m);
    if (!c.in_sync()) {
      if (was_in_sync) CountDrift();
      v1::Event e;
      *e.mutable_drift() = c;
      hub_.Publish(std::move(e));
      if (options_.repair && c.error().empty()) Repair(m);
    }
    *response->add_policies() = std::move(c);
  }
  if (request.policy().empty()) Unmanaged(response->mutable_unmanaged());
#ifdef WARD_HAVE_EBPF
  if (request.policy().empty() && !options_.runs_dir.empty()) {
    for (const enforce::RunCheck& r : enforce::CheckRuns(options_.runs_dir)) {
      v1::Run* out = response->add_runs();
      out->set_supervisor(r.supervisor);
      out->set_policy(r.policy);
      out->set_cgroup(r.cgroup);
      out->set_seccomp(r.seccomp);
    }
  }
#endif
  response->set_audit_head(audit_.Head());
  return {};
}

std::unique_ptr<Subscription> AgentImpl::Watch(const Caller& caller) {
  if (!Allowed(caller, Role::kReader)) return nullptr;
  return hub_.Subscribe();
}

// Drift found while running is repaired only with options.repair: the
// desired bundle applied again, as at start.
void AgentImpl::Repair(Managed& m) {
  DiagnosticSink sink;
  std::string error;
  if (m.parsed.enforcer->Apply(m.parsed.ir, m.parsed.target, enforce::ApplyOptions{}, sink,
                               &error)) {
    m.in_sync = true;
    m.refresh_at = FirstRefresh(m.parsed.ir);
    Audit({"wardd", Role::kOperator}, "repair", m.record.policy, m.record.sha256,
          m.record.generation, "ok");
  } else {
    const std::string why = error.empty() ? Messages(sink, Severity::kError) : error;
    Audit({"wardd", Role::kOperator}, "repair", m.record.policy, m.record.sha256,
          m.record.generation, "failed: " + why);
    PublishError(m.record.policy + ": repair failed: " + why);
  }
}

// wardd's own work between calls: denial events of its ebpf policies, a
// drift check every kCheckSeconds (reported when a policy goes out of sync;
// repaired only with options.repair), and fresh answers for domain grants
// before their addresses expire (what `ward apply --refresh` does).
constexpr int kCheckSeconds = 30;

void AgentImpl::Background() {
  auto next_check = std::chrono::steady_clock::now() + std::chrono::seconds(kCheckSeconds);
  while (!stop_) {
    PollDenials();
    if (stop_) break;
    if (std::chrono::steady_clock::now() >= next_check) {
      PeriodicCheck();
      next_check = std::chrono::steady_clock::now() + std::chrono::seconds(kCheckSeconds);
    }
    RefreshDue();
  }
}

void AgentImpl::PeriodicCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, m] : managed_) {
    if (stop_) return;
    const bool was_in_sync = m.in_sync;
    v1::PolicyCheck c = CheckOne(m);
    if (c.in_sync()) continue;
    if (was_in_sync) {
      CountDrift();
      v1::Event e;
      *e.mutable_drift() = c;
      hub_.Publish(std::move(e));
    }
    if (options_.repair && c.error().empty()) Repair(m);
  }
}

void AgentImpl::RefreshDue() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  for (auto& [name, m] : managed_) {
    if (m.refresh_at == std::chrono::steady_clock::time_point{} || now < m.refresh_at) continue;
    DiagnosticSink sink;
    std::string error;
    uint32_t next = enforce::RefreshSeconds({}, enforce::ApplyOptions{}.dns);
    if (!m.parsed.enforcer->RefreshDomains(m.parsed.ir, enforce::ApplyOptions{}, sink, &next,
                                           &error)) {
      PublishError(name + ": refreshing domain grants failed: " + error);
    }
    m.refresh_at = now + std::chrono::seconds(next);
  }
}

// Denials of the ebpf policies wardd manages, read from their ring buffers;
// otherwise a short sleep (the loop's tick).
void AgentImpl::PollDenials() {
#ifdef WARD_HAVE_EBPF
  std::vector<std::string> wanted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, m] : managed_) {
      if (m.record.enforcer == "ebpf") wanted.push_back(name);
    }
  }
  std::erase_if(readers_, [&](const auto& r) {
    return std::find(wanted.begin(), wanted.end(), r.first) == wanted.end();
  });
  for (const std::string& name : wanted) {
    if (readers_.count(name)) continue;
    std::string error;
    if (auto r = enforce::EbpfEventReader::Open(name, &error)) readers_[name] = std::move(r);
  }
  if (!readers_.empty()) {
    for (auto it = readers_.begin(); it != readers_.end() && !stop_;) {
      std::vector<std::string> lines;
      std::string error;
      if (!it->second->Poll(100, &lines, &error)) {
        PublishError(it->first + ": denial events: " + error);
        it = readers_.erase(it);  // opened again on the next round
        continue;
      }
      for (const std::string& l : lines) {
        CountDenial(it->first, l);
        v1::Event e;
        e.mutable_denial()->set_policy(it->first);
        e.mutable_denial()->set_line(l);
        hub_.Publish(std::move(e));
      }
      ++it;
    }
    return;
  }
#endif
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

void AgentImpl::Shutdown() {
  std::call_once(shutdown_, [this] {
    pull_.reset();  // first: its thread calls Apply
    stop_ = true;
    if (background_.joinable()) background_.join();
    audit_.Close();  // a last checkpoint
    hub_.Close();
  });
}

}  // namespace

std::unique_ptr<Agent> Agent::Open(const AgentOptions& options, std::string* error) {
  // The keys before the state folder: a wardd that cannot check signatures
  // does not start (nor take the lock, nor converge).
  BundleKeys keys;
  if (!keys.Load(options.bundle_keys, error)) return nullptr;
  std::unique_ptr<State> state = State::Open(options.state_dir, error);
  if (!state) return nullptr;
  auto agent = std::make_unique<AgentImpl>(options, std::move(keys), std::move(state));
  if (!agent->Start(error)) return nullptr;
  if (!agent->StartPull(error)) return nullptr;
  return agent;
}

}  // namespace ward::agent
