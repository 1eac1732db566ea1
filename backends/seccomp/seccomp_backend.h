// `ward compile -t seccomp`: per effective architecture, the raw BPF program
// (`<policy>.<arch>.bpf`, loadable with seccomp(SECCOMP_SET_MODE_FILTER))
// and libseccomp's pseudo filter code (`<policy>.<arch>.pfc`). README.md
// says what the filter holds and why.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& SeccompBackend();

}  // namespace ward::backend
