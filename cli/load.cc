#include "cli/load.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "language/parser.h"

namespace ward::cli {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// The kind of a file that is neither a folder nor a regular file.
const char* OddKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string SizeProblem(off_t size) {
  return "is " + std::to_string(size) + " bytes, over the limit of " +
         std::to_string(kMaxFileBytes >> 20) + " MiB";
}

// Reads all of standard input, at most kMaxFileBytes.
bool ReadStdin(std::string* text, std::string* problem) {
  char buffer[65536];
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *problem = Lower(std::strerror(errno));
      return false;
    }
    if (n == 0) return true;
    text->append(buffer, static_cast<size_t>(n));
    if (text->size() > kMaxFileBytes) {
      *problem = "is over the limit of " + std::to_string(kMaxFileBytes >> 20) + " MiB";
      return false;
    }
  }
}

bool HoldsStd(const fs::path& dir) {
  struct stat st;
  return stat((dir / "syscalls.ward").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string PolicyFileProblem(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int error = errno;
    std::error_code ec;
    if (error == ENOENT && fs::is_symlink(path, ec)) {
      return "is a symbolic link to " + fs::read_symlink(path, ec).string() +
             ", which does not exist";
    }
    return Lower(std::strerror(error));
  }
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return std::string("is ") + OddKind(st.st_mode) + ", not a policy file";
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) return SizeProblem(st.st_size);
  // Readable? (The file may have changed kind since the stat: O_NONBLOCK
  // keeps a FIFO put there from blocking the open.)
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Lower(std::strerror(errno));
  close(fd);
  return {};
}

bool ExpandPolicyInputs(const std::string& command, const std::vector<std::string>& args,
                        bool folders, PolicyInputs* inputs) {
  auto fail = [&](const std::string& path, const std::string& problem) {
    std::cerr << "ward" << (command.empty() ? "" : " ") << command << ": " << path << ": "
              << problem << "\n";
    return false;
  };
  for (const std::string& arg : args) {
    if (arg == kStdinArg) {
      if (inputs->stdin_text) return fail(kStdinName, "`-` given twice");
      std::string text, problem;
      if (!ReadStdin(&text, &problem)) return fail(kStdinName, problem);
      inputs->stdin_text = std::move(text);
      inputs->paths.push_back(kStdinName);
      continue;
    }
    std::error_code ec;
    if (!folders || !fs::is_directory(arg, ec)) {
      std::string problem = PolicyFileProblem(arg);
      if (!problem.empty()) return fail(arg, problem);
      inputs->paths.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(arg, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".ward") {
        found.push_back(it->path().string());
      }
    }
    if (ec) return fail(arg, Lower(ec.message()));
    std::sort(found.begin(), found.end());
    inputs->paths.insert(inputs->paths.end(), found.begin(), found.end());
  }
  return true;
}

std::string StdDirFor(const std::string& std_flag, const std::string& file) {
  if (!std_flag.empty()) return std_flag;
  if (const char* env = std::getenv("WARD_STD"); env && *env) return {};
  std::error_code ec;
  fs::path dir = file == kStdinName || file == kStdinArg
                     ? fs::current_path(ec)
                     : fs::absolute(file, ec).lexically_normal().parent_path();
  if (ec) return {};
  for (;;) {
    for (const char* vendored : {".ward/std", "policies/std"}) {
      if (HoldsStd(dir / vendored)) return (dir / vendored).string();
    }
    if (fs::exists(dir / ".git", ec) || dir == dir.root_path() || !dir.has_parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

FrontendOptions FrontendFor(const PolicyInputs& inputs, const std::string& std_flag) {
  FrontendOptions options;
  options.std_dir = StdDirFor(std_flag, inputs.paths.empty() ? "" : inputs.paths.front());
  if (inputs.stdin_text) options.memory_files[kStdinName] = *inputs.stdin_text;
  return options;
}

std::unique_ptr<LoadedPolicy> LoadPolicy(const std::string& file,
                                         const std::optional<std::string>& policy,
                                         const std::string& std_dir, const OutputFlags& output,
                                         int* exit_code) {
  PolicyInputs inputs;
  if (!ExpandPolicyInputs("", {file}, /*folders=*/false, &inputs)) {
    *exit_code = kUsage;
    return nullptr;
  }
  ir::LoadStatus status = ir::LoadStatus::kOk;
  std::string error;
  auto loaded = ir::LoadPolicyFile(inputs.paths.front(), policy, FrontendFor(inputs, std_dir),
                                   &status, &error);
  switch (status) {
    case ir::LoadStatus::kOk:
      return loaded;
    case ir::LoadStatus::kNoFile:
    case ir::LoadStatus::kNoSuchPolicy:
      std::cerr << "ward: " << error << "\n";
      *exit_code = kUsage;
      return nullptr;
    case ir::LoadStatus::kNoStdlib:
    case ir::LoadStatus::kPolicyErrors: {
      // Diagnostics are the failure here: always as text on stderr.
      OutputFlags text = output;
      text.format = "text";
      PrintDiagnostics(loaded->sources, loaded->sink, text);
      *exit_code = status == ir::LoadStatus::kNoStdlib ? kUsage : kFound;
      return nullptr;
    }
  }
  return nullptr;
}

std::unique_ptr<LoadedPolicy> LoadPolicyForReport(const std::string& file,
                                                  const std::optional<std::string>& policy,
                                                  const std::string& std_dir,
                                                  const OutputFlags& output, const Json& doc,
                                                  int* exit_code) {
  if (output.format != "json") return LoadPolicy(file, policy, std_dir, output, exit_code);
  ir::LoadStatus status = ir::LoadStatus::kOk;
  std::string error;
  auto loaded = ir::LoadPolicyFile(file, policy, std_dir, &status, &error);
  switch (status) {
    case ir::LoadStatus::kOk:
      return loaded;
    case ir::LoadStatus::kNoFile:
    case ir::LoadStatus::kNoSuchPolicy:
      std::cerr << "ward: " << error << "\n";
      *exit_code = kUsage;
      return nullptr;
    case ir::LoadStatus::kNoStdlib:
    case ir::LoadStatus::kPolicyErrors:
      PrintJsonDocument(doc, &loaded->sources, &loaded->sink);
      *exit_code = status == ir::LoadStatus::kNoStdlib ? kUsage : kFound;
      return nullptr;
  }
  return nullptr;
}

}  // namespace ward::cli
