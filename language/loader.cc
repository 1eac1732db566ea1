#include "language/loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "language/parser.h"

namespace ward {
namespace {

namespace fs = std::filesystem;

bool IsDirectory(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class Loader {
 public:
  Loader(const FrontendOptions& options, SourceManager& sources, DiagnosticSink& sink,
         Program& program)
      : options_(options), sources_(sources), sink_(sink), program_(program) {}

  void Run(const std::vector<std::string>& paths) {
    program_.std_dir = FindStdDir(options_);
    if (program_.std_dir.empty()) {
      sink_.Error(Code::kStdNotFound, {}, "the Ward standard library (std/) was not found",
                  "pass --std DIR or set WARD_STD to the policies/std folder");
    } else {
      program_.std_syscalls =
          Load(program_.std_dir + "/syscalls.ward", "std/syscalls.ward", {}, true);
    }
    for (const std::string& p : paths) {
      FileId id = Load(p, p, {}, false);
      if (id != kNoFile) program_.roots.push_back(id);
    }
  }

 private:
  // Loads one file (and, recursively, its imports); `from` is the import
  // span, invalid for command-line files.
  // `display` is how diagnostics and provenance name the file: as the user
  // or the import wrote it, never the machine-specific std folder.
  FileId Load(const std::string& path, const std::string& display, Span from, bool is_std) {
    std::string text;
    std::string real;
    if (!Read(path, from, &text, &real)) return kNoFile;
    FileId existing = sources_.Find(real);
    if (existing != kNoFile) {
      for (size_t i = 0; i < stack_.size(); ++i) {
        if (stack_[i].file == existing) ReportCycle(i, from);
      }
      return existing;
    }
    FileId id = sources_.Add(display, real, std::move(text));
    if (is_std) {
      sources_.SetIrPath(id, display);
    } else {
      if (!root_dir_) root_dir_ = fs::path(real).parent_path();
      sources_.SetIrPath(id, fs::path(real).lexically_relative(*root_dir_).string());
    }
    program_.files.resize(sources_.size());
    std::optional<ast::File> file = ParseFile(sources_, id, sink_);
    if (!file) return id;
    file->is_std = is_std;
    stack_.push_back({id, from});
    for (ast::Import& imp : file->imports) {
      std::string target = Resolve(imp.path, real, imp.path_span);
      if (target.empty()) continue;
      bool std_import = imp.path.rfind("std/", 0) == 0;
      std::string shown =
          std_import || imp.path[0] == '/'
              ? imp.path
              : (fs::path(display).parent_path() / imp.path).lexically_normal().string();
      imp.resolved = Load(target, shown, imp.path_span, is_std || std_import);
    }
    stack_.pop_back();
    program_.files[id] = std::move(file);
    return id;
  }

  // The folder of the first file named on the command line (its real path):
  // the IR names files relative to it.
  std::optional<fs::path> root_dir_;

  bool Read(const std::string& path, Span from, std::string* text, std::string* real) {
    auto fail = [&](const std::string& why) {
      sink_.Error(Code::kCannotRead, from, "cannot read '" + path + "': " + why);
      return false;
    };
    std::string normal = fs::path(path).lexically_normal().string();
    if (auto it = options_.memory_files.find(normal); it != options_.memory_files.end()) {
      *text = it->second;
      *real = normal;
      return true;
    }
    if (IsDirectory(path)) return fail("is a directory");
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    if (ec) return fail(ec.message());
    struct stat st;
    if (stat(canonical.c_str(), &st) != 0) return fail(std::strerror(errno));
    // A device, FIFO or socket could block or never end (/dev/zero).
    if (!S_ISREG(st.st_mode)) return fail("not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
      sink_.Error(Code::kFileTooLarge, from,
                  "'" + path + "' is " + std::to_string(st.st_size) + " bytes; the limit is " +
                      std::to_string(kMaxFileBytes));
      return false;
    }
    std::ifstream in(canonical, std::ios::binary);
    if (!in) return fail(std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    *text = ss.str();
    *real = canonical.string();
    return true;
  }

  // `std/x` resolves in the standard library; other paths relative to the
  // importing file's folder.
  std::string Resolve(const std::string& import, const std::string& importer, Span span) {
    if (import.rfind("std/", 0) == 0) {
      if (program_.std_dir.empty()) {
        sink_.Error(Code::kStdNotFound, span,
                    "cannot import '" + import + "': the standard library was not found",
                    "pass --std DIR or set WARD_STD");
        return {};
      }
      return program_.std_dir + "/" + import.substr(4);
    }
    if (import.empty()) {
      sink_.Error(Code::kCannotRead, span, "empty import path");
      return {};
    }
    if (import[0] == '/') return import;
    return (fs::path(importer).parent_path() / import).string();
  }

  void ReportCycle(size_t start, Span from) {
    sink_.Error(Code::kImportCycle, from, "import cycle",
                "move the shared policies into a file both can import");
    for (size_t i = start + 1; i < stack_.size() && i < start + 1 + DiagnosticSink::kMaxRelated;
         ++i) {
      sink_.AddRelated(stack_[i].from, "imported from here");
    }
  }

  struct Frame {
    FileId file;
    Span from;
  };

  const FrontendOptions& options_;
  SourceManager& sources_;
  DiagnosticSink& sink_;
  Program& program_;
  std::vector<Frame> stack_;
};

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string FindStdDir(const FrontendOptions& options) {
  if (!options.std_dir.empty()) return IsDirectory(options.std_dir) ? options.std_dir : "";
  if (const char* env = std::getenv("WARD_STD"); env && *env) {
    return IsDirectory(env) ? env : "";
  }
  // bin/ward, or libexec/ward/ward-cli (cli/programs.h).
  const std::string dir = ExecutableDir();
  if (dir.empty()) return {};
  for (const char* up : {"/..", "/../.."}) {
    const std::string std_dir = dir + up + "/share/ward/std";
    if (IsDirectory(std_dir)) {
      std::error_code ec;
      return fs::canonical(std_dir, ec).string();
    }
  }
  return {};
}

Program LoadProgram(const std::vector<std::string>& paths, const FrontendOptions& options,
                    SourceManager& sources, DiagnosticSink& sink) {
  Program program;
  Loader(options, sources, sink, program).Run(paths);
  program.files.resize(sources.size());
  return program;
}

}  // namespace ward
