#include "backends/seatbelt/seatbelt_backend.h"

#include "backends/seatbelt/profile.h"

namespace ward::backend {
namespace {

class Seatbelt final : public Backend {
 public:
  std::string_view name() const override { return "seatbelt"; }
  std::string_view description() const override {
    return "an SBPL profile for macOS sandbox-exec (.sb); `~` needs --home";
  }
  std::vector<Section> covers() const override { return {Section::kFilesystem, Section::kNetwork}; }

  Result Compile(const ir::Policy& policy, const Options& options,
                 DiagnosticSink& sink) const override {
    Result result;
    seatbelt::Profile profile;
    if (!seatbelt::RenderProfile(policy, options.home, options.partial, &profile, sink))
      return result;
    result.artifacts.push_back({policy.name + ".sb", std::move(profile.text)});
    result.enforced = std::move(profile.enforced);
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& SeatbeltBackend() {
  static const Seatbelt backend;
  return backend;
}

}  // namespace ward::backend
