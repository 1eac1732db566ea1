// `ward compile -t firecracker`: a microVM for the policy's workload, as
// `<policy>.firecracker.json` (Firecracker's FullVmConfiguration, for
// `--config-file`), `<policy>.jailer.args` (the jailer's arguments, one per
// line) and `<policy>.tap.nft` (the host's nftables ruleset for the VM's
// tap). README.md says what maps to what.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& FirecrackerBackend();

}  // namespace ward::backend
