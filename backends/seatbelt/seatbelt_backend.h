// `ward compile -t seatbelt [--home DIR]`: `<policy>.sb`, an SBPL profile
// for macOS sandbox-exec (profile.h; README.md says what maps to what).
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& SeatbeltBackend();

}  // namespace ward::backend
