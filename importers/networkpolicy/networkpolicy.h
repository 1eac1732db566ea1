// `ward import --from networkpolicy --cluster SNAPSHOT --pod NS/NAME
// NP.yaml...`: the effective network policy of one pod, as the Kubernetes
// NetworkPolicy objects (networking.k8s.io/v1) in the files decide it for
// that pod in the cluster the snapshot describes (importers/README.md,
// "--from networkpolicy", has every field and its translation).
#pragma once

#include <string_view>

#include "importers/import.h"

namespace ward::importers {

// `options.files`: every policy file (YAML streams or JSON; `List` and
// `NetworkPolicyList` objects are unwrapped), `options.cluster`: what
// `kubectl get namespaces,pods -A -o json` (or `-o yaml`) prints,
// `options.pod`: NAMESPACE/NAME. `first` is the first file's text (unused
// when `options.files` is set).
ImportResult ImportNetworkPolicy(std::string_view first, const ImportOptions& options);

}  // namespace ward::importers
