// Runs the built `ward` binary as a user would, for the CLI tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ward::test {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string ScratchDir() {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ward-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs a shell command (not ward), capturing stdout and stderr apart.
inline Run Shell(const std::string& command) {
  static int counter = 0;
  std::string dir = ScratchDir();
  std::string out_file = dir + "/shell-out" + std::to_string(counter);
  std::string err_file = dir + "/shell-err" + std::to_string(counter++);
  int raw = std::system((command + " >" + out_file + " 2>" + err_file).c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  auto slurp = [](const std::string& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  r.out = slurp(out_file);
  r.err = slurp(err_file);
  return r;
}

// Runs `ward ARGS` through the shell (with `env` assignments in front),
// capturing stdout and stderr apart.
inline Run Ward(const std::string& args, const std::string& env = "") {
  return Shell(env + " " + WARD_BINARY + " " + args);
}

// Writes a file into the scratch folder and returns its path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ScratchDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

inline const std::string kStdEnv = std::string("WARD_STD=") + WARD_SOURCE_DIR + "/policies/std";

}  // namespace ward::test
