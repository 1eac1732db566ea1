#include "backends/nftables/nftables_backend.h"

#include "backends/nftables/ruleset.h"

namespace ward::backend {
namespace {

class Nftables final : public Backend {
 public:
  std::string_view name() const override { return "nftables"; }
  std::string_view description() const override {
    return "one inet table per policy, nft text (.nft) and libnftables JSON (.nft.json)";
  }
  std::vector<Section> covers() const override { return {Section::kNetwork}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    nftables::Ruleset ruleset;
    if (!nftables::RenderRuleset(policy, nftables::RenderOptions{}, &ruleset, sink)) return result;
    if (!policy.network.unix_rules.empty()) {
      sink.Warning(Code::kCannotExpress, policy.network.unix_rules.front().span,
                   "nftables does not see unix sockets: these rules are not enforced by it");
    }
    result.artifacts.push_back({policy.name + ".nft", std::move(ruleset.text)});
    result.artifacts.push_back({policy.name + ".nft.json", std::move(ruleset.json)});
    result.enforced.push_back(Section::kNetwork);
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& NftablesBackend() {
  static const Nftables backend;
  return backend;
}

}  // namespace ward::backend
