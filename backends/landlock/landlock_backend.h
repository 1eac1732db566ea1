// `ward compile -t landlock`: `<policy>.landlock.json`, the Landlock
// ruleset `ward run` applies (README.md): handled rights, the filesystem
// patterns resolved into path-beneath rules at apply time, TCP port rules,
// scopes and the minimum ABI.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& LandlockBackend();

}  // namespace ward::backend
