#include "backends/landlock/landlock_backend.h"

#include "backends/landlock/ruleset.h"

namespace ward::backend {
namespace {

class Landlock final : public Backend {
 public:
  std::string_view name() const override { return "landlock"; }
  std::string_view description() const override {
    return "Landlock ruleset for ward run: filesystem rights, TCP bind/connect ports, "
           "abstract-socket and signal scopes";
  }
  std::vector<Section> covers() const override { return {Section::kFilesystem}; }

  Result Compile(const ir::Policy& policy, const Options& options,
                 DiagnosticSink& sink) const override {
    Result result;
    landlock::Ruleset ruleset;
    // Without --partial, what cannot be approximated is an error (README.md).
    if (!landlock::BuildRuleset(policy, options.partial, &ruleset, sink)) return result;
    result.artifacts.push_back({policy.name + ".landlock.json", landlock::ToJson(ruleset)});
    result.enforced = covers();
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& LandlockBackend() {
  static const Landlock backend;
  return backend;
}

}  // namespace ward::backend
