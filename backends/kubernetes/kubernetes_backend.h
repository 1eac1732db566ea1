// `ward compile -t kubernetes`: `<policy>.networkpolicy.yaml` (NetworkPolicy
// objects for the network section), `<policy>.pod.yaml` (the pod and
// container fields for process and limits, to merge into a pod template)
// and `kubelet-seccomp/ward/<policy>.json` (the seccomp profile the pod
// references as Localhost). backends/kubernetes/README.md.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& KubernetesBackend();

}  // namespace ward::backend
