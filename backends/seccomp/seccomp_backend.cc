#include "backends/seccomp/seccomp_backend.h"

#include "backends/bypass_warnings.h"
#include "backends/seccomp/filter.h"

namespace ward::backend {
namespace {

class Seccomp final : public Backend {
 public:
  std::string_view name() const override { return "seccomp"; }
  std::string_view description() const override {
    return "raw seccomp BPF per architecture (.bpf) and its disassembly (.pfc), via libseccomp";
  }
  std::vector<Section> covers() const override { return {Section::kSyscalls}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    WarnReopenedBypasses(policy.syscalls, sink);
    bool ok = true;
    for (Arch arch : policy.syscalls.arches) {
      seccomp::Filter filter;
      if (!seccomp::BuildFilter(policy.syscalls, arch, &filter, sink)) {
        ok = false;
        continue;
      }
      const std::string stem = policy.name + "." + std::string(ArchName(arch));
      result.artifacts.push_back({stem + ".bpf", std::move(filter.bpf)});
      result.artifacts.push_back({stem + ".pfc", std::move(filter.pfc)});
    }
    if (!ok) {
      result.artifacts.clear();
      return result;
    }
    result.enforced.push_back(Section::kSyscalls);
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& SeccompBackend() {
  static const Seccomp backend;
  return backend;
}

}  // namespace ward::backend
