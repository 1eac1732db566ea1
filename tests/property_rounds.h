// The number of rounds of a randomized property loop: `full` scaled by
// WARD_PROPERTY_SCALE (a positive number, default 1), never below 1.
//
// A run without the variable does every round. ci/test.sh sets a smaller
// scale for the sanitizer suite, where each round costs several times what
// it costs in a plain build; the loops draw a fresh seed on every run
// (printed, replayable with WARD_SEED), so the cases they cover add up over
// runs. Loops over fixed seeds or fixed inputs do not use this: a smaller
// count would drop the same cases on every run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ward::test {

inline double PropertyScale() {
  const char* text = std::getenv("WARD_PROPERTY_SCALE");
  if (text == nullptr || *text == '\0') return 1.0;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  if (*end != '\0' || !(scale > 0) || !std::isfinite(scale)) {
    throw std::invalid_argument(std::string("WARD_PROPERTY_SCALE=") + text +
                                ": want a positive number");
  }
  return scale;
}

inline int Rounds(int full) {
  return std::max(1, static_cast<int>(std::lround(full * PropertyScale())));
}

}  // namespace ward::test
