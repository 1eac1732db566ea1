#include "enforcers/linux/drift.h"

namespace ward::enforce {

bool ReadLive(const ir::Policy& desired, const Target& target, std::string_view enforcer,
              const ApplyOptions& options, LiveState* out, std::string* error) {
  *out = LiveState{};
  if (enforcer == "nftables") {
#ifdef WARD_HAVE_NFTABLES
    return ReadLiveNftables(desired, target, options, out, error);
#else
    *error = "nftables enforcer not built";
    return false;
#endif
  }
  if (enforcer == "ebpf") {
#ifdef WARD_HAVE_EBPF
    return ReadLiveEbpf(desired, target, options, out, error);
#else
    *error = "ebpf enforcer not built";
    return false;
#endif
  }
  *error = "unknown enforcer '" + std::string(enforcer) + "' (nftables or ebpf)";
  return false;
}

}  // namespace ward::enforce
