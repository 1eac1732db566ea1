// `ward compile -t nftables`: the policy's network partition as one `inet`
// table `ward_<policy>`, in nft text (`<policy>.nft`) and libnftables JSON
// (`<policy>.nft.json`), without a scope (`ward apply` adds it). README.md
// says what the table holds and why.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& NftablesBackend();

}  // namespace ward::backend
