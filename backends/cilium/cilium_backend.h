// `ward compile -t cilium`: `<policy>.cilium.yaml`, one cilium.io/v2
// CiliumNetworkPolicy for the network section, domains included (toFQDNs).
// backends/cilium/README.md.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& CiliumBackend();

}  // namespace ward::backend
