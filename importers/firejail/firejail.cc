#include "importers/firejail/firejail.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "importers/ward_writer.h"
#include "language/constants.h"
#include "language/path_match.h"
#include "language/syscall_facts.h"
#include "language/utf8.h"

namespace ward::importers {
namespace {

#include "importers/firejail/tables/groups.inc"

struct GroupDef {
  const char* name;
  const char* list;
};
const GroupDef kGroups[] = {FIREJAIL_GROUPS};
struct SyscallDef {
  const char* name;
  int nr;
};
const SyscallDef kX86_64[] = {FIREJAIL_X86_64};

constexpr size_t kMaxIncludeLevel = 16;    // firejail.h:37
constexpr size_t kMaxIgnore = 32;          // firejail.h:163
constexpr size_t kMaxLine = 8191;          // fgets(buf, MAX_READ=8192)
constexpr size_t kMaxFileBytes = 1 << 20;  // the importer's own bound
constexpr size_t kMaxLines = 200000;       // the importer's own bound (include fan-out)

// firejail's PATH when $PATH is unset (src/firejail/paths.c); the import
// reads `${PATH}` as this, never the importing user's $PATH.
const char* const kDefaultPath[] = {"/usr/local/bin",  "/usr/bin",  "/bin",
                                    "/usr/local/sbin", "/usr/sbin", "/sbin"};
// private-bin's folders (src/firejail/fs_bin.c:30-40).
const char* const kBinDirs[] = {"/usr/local/bin",   "/usr/bin",        "/bin",      "/usr/games",
                                "/usr/local/games", "/usr/local/sbin", "/usr/sbin", "/sbin"};

enum Right { kR = 1, kW = 2, kX = 4 };

std::string RightsText(int r) {
  std::string out;
  auto add = [&](const char* w) { out += (out.empty() ? "" : " ") + std::string(w); };
  if (r & kR) add("read");
  if (r & kW) add("write");
  if (r & kX) add("exec");
  return out;
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(' ');
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(' ');
  return s.substr(a, b - a + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// One command of the resolved list, with where it was read.
struct Entry {
  std::string cmd, arg;  // "blacklist", "${HOME}/.ssh"
  std::string file;      // as shown in diagnostics ("" for the top file)
  size_t line = 0;
  size_t seq = 0;  // the line's place in reading order, across files
  std::string Place(const std::string& top) const {
    return (file.empty() ? top : file) + ":" + std::to_string(line);
  }
};

struct FsRule {
  bool allow = true;
  int rights = 0;
  std::string path;
  std::string origin;  // "file:line"
  enum Kind {
    kBase,
    kKeep,
    kWhitelist,
    kReadWrite,
    kCarve,  // a noblacklist's exemption from a glob blacklist
    kHide,
    kAbsolute,
    kReadOnly,
    kNoexec
  } kind;
  std::string exempt;  // kCarve: the blacklist pattern it is exempted from
};

class FirejailImporter {
 public:
  FirejailImporter(const ImportOptions& options, const FirejailEnvironment& env,
                   std::vector<ImportDiagnostic>* diagnostics)
      : options_(options), env_(env), diagnostics_(diagnostics) {
    top_ = options_.path.empty() ? options_.source : options_.path;
    if (!options_.home.empty()) home_ = options_.home;
  }

  bool Run(std::string_view text, std::string* out) {
    if (!options_.home.empty() &&
        (options_.home[0] != '/' || options_.home.find("..") != std::string::npos)) {
      return Error(nullptr, "--home must be an absolute path");
    }
    std::string folder;
    if (!options_.path.empty()) {
      size_t slash = options_.path.rfind('/');
      folder = slash == std::string::npos ? "." : options_.path.substr(0, slash + 1);
      if (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    }
    Read(std::string(text), "", folder, 1);
    if (errors_ > 0) return false;
    Translate();
    if (errors_ > 0) return false;
    // Warnings in the order firejail reads the lines (the passes above
    // find them in another order).
    std::stable_sort(warned_.begin(), warned_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [seq, d] : warned_) {
      diagnostics_->push_back(d);
      warnings_.push_back((d.file.empty() ? top_ : d.file) + ":" + std::to_string(d.line) + ": " +
                          d.message);
    }
    *out = Write();
    return true;
  }

 private:
  // ---- diagnostics ---------------------------------------------------

  bool Error(const Entry* at, const std::string& message) {
    ImportDiagnostic d{Severity::kError, "", message};
    if (at) {
      d.file = at->file;
      d.line = at->line;
      d.column = 1;
    }
    diagnostics_->push_back(d);
    ++errors_;
    return false;
  }
  void Warn(const Entry& at, const std::string& message) {
    ImportDiagnostic d{Severity::kWarning, "", message};
    d.file = at.file;
    d.line = at.line;
    d.column = 1;
    warned_.push_back({at.seq, d});
  }
  void Note(const std::string& n) {
    if (std::find(notes_.begin(), notes_.end(), n) == notes_.end()) notes_.push_back(n);
  }

  // ---- reading: profile_read (src/firejail/profile.c:1717-1866) -------

  bool InIgnore(const std::string& line) const {
    for (const std::string& s : ignore_) {
      if (line.compare(0, s.size(), s) == 0 && (line.size() == s.size() || line[s.size()] == ' '))
        return true;
    }
    return false;
  }

  static std::string Normalise(std::string line) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::string out;
    for (char c : line) {
      if (c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') c = ' ';
      if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
      out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

  bool ReadFile(const std::string& path, std::string* text, bool* missing) {
    *missing = false;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      *missing = true;
      return false;
    }
    if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > kMaxFileBytes) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::stringstream buf;
    buf << in.rdbuf();
    *text = buf.str();
    return text->size() <= kMaxFileBytes;
  }

  static bool IsFile(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  void Include(const Entry& at, const std::string& arg, const std::string& folder, size_t level) {
    if (arg.empty()) {
      Error(&at, "'include' needs a file name (firejail refuses the profile)");
      return;
    }
    if (arg.find_first_of("*?[]") != std::string::npos) {
      Error(&at, "'" + CommentText(arg) + "': an include name may not hold glob characters");
      return;
    }
    std::string name = arg;
    if (StartsWith(name, "${HOME}") || name[0] == '~' || StartsWith(name, "${RUNUSER}") ||
        StartsWith(name, "${CFG}") || StartsWith(name, "$HOME")) {
      if (StartsWith(name, "${CFG}")) {
        name = env_.system_dir + name.substr(6);
      } else if (!env_.paths_allowed) {
        Error(&at, "'" + CommentText(arg) + "': includes are read from the test folder only");
        return;
      } else if (StartsWith(name, "$HOME")) {
        Error(&at, "$HOME is not allowed in profile files, use ${HOME} (firejail refuses it)");
        return;
      } else if (home_ == "~") {
        Error(&at, "'" + CommentText(arg) +
                       "' includes a file in the home folder: give --home DIR to read it");
        return;
      } else if (StartsWith(name, "${RUNUSER}")) {
        Error(&at, "'" + CommentText(arg) +
                       "' includes a file under ${RUNUSER}, whose user id "
                       "the import does not know");
        return;
      } else {
        name = home_ + name.substr(name[0] == '~' ? 1 : 7);
      }
    }
    std::string path;
    const std::string base =
        name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (name.find('/') == std::string::npos) {
      std::vector<std::string> dirs = options_.include_dirs;
      dirs.push_back(env_.system_dir);
      if (!folder.empty()) dirs.push_back(folder);
      for (const std::string& d : dirs) {
        if (IsFile(d + "/" + name)) {
          path = d + "/" + name;
          break;
        }
      }
    } else if (!env_.paths_allowed) {
      Error(&at, "'" + CommentText(arg) + "': includes are read from the test folder only");
      return;
    } else {
      path = name[0] == '/' ? name : (folder.empty() ? "." : folder) + "/" + name;
    }
    const bool local = base.size() > 6 && base.compare(base.size() - 6, 6, ".local") == 0;
    std::string text;
    bool missing = path.empty();
    if (!path.empty() && !ReadFile(path, &text, &missing)) {
      if (!missing) {
        Error(&at,
              "cannot read '" + CommentText(path) + "' (not a regular file, or larger than 1 MiB)");
        return;
      }
    }
    if (missing) {
      if (local) return;  // a missing .local is skipped without a word
      Error(&at, "cannot access profile file '" + CommentText(arg) +
                     "' (firejail refuses the profile; looked in " +
                     (options_.include_dirs.empty() ? "" : "each -I folder, ") + env_.system_dir +
                     (folder.empty() ? "" : " and " + folder) + ")");
      return;
    }
    if (level + 1 > kMaxIncludeLevel) {
      Error(&at, "maximum profile include level was reached (firejail allows 16)");
      return;
    }
    if (allow_debuggers_ && base == "disable-devel.inc") return;
    size_t slash = path.rfind('/');
    Read(text, path, slash == std::string::npos ? "." : path.substr(0, slash), level + 1);
  }

  void Read(const std::string& text, const std::string& file, const std::string& folder,
            size_t level) {
    std::vector<std::string> lines = Split(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    for (size_t i = 0; i < lines.size() && errors_ == 0; ++i) {
      Entry at;
      at.file = file;
      at.line = i + 1;
      if (++lines_read_ > kMaxLines) {
        Error(&at, "more than 200000 profile lines through includes; the import stops here");
        return;
      }
      if (lines[i].size() > kMaxLine) {
        Error(&at, "a line longer than 8191 bytes, which firejail splits into pieces");
        return;
      }
      if (lines[i].find('\0') != std::string::npos) {
        Error(&at, "a NUL byte, where firejail's line ends");
        return;
      }
      const std::string line = Normalise(lines[i]);
      if (line.empty()) continue;
      if (std::string why = Unsayable(line); !why.empty()) {
        Error(&at, "the line " + why);
        return;
      }
      if (StartsWith(line, "whitelist-ro ")) {
        // profile.c:1797-1807: straight to the list, past the ignore check.
        Push(at, "whitelist", line.substr(13));
        Push(at, "read-only", line.substr(13));
        continue;
      }
      if (line == "quiet") continue;  // firejail's messages only
      if (StartsWith(line, "include")) {
        if (InIgnore(line)) continue;
        if (line != "include" && line[7] != ' ') {
          Error(&at, "line " + std::to_string(at.line) + " is invalid (unknown command)");
          return;
        }
        Include(at, line.size() > 8 ? line.substr(8) : "", folder, level);
        continue;
      }
      CheckLine(at, line);
    }
  }

  static std::string Unsayable(const std::string& s) {
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7F) return "holds a control character";
    }
    return FindInvalidUtf8(s) == std::string::npos ? "" : "is not UTF-8";
  }

  void Push(const Entry& at, const std::string& cmd, const std::string& arg) {
    Entry e = at;
    e.cmd = cmd;
    e.arg = arg;
    e.seq = ++seq_;
    list_.push_back(e);
  }

  // profile_check_line (profile.c:280).
  void CheckLine(const Entry& at, std::string line) {
    if (line[0] == '?') {
      size_t colon = line.find(':');
      if (colon == std::string::npos) {
        Error(&at, "invalid conditional: no ':'");
        return;
      }
      std::string name = Trim(line.substr(1, colon - 1));
      std::string rest = Trim(line.substr(colon + 1));
      bool value = false;
      if (name == "HAS_APPIMAGE") {
        value = false;  // no --appimage
      } else if (name == "HAS_NET") {
        value = net_none_;
      } else if (name == "HAS_NODBUS") {
        value = dbus_user_ != "allow" || dbus_system_ != "allow";
      } else if (name == "HAS_NOSOUND") {
        value = nosound_;
      } else if (name == "HAS_PRIVATE") {
        value = private_;
      } else if (name == "HAS_X11") {
        value = x11_seen_;
      } else if (name == "BROWSER_DISABLE_U2F") {
        value = true;  // firejail.config default (checkcfg.c:49-65)
      } else if (name == "BROWSER_ALLOW_DRM" || name == "ALLOW_TRAY") {
        value = false;
      } else {
        Error(&at, "invalid/unsupported conditional '" + CommentText(name) + "'");
        return;
      }
      if (StartsWith(rest, "include") || StartsWith(rest, "quiet")) {
        Error(&at, "'include' and 'quiet' are not allowed after a conditional");
        return;
      }
      if (!value || rest.empty()) return;
      line = rest;
    }
    if (InIgnore(line)) return;
    if (StartsWith(line, "ignore ")) {
      if (ignore_.size() >= kMaxIgnore) {
        Error(&at, "maximum 32 ignore commands (firejail refuses more)");
        return;
      }
      ignore_.push_back(line.substr(7));
      return;
    }
    Dispatch(at, line);
  }

  // The commands of firejail 0.9.72 (profile.c:280-1680), each checked and
  // put on the list; an unknown one is fatal in firejail and an error here.
  void Dispatch(const Entry& at, const std::string& line) {
    static const std::set<std::string> kFlags = {"ipc-namespace",
                                                 "noroot",
                                                 "nonewprivs",
                                                 "seccomp",
                                                 "caps",
                                                 "caps.drop all",
                                                 "shell none",
                                                 "tracelog",
                                                 "private",
                                                 "tab",
                                                 "private-cwd",
                                                 "allusers",
                                                 "private-cache",
                                                 "private-dev",
                                                 "keep-dev-shm",
                                                 "private-tmp",
                                                 "nogroups",
                                                 "nosound",
                                                 "noautopulse",
                                                 "notv",
                                                 "nodvd",
                                                 "novideo",
                                                 "no3d",
                                                 "noprinters",
                                                 "noinput",
                                                 "nodbus",
                                                 "nou2f",
                                                 "netfilter",
                                                 "netlock",
                                                 "net none",
                                                 "apparmor",
                                                 "apparmor-replace",
                                                 "apparmor-stack",
                                                 "seccomp.block-secondary",
                                                 "memory-deny-write-execute",
                                                 "restrict-namespaces",
                                                 "writable-etc",
                                                 "machine-id",
                                                 "keep-config-pulse",
                                                 "writable-var",
                                                 "keep-var-tmp",
                                                 "writable-run-user",
                                                 "writable-var-log",
                                                 "allow-debuggers",
                                                 "x11 none",
                                                 "x11 xephyr",
                                                 "x11 xorg",
                                                 "x11 xpra",
                                                 "x11 xvfb",
                                                 "x11",
                                                 "overlay-tmpfs",
                                                 "overlay",
                                                 "disable-mnt",
                                                 "deterministic-exit-code",
                                                 "deterministic-shutdown",
                                                 "private-lib"};
    static const char* const kWithArg[] = {"keep-fd",
                                           "xephyr-screen",
                                           "mkdir",
                                           "mkfile",
                                           "name",
                                           "private-home",
                                           "private-cwd",
                                           "dbus-user",
                                           "dbus-system",
                                           "dbus-user.see",
                                           "dbus-user.talk",
                                           "dbus-user.own",
                                           "dbus-user.call",
                                           "dbus-user.broadcast",
                                           "dbus-system.see",
                                           "dbus-system.talk",
                                           "dbus-system.own",
                                           "dbus-system.call",
                                           "dbus-system.broadcast",
                                           "netfilter",
                                           "netfilter6",
                                           "netns",
                                           "net",
                                           "veth-name",
                                           "iprange",
                                           "mac",
                                           "mtu",
                                           "netmask",
                                           "ip",
                                           "ip6",
                                           "defaultgw",
                                           "apparmor",
                                           "protocol",
                                           "env",
                                           "rmenv",
                                           "seccomp",
                                           "seccomp.32",
                                           "seccomp.drop",
                                           "seccomp.32.drop",
                                           "seccomp.keep",
                                           "seccomp.32.keep",
                                           "restrict-namespaces",
                                           "seccomp-error-action",
                                           "caps.drop",
                                           "caps.keep",
                                           "hostname",
                                           "hosts-file",
                                           "dns",
                                           "cpu",
                                           "nice",
                                           "private",
                                           "private-etc",
                                           "private-opt",
                                           "private-srv",
                                           "private-bin",
                                           "private-lib",
                                           "overlay-named",
                                           "bind",
                                           "rlimit-nofile",
                                           "rlimit-cpu",
                                           "rlimit-nproc",
                                           "rlimit-fsize",
                                           "rlimit-sigpending",
                                           "rlimit-as",
                                           "timeout",
                                           "join-or-start",
                                           "blacklist",
                                           "blacklist-nolog",
                                           "noblacklist",
                                           "whitelist",
                                           "nowhitelist",
                                           "read-only",
                                           "read-write",
                                           "noexec",
                                           "tmpfs"};
    if (kFlags.count(line)) {
      Flag(at, line);
      return;
    }
    size_t space = line.find(' ');
    if (space != std::string::npos) {
      const std::string cmd = line.substr(0, space);
      const std::string arg = line.substr(space + 1);
      for (const char* c : kWithArg) {
        if (cmd == c) {
          WithArg(at, cmd, arg);
          return;
        }
      }
    }
    Error(&at, "line " + std::to_string(at.line) + " is invalid: unknown command '" +
                   CommentText(line.substr(0, std::min(line.size(), space))) +
                   "' (firejail refuses the profile)");
  }

  // State firejail sets while reading (the conditionals read it).
  void Flag(const Entry& at, const std::string& f) {
    if (f == "net none") net_none_ = true;
    if (f == "nosound") nosound_ = true;
    if (f == "private") private_ = true;
    if (f == "x11 none" || f == "x11 xorg") x11_seen_ = true;
    if (f == "nodbus") dbus_user_ = dbus_system_ = "none";
    if (f == "allow-debuggers") allow_debuggers_ = true;
    Push(at, f, "");
  }

  void WithArg(const Entry& at, const std::string& cmd, const std::string& arg) {
    if (cmd == "dbus-user" || cmd == "dbus-system") {
      std::string& policy = cmd == "dbus-user" ? dbus_user_ : dbus_system_;
      if (arg == "none") {
        policy = "none";
      } else if (arg == "filter") {
        if (policy != "none") policy = "filter";  // "Cannot relax": block stays
      } else {
        Error(&at, "unknown " + cmd + " policy '" + CommentText(arg) + "'");
        return;
      }
    }
    if (cmd == "private") private_ = true;  // profile.c:1246-1251
    if (cmd == "net" && arg != "none") {
      Error(&at, "'net " + CommentText(arg) +
                     "': a bridge or interface, which Debian's firejail (restricted-network "
                     "yes) refuses to non-root users and Ward cannot say");
      return;
    }
    Push(at, cmd, arg);
  }

  // ---- macros and paths ---------------------------------------------

  // expand_macros (src/firejail/macros.c) plus ${PATH} (fs.c:429-440):
  // every path `arg` stands for, as Ward paths; empty after an error.
  std::vector<std::string> Expand(const Entry& at, const std::string& arg, bool* ok) {
    *ok = true;
    static const std::map<std::string, std::string> kXdg = {
        {"${DOWNLOADS}", "Downloads"}, {"${MUSIC}", "Music"},     {"${VIDEOS}", "Videos"},
        {"${PICTURES}", "Pictures"},   {"${DESKTOP}", "Desktop"}, {"${DOCUMENTS}", "Documents"}};
    std::vector<std::string> out;
    if (auto it = kXdg.find(arg); it != kXdg.end()) {
      out.push_back(home_ + "/" + it->second);
      return out;
    }
    std::string p = arg;
    if (StartsWith(p, "$HOME")) {
      *ok = Error(&at, "$HOME is not allowed in profile files, use ${HOME}");
      return {};
    }
    std::string rest = p;
    if (StartsWith(p, "${HOME}")) {
      rest = p.substr(7);
      p = home_ + rest;
    } else if (p[0] == '~') {
      rest = p.substr(1);
      if (!rest.empty() && rest[0] != '/' && home_ == "~") {
        *ok = Error(&at, "'" + CommentText(arg) +
                             "' is the home folder's path with text appended; give --home DIR");
        return {};
      }
      p = home_ + rest;
    } else if (StartsWith(p, "${CFG}")) {
      rest = p.substr(6);
      p = "/etc/firejail" + rest;
    } else if (StartsWith(p, "${RUNUSER}")) {
      rest = p.substr(10);
      p = "/run/user/*" + rest;
    } else if (StartsWith(p, "${PATH}")) {
      rest = p.substr(7);
      for (const char* d : kDefaultPath) out.push_back(d + rest);
      p.clear();
      Note("${PATH} is read as firejail's default PATH (" +
           std::string("/usr/local/bin:/usr/bin:"
                       "/bin:/usr/local/sbin:/"
                       "usr/sbin:/sbin") +
           "), not the $PATH of whoever runs it");
    }
    // invalid_filename (profile.c:1681-1690; src/lib/common.c).
    if (rest.find_first_of("\\&!\"<>%^{};,") != std::string::npos) {
      *ok = Error(&at, "'" + CommentText(arg) +
                           "' holds a character firejail refuses in file names (\\ & ! \" < > % "
                           "^ { } ; ,)");
      return {};
    }
    if (arg.find("..") != std::string::npos) {
      *ok = Error(&at, "'" + CommentText(arg) + "': '..' is not allowed (firejail refuses it)");
      return {};
    }
    if (!p.empty()) out.push_back(p);
    for (const std::string& o : out) {
      if (o.empty() || (o[0] != '/' && o[0] != '~')) {
        *ok = Error(&at, "'" + CommentText(arg) + "' is not an absolute path");
        return {};
      }
    }
    return out;
  }

  // A firejail glob as Ward patterns. firejail's `*` may match nothing and
  // `?`, `[...]` match one character: for a deny (`narrow`), `?` and
  // `[...]` become `*` (a superset) and each `*` also stands for its removal
  // (more than 4: the whole name becomes `*`); for an allow, a path Ward
  // cannot say is not translated (empty).
  std::vector<std::string> Patterns(const std::string& path, bool narrow) {
    std::vector<std::string> parts;
    bool tilde = path[0] == '~';
    for (const std::string& c : PathComponents(tilde ? path.substr(1) : path)) {
      if (c == ".") continue;
      parts.push_back(c);
    }
    std::vector<std::vector<std::string>> variants = {{}};
    for (std::string c : parts) {
      // `[...]` and `?` to `*`.
      std::string w;
      bool odd = false;
      for (size_t i = 0; i < c.size(); ++i) {
        if (c[i] == '?') {
          w += '*';
          odd = true;
        } else if (c[i] == '[') {
          // A bracket expression (fnmatch(3)): `[!...]`, `[]...]`, and
          // classes such as `[[:xdigit:]]` inside.
          size_t j = i + 1;
          if (j < c.size() && (c[j] == '!' || c[j] == '^')) ++j;
          if (j < c.size() && c[j] == ']') ++j;
          size_t close = std::string::npos;
          while (j < c.size()) {
            if (c[j] == '[' && j + 1 < c.size() &&
                (c[j + 1] == ':' || c[j + 1] == '.' || c[j + 1] == '=')) {
              const std::string end = std::string(1, c[j + 1]) + "]";
              size_t k = c.find(end, j + 2);
              if (k == std::string::npos) break;
              j = k + 2;
              continue;
            }
            if (c[j] == ']') {
              close = j;
              break;
            }
            ++j;
          }
          odd = true;
          if (close == std::string::npos) {
            w += c[i];  // glob(3) reads a lone '[' literally
            continue;
          }
          w += '*';
          i = close;
        } else {
          w += c[i];
        }
      }
      if (odd && !narrow) return {};
      // runs of '*' are one '*' in glob(3); Ward's '**' would cross '/'.
      std::string folded;
      for (char ch : w) {
        if (ch == '*' && !folded.empty() && folded.back() == '*') continue;
        folded += ch;
      }
      std::vector<std::string> spellings;
      const size_t stars = static_cast<size_t>(std::count(folded.begin(), folded.end(), '*'));
      if (folded == "*" || stars == 0) {
        spellings.push_back(folded);
      } else if (stars > 4) {
        if (!narrow) return {};
        spellings.push_back("*");
      } else {
        std::vector<size_t> at;
        for (size_t k = 0; k < folded.size(); ++k)
          if (folded[k] == '*') at.push_back(k);
        for (size_t mask = 0; mask < (size_t{1} << at.size()); ++mask) {
          std::string s;
          for (size_t k = 0, n = 0; k < folded.size(); ++k) {
            if (folded[k] == '*' && (mask >> n++ & 1)) continue;
            s += folded[k];
          }
          if (!s.empty()) spellings.push_back(s);
        }
      }
      std::vector<std::vector<std::string>> more;
      for (const auto& v : variants) {
        for (const std::string& s : spellings) {
          auto x = v;
          x.push_back(s);
          more.push_back(std::move(x));
        }
      }
      variants = std::move(more);
      if (variants.size() > 64) {
        if (!narrow) return {};
        for (auto& v : variants) v.back() = "*";
        std::sort(variants.begin(), variants.end());
        variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
      }
    }
    std::vector<std::string> out;
    for (const auto& v : variants) {
      std::string s = tilde ? "~" : "";
      for (const std::string& c : v) s += "/" + c;
      if (s.empty()) s = "/";
      out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // PatternMatchesPathOrAncestor, with a quick answer where the pattern's
  // text before its first '*' is not where the path starts.
  static bool Covers(const std::string& pattern, const std::string& path) {
    const size_t star = pattern.find('*');
    const size_t fixed = star == std::string::npos ? pattern.size() : star;
    if (path.compare(0, fixed, pattern, 0, fixed) != 0) return false;
    if (star == std::string::npos) {
      return path.size() == fixed || path[fixed] == '/' || pattern == "/";
    }
    return PatternMatchesPathOrAncestor(pattern, path);
  }

  // Covers, or, for an allow with a glob, whether some path it matches may
  // lie at or under what `pattern` matches (each component of `pattern` and
  // the allow's match one way or the other): a deny that may hide part of a
  // globbed allow takes it all (narrower).
  static bool CoversOrMayOverlap(const std::string& pattern, const std::string& allow) {
    if (Covers(pattern, allow)) return true;
    if (allow.find('*') == std::string::npos) return false;
    const std::vector<std::string> d =
        PathComponents(pattern[0] == '~' ? pattern.substr(1) : pattern);
    const std::vector<std::string> a = PathComponents(allow[0] == '~' ? allow.substr(1) : allow);
    if ((pattern[0] == '~') != (allow[0] == '~') || d.size() > a.size()) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      const bool both = d[i].find('*') != std::string::npos && a[i].find('*') != std::string::npos;
      if (!both && !ComponentMatches(d[i], a[i]) && !ComponentMatches(a[i], d[i])) return false;
    }
    return true;
  }

  // The rights firejail's read-only base leaves at `path` (fs_basic_fs,
  // fs_proc_sys_dev_boot): no write under the system folders, no exec under
  // /etc and /var.
  int BaseRights(const std::string& path) const {
    int r = kR | kW | kX;
    for (const FsRule& b : base_) {
      if (!b.allow && Covers(b.path, path)) r &= ~b.rights;
    }
    for (const FsRule& b : base_) {
      if (b.allow && b.path != "/" && Covers(b.path, path)) r |= b.rights;
    }
    return r;
  }

  void Add(bool allow, int rights, const std::string& path, const std::string& origin,
           FsRule::Kind kind, const std::string& exempt = "") {
    fs_.push_back({allow, rights, path, origin, kind, exempt});
    if (kind == FsRule::kBase) base_.push_back(fs_.back());
  }

  // ---- translation ---------------------------------------------------

  bool Has(const std::string& flag) const {
    return std::any_of(list_.begin(), list_.end(), [&](const Entry& e) { return e.cmd == flag; });
  }

  void Translate() {
    // The base: what the user can reach, with firejail's read-only system.
    Add(true, kR | kW | kX, "/", "", FsRule::kBase);
    const bool writable_etc = Has("writable-etc"), writable_var = Has("writable-var");
    if (!writable_etc) Add(false, kW | kX, "/etc", "", FsRule::kBase);
    if (!writable_var) Add(false, kW | kX, "/var", "", FsRule::kBase);
    for (const char* d :
         {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/proc/sys", "/sys"}) {
      Add(false, kW, d, "", FsRule::kBase);
    }
    if (Has("writable-var-log")) {
      Add(true, kW, "/var/log", "", FsRule::kBase);
    } else {
      Add(false, kR | kW | kX, "/var/log", "", FsRule::kAbsolute);
    }
    if (!Has("keep-var-tmp")) Add(false, kR | kW | kX, "/var/tmp", "", FsRule::kAbsolute);
    // restrict_users (restrict_users.c:392): /home shows the user's own home
    // only, unless allusers.
    if (!Has("allusers")) {
      Add(false, kR | kW | kX, "/home", "", FsRule::kBase);
      Add(true, kR | kW | kX, home_, "", FsRule::kBase);
    }
    for (const char* d : {"/var/lock", "/var/lib/dhcp", "/var/lib/nginx", "/var/lib/snmp",
                          "/var/lib/sudo", "/var/cache/apache2", "/var/cache/lighttpd"}) {
      Add(false, kR | kW | kX, d, "", FsRule::kAbsolute);
    }
    // fs_proc_sys_dev_boot and disable_config (fs.c:717-835).
    std::vector<std::string> hard = {"/sys/firmware",
                                     "/sys/hypervisor",
                                     "/sys/power",
                                     "/sys/kernel/debug",
                                     "/sys/kernel/vmcoreinfo",
                                     "/sys/kernel/uevent_helper",
                                     "/proc/sys/security",
                                     "/proc/sys/efi/vars",
                                     "/proc/sys/fs/binfmt_misc",
                                     "/proc/sys/kernel/core_pattern",
                                     "/proc/sys/kernel/modprobe",
                                     "/proc/sysrq-trigger",
                                     "/proc/sys/kernel/hotplug",
                                     "/proc/sys/vm/panic_on_oom",
                                     "/proc/irq",
                                     "/proc/bus",
                                     "/proc/sched_debug",
                                     "/proc/timer_list",
                                     "/proc/timer_stats",
                                     "/proc/kcore",
                                     "/proc/kallsyms",
                                     "/proc/mem",
                                     "/proc/kmem",
                                     "/selinux",
                                     "/dev/port",
                                     "/dev/kmsg",
                                     "/proc/kmsg",
                                     home_ + "/.config/firejail",
                                     "/run/firejail"};
    if (!allow_debuggers_) {
      for (const char* d : {"/usr/src/linux", "/lib/modules", "/usr/lib/debug", "/boot"})
        hard.push_back(d);
    }
    if (!Has("writable-run-user")) {
      hard.push_back("/run/user/*/gnupg");
      hard.push_back("/run/user/*/systemd");
    }
    for (const std::string& h : hard) Add(false, kR | kW | kX, h, "", FsRule::kAbsolute);

    // Later in the list than everything read (sandbox.c): /sys/fs and
    // /sys/module, private-cache's tmpfs, disable-mnt's blacklists.
    std::vector<Entry> list = list_;
    auto append = [&](const std::string& cmd, const std::string& arg, const Entry* from) {
      Entry e = from ? *from : Entry{};
      e.cmd = cmd;
      e.arg = arg;
      list.push_back(e);
    };
    append("blacklist", "/sys/fs", nullptr);
    append("blacklist", "/sys/module", nullptr);
    for (const Entry& e : list_) {
      if (e.cmd == "private-cache") append("tmpfs", "${HOME}/.cache", &e);
      if (e.cmd == "private-tmp") {
        append("whitelist", "/tmp/.X11-unix", &e);
        append("read-only", "/tmp/.X11-unix", &e);
        append("whitelist", "/tmp/sndio", &e);
        append("whitelist", "/tmp/pulse-*", &e);
      }
    }
    for (const Entry& e : list_) {
      if (e.cmd == "disable-mnt") {
        for (const char* d : {"/mnt", "/media", "/run/mount", "/run/media"})
          append("blacklist", d, &e);
        break;
      }
    }
    // noprinters adds its blacklists where it stands (profile.c:466-471).
    std::vector<Entry> expanded;
    for (const Entry& e : list) {
      if (e.cmd == "noprinters") {
        Entry b = e;
        b.cmd = "blacklist";
        b.arg = "/dev/lp*";
        expanded.push_back(b);
        b.arg = "/run/cups/cups.sock";
        expanded.push_back(b);
      }
      expanded.push_back(e);
    }
    list = std::move(expanded);

    Private(list);
    if (errors_) return;
    Whitelists(list);
    if (errors_) return;
    Ordered(list);
    if (errors_) return;
    Devices(list);
    Finish();
    Network(list);
    Syscalls(list);
    Process(list);
    Others(list);
  }

  void Private(const std::vector<Entry>& list) {
    std::vector<std::string> etc, opt, srv, bins;
    bool has_etc = false, has_opt = false, has_srv = false, has_bin = false;
    const Entry* etc_at = nullptr;
    const Entry* bin_at = nullptr;
    const Entry* opt_at = nullptr;
    const Entry* srv_at = nullptr;
    for (const Entry& e : list) {
      const std::string at = e.Place(top_);
      if (e.cmd == "private" && e.arg.empty()) {
        Add(false, kR | kW | kX, home_, at, FsRule::kAbsolute);
        Add(false, kR | kW | kX, "/root", at, FsRule::kAbsolute);
        Warn(e,
             "'private' gives an empty, writable home that is lost at exit; Ward cannot "
             "give an empty folder: the home is denied (narrower)");
      } else if (e.cmd == "private" || e.cmd == "private-home") {
        Add(false, kR | kW | kX, home_, at, FsRule::kAbsolute);
        Warn(e, "'" + e.cmd + " " + CommentText(e.arg) +
                    "' replaces the home with another folder's contents; Ward cannot "
                    "remap it: the home is denied (narrower)");
      } else if (e.cmd == "private-etc" || e.cmd == "private-opt" || e.cmd == "private-srv" ||
                 e.cmd == "private-bin") {
        std::vector<std::string>* into = e.cmd == "private-etc"   ? &etc
                                         : e.cmd == "private-opt" ? &opt
                                         : e.cmd == "private-srv" ? &srv
                                                                  : &bins;
        (e.cmd == "private-etc"   ? has_etc
         : e.cmd == "private-opt" ? has_opt
         : e.cmd == "private-srv" ? has_srv
                                  : has_bin) = true;
        (e.cmd == "private-etc"   ? etc_at
         : e.cmd == "private-opt" ? opt_at
         : e.cmd == "private-srv" ? srv_at
                                  : bin_at) = &e;
        for (std::string item : Split(e.arg, ',')) {
          item = Trim(item);
          if (item.empty()) continue;
          if (item.find("..") != std::string::npos ||
              (e.cmd != "private-bin" && (item[0] == '/' || item[0] == '~'))) {
            Error(&e, "'" + CommentText(item) +
                          "' is not a name inside the folder (firejail "
                          "refuses it)");
            return;
          }
          if (item.find_first_of("\\&!\"<>%^{};") != std::string::npos) {
            Error(&e, "'" + CommentText(item) + "' holds a character firejail refuses");
            return;
          }
          into->push_back(item);
        }
      }
    }
    auto copies = [&](const char* dir, const std::vector<std::string>& items, const Entry* at,
                      int rights) {
      Add(false, kR | kW | kX, dir, at->Place(top_), FsRule::kHide);
      for (const std::string& item : items) {
        if (item == "none") continue;
        auto pats = Patterns(std::string(dir) + "/" + item, false);
        if (pats.empty()) {
          Warn(*at, "'" + at->cmd + " " + CommentText(item) +
                        "': a glob Ward cannot say; not kept (narrower)");
        }
        for (const std::string& p : pats) Add(true, rights, p, at->Place(top_), FsRule::kKeep);
      }
    };
    if (has_etc) {
      copies("/etc", etc, etc_at, kR);
      copies("/usr/etc", etc, etc_at, kR);
      Note(
          "private-etc, private-opt, private-srv and private-bin copy what they list: the "
          "copies are readable here, never writable (firejail's copies are, but changes are "
          "lost at exit)");
    }
    if (has_opt) copies("/opt", opt, opt_at, kR | kX);
    if (has_srv) copies("/srv", srv, srv_at, kR | kX);
    if (has_bin) {
      std::vector<std::string> names;
      for (const std::string& b : bins) {
        size_t slash = b.rfind('/');
        names.push_back(slash == std::string::npos ? b : b.substr(slash + 1));
      }
      for (const char* d : kBinDirs) copies(d, names, bin_at, kR | kX);
      Note(
          "private-bin: each listed name is allowed in every bin folder (firejail copies "
          "the first one found into all of them); a symlink's target is not allowed by name "
          "(narrower)");
    }
    for (const Entry& e : list) {
      if (e.cmd != "private-dev") continue;
      Add(false, kR | kW | kX, "/dev", e.Place(top_), FsRule::kHide);
      std::vector<std::string> keep = {"/dev/null",    "/dev/zero",   "/dev/full", "/dev/random",
                                       "/dev/urandom", "/dev/tty",    "/dev/tty0", "/dev/console",
                                       "/dev/pts",     "/dev/ptmx",   "/dev/log",  "/dev/stdin",
                                       "/dev/stdout",  "/dev/stderr", "/dev/fd"};
      if (Has("keep-dev-shm")) keep.push_back("/dev/shm");
      for (const auto& [dev, flag] : DeviceGroups()) {
        if (!Has(flag)) keep.push_back(dev);
      }
      for (const std::string& k : keep) Add(true, kR | kW, k, e.Place(top_), FsRule::kKeep);
      Warn(e,
           "'private-dev' gives a new /dev with a fixed set of devices; Ward allows those "
           "and denies the rest of /dev (/dev/shm too" +
               std::string(Has("keep-dev-shm") ? ", unless keep-dev-shm" : "") + ": narrower)");
      break;
    }
    for (const Entry& e : list) {
      if (e.cmd == "private-lib") {
        Warn(e, "'private-lib' is off in firejail.config (private-lib no): no effect");
      }
    }
  }

  static std::vector<std::pair<std::string, std::string>> DeviceGroups() {
    std::vector<std::pair<std::string, std::string>> out = {{"/dev/snd", "nosound"},
                                                            {"/dev/dri", "no3d"}};
    for (int i = 0; i < 10; ++i) out.push_back({"/dev/nvidia" + std::to_string(i), "no3d"});
    for (const char* d : {"/dev/nvidiactl", "/dev/nvidia-modeset", "/dev/nvidia-uvm"})
      out.push_back({d, "no3d"});
    for (int i = 0; i < 10; ++i) out.push_back({"/dev/video" + std::to_string(i), "novideo"});
    out.push_back({"/dev/dvb", "notv"});
    out.push_back({"/dev/sr0", "nodvd"});
    for (int i = 0; i < 10; ++i) out.push_back({"/dev/hidraw" + std::to_string(i), "nou2f"});
    out.push_back({"/dev/usb", "nou2f"});
    out.push_back({"/dev/input", "noinput"});
    return out;
  }

  // extract_topdir (fs_whitelist.c:514-557).
  std::string TopDir(const std::string& p) const {
    if (p == home_ || StartsWith(p, home_ + "/")) return home_;
    if (StartsWith(p, "/run/user/*/") || p == "/run/user/*") return "/run/user/*";
    if (StartsWith(p, "/sys/module/")) return "/sys/module";
    std::vector<std::string> c = PathComponents(p);
    if (c.empty()) return "/";
    if (c[0] == "usr" && c.size() >= 2) return "/usr/" + c[1];
    return "/" + c[0];
  }

  void Whitelists(const std::vector<Entry>& list) {
    std::set<std::string> nowhitelist;
    std::set<std::string> tops;
    for (const Entry& e : list) {
      bool ok = true;
      if (e.cmd == "nowhitelist") {
        for (const std::string& p : Expand(e, e.arg, &ok)) nowhitelist.insert(Join(p));
        if (!ok) return;
        continue;
      }
      if (e.cmd != "whitelist") continue;
      if (StartsWith(e.arg, "${PATH}")) {
        Error(&e, "whitelist ${PATH}/...: not an absolute path (firejail refuses it)");
        return;
      }
      std::vector<std::string> paths = Expand(e, e.arg, &ok);
      if (!ok) return;
      for (const std::string& p0 : paths) {
        std::string p = p0 == "~" || p0 == "/" ? p0 : Join(p0);
        if (nowhitelist.count(p)) continue;
        const std::string top = TopDir(p);
        if (top == "/" || top == "/proc" || top == "/sys") {
          Error(&e, "whitelisting under '" + top + "' is not allowed (firejail refuses it)");
          return;
        }
        if (p == top) {
          Error(&e, "'whitelist " + CommentText(e.arg) +
                        "' names a top-level folder itself (firejail refuses it)");
          return;
        }
        if (private_ && top == home_) continue;  // skipped under `private`
        if (StartsWith(p, "/run/firejail")) continue;
        if (tops.insert(top).second) Add(false, kR | kW | kX, top, e.Place(top_), FsRule::kHide);
        auto pats = Patterns(p, false);
        if (pats.empty()) {
          Warn(e, "'whitelist " + CommentText(e.arg) +
                      "': a glob Ward cannot say; not kept (narrower: the folder stays hidden)");
        }
        for (const std::string& q : pats)
          Add(true, BaseRights(q), q, e.Place(top_), FsRule::kWhitelist);
      }
    }
    if (!tops.empty()) {
      Note("whitelist: each top folder a whitelist names (" + Summary(tops) +
           ") is hidden but for the whitelisted paths; firejail mounts an empty, writable "
           "tmpfs there, which Ward cannot give: new files there are refused (narrower)");
    }
  }

  static std::string Summary(const std::set<std::string>& s) {
    std::string out;
    for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
    return out;
  }

  std::string Join(const std::string& p) const {
    bool tilde = p[0] == '~';
    std::string s = tilde ? "~" : "";
    for (const std::string& c : PathComponents(tilde ? p.substr(1) : p)) {
      if (c != ".") s += "/" + c;
    }
    return s.empty() ? "/" : s;
  }

  // fs_blacklist (fs.c): the list in order.
  void Ordered(const std::vector<Entry>& list) {
    std::vector<std::string> noblacklist;
    for (const Entry& e : list) {
      const std::string& c = e.cmd;
      if (c != "blacklist" && c != "blacklist-nolog" && c != "noblacklist" && c != "read-only" &&
          c != "read-write" && c != "noexec" && c != "tmpfs") {
        continue;
      }
      bool ok = true;
      std::vector<std::string> paths = Expand(e, e.arg, &ok);
      if (!ok) return;
      const std::string at = e.line ? e.Place(top_) : "";
      for (const std::string& p0 : paths) {
        const std::string p = p0 == "~" ? p0 : Join(p0);
        if (c == "noblacklist") {
          noblacklist.push_back(p);
          continue;
        }
        if (c == "blacklist" || c == "blacklist-nolog") {
          bool skipped = false;
          for (const std::string& n : noblacklist) {
            if (fnmatch(n.c_str(), p.c_str(), FNM_PATHNAME) == 0) {
              skipped = true;
              break;
            }
          }
          if (skipped) continue;
          const std::vector<std::string> denied = Patterns(p, true);
          for (const std::string& q : denied) Add(false, kR | kW | kX, q, at, FsRule::kAbsolute);
          // A noblacklist that matches some of what a glob blacklist
          // matches exempts those: an allow of its own, more specific than
          // the glob, with the rights the path has without the blacklist.
          for (const std::string& n : noblacklist) {
            if (fnmatch(p.c_str(), n.c_str(), FNM_PATHNAME) != 0) continue;
            auto pats = Patterns(n, false);
            if (pats.empty()) {
              Warn(e, "'noblacklist " + CommentText(n) + "' exempts part of what '" + c + " " +
                          CommentText(e.arg) +
                          "' matches, in a glob Ward cannot say: all of it is denied "
                          "(narrower)");
              continue;
            }
            for (const std::string& q : pats) {
              for (const std::string& d : denied) {
                if (Covers(d, q)) Add(true, BaseRights(q), q, at, FsRule::kCarve, d);
              }
            }
          }
        } else if (c == "read-only") {
          for (const std::string& q : Patterns(p, true)) {
            for (FsRule& r : fs_) {
              if (r.allow &&
                  (r.kind == FsRule::kWhitelist || r.kind == FsRule::kReadWrite ||
                   r.kind == FsRule::kCarve) &&
                  CoversOrMayOverlap(q, r.path)) {
                r.rights &= ~kW;
              }
            }
            Add(false, kW, q, at, FsRule::kReadOnly);
          }
        } else if (c == "read-write") {
          auto pats = Patterns(p, false);
          if (pats.empty()) {
            Warn(e, "'read-write " + CommentText(e.arg) +
                        "': a glob Ward cannot say; not translated (narrower)");
          }
          for (const std::string& q : pats) {
            if (!(BaseRights(q) & kW)) {
              Warn(e, "'read-write " + CommentText(e.arg) +
                          "' is under a folder firejail mounts read-only, which it remounts "
                          "for the owner only; not translated (narrower)");
              continue;
            }
            // A later read-write undoes earlier read-only at or under it.
            fs_.erase(std::remove_if(fs_.begin(), fs_.end(),
                                     [&](const FsRule& r) {
                                       return r.kind == FsRule::kReadOnly && Covers(q, r.path);
                                     }),
                      fs_.end());
            Add(true, kW, q, at, FsRule::kReadWrite);
          }
        } else if (c == "noexec") {
          for (const std::string& q : Patterns(p, true)) {
            for (FsRule& r : fs_) {
              if (r.allow && r.kind != FsRule::kBase && CoversOrMayOverlap(q, r.path))
                r.rights &= ~kX;
            }
            Add(false, kX, q, at, FsRule::kNoexec);
          }
        } else if (c == "tmpfs") {
          for (const std::string& q : Patterns(p, true))
            Add(false, kR | kW | kX, q, at, FsRule::kAbsolute);
          Warn(e, "'" +
                      (e.arg == "${HOME}/.cache" && e.line && list_.size() &&
                               std::any_of(list_.begin(), list_.end(),
                                           [&](const Entry& x) {
                                             return x.cmd == "private-cache" && x.line == e.line &&
                                                    x.file == e.file;
                                           })
                           ? std::string("private-cache")
                           : "tmpfs " + CommentText(e.arg)) +
                      "' mounts an empty, writable tmpfs; Ward cannot give an empty folder: "
                      "denied (narrower)");
        }
      }
    }
  }

  void Devices(const std::vector<Entry>& list) {
    for (const Entry& e : list) {
      bool any = false;
      for (const auto& [dev, flag] : DeviceGroups()) {
        if (e.cmd == flag) {
          Add(false, kR | kW | kX, dev, e.Place(top_), FsRule::kAbsolute);
          any = true;
        }
      }
      if (any && e.cmd == "nosound") {
        Note(
            "nosound: /dev/snd is denied; firejail also turns PulseAudio off, which needs a "
            "unix socket Ward does not grant anyway");
      }
    }
  }

  // Absolute denies (blacklist, tmpfs, the base's hidden folders) hold at
  // every depth, as a mount over a folder does: an allow under one goes. A
  // read-write allow inside a hidden folder but outside every path kept
  // there reaches nothing in firejail: it goes too.
  void Finish() {
    std::vector<FsRule> out;
    for (const FsRule& r : fs_) {
      if (r.allow && r.kind != FsRule::kBase) {
        bool gone = r.rights == 0;
        for (const FsRule& d : fs_) {
          if (gone) break;
          if (d.allow || (d.kind != FsRule::kAbsolute && d.kind != FsRule::kHide)) continue;
          if (d.kind == FsRule::kAbsolute && CoversOrMayOverlap(d.path, r.path) &&
              !(r.kind == FsRule::kCarve && r.exempt == d.path)) {
            gone = true;
          }
          if (d.kind == FsRule::kHide &&
              (r.kind == FsRule::kReadWrite || r.kind == FsRule::kCarve) &&
              Covers(d.path, r.path)) {
            bool kept = false;
            for (const FsRule& k : fs_) {
              if (k.allow && (k.kind == FsRule::kWhitelist || k.kind == FsRule::kKeep) &&
                  Covers(k.path, r.path)) {
                kept = true;
              }
            }
            if (!kept) gone = true;
          }
        }
        if (gone) continue;
      }
      out.push_back(r);
    }
    // One rule per (allow, rights, path): the first one's origin.
    std::set<std::tuple<bool, int, std::string>> seen;
    fs_.clear();
    for (const FsRule& r : out) {
      if (r.rights == 0) continue;
      if (!seen.insert({r.allow, r.rights, r.path}).second) continue;
      fs_.push_back(r);
    }
  }

  // ---- network -------------------------------------------------------

  void Network(const std::vector<Entry>& list) {
    std::set<std::string> families;
    bool protocol = false;
    for (const Entry& e : list) {
      if (e.cmd != "protocol") continue;
      // profile_list_augment (profile.c:1892-1997): `=x` resets, `-x`
      // removes, `+x` or `x` adds.
      for (std::string item : Split(e.arg, ',')) {
        item = Trim(item);
        if (item.empty()) continue;
        char op = '+';
        if (item[0] == '+' || item[0] == '-' || item[0] == '=') {
          op = item[0];
          item = item.substr(1);
        }
        static const std::set<std::string> kKnown = {"unix",    "inet",   "inet6",
                                                     "netlink", "packet", "bluetooth"};
        if (!kKnown.count(item)) {
          Error(&e, "protocol '" + CommentText(item) +
                        "' is not one firejail knows (unix, inet, inet6, netlink, packet, "
                        "bluetooth)");
          return;
        }
        if (op == '=') families.clear();
        if (op == '-') {
          families.erase(item);
        } else {
          families.insert(item);
        }
      }
      protocol = true;
      protocol_at_ = e.Place(top_);
    }
    if (protocol) protocol_ = families;
    has_protocol_ = protocol;
    const bool none = Has("net none");
    const bool v4 = !protocol || families.count("inet");
    const bool v6 = !protocol || families.count("inet6");
    if (none) {
      Note(
          "net none: a network namespace of its own with only `lo`: no connection leaves it "
          "(the program's own loopback is lost too: narrower)");
      return;
    }
    if (v4 && v6) {
      net_.push_back("allow to any");
      net_.push_back("allow ingress from any");
    } else if (v4) {
      net_.push_back("allow to 0.0.0.0/0");
      net_.push_back("allow ingress from 0.0.0.0/0");
    } else if (v6) {
      net_.push_back("allow to ::/0");
      net_.push_back("allow ingress from ::/0");
    }
    if (!protocol || families.count("netlink")) net_.push_back("allow netlink route");
    Note(
        "network: firejail shares the host's network unless `net none`; Ward grants no unix "
        "socket by name here (narrower: X11, D-Bus, PulseAudio and every other unix socket "
        "the program did not create are refused), nor raw or packet sockets");
  }

  // ---- syscalls ------------------------------------------------------

  static const char* GroupList(const std::string& name) {
    for (const GroupDef& g : kGroups) {
      if (name == g.name) return g.list;
    }
    return nullptr;
  }

  static bool FirejailKnows(const std::string& name) {
    for (const SyscallDef& s : kX86_64) {
      if (name == s.name) return true;
    }
    return false;
  }

  // Expands a group recursively into `out`.
  bool ExpandGroup(const std::string& name, std::set<std::string>* out, int depth = 0) {
    const char* list = GroupList(name);
    if (!list || depth > 8) return false;
    for (const std::string& item : Split(list, ',')) {
      if (item.empty()) continue;
      if (item[0] == '@') {
        ExpandGroup(item, out, depth + 1);
      } else {
        out->insert(item);
      }
    }
    return true;
  }

  struct Action {
    std::string text;  // "errno EPERM", "kill", "log"
  };

  // A seccomp list (syscall.c:1549-1659): names, $N, @groups, name:ERRNO,
  // name:kill, !name. `actions` gets name -> action; `except` the !names.
  bool SeccompList(const Entry& e, const std::string& list, const std::string& deflt,
                   std::map<std::string, std::string>* actions, std::set<std::string>* except) {
    if (list.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,:@$!-") !=
        std::string::npos) {
      return Error(&e, "'" + CommentText(list) +
                           "': a seccomp list holds only letters, digits "
                           "and _ , : @ $ ! - (firejail refuses it)");
    }
    for (std::string item : Split(list, ',')) {
      if (item.empty()) continue;
      bool neg = item[0] == '!';
      if (neg) item = item.substr(1);
      std::string action = deflt;
      size_t colon = item.find(':');
      if (colon != std::string::npos) {
        const std::string a = item.substr(colon + 1);
        item = item.substr(0, colon);
        if (a == "kill") {
          action = "kill";
        } else if (LookupErrno(a)) {
          action = "errno " + a;
        } else {
          return Error(&e, "'" + CommentText(a) + "' is not an errno name firejail knows");
        }
      }
      std::set<std::string> names;
      if (!item.empty() && item[0] == '@') {
        if (!ExpandGroup(item, &names))
          return Error(&e, "unknown seccomp group '" + CommentText(item) + "'");
      } else if (!item.empty() && item[0] == '$') {
        const std::string digits = item.substr(1);
        if (digits.empty() || digits.size() > 6 ||
            digits.find_first_not_of("0123456789") != std::string::npos) {
          return Error(&e, "'" + CommentText(item) + "' is not a syscall number");
        }
        bool found = false;
        for (const SyscallDef& s : kX86_64) {
          if (s.nr == std::stoi(digits)) {
            names.insert(s.name);
            found = true;
          }
        }
        if (!found) {
          Warn(e, "'" + CommentText(item) +
                      "' is no x86_64 syscall firejail knows; dropped, "
                      "as firejail drops it");
        }
      } else if (FirejailKnows(item)) {
        names.insert(item);
      } else {
        Warn(e, "'" + CommentText(item) +
                    "' is no syscall firejail 0.9.72 knows on x86_64; dropped, as firejail "
                    "drops it without a word");
      }
      for (const std::string& n : names) {
        if (neg) {
          except->insert(n);
        } else if (!actions->count(n)) {
          (*actions)[n] = action;
        }
      }
    }
    return true;
  }

  void Syscalls(const std::vector<Entry>& list) {
    const Entry* plain = nullptr;
    const Entry* with_list = nullptr;
    const Entry* drop = nullptr;
    const Entry* keep = nullptr;
    const Entry* mdwx = nullptr;
    const Entry* block_secondary = nullptr;
    std::vector<const Entry*> restrict_ns;
    std::string error_action = "errno EPERM";
    for (const Entry& e : list) {
      if (e.cmd == "seccomp" && e.arg.empty()) plain = &e;
      if (e.cmd == "seccomp" && !e.arg.empty()) with_list = &e;
      if (e.cmd == "seccomp.drop") drop = &e;
      if (e.cmd == "seccomp.keep") keep = &e;
      if (e.cmd == "memory-deny-write-execute") mdwx = &e;
      if (e.cmd == "seccomp.block-secondary") block_secondary = &e;
      if (e.cmd == "restrict-namespaces") restrict_ns.push_back(&e);
      if (e.cmd == "seccomp-error-action") {
        if (e.arg == "kill") {
          error_action = "kill";
        } else if (e.arg == "log") {
          error_action = "log";
        } else if (LookupErrno(e.arg)) {
          error_action = "errno " + e.arg;
        } else {
          Error(&e, "seccomp-error-action '" + CommentText(e.arg) + "': kill, log or an errno");
          return;
        }
      }
      if (e.cmd == "seccomp.32" || e.cmd == "seccomp.32.drop" || e.cmd == "seccomp.32.keep") {
        Warn(e, "'" + e.cmd +
                    "' filters i386 calls, which Ward kills on x86_64 whatever the "
                    "rules say: no effect (Ward is narrower)");
      }
    }
    std::map<std::string, std::string> actions;
    std::set<std::string> except;
    const std::string default_group = allow_debuggers_ ? "@default" : "@default-nodebuggers";
    default_action_ = "allow";
    if (keep) {
      seccomp_on_ = true;
      std::set<std::string> kept;
      std::map<std::string, std::string> tmp;
      if (!SeccompList(*keep, keep->arg, "allow", &tmp, &except)) return;
      ExpandGroup("@default-keep", &kept);
      for (const auto& [n, a] : tmp) kept.insert(n);
      default_action_ = error_action;
      for (const std::string& n : kept) actions[n] = "allow";
      seccomp_origin_ = keep->Place(top_);
    } else if (drop) {
      seccomp_on_ = true;
      if (!SeccompList(*drop, drop->arg, error_action, &actions, &except)) return;
      seccomp_origin_ = drop->Place(top_);
    } else if (with_list || plain || block_secondary) {
      seccomp_on_ = true;
      const Entry* at = with_list ? with_list : plain ? plain : block_secondary;
      std::set<std::string> deflt;
      ExpandGroup(default_group, &deflt);
      if (with_list && !SeccompList(*with_list, with_list->arg, error_action, &actions, &except))
        return;
      for (const std::string& n : deflt) {
        if (!actions.count(n)) actions[n] = error_action;
      }
      seccomp_origin_ = at->Place(top_);
    }
    for (const std::string& n : except) {
      if (actions.count(n) && actions[n] != "allow") actions.erase(n);
    }
    if (block_secondary) {
      Note(
          "seccomp.block-secondary: Ward kills every call of another ABI (i386, x32) "
          "anyway; without it firejail filters i386 calls with its 32-bit list and allows the "
          "rest (Ward is narrower)");
    }
    // Names Ward's x86_64 table lacks cannot be refused: an error.
    for (const auto& [n, a] : actions) {
      if (!SyscallNumber(Arch::kX86_64, n)) {
        Error(nullptr, "firejail's seccomp list names '" + n +
                           "', which Ward's x86_64 table does not know; dropping it would "
                           "widen");
        return;
      }
    }
    std::map<std::string, std::vector<std::string>> by_action;
    for (const auto& [n, a] : actions) {
      if (a == default_action_) continue;
      by_action[a].push_back(n);
    }
    for (const auto& [a, names] : by_action) {
      std::string rule = a + " ";
      for (size_t i = 0; i < names.size(); ++i) rule += (i ? ", " : "") + names[i];
      sys_.push_back({rule, seccomp_origin_});
    }
    auto unconditional = [&](const std::string& n) {
      auto it = actions.find(n);
      return it != actions.end() && it->second != default_action_;
    };
    if (mdwx) {
      seccomp_on_ = true;
      const std::string at = mdwx->Place(top_);
      if (!unconditional("mmap"))
        sys_.push_back({error_action + " mmap if arg2 & 0x6 == 0x6", at});  // PROT_WRITE|PROT_EXEC
      for (const char* n : {"mprotect", "pkey_mprotect"}) {
        if (!unconditional(n))
          sys_.push_back({error_action + " " + n + " if arg2 & PROT_EXEC == PROT_EXEC", at});
      }
      if (!unconditional("shmat"))
        sys_.push_back({error_action + " shmat if arg2 & 0x8000 == 0x8000", at});  // SHM_EXEC
      if (!unconditional("memfd_create")) sys_.push_back({error_action + " memfd_create", at});
    }
    if (!restrict_ns.empty()) {
      seccomp_on_ = true;
      std::set<std::string> kinds;
      std::string at;
      for (const Entry* e : restrict_ns) {
        at = e->Place(top_);
        if (e->arg.empty()) {
          for (const char* k : {"cgroup", "ipc", "net", "mnt", "pid", "time", "user", "uts"})
            kinds.insert(k);
          continue;
        }
        for (std::string k : Split(e->arg, ',')) {
          k = Trim(k);
          static const std::set<std::string> kOk = {"cgroup", "ipc",  "net",  "mnt",
                                                    "pid",    "time", "user", "uts"};
          if (!kOk.count(k)) {
            Error(e, "restrict-namespaces: '" + CommentText(k) +
                         "' is not cgroup, ipc, net, mnt, pid, time, user or uts");
            return;
          }
          kinds.insert(k);
        }
      }
      static const std::map<std::string, std::string> kFlag = {
          {"cgroup", "CLONE_NEWCGROUP"}, {"ipc", "CLONE_NEWIPC"}, {"net", "CLONE_NEWNET"},
          {"mnt", "CLONE_NEWNS"},        {"pid", "CLONE_NEWPID"}, {"time", "CLONE_NEWTIME"},
          {"user", "CLONE_NEWUSER"},     {"uts", "CLONE_NEWUTS"}};
      for (const std::string& k : kinds) {
        const std::string& f = kFlag.at(k);
        // CLONE_NEWTIME means something else to clone (namespaces.c).
        if (k != "time" && !unconditional("clone"))
          sys_.push_back({error_action + " clone if arg0 & " + f + " == " + f, at});
        if (!unconditional("unshare"))
          sys_.push_back({error_action + " unshare if arg0 & " + f + " == " + f, at});
        if (!unconditional("setns"))
          sys_.push_back({error_action + " setns if arg1 & " + f + " == " + f, at});
      }
      if (!unconditional("setns")) sys_.push_back({error_action + " setns if arg1 == 0", at});
      if (!unconditional("clone3")) sys_.push_back({"errno ENOSYS clone3", at});
    }
    if (has_protocol_) {
      seccomp_on_ = true;
      static const std::map<std::string, std::string> kAf = {
          {"unix", "AF_UNIX"},       {"inet", "AF_INET"},     {"inet6", "AF_INET6"},
          {"netlink", "AF_NETLINK"}, {"packet", "AF_PACKET"}, {"bluetooth", "AF_BLUETOOTH"}};
      std::string in;
      for (const auto& [name, af] : kAf) {
        if (protocol_.count(name)) in += (in.empty() ? "" : ", ") + af;
      }
      if (!unconditional("socket")) {
        sys_.push_back({in.empty() ? "errno ENOTSUP socket"
                                   : "errno ENOTSUP socket if arg0 not in [" + in + "]",
                        protocol_at_});
      }
    }
  }

  // ---- process and limits -------------------------------------------

  void Process(const std::vector<Entry>& list) {
    bool nnp = seccomp_on_;
    const Entry* caps_entry = nullptr;
    bool drop_all = false, noroot = false, caps_default = false;
    for (const Entry& e : list) {
      if (e.cmd == "nonewprivs") nnp = true;
      if (e.cmd == "noroot") noroot = true;
      if (e.cmd == "caps.drop all") drop_all = true;
      if (e.cmd == "caps") caps_default = true;
      if (e.cmd == "caps.drop" || e.cmd == "caps.keep") caps_entry = &e;
      if (StartsWith(e.cmd, "rlimit-")) {
        const std::string& v = e.arg;
        uint64_t n = 0;
        bool ok = !v.empty() && v.size() <= 19;
        uint64_t mult = 1;
        std::string digits = v;
        if (ok && (e.cmd == "rlimit-as" || e.cmd == "rlimit-fsize")) {
          char u = static_cast<char>(std::tolower(static_cast<unsigned char>(v.back())));
          if (u == 'k' || u == 'm' || u == 'g') {
            mult = u == 'k' ? 1024 : u == 'm' ? 1024 * 1024 : 1024ull * 1024 * 1024;
            digits = v.substr(0, v.size() - 1);
          }
        }
        ok = ok && !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
        if (ok) n = std::stoull(digits) * mult;
        if (!ok || (n == 0 && mult != 1)) {
          Error(&e, "'" + e.cmd + " " + CommentText(v) + "': not a number firejail accepts");
          return;
        }
        if (e.cmd == "rlimit-nofile") {
          if (n == 0) {
            Warn(e,
                 "'rlimit-nofile 0' leaves no file descriptor; Ward's open_files must be at "
                 "least 1: not translated (wider)");
          } else {
            limits_.push_back({"open_files " + std::to_string(n), e.Place(top_)});
          }
        } else {
          Warn(e, "'" + e.cmd +
                      "' has no exact Ward limit (Ward's limits are per workload, this one "
                      "per process or per user): not translated (wider)");
        }
      }
    }
    if (noroot) {
      nnp = true;
      drop_all = true;
      Note(
          "noroot: a user namespace with only the user mapped; read as no_new_privileges and "
          "every capability dropped");
    }
    if (nnp) process_.push_back("no_new_privileges");
    if (drop_all) {
      process_.push_back("capabilities drop all");
      return;
    }
    std::set<std::string> all;
    for (const std::string& c : CapabilityNames()) all.insert(c);
    std::set<std::string> kept = all;
    if (caps_entry) {
      std::set<std::string> named;
      for (std::string c : Split(caps_entry->arg, ',')) {
        c = Trim(c);
        if (c.empty()) continue;
        std::string upper = "CAP_";
        for (char ch : c) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (!all.count(upper)) {
          Error(caps_entry, "unknown capability '" + CommentText(c) + "'");
          return;
        }
        named.insert(upper);
      }
      if (caps_entry->cmd == "caps.keep") {
        kept = named;
      } else {
        for (const std::string& n : named) kept.erase(n);
      }
    } else if (caps_default) {
      for (const char* c : {"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_BOOT", "CAP_SYS_NICE",
                            "CAP_SYS_TTY_CONFIG", "CAP_SYSLOG", "CAP_MKNOD", "CAP_SYS_ADMIN"})
        kept.erase(c);
    }
    if (kept.empty()) {
      process_.push_back("capabilities drop all");
      return;
    }
    std::string keep = "capabilities keep [";
    size_t i = 0;
    for (const std::string& c : kept) keep += (i++ ? ", " : "") + c;
    process_.push_back(keep + "]");
  }

  // Commands with no Ward meaning: a warning each, saying which way.
  void Others(const std::vector<Entry>& list) {
    static const std::map<std::string, std::string> kWhy = {
        {"apparmor", "loads firejail's AppArmor profile, which Ward does not have (wider)"},
        {"apparmor-replace", "an AppArmor setting, which Ward does not have (wider)"},
        {"apparmor-stack", "an AppArmor setting, which Ward does not have (wider)"},
        {"dbus-user",
         "D-Bus filtering by name, which Ward cannot say; the session bus is a unix "
         "socket Ward does not grant here (narrower where firejail filters)"},
        {"dbus-system",
         "D-Bus filtering by name, which Ward cannot say; the system bus is a unix "
         "socket Ward does not grant here (narrower where firejail filters)"},
        {"x11",
         "runs the program on another X server, which Ward cannot do; Ward grants no unix "
         "socket here, X11's included"},
        {"ipc-namespace",
         "a new IPC namespace, which Ward cannot give (wider: System V IPC of "
         "the host stays reachable)"},
        {"nogroups", "drops supplementary groups, which Ward cannot say without a user (wider)"},
        {"machine-id",
         "a random /etc/machine-id, which Ward cannot give: the real one is denied "
         "(narrower)"},
        {"hostname", "a hostname of its own (UTS namespace), which Ward cannot give"},
        {"hosts-file", "another /etc/hosts, which Ward cannot give"},
        {"dns", "other DNS servers in /etc/resolv.conf, which Ward cannot give"},
        {"env", "sets an environment variable, which Ward cannot (no access meaning)"},
        {"rmenv",
         "removes an environment variable, which Ward cannot (wider: the variable "
         "stays)"},
        {"mkdir", "creates a folder before the start, which Ward does not"},
        {"mkfile", "creates a file before the start, which Ward does not"},
        {"netfilter",
         "applies only to a bridged `net IF`, which Debian's firejail refuses: no "
         "effect"},
        {"netfilter6",
         "applies only to a bridged `net IF`, which Debian's firejail refuses: no "
         "effect"},
        {"tracelog", "logs blacklist violations, off in firejail.config: no effect"},
        {"shell none", "deprecated in 0.9.72: no effect"},
        {"private-cwd", "sets the working folder, which has no access meaning"},
        {"join-or-start", "names the sandbox for firejail --join; no access meaning"},
        {"name", "names the sandbox; no access meaning"},
        {"deterministic-shutdown", "how firejail stops the sandbox; no access meaning"},
        {"deterministic-exit-code", "how firejail reports the exit; no access meaning"},
        {"allusers", "shows every user's home folder (read as such)"},
        {"tab", "enables shell tab completion in firejail's shell; no access meaning"},
        {"keep-fd", "keeps file descriptors open; no access meaning"},
        {"keep-config-pulse", "keeps ~/.config/pulse; no access meaning here"},
        {"noautopulse", "a PulseAudio setting; no access meaning"},
        {"netlock", "firejail's network lock-down training; not translated (wider)"},
        {"netns", "joins a named network namespace, which Ward cannot say (wider)"},
        {"veth-name", "a bridge setting; no effect without `net IF`"},
        {"iprange", "a bridge setting; no effect without `net IF`"},
        {"mac", "a bridge setting; no effect without `net IF`"},
        {"mtu", "a bridge setting; no effect without `net IF`"},
        {"netmask", "a bridge setting; no effect without `net IF`"},
        {"ip", "a bridge setting; no effect without `net IF`"},
        {"ip6", "a bridge setting; no effect without `net IF`"},
        {"defaultgw", "a bridge setting; no effect without `net IF`"},
        {"cpu", "pins the program to CPUs, which Ward cannot say"},
        {"nice", "sets the scheduling priority, which Ward cannot say"},
        {"timeout", "stops the sandbox after a time; not translated (wider)"},
        {"xephyr-screen", "an X server setting; no access meaning"},
        {"bind", "a bind mount (root only in firejail), which Ward cannot say"},
        {"overlay", "an overlay filesystem, which Ward cannot give"},
        {"overlay-tmpfs", "an overlay filesystem, which Ward cannot give"},
        {"overlay-named", "an overlay filesystem, which Ward cannot give"},
        {"allow-debuggers", "ptrace and the other debugging calls stay allowed, as read"},
        {"keep-dev-shm", "keeps /dev/shm with private-dev (read as such)"},
        {"keep-var-tmp", "keeps /var/tmp (read as such)"},
        {"writable-etc", "leaves /etc writable (read as such)"},
        {"writable-var", "leaves /var writable (read as such)"},
        {"writable-var-log", "leaves /var/log writable (read as such)"},
        {"writable-run-user", "keeps /run/user/UID/gnupg and systemd (read as such)"},
    };
    static const std::set<std::string> kTranslated = {
        "allow-debuggers", "allusers",     "keep-dev-shm",     "keep-var-tmp",
        "writable-etc",    "writable-var", "writable-var-log", "writable-run-user"};
    for (const Entry& e : list) {
      if (e.file.empty() && e.line == 0) continue;  // added by the importer
      std::string key = e.cmd;
      if (StartsWith(key, "x11")) key = "x11";
      if (StartsWith(key, "dbus-user")) key = "dbus-user";
      if (StartsWith(key, "dbus-system")) key = "dbus-system";
      if (key == "x11" && e.cmd == "x11 none") {
        continue;  // no X11 socket is granted anyway
      }
      if (key == "dbus-user" || key == "dbus-system") {
        if (e.arg == "none") continue;  // the bus is a unix socket Ward does not grant
      }
      if (kTranslated.count(key)) continue;
      auto it = kWhy.find(key);
      if (it == kWhy.end()) continue;
      if (key == "machine-id") {
        Add(false, kR | kW | kX, "/etc/machine-id", e.Place(top_), FsRule::kAbsolute);
        Add(false, kR | kW | kX, "/var/lib/dbus/machine-id", e.Place(top_), FsRule::kAbsolute);
      }
      Warn(e, "'" + CommentText(e.cmd + (e.arg.empty() ? "" : " " + e.arg)) + "' " + it->second);
    }
  }

  // ---- writing -------------------------------------------------------

  std::string Write() const {
    std::string out = "ward 1\n\n";
    out += "// Imported by `ward import --from firejail` from " + CommentText(options_.source) +
           ":\n// firejail 0.9.72 as Debian 12 ships it, with its firejail.config defaults; ~ is" +
           (home_ == "~"
                ? std::string(" the\n// home of the user the policy runs as (--home DIR sets it).")
                : "\n// " + CommentText(home_) + " (--home).") +
           "\n// firejail starts from everything the user can reach, and so does this policy:\n"
           "// its read-only system, blacklists, whitelists and private folders are rules.\n";
    if (!warnings_.empty()) {
      out += "//\n// Not translated or approximated (warnings):\n";
      for (const std::string& w : warnings_) out += "// - " + CommentText(w) + "\n";
    }
    if (!notes_.empty()) {
      out += "//\n// Notes:\n";
      for (const std::string& n : notes_) out += "// - " + CommentText(n) + "\n";
    }
    out += "\npolicy " + options_.name + " {\n";
    out += "  filesystem {\n";
    out += "    // What firejail starts from: everything the user can reach, the system\n";
    out += "    // read-only (fs_basic_fs), firejail's own hidden paths (fs_proc_sys_dev_boot).\n";
    // Rules of one origin and the same rights are written as one list.
    for (size_t i = 0; i < fs_.size();) {
      const FsRule& r = fs_[i];
      const std::string head =
          std::string("    ") + (r.allow ? "allow " : "deny ") + RightsText(r.rights) + " ";
      out += head + Quoted(r.path);
      size_t col = head.size() + Quoted(r.path).size();
      size_t j = i + 1;
      for (; j < fs_.size() && fs_[j].allow == r.allow && fs_[j].rights == r.rights &&
             fs_[j].origin == r.origin && !(r.path == "/" && r.allow);
           ++j) {
        const std::string q = Quoted(fs_[j].path);
        if (col + 2 + q.size() > 80) {
          out += ",\n        " + q;
          col = 8 + q.size();
        } else {
          out += ", " + q;
          col += 2 + q.size();
        }
      }
      if (!r.origin.empty()) out += "  // " + CommentText(r.origin);
      out += "\n";
      i = j;
    }
    out += "  }\n";
    out += "  network {\n";
    for (const std::string& n : net_) out += "    " + n + "\n";
    out += "  }\n";
    out += "  syscalls {\n";
    out += "    arch x86_64\n";
    out += "    default " + default_action_ + "\n";
    for (const auto& [rule, at] : sys_) {
      // A long list goes on over lines after a comma, as `ward fmt` lays it out.
      std::string text = "    ";
      size_t col = text.size();
      for (const std::string& piece : Split(rule, ' ')) {
        if (col > 4 && col + 1 + piece.size() > 80 && rule.find(" if ") == std::string::npos) {
          text += "\n        ";
          col = 8;
        } else if (col > 4) {
          text += " ";
          ++col;
        }
        text += piece;
        col += piece.size();
      }
      out += text + (at.empty() ? "" : "  // " + CommentText(at)) + "\n";
    }
    out += "  }\n";
    out += "  process {\n";
    for (const std::string& p : process_) out += "    " + p + "\n";
    out += "  }\n";
    if (!limits_.empty()) {
      out += "  limits {\n";
      // The last one wins, as in firejail.
      out += "    " + limits_.back().first + "  // " + CommentText(limits_.back().second) + "\n";
      out += "  }\n";
    }
    out += "}\n";
    return out;
  }

  const ImportOptions& options_;
  const FirejailEnvironment& env_;
  std::vector<ImportDiagnostic>* diagnostics_;
  std::string top_;
  std::string home_ = "~";
  size_t errors_ = 0;
  size_t lines_read_ = 0;
  std::vector<std::string> ignore_;
  std::vector<Entry> list_;
  bool net_none_ = false, nosound_ = false, private_ = false, x11_seen_ = false;
  bool allow_debuggers_ = false;
  std::string dbus_user_ = "allow", dbus_system_ = "allow";
  std::vector<std::string> warnings_, notes_;
  std::vector<std::pair<size_t, ImportDiagnostic>> warned_;
  size_t seq_ = 0;
  std::vector<FsRule> fs_, base_;
  std::vector<std::string> net_;
  std::set<std::string> protocol_;
  bool has_protocol_ = false;
  std::string protocol_at_;
  std::vector<std::pair<std::string, std::string>> sys_;
  std::string default_action_ = "allow";
  std::string seccomp_origin_;
  bool seccomp_on_ = false;
  std::vector<std::string> process_;
  std::vector<std::pair<std::string, std::string>> limits_;
};

}  // namespace

ImportResult ImportFirejailIn(std::string_view text, const ImportOptions& options,
                              const FirejailEnvironment& environment) {
  ImportResult result;
  result.ok = FirejailImporter(options, environment, &result.diagnostics).Run(text, &result.text);
  if (!result.ok) result.text.clear();
  return result;
}

ImportResult ImportFirejail(std::string_view text, const ImportOptions& options) {
  return ImportFirejailIn(text, options, FirejailEnvironment{});
}

}  // namespace ward::importers
