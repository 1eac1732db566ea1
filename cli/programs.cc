#include "cli/programs.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ward::cli {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string Identity(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return "?";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// ward-cli beside the launcher at `launcher`.
std::string CliOf(const std::string& launcher) {
  return launcher.empty() ? "" : DirOf(launcher) + "/../libexec/ward/ward-cli";
}

}  // namespace

// (language/loader.cc reads the same link for the std lookup; calling it
// would pull the loader, and with it the ANTLR parser, into the launcher.)
std::string SelfPath() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  return std::string(path, static_cast<size_t>(n));
}

std::string WardCliPath() { return CliOf(SelfPath()); }

std::string ProgramsIdentity() {
  const std::string self = SelfPath();
  const bool is_cli = BaseOf(self) == "ward-cli";
  const std::string launcher = is_cli ? DirOf(self) + "/../../bin/ward" : self;
  const std::string cli = is_cli ? self : CliOf(self);
  return "ward " + Identity(launcher) + " ward-cli " + Identity(cli);
}

}  // namespace ward::cli
