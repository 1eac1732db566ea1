// The crash points of the crash-matrix test (state.h, CrashPoint). This file
// is compiled twice: into ward_agent (wardd's library) without
// WARD_AGENT_CRASH_POINTS, where CrashPoint does nothing and no environment
// variable is read, and into ward_agent_crashable (test builds only) with it.
#include "enforcers/agent/state.h"

#ifdef WARD_AGENT_CRASH_POINTS
#include <csignal>
#include <cstdlib>
#include <cstring>
#endif

namespace ward::agent {

#ifdef WARD_AGENT_CRASH_POINTS
void CrashPoint(const char* point) {
  const char* at = std::getenv("WARD_AGENT_CRASH_AT");
  if (at && std::strcmp(at, point) == 0) std::raise(SIGKILL);
}
#else
void CrashPoint(const char*) {}
#endif

}  // namespace ward::agent
