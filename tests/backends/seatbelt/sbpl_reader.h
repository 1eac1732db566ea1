// A reader of SBPL (the Seatbelt profile language of macOS sandbox-exec),
// written for the tests from the language's documented semantics, not from
// the seatbelt backend. It parses a profile's s-expressions and answers
// queries the way the sandbox does:
// - `(version 1)` must come first; `(deny default)` / `(allow default)` is
//   the answer when no rule matches an operation;
// - `(allow|deny OP... FILTER...)`: the rule applies to each operation
//   named (`file-read*` stands for every operation starting with
//   `file-read`), when any of its filters matches (no filter: always);
//   `file-link` (hard links, link(2)) is its own operation, not one of
//   `file-write*`: only `file*` or `file-link` names it;
// - for one operation the LAST matching rule decides;
// - filters: `(literal P)`, `(path P)`: the path itself; `(subpath P)`: P and
//   everything under it on a component boundary; `(regex R)`: a POSIX
//   extended regular expression searched in the path (written `#"..."`, a
//   string without escapes); `(require-all F...)`, `(require-any F...)`,
//   `(require-not F)`; `(remote tcp|udp|ip "HOST:PORT")` with HOST `*` or
//   `localhost` (127.0.0.0/8 and ::1) and PORT a number or `*`;
//   `(local tcp|udp|ip "HOST:PORT")` on the local port; `(remote
//   unix-socket (path-literal P))`; `(sysctl-name N)`, `(sysctl-name-prefix
//   N)`, `(global-name N)`, `(ipc-posix-name N)`, `(target self|same-sandbox)`.
// Anything else (an unknown operation, filter or form) is an error: a
// profile this reader does not understand fails the test.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ward::test::sbpl {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Query {
  std::string operation;  // "file-read-data", "network-outbound", ...
  std::string path;       // file operations; a unix socket's path
  bool unix_socket = false;
  std::string protocol;  // "tcp" or "udp"
  std::string address;   // the remote address ("10.0.0.1", "::1")
  uint16_t port = 0;     // remote port (outbound), local port (inbound, bind)
  std::string name;      // sysctl, mach service or POSIX IPC name
};

class Profile {
 public:
  explicit Profile(const std::string& text);  // throws Error
  ~Profile();
  Profile(Profile&&) noexcept;
  bool Allows(const Query& q) const;
  // Every operation some rule names (for "never unrestricted" checks).
  struct RuleInfo {
    bool allow;
    std::vector<std::string> operations;
    size_t filters;  // 0: unconditional
  };
  std::vector<RuleInfo> Rules() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ward::test::sbpl
