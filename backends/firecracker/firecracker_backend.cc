#include "backends/firecracker/firecracker_backend.h"

#include "backends/firecracker/vm_config.h"
#include "backends/nftables/ruleset.h"

namespace ward::backend {
namespace {

class Firecracker final : public Backend {
 public:
  std::string_view name() const override { return "firecracker"; }
  std::string_view description() const override {
    return "a microVM: Firecracker config (.firecracker.json), jailer arguments (.jailer.args), "
           "host nftables for its tap (.tap.nft)";
  }
  std::vector<Section> covers() const override { return {Section::kNetwork, Section::kLimits}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    firecracker::VmPlan plan;
    bool ok = firecracker::Plan(policy, &plan, sink);
    // A microVM has no egress control of its own: the host filters its tap,
    // in every direction, forwarded traffic dropped (nftables/README.md).
    nftables::Ruleset ruleset;
    if (plan.network) {
      nftables::RenderOptions options;
      nftables::Scope scope;
      scope.kind = nftables::Scope::Kind::kInterface;
      scope.interface = plan.tap;
      options.scope = scope;
      ok = nftables::RenderRuleset(policy, options, &ruleset, sink) && ok;
    }
    if (!ok) return result;
    result.artifacts.push_back({policy.name + ".firecracker.json", firecracker::ConfigJson(plan)});
    std::string args;
    for (const std::string& a : firecracker::JailerArgs(policy, plan)) args += a + "\n";
    result.artifacts.push_back({policy.name + ".jailer.args", std::move(args)});
    if (plan.network) result.artifacts.push_back({policy.name + ".tap.nft", ruleset.text});
    result.enforced.push_back(Section::kNetwork);
    if (plan.limits_complete) result.enforced.push_back(Section::kLimits);
    // machine-config's vcpu_count and mem_size_mib, with the jailer's
    // cgroup quota (vm_config.h); the other limits apply inside the guest.
    for (const char* key : {"cpus", "memory"}) {
      if (policy.limits.count(key)) result.fields.push_back(std::string("limits.") + key);
    }
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& FirecrackerBackend() {
  static const Firecracker backend;
  return backend;
}

}  // namespace ward::backend
