#include "backends/oci/oci_backend.h"

#include "backends/bypass_warnings.h"
#include "backends/oci/runtime_fragment.h"
#include "backends/oci/seccomp_profile.h"

namespace ward::backend {
namespace {

class Oci final : public Backend {
 public:
  std::string_view name() const override { return "oci"; }
  std::string_view description() const override {
    return "OCI/Docker seccomp profile JSON and an OCI runtime-spec process/linux fragment";
  }
  std::vector<Section> covers() const override {
    return {Section::kSyscalls, Section::kProcess, Section::kLimits};
  }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    nlohmann::ordered_json profile;
    if (!oci::SeccompProfile(policy.syscalls, sink, &profile)) return result;
    WarnReopenedBypasses(policy.syscalls, sink);
    result.enforced.push_back(Section::kSyscalls);
    nlohmann::ordered_json fragment =
        oci::RuntimeFragment(policy, profile, sink, &result.enforced, &result.fields);
    result.artifacts.push_back({policy.name + ".seccomp.json", profile.dump(2) + "\n"});
    result.artifacts.push_back({policy.name + ".runtime.json", fragment.dump(2) + "\n"});
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& OciBackend() {
  static const Oci backend;
  return backend;
}

}  // namespace ward::backend
