// `ward compile -t oci`: `<policy>.seccomp.json`, an OCI/Docker seccomp
// profile, and `<policy>.runtime.json`, an OCI runtime-spec fragment
// (backends/oci/README.md).
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& OciBackend();

}  // namespace ward::backend
