// `ward`, the command users run (cli/CMakeLists.txt): `ward run` of a policy
// it ran before, straight from the run cache (cli/run_exec.h), and every
// other command line handed whole to ward-cli (cli/programs.h) with execv:
// same arguments, same environment, same process.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/programs.h"
#ifdef WARD_LAUNCHER_RUNS
#include "cli/run_exec.h"
#endif

int main(int argc, char** argv) {
#ifdef WARD_LAUNCHER_RUNS
  if (const int code = ward::cli::RunFromCache(argc, argv); code >= 0) {
    ward::enforce::RunTrace("returned");
    // Without the destructors of statics: they hold nothing to write but
    // the two streams.
    std::cout.flush();
    std::cerr.flush();
    _exit(code);
  }
#endif
  const std::string cli = ward::cli::WardCliPath();
  if (cli.empty()) {
    errno = ENOENT;  // its own path unknown (no /proc)
  } else {
    execv(cli.c_str(), argv);
  }
  std::cerr << "ward: cannot run " << (cli.empty() ? "ward-cli" : cli) << ": "
            << std::strerror(errno)
            << " (ward is installed as bin/ward and libexec/ward/ward-cli)\n";
  // ward run's own failures are 125 (enforcers/run/run.h); 2 elsewhere (cli.md).
  return argc > 1 && std::string_view(argv[1]) == "run" ? 125 : 2;
}
