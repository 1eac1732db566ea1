// One test per diagnostic code of the front end (language/codes.h), each
// asserting the whole rendered text: `file:line:col: severity[CODE]: message`,
// the source line, the `^~~~` under the span, the secondary spans and the
// hint. Then: no cascades, the cap, and golden files for the JSON rendering.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "language/check.h"
#include "language/parser.h"
#include "tests/language/frontend_fixture.h"

namespace ward {
namespace {

using test::CheckSource;
using test::MatchesGolden;

// The 1-based number and the text of the first line of `path` that starts
// with `prefix`; {0, ""} when there is none.
std::pair<int, std::string> FindLine(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind(prefix, 0) == 0) return {n, line};
  }
  return {0, ""};
}

// ---- W0xxx: the text does not parse ---------------------------------------

TEST_CASE("W0001 syntax-error: a syntax error names the token and what would fit",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem {
    read "/usr"
  }
}
)");
  CHECK(r->text == R"(test.ward:3:5: error[W0001]: unexpected 'read'
 3 |     read "/usr"
   |     ^~~~
  = hint: expected 'allow', 'deny' or '}'
)");
}

TEST_CASE("W0001 syntax-error: two values in a row suggest the missing comma", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem {
    allow read "/usr" "/lib"
  }
}
)");
  CHECK(r->text == R"(test.ward:3:23: error[W0001]: unexpected '"/lib"'
 3 |     allow read "/usr" "/lib"
   |                       ^~~~~~
  = hint: put a ',' between the values of a list
)");
}

TEST_CASE("W0002 unexpected-character: a character that starts no token", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem {
    allow read /usr
  }
  network { allow tcp to any port 443 }
}
)");
  CHECK(r->text == R"(test.ward:3:16: error[W0002]: unexpected character '/'
 3 |     allow read /usr
   |                ^
  = hint: paths and domain names are written as strings
)");
}

TEST_CASE("W0003 unterminated-string: a string without its closing quote", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  description "never closed
}
)");
  CHECK(r->text == R"(test.ward:2:15: error[W0003]: unterminated string
 2 |   description "never closed
   |               ^
  = hint: strings end with " on the same line
)");
}

TEST_CASE("W0004 unterminated-comment: a block comment without */", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  /* a comment that
     never ends
}
)");
  CHECK(r->text == R"(test.ward:2:3: error[W0004]: unterminated comment
 2 |   /* a comment that
   |   ^~
  = hint: close it with */
)");
}

TEST_CASE("W0005 invalid-utf8: the first invalid byte is reported before parsing",
          "[diagnostics]") {
  // Ordinary literals: a raw string cannot hold the invalid byte \xe9.
  auto r = CheckSource("policy p {\n  description \"caf\xe9\"\n}\n");
  CHECK(r->text ==
        "test.ward:2:19: error[W0005]: invalid UTF-8 byte '\\xe9' in source\n"
        " 2 |   description \"caf\\xe9\"\n"
        "   |                   ^~~~\n"
        "  = hint: policies must be UTF-8 text\n");
}

TEST_CASE("W0006 nesting-too-deep: brackets nested over 64 levels", "[diagnostics]") {
  auto at_limit = CheckSource("let x = " + std::string(64, '[') + std::string(64, ']') + "\n");
  CHECK(at_limit->codes() == "");

  const std::string deep = std::string(65, '[') + std::string(65, ']');
  auto r = CheckSource("let x = " + deep + "\n");
  // The caret is under the 65th bracket, column 8 + 65.
  std::string expected = "test.ward:1:73: error[W0006]: nesting deeper than 64 levels\n";
  expected += " 1 | let x = " + deep + "\n";
  expected += "   | " + std::string(72, ' ') + "^\n";
  expected += "  = hint: flatten the lists\n";
  CHECK(r->text == expected);
}

TEST_CASE("W0007 file-too-large: a file over 16 MiB is refused unread", "[diagnostics]") {
  std::string text = "policy p {}\n";
  text.resize(kMaxFileBytes + 1, ' ');
  auto r = CheckSource(text);
  CHECK(r->text == R"(test.ward:1:1: error[W0007]: file is 16777217 bytes; the limit is 16777216
 1 | policy p {}
   | ^
)");
}

TEST_CASE("W0008 invalid-escape: an unknown escape in a string", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  description "tab\q and \z"
}
)");
  CHECK(r->text == R"(test.ward:2:19: error[W0008]: invalid escape '\q' in string
 2 |   description "tab\q and \z"
   |                   ^~
  = hint: the escapes are \", \\, \n, \t and \$
test.ward:2:26: error[W0008]: invalid escape '\z' in string
 2 |   description "tab\q and \z"
   |                          ^~
  = hint: the escapes are \", \\, \n, \t and \$
)");
}

TEST_CASE("W0009 unsupported-version: a language version other than 1", "[diagnostics]") {
  auto r = CheckSource(R"(ward 2

policy p {}
)");
  CHECK(r->text == R"(test.ward:1:6: error[W0009]: unsupported language version '2'
 1 | ward 2
   |      ^
  = hint: this compiler reads `ward 1`
)");
}

TEST_CASE("W0010 too-many-errors: after 50 diagnostics, one note and no more", "[diagnostics]") {
  std::string source = "policy p {\n  filesystem {\n";
  for (int i = 1; i <= 60; ++i) source += "    allow read n" + std::to_string(i) + "\n";
  source += "  }\n}\n";
  auto r = CheckSource(source);

  const std::vector<Diagnostic> shown = r->sink.Shown();
  REQUIRE(shown.size() == 51u);
  for (size_t i = 0; i < 50; ++i) CHECK(shown[i].code == Code::kUndefinedName);
  CHECK(r->sink.error_count() == 60u);
  // Every one is kept for JSON; only the text is capped.
  CHECK(r->sink.diagnostics().size() == 60u);
  // The 50th shown is n50, on line 52; the note has no location.
  CHECK_THAT(r->text, Catch::EndsWith(R"(
test.ward:52:16: error[W1006]: undefined name 'n50'
 52 |     allow read n50
    |                ^~~
   = hint: paths are strings: write "/n50", or define a let
note[W0010]: too many diagnostics; 10 not shown (dropped 10 W1006)
  = hint: errors are shown first, then security warnings (B3xxx); JSON output lists every one
)"));
  CHECK(r->text.find("'n51'") == std::string::npos);
  CHECK(r->json.find("'n60'") != std::string::npos);
}

TEST_CASE("W0010: the cap keeps errors, then security warnings, then the rest, in order",
          "[diagnostics]") {
  // 55 W1011 warnings, 3 W1020, a B3003 warning and an error, in that
  // order: arrival order would show 50 W1011 and hide the two that matter.
  SourceManager sources;
  DiagnosticSink sink;
  for (int i = 0; i < 55; ++i)
    sink.Warning(Code::kSyscallNotOnArch, {}, "w1011 " + std::to_string(i));
  for (int i = 0; i < 3; ++i) sink.Warning(Code::kHostBitsSet, {}, "w1020 " + std::to_string(i));
  sink.Warning(Code::kBypassReopened, {}, "socketcall is re-opened on x86");
  sink.Error(Code::kCannotExpress, {}, "an error");
  std::vector<Diagnostic> shown = sink.Shown();
  REQUIRE(shown.size() == 51u);
  // The 48 first W1011 in report order, then the B3003 and the error, where
  // they were reported; the note last.
  for (size_t i = 0; i < 48; ++i) CHECK(shown[i].message == "w1011 " + std::to_string(i));
  CHECK(shown[48].code == Code::kBypassReopened);
  CHECK(shown[49].code == Code::kCannotExpress);
  CHECK(shown[50].code == Code::kTooManyErrors);
  CHECK(shown[50].message == "too many diagnostics; 10 not shown (dropped 7 W1011, 3 W1020)");
  // The JSON rendering is never capped, and carries no cap note.
  const std::string json = RenderJson(sources, sink);
  size_t entries = 0;
  for (size_t at = json.find("\"code\""); at != std::string::npos;
       at = json.find("\"code\"", at + 1))
    ++entries;
  CHECK(entries == 60u);
  CHECK(json.find("W0010") == std::string::npos);
  CHECK(json.find("w1011 54") != std::string::npos);
  // Positive control: at the limit exactly, everything is shown, no note.
  DiagnosticSink small;
  for (int i = 0; i < 50; ++i) small.Warning(Code::kHostBitsSet, {}, "w");
  CHECK(small.Shown().size() == 50u);
  CHECK(small.Shown().back().code == Code::kHostBitsSet);
  CHECK_FALSE(small.full());
  // full(): only once `limit` errors are in, since nothing later can be shown.
  DiagnosticSink errors(2);
  errors.Warning(Code::kHostBitsSet, {}, "w");
  errors.Warning(Code::kHostBitsSet, {}, "w");
  CHECK_FALSE(errors.full());
  errors.Error(Code::kInvalidPath, {}, "e");
  errors.Error(Code::kInvalidPath, {}, "e");
  CHECK(errors.full());
  CHECK(errors.Shown().size() == 3u);
  CHECK(errors.Shown()[2].message == "too many diagnostics; 2 not shown (dropped 2 W1020)");
}

// ---- W1xxx: the text parses but means nothing valid ----------------------

TEST_CASE("W1001 cannot-read: an import that cannot be read, without cascading", "[diagnostics]") {
  auto r = CheckSource(R"(import "./missing.ward"
import ""

policy p extends from-missing {}
)");
  CHECK(r->text ==
        R"(test.ward:1:8: error[W1001]: cannot read './missing.ward': No such file or directory
 1 | import "./missing.ward"
   |        ^~~~~~~~~~~~~~~~
test.ward:2:8: error[W1001]: empty import path
 2 | import ""
   |        ^~
)");
}

TEST_CASE("W1002 import-cycle: an import cycle shows every import on the way", "[diagnostics]") {
  auto r = CheckSource(R"(import "./b.ward"
policy a {}
)",
                       {{"b.ward", R"(import "./c.ward"
policy b {}
)"},
                        {"c.ward", R"(import "./test.ward"
policy c {}
)"}});
  CHECK(r->text == R"(c.ward:1:8: error[W1002]: import cycle
 1 | import "./test.ward"
   |        ^~~~~~~~~~~~~
test.ward:1:8: note: imported from here
 1 | import "./b.ward"
   |        ^~~~~~~~~~
b.ward:1:8: note: imported from here
 1 | import "./c.ward"
   |        ^~~~~~~~~~
  = hint: move the shared policies into a file both can import
)");
}

TEST_CASE("W1003 duplicate-name: a policy or group defined twice shows both definitions",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy web {}

policy web {
  description "again"
}

group @tools = [read]
group @tools = [write]
)");
  CHECK(r->text == R"(test.ward:3:8: error[W1003]: policy 'web' is defined twice
 3 | policy web {
   |        ^~~
test.ward:1:8: note: first defined here
 1 | policy web {}
   |        ^~~
  = hint: rename one of them
test.ward:8:7: error[W1003]: group '@tools' is defined twice
 8 | group @tools = [write]
   |       ^~~~~~
test.ward:7:7: note: first defined here
 7 | group @tools = [read]
   |       ^~~~~~
  = hint: rename one of them
)");
}

TEST_CASE("W1004 unknown-policy: an unknown base, and one that is not imported", "[diagnostics]") {
  auto r = CheckSource(R"(import "./a.ward"

abstract policy base {}
policy web extends bsae, hidden, nothing-like-it {}
)",
                       {{"a.ward", R"(import "./b.ward"
)"},
                        {"b.ward", R"(abstract policy hidden {}
)"}});
  CHECK(r->text == R"(test.ward:4:20: error[W1004]: unknown policy 'bsae'
 4 | policy web extends bsae, hidden, nothing-like-it {}
   |                    ^~~~
  = hint: did you mean 'base'?
test.ward:4:26: error[W1004]: policy 'hidden' is not imported by this file
 4 | policy web extends bsae, hidden, nothing-like-it {}
   |                          ^~~~~~
b.ward:1:17: note: defined here
 1 | abstract policy hidden {}
   |                 ^~~~~~
  = hint: import "b.ward"
test.ward:4:34: error[W1004]: unknown policy 'nothing-like-it'
 4 | policy web extends bsae, hidden, nothing-like-it {}
   |                                  ^~~~~~~~~~~~~~~
  = hint: import the file that defines it
)");
}

TEST_CASE("W1005 extends-cycle: an extends cycle shows each extends on the way", "[diagnostics]") {
  auto r = CheckSource(R"(policy a extends b {}
policy b extends c {}
policy c extends a {}
policy d extends d {}
)");
  CHECK(r->text == R"(test.ward:3:18: error[W1005]: policy 'c' extends itself through 'a'
 3 | policy c extends a {}
   |                  ^
test.ward:2:18: note: extended here
 2 | policy b extends c {}
   |                  ^
test.ward:1:18: note: extended here
 1 | policy a extends b {}
   |                  ^
  = hint: remove one of the extends
test.ward:4:18: error[W1005]: policy 'd' extends itself
 4 | policy d extends d {}
   |                  ^
  = hint: remove one of the extends
)");
}

TEST_CASE("W1006 undefined-name: an undefined name, with the fix for its context",
          "[diagnostics]") {
  auto r = CheckSource(R"(let home = "/home/${user}"

policy p {
  filesystem { allow read workspace }
  network { allow tcp to github port 443 }
  process { env allow [PATH] }
}
)");
  CHECK(r->text == R"(test.ward:1:19: error[W1006]: undefined name 'user'
 1 | let home = "/home/${user}"
   |                   ^~~~~~~
  = hint: define it with `let user = "..."` above this line
test.ward:4:27: error[W1006]: undefined name 'workspace'
 4 |   filesystem { allow read workspace }
   |                           ^~~~~~~~~
  = hint: paths are strings: write "/workspace", or define a let
test.ward:5:26: error[W1006]: undefined name 'github'
 5 |   network { allow tcp to github port 443 }
   |                          ^~~~~~
  = hint: domain names are strings: write "github"
test.ward:6:24: error[W1006]: undefined name 'PATH'
 6 |   process { env allow [PATH] }
   |                        ^~~~
  = hint: write names as strings, e.g. "PATH"; a trailing * matches a prefix
)");
}

TEST_CASE("W1007 shadowed-name: a let defined twice or shadowing a keyword", "[diagnostics]") {
  auto r = CheckSource(R"(let dir = "/srv"
let dir = "/opt"
let any = "/x"
)");
  CHECK(r->text == R"(test.ward:2:5: error[W1007]: let 'dir' shadows an earlier let of the same name
 2 | let dir = "/opt"
   |     ^~~
test.ward:1:5: note: first defined here
 1 | let dir = "/srv"
   |     ^~~
  = hint: lets are defined once per file; rename one
test.ward:3:5: error[W1007]: let 'any' would shadow the keyword 'any'
 3 | let any = "/x"
   |     ^~~
  = hint: choose another name
)");
}

TEST_CASE("W1008 type-mismatch: a value of the wrong type", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem { allow read 42 }
  network { allow tcp to any port "443" }
  syscalls { allow @network-io if arg0 == 1 }
  limits { memory 4 }
}
)");
  CHECK(r->text ==
        R"(test.ward:2:27: error[W1008]: expected a path (a string), found an integer '42'
 2 |   filesystem { allow read 42 }
   |                           ^~
test.ward:3:35: error[W1008]: expected a port or port range, found a string "443"
 3 |   network { allow tcp to any port "443" }
   |                                   ^~~~~
test.ward:4:20: error[W1008]: conditions apply to syscalls named directly, not to groups
 4 |   syscalls { allow @network-io if arg0 == 1 }
   |                    ^~~~~~~~~~~
  = hint: write the conditional rule for each syscall
test.ward:5:19: error[W1008]: 'memory' expects a size with a unit such as 4GiB, found an integer '4'
 5 |   limits { memory 4 }
   |                   ^
)");
}

TEST_CASE("W1009 invalid-literal: a malformed literal", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network { allow tcp to 10.0.0.256, github.com port 443 }
  syscalls { allow kill if arg1 == -1 | 2 }
}
)");
  CHECK(r->text ==
        R"(test.ward:2:26: error[W1009]: invalid address '10.0.0.256': not an IPv4 address
 2 |   network { allow tcp to 10.0.0.256, github.com port 443 }
   |                          ^~~~~~~~~~
test.ward:2:38: error[W1009]: invalid address 'github.com': not an IPv4 address
 2 |   network { allow tcp to 10.0.0.256, github.com port 443 }
   |                                      ^~~~~~~~~~
  = hint: domain names are strings: write "github.com"
test.ward:3:36: error[W1009]: negative numbers cannot be or-ed
 3 |   syscalls { allow kill if arg1 == -1 | 2 }
   |                                    ^~
)");
}

TEST_CASE("W1010 unknown-syscall: an unknown syscall, with a suggestion when one is close",
          "[diagnostics]") {
  auto r = CheckSource(R"(group @mine = [zzzzzzzzzz]

policy p {
  syscalls {
    allow opne, read
  }
}
)");
  CHECK(r->text == R"(test.ward:1:16: error[W1010]: unknown syscall 'zzzzzzzzzz'
 1 | group @mine = [zzzzzzzzzz]
   |                ^~~~~~~~~~
  = hint: no architecture's kernel syscall table lists it
test.ward:5:11: error[W1010]: unknown syscall 'opne'
 5 |     allow opne, read
   |           ^~~~
  = hint: did you mean 'open' or 'openat'?
)");
}

TEST_CASE("W1011 syscall-not-on-arch: a warning when missing on every architecture, else one note",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    arch x86_64, x86
    allow open, _llseek, chown32, read, newfstatat
  }
}

policy q {
  syscalls {
    arch x86_64, aarch64
    allow _llseek, read
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:2:3: note[W1011]: 3 syscalls named here exist on some of the policy's architectures only; their rules apply where they exist
 2 |   syscalls {
   |   ^~~~~~~~~~
  = hint: not on x86: newfstatat; not on x86_64: _llseek, chown32
test.ward:11:11: warning[W1011]: syscall '_llseek' does not exist on x86_64, aarch64
 11 |     allow _llseek, read
    |           ^~~~~~~
   = hint: the rule has no effect there
)");
  CHECK(r->sink.warning_count() == 1u);
}

TEST_CASE("W1012 unknown-arch: an unknown architecture", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    arch amd64, x32
  }
}
)");
  CHECK(r->text == R"(test.ward:3:10: error[W1012]: unknown architecture 'amd64'
 3 |     arch amd64, x32
   |          ^~~~~
  = hint: the architectures are x86_64, x86, aarch64, arm, riscv64, ppc64le, s390x
test.ward:3:17: error[W1012]: unknown architecture 'x32'
 3 |     arch amd64, x32
   |                 ^~~
  = hint: the x32 ABI is always killed; it cannot be allowed
)");
}

TEST_CASE("W1013 unknown-errno: an unknown errno name", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    default errno EPREM
  }
}
)");
  CHECK(r->text == R"(test.ward:3:19: error[W1013]: unknown errno 'EPREM'
 3 |     default errno EPREM
   |                   ^~~~~
  = hint: did you mean 'EPERM'?
)");
}

TEST_CASE("W1014 unknown-constant: an unknown constant in a condition", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    allow socket if arg0 == AF_INTE
  }
}
)");
  CHECK(r->text == R"(test.ward:3:29: error[W1014]: unknown constant 'AF_INTE' on x86_64
 3 |     allow socket if arg0 == AF_INTE
   |                             ^~~~~~~
  = hint: did you mean 'AF_INET'?
)");
}

TEST_CASE("W1015 pointer-argument: a condition on a pointer argument", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    allow openat if arg1 == 0
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:3:21: error[W1015]: 'openat' arg1 (const char *) is a pointer and cannot be filtered
 3 |     allow openat if arg1 == 0
   |                     ^~~~
  = hint: the kernel reads what it points to after the filter has run
)");
}

TEST_CASE("W1016 no-such-argument: an argument that does not exist", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    allow socket if arg6 == 0
    allow kill if arg2 == 0
  }
}
)");
  CHECK(r->text == R"(test.ward:3:21: error[W1016]: expected an argument arg0 to arg5, found 'arg6'
 3 |     allow socket if arg6 == 0
   |                     ^~~~
test.ward:4:19: error[W1016]: 'kill' has 2 parameters; arg2 does not exist
 4 |     allow kill if arg2 == 0
   |                   ^~~~
)");
}

TEST_CASE("W1017 mask-never-holds: a mask condition that can never hold", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    allow clone if arg0 & CLONE_NEWUSER == CLONE_NEWNET
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:3:20: error[W1017]: the value has bits outside the mask, so this condition never holds
 3 |     allow clone if arg0 & CLONE_NEWUSER == CLONE_NEWNET
   |                    ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  = hint: the value must be a subset of the mask
)");
}

TEST_CASE("W1018 value-out-of-range: a value outside its range", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    default errno 5000
    allow socket if arg0 == 0x100000000
    allow clone if arg0 == -1
  }
  limits { pids 0 }
}
)");
  CHECK(r->text == R"(test.ward:3:19: error[W1018]: errno 5000 is out of range 1-4095
 3 |     default errno 5000
   |                   ^~~~
test.ward:4:29: error[W1018]: value does not fit 'socket' arg0 (int), a 32-bit signed parameter
 4 |     allow socket if arg0 == 0x100000000
   |                             ^~~~~~~~~~~
test.ward:5:28: error[W1018]: value does not fit 'clone' arg0 (unsigned long), a 64-bit unsigned parameter
 5 |     allow clone if arg0 == -1
   |                            ^~
test.ward:7:17: error[W1018]: 'pids' must be greater than zero
 7 |   limits { pids 0 }
   |                 ^
)");
}

TEST_CASE("W1019 port-out-of-range: a port outside 1-65535 or an empty range", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow tcp to any port 70000, 9000-8000
  }
}
)");
  CHECK(r->text == R"(test.ward:3:27: error[W1019]: invalid port '70000': port out of range 1-65535
 3 |     allow tcp to any port 70000, 9000-8000
   |                           ^~~~~
  = hint: ports are 1-65535
test.ward:3:34: error[W1019]: invalid port '9000-8000': empty port range (9000 > 8000)
 3 |     allow tcp to any port 70000, 9000-8000
   |                                  ^~~~~~~~~
  = hint: ports are 1-65535
)");
}

TEST_CASE("W1020 host-bits-set: a CIDR with host bits set is a warning with the fix",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow tcp to 10.1.2.3/16 port 443
  }
}
)");
  CHECK(r->text ==
        R"(test.ward:3:18: warning[W1020]: '10.1.2.3/16' has host bits set beyond its prefix
 3 |     allow tcp to 10.1.2.3/16 port 443
   |                  ^~~~~~~~~~~
  = hint: did you mean 10.1.0.0/16?
)");
}

TEST_CASE("W1021 wrong-direction: `to` in an ingress rule, `from` in an egress rule",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow ingress tcp to 10.0.0.0/8 port 22
    allow tcp from 10.0.0.0/8 port 22
  }
}
)");
  CHECK(r->text == R"(test.ward:3:23: error[W1021]: `to` in an ingress rule
 3 |     allow ingress tcp to 10.0.0.0/8 port 22
   |                       ^~
  = hint: ingress rules name the remote side with `from`
test.ward:4:15: error[W1021]: `from` in an egress rule
 4 |     allow tcp from 10.0.0.0/8 port 22
   |               ^~~~
  = hint: write `allow ingress ... from ...` for incoming connections
)");
}

TEST_CASE("W1022 port-with-icmp: a port with icmp", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow icmp to any port 7
  }
}
)");
  CHECK(r->text == R"(test.ward:3:23: error[W1022]: ICMP has no ports
 3 |     allow icmp to any port 7
   |                       ^~~~
  = hint: remove the port, or use tcp or udp
)");
}

TEST_CASE("W1023 missing-peer: a flow rule without its peer", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow tcp port 443
    allow ingress udp port 53
  }
}
)");
  CHECK(r->text == R"(test.ward:3:5: error[W1023]: network rule has no `to`
 3 |     allow tcp port 443
   |     ^~~~~~~~~~~~~~~~~~
  = hint: write `to any` to match every address
test.ward:4:5: error[W1023]: network rule has no `from`
 4 |     allow ingress udp port 53
   |     ^~~~~~~~~~~~~~~~~~~~~~~~~
  = hint: write `from any` to match every address
)");
}

TEST_CASE("W1024 unknown-group: an unknown group, with a suggestion when one is close",
          "[diagnostics]") {
  auto r = CheckSource(R"(group @mine = [@nope]

policy p {
  syscalls {
    allow @network-oi
  }
}
)");
  CHECK(r->text == R"(test.ward:1:16: error[W1024]: unknown group '@nope'
 1 | group @mine = [@nope]
   |                ^~~~~
test.ward:5:11: error[W1024]: unknown group '@network-oi'
 5 |     allow @network-oi
   |           ^~~~~~~~~~~
  = hint: did you mean '@network-io'?
)");
}

TEST_CASE("W1025 group-cycle: a group that includes itself", "[diagnostics]") {
  auto r = CheckSource(R"(group @a = [read, @b]
group @b = [write, @a]
)");
  CHECK(r->text == R"(test.ward:2:20: error[W1025]: group '@b' includes itself through '@a'
 2 | group @b = [write, @a]
   |                    ^~
test.ward:1:7: note: defined here
 1 | group @a = [read, @b]
   |       ^~
)");
}

TEST_CASE("W1026 reserved-group-name: a standard group's name cannot be reused", "[diagnostics]") {
  auto r = CheckSource(R"(group @mount = [mount]
)");
  // The note points into the standard library; its line is read from there.
  const std::string std_file = std::string(WARD_SOURCE_DIR) + "/policies/std/syscalls.ward";
  const auto [line, text] = FindLine(std_file, "group @mount = [");
  REQUIRE(line > 0);
  const std::string n = std::to_string(line);
  // The gutter is as wide as the larger line number.
  const std::string gutter(n.size(), ' ');
  std::string expected =
      "test.ward:1:7: error[W1026]: group '@mount' is a standard group and cannot be redefined\n";
  expected += gutter + "1 | group @mount = [mount]\n";
  expected += gutter + "  |       ^~~~~~\n";
  expected += "std/syscalls.ward:" + n + ":7: note: first defined here\n";
  expected += " " + n + " | " + text + "\n";
  expected += gutter + "  |       ^~~~~~\n";
  expected += gutter + " = hint: choose another name\n";
  CHECK(r->text == expected);
}

TEST_CASE("W1027 duplicate-section: a section given twice shows both", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem { allow read "/usr" }
  description "one"
  filesystem { allow read "/lib" }
  description "two"
  target kubernetes { namespace "a" }
  target kubernetes { namespace "b" }
}
)");
  CHECK(r->text == R"(test.ward:4:3: error[W1027]: duplicate filesystem section in this policy
 4 |   filesystem { allow read "/lib" }
   |   ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
test.ward:2:3: note: first given here
 2 |   filesystem { allow read "/usr" }
   |   ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  = hint: merge the two sections into one
test.ward:5:3: error[W1027]: duplicate description in this policy
 5 |   description "two"
   |   ^~~~~~~~~~~~~~~~~
test.ward:3:3: note: first given here
 3 |   description "one"
   |   ^~~~~~~~~~~~~~~~~
test.ward:7:10: error[W1027]: duplicate target kubernetes block in this policy
 7 |   target kubernetes { namespace "b" }
   |          ^~~~~~~~~~
test.ward:6:3: note: first given here
 6 |   target kubernetes { namespace "a" }
   |   ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST_CASE("W1028 invalid-path: paths that are not absolute or not clean", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem {
    allow read "usr/lib", "/srv/../etc", "~root/x", "/a/b**/c"
  }
}
)");
  CHECK(r->text == R"(test.ward:3:16: error[W1028]: invalid path "usr/lib": not absolute
 3 |     allow read "usr/lib", "/srv/../etc", "~root/x", "/a/b**/c"
   |                ^~~~~~~~~
  = hint: start it with / or ~/
test.ward:3:27: error[W1028]: invalid path "/srv/../etc": '..' components are not allowed
 3 |     allow read "usr/lib", "/srv/../etc", "~root/x", "/a/b**/c"
   |                           ^~~~~~~~~~~~~
test.ward:3:42: error[W1028]: invalid path "~root/x": ~user is not supported
 3 |     allow read "usr/lib", "/srv/../etc", "~root/x", "/a/b**/c"
   |                                          ^~~~~~~~~
  = hint: write the absolute path
test.ward:3:53: error[W1028]: invalid path "/a/b**/c": '**' must be a whole path component
 3 |     allow read "usr/lib", "/srv/../etc", "~root/x", "/a/b**/c"
   |                                                     ^~~~~~~~~~
  = hint: write /**/ between slashes
)");
}

TEST_CASE("W1029 unknown-limit: an unknown limit, with a suggestion when one is close",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  limits {
    memroy 4GiB
    bandwidth 10
  }
}
)");
  CHECK(r->text == R"(test.ward:3:5: error[W1029]: unknown limit 'memroy'
 3 |     memroy 4GiB
   |     ^~~~~~
  = hint: did you mean 'memory'?
test.ward:4:5: error[W1029]: unknown limit 'bandwidth'
 4 |     bandwidth 10
   |     ^~~~~~~~~
  = hint: the limits are cpus, memory, pids, open_files, disk, cpu_time and timeout
)");
}

TEST_CASE("W1030 unknown-target: an unknown target or target key", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  target dokcer {}
  target firecracker { kernal "/vmlinux" }
  target seccomp { x 1 }
}
)");
  CHECK(r->text == R"(test.ward:2:10: error[W1030]: unknown target 'dokcer'
 2 |   target dokcer {}
   |          ^~~~~~
  = hint: the targets are seccomp, oci, process, ebpf, nftables, landlock, kubernetes, cilium, seatbelt, firecracker
test.ward:3:24: error[W1030]: unknown key 'kernal' in target firecracker
 3 |   target firecracker { kernal "/vmlinux" }
   |                        ^~~~~~
  = hint: the keys are kernel, rootfs, boot_args, vcpus, network_rate, tap
test.ward:4:20: error[W1030]: unknown key 'x' in target seccomp
 4 |   target seccomp { x 1 }
   |                    ^
  = hint: target seccomp has no settings yet
)");
}

TEST_CASE("W1031 bad-interpolation: a list interpolated into a string, or a broken ${}",
          "[diagnostics]") {
  auto r = CheckSource(R"(let dirs = ["/a", "/b"]
let bad = "${dirs}/x"
let open = "x${not closed"
let name = "${1abc}"
)");
  CHECK(r->text ==
        R"(test.ward:2:12: error[W1031]: 'dirs' is not a single string and cannot be interpolated
 2 | let bad = "${dirs}/x"
   |            ^~~~~~~
test.ward:1:5: note: defined here
 1 | let dirs = ["/a", "/b"]
   |     ^~~~
  = hint: use the list as a value of its own
test.ward:3:14: error[W1031]: unterminated '${' in string
 3 | let open = "x${not closed"
   |              ^~
  = hint: write ${name}, or \$ for a literal dollar sign
test.ward:4:13: error[W1031]: '${1abc}' does not name a let
 4 | let name = "${1abc}"
   |             ^~~~~~~
  = hint: write ${name}
)");
}

TEST_CASE("W1032 std-not-found: no standard library, and an import of std/", "[diagnostics]") {
  FrontendOptions options;
  options.std_dir = "/nonexistent/ward-std";
  options.memory_files["test.ward"] = R"(import "std/linux.ward"

policy p extends linux-base {
  syscalls { allow @system-service }
}
)";
  SourceManager sources;
  DiagnosticSink sink;
  RunFrontend({"test.ward"}, options, sources, sink);
  // The names std/ would have defined are not reported as unknown.
  CHECK(
      RenderText(sources, sink, RenderOptions{}) ==
      R"(test.ward:1:8: error[W1032]: cannot import 'std/linux.ward': the standard library was not found
 1 | import "std/linux.ward"
   |        ^~~~~~~~~~~~~~~~
  = hint: pass --std DIR or set WARD_STD
error[W1032]: the Ward standard library (std/) was not found
  = hint: pass --std DIR or set WARD_STD to the policies/std folder
)");
}

TEST_CASE("W1033 invalid-name: a policy or let name that is not an identifier", "[diagnostics]") {
  auto r = CheckSource(R"(let 9lives = "/x"

policy 1st {}
)");
  CHECK(r->text == R"(test.ward:1:5: error[W1033]: invalid name '9lives'
 1 | let 9lives = "/x"
   |     ^~~~~~
  = hint: names are letters, digits, '-' and '_', starting with a letter
test.ward:3:8: error[W1033]: invalid policy name '1st'
 3 | policy 1st {}
   |        ^~~
  = hint: names are letters, digits, '-' and '_', starting with a letter
)");
}

TEST_CASE("W1034 duplicate-entry: an entry given twice", "[diagnostics]") {
  auto r = CheckSource(R"(abstract policy b {}
policy p extends b, b {
  labels { team = "a", team = "b" }
  syscalls {
    arch x86_64, x86_64
    default kill
    default allow
  }
  process {
    user 1:1
    user 2:2
  }
  limits {
    pids 10
    pids 20
  }
  target firecracker { vcpus 2 vcpus 3 }
}
)");
  CHECK(r->text == R"(test.ward:2:21: error[W1034]: 'b' is listed twice in extends
 2 | policy p extends b, b {
   |                     ^
test.ward:2:18: note: first listed here
 2 | policy p extends b, b {
   |                  ^
test.ward:3:24: error[W1034]: label 'team' is given twice
 3 |   labels { team = "a", team = "b" }
   |                        ^~~~
test.ward:3:12: note: first given here
 3 |   labels { team = "a", team = "b" }
   |            ^~~~
test.ward:5:18: error[W1034]: architecture 'x86_64' is listed twice
 5 |     arch x86_64, x86_64
   |                  ^~~~~~
test.ward:5:10: note: first listed here
 5 |     arch x86_64, x86_64
   |          ^~~~~~
test.ward:7:5: error[W1034]: duplicate default action in this section
 7 |     default allow
   |     ^~~~~~~~~~~~~
test.ward:6:5: note: first given here
 6 |     default kill
   |     ^~~~~~~~~~~~
  = hint: keep one `default`
test.ward:11:5: error[W1034]: duplicate user in this section
 11 |     user 2:2
    |     ^~~~~~~~
test.ward:10:5: note: first given here
 10 |     user 1:1
    |     ^~~~~~~~
test.ward:15:5: error[W1034]: limit 'pids' is given twice
 15 |     pids 20
    |     ^~~~
test.ward:14:5: note: first given here
 14 |     pids 10
    |     ^~~~
test.ward:17:32: error[W1034]: 'vcpus' is given twice in target firecracker
 17 |   target firecracker { vcpus 2 vcpus 3 }
    |                                ^~~~~
test.ward:17:24: note: first given here
 17 |   target firecracker { vcpus 2 vcpus 3 }
    |                        ^~~~~
)");
}

TEST_CASE("W1035 invalid-unix-socket: a unix socket that is not an absolute path or @name",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow unix "run/app.sock", "/run/*.sock"
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:3:16: error[W1035]: invalid unix socket "run/app.sock": expected an absolute path or @name
 3 |     allow unix "run/app.sock", "/run/*.sock"
   |                ^~~~~~~~~~~~~~
test.ward:3:32: error[W1035]: unix socket paths cannot contain globs
 3 |     allow unix "run/app.sock", "/run/*.sock"
   |                                ^~~~~~~~~~~~~
  = hint: name each socket
)");
}

TEST_CASE("W1036 invalid-domain: malformed domain names", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow tcp to "exa mple.com", "a..com", "foo.*.com", "-x.com" port 443
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:3:18: error[W1036]: invalid domain "exa mple.com": character ' ' is not allowed in a domain
 3 |     allow tcp to "exa mple.com", "a..com", "foo.*.com", "-x.com" port 443
   |                  ^~~~~~~~~~~~~~
test.ward:3:34: error[W1036]: invalid domain "a..com": empty label
 3 |     allow tcp to "exa mple.com", "a..com", "foo.*.com", "-x.com" port 443
   |                                  ^~~~~~~~
  = hint: remove the doubled dot
test.ward:3:44: error[W1036]: invalid domain "foo.*.com": '*' is only allowed as a whole first label
 3 |     allow tcp to "exa mple.com", "a..com", "foo.*.com", "-x.com" port 443
   |                                            ^~~~~~~~~~~
  = hint: write "*.example.com" for every strict subdomain
test.ward:3:57: error[W1036]: invalid domain "-x.com": a label cannot start or end with '-'
 3 |     allow tcp to "exa mple.com", "a..com", "foo.*.com", "-x.com" port 443
   |                                                         ^~~~~~~~
)");
}

TEST_CASE("W1037 unknown-signature: a condition on a syscall whose parameters are not known",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    arch x86
    allow socketcall if arg0 == 1
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:4:25: error[W1037]: the parameters of 'socketcall' are not known, so its arguments cannot be filtered
 4 |     allow socketcall if arg0 == 1
   |                         ^~~~
  = hint: language/facts/syscall_signatures.inc lists the known signatures
)");
}

TEST_CASE("W1038 unknown-capability: an unknown capability, with a suggestion", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  process {
    capabilities keep [CAP_NET_BIND_SERIVCE]
  }
}
)");
  CHECK(r->text == R"(test.ward:3:24: error[W1038]: unknown capability 'CAP_NET_BIND_SERIVCE'
 3 |     capabilities keep [CAP_NET_BIND_SERIVCE]
   |                        ^~~~~~~~~~~~~~~~~~~~
  = hint: did you mean 'CAP_NET_BIND_SERVICE'?
)");
}

TEST_CASE("W1039 invalid-env-name: an invalid environment variable name", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  process {
    env allow ["PATH", "1X", "A-B", "*"]
  }
}
)");
  CHECK(r->text == R"(test.ward:3:24: error[W1039]: invalid environment variable name "1X"
 3 |     env allow ["PATH", "1X", "A-B", "*"]
   |                        ^~~~
  = hint: write names as strings, e.g. "PATH"; a trailing * matches a prefix
test.ward:3:30: error[W1039]: invalid environment variable name "A-B"
 3 |     env allow ["PATH", "1X", "A-B", "*"]
   |                              ^~~~~
  = hint: write names as strings, e.g. "PATH"; a trailing * matches a prefix
test.ward:3:37: error[W1039]: invalid environment variable name "*"
 3 |     env allow ["PATH", "1X", "A-B", "*"]
   |                                     ^~~
  = hint: write names as strings, e.g. "PATH"; a trailing * matches a prefix
)");
}

TEST_CASE("W1040 invalid-user: a user that is not UID:GID", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  process {
    user root
  }
}
)");
  CHECK(r->text == R"(test.ward:3:5: error[W1040]: invalid user 'root'
 3 |     user root
   |     ^~~~~~~~~
  = hint: write `user UID:GID` with numbers, e.g. `user 1000:1000`
)");
}

TEST_CASE("W1041 split-argument: on a 32-bit architecture, a condition after a 64-bit parameter",
          "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    arch x86
    allow fallocate if arg2 == 0
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:4:24: error[W1041]: 'fallocate' arg2 (loff_t): on x86 a 64-bit parameter up to this one takes two registers
 4 |     allow fallocate if arg2 == 0
   |                        ^~~~
  = hint: filter this argument on 64-bit architectures only
)");
}

TEST_CASE("W1044 arg-order-differs: clone's flags are arg1 on s390x", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  syscalls {
    arch x86_64, s390x
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:4:26: error[W1044]: 'clone' arg0 is another parameter on s390x than on x86_64 (the kernel orders clone's parameters differently there)
 4 |     errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
   |                          ^~~~
  = hint: filter this argument in a policy whose `arch` lists only architectures with x86_64's order
)");
  // The same condition on architectures with x86_64's order is fine.
  CHECK(CheckSource("policy p { syscalls { arch x86_64, aarch64, riscv64\n"
                    "errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER } }")
            ->codes()
            .empty());
  // On x86, arm and ppc64le tls (arg3 on x86_64: a pointer there) and
  // child_tid swap places.
  CHECK(CheckSource("policy p { syscalls { arch x86_64, x86\n allow clone if arg4 == 0 } }")
            ->codes() == "W1044");
}

TEST_CASE("W1045 unknown-netlink-protocol: only route is granted", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  network {
    allow netlink sock_diag, rout
    allow netlink "route"
  }
}
)");
  CHECK(r->text ==
        R"(test.ward:3:19: error[W1045]: netlink protocol 'sock_diag' is never granted
 3 |     allow netlink sock_diag, rout
   |                   ^~~~~~~~~
  = hint: only `route` is; ward run refuses every other netlink protocol
test.ward:3:30: error[W1045]: unknown netlink protocol 'rout'
 3 |     allow netlink sock_diag, rout
   |                              ^~~~
  = hint: did you mean `route`?
test.ward:4:19: error[W1008]: expected a netlink protocol (route), found a string "route"
 4 |     allow netlink "route"
   |                   ^~~~~~~
)");
  CHECK(CheckSource("policy p { network { allow netlink generic } }")->codes() == "W1045");
  CHECK(CheckSource("policy p { network { allow netlink xyz } }")
            ->text.find("hint: the one netlink protocol a policy grants is `route`") !=
        std::string::npos);
  // The positive control: route checks clean.
  CHECK(CheckSource("policy p { network { allow netlink route } }")->codes().empty());
}

TEST_CASE("W1046 literal-glob: `?`, `[` and `{` in a path are literal, with a hint",
          "[diagnostics]") {
  auto r = CheckSource(R"(let root = "/w"

policy p {
  filesystem {
    deny read "/w/file?.txt", "/w/[ab].txt", "${root}/{a,b}"
    allow read "/w/file*.txt", "/w/**", "${root}/x", "/w/a]b}c"
  }
}
)");
  CHECK(
      r->text ==
      R"(test.ward:5:15: warning[W1046]: path "/w/file?.txt" contains '?', which matches only itself
 5 |     deny read "/w/file?.txt", "/w/[ab].txt", "${root}/{a,b}"
   |               ^~~~~~~~~~~~~~
  = hint: `?`, `[` and `{` are literal in `ward 1` (only `*` and `**` are globs); for any characters within a component write `*`
test.ward:5:31: warning[W1046]: path "/w/[ab].txt" contains '[', which matches only itself
 5 |     deny read "/w/file?.txt", "/w/[ab].txt", "${root}/{a,b}"
   |                               ^~~~~~~~~~~~~
  = hint: `?`, `[` and `{` are literal in `ward 1` (only `*` and `**` are globs); for a set of characters write `*`, or one path per character
test.ward:5:46: warning[W1046]: path "/w/{a,b}" contains '{', which matches only itself
 5 |     deny read "/w/file?.txt", "/w/[ab].txt", "${root}/{a,b}"
   |                                              ^~~~~~~~~~~~~~~
  = hint: `?`, `[` and `{` are literal in `ward 1` (only `*` and `**` are globs); for alternatives write one path each
)");
  // Warnings only: the rules are kept, literally.
  CHECK_FALSE(r->sink.has_errors());
  REQUIRE(r->policy(0).filesystem->rules[0].paths.size() == 3u);
  CHECK(r->policy(0).filesystem->rules[0].paths[0].text == "/w/file?.txt");
}

TEST_CASE("W1042 empty-list: an empty list of values", "[diagnostics]") {
  auto r = CheckSource(R"(let none = []

policy p {
  filesystem {
    allow read []
    deny read none
  }
  network { allow tcp to any port [] }
}
)");
  CHECK(r->text == R"(test.ward:5:5: error[W1042]: empty list of paths
 5 |     allow read []
   |     ^~~~~~~~~~~~~
  = hint: remove the rule, or name at least one value
test.ward:6:5: error[W1042]: empty list of paths
 6 |     deny read none
   |     ^~~~~~~~~~~~~~
  = hint: remove the rule, or name at least one value
test.ward:8:30: error[W1042]: empty list of ports
 8 |   network { allow tcp to any port [] }
   |                              ^~~~
  = hint: remove the rule, or name at least one value
)");
}

// ---- no cascades ----------------------------------------------------------

TEST_CASE("a syntax error is reported once, without a cascade", "[diagnostics]") {
  auto r = CheckSource(R"(policy p {
  filesystem { allow "/x" }
  network { allow tcp to }
  syscalls { allow if }
}
)");
  CHECK(r->codes() == "W0001");
  CHECK(r->text == R"(test.ward:2:22: error[W0001]: unexpected '"/x"'
 2 |   filesystem { allow "/x" }
   |                      ^~~~
  = hint: expected 'read', 'write' or 'exec'
)");
}

TEST_CASE("names a broken import would define are not reported unknown", "[diagnostics]") {
  auto r = CheckSource(R"(import "./bad.ward"

policy p extends base {
  syscalls { allow @bad-group }
}
)",
                       {{"bad.ward", R"(abstract policy base {
  filesystem { allow "/x" }
}
group @bad-group = [read]
)"}});
  CHECK(r->codes() == "W0001");
  CHECK(r->text == R"(bad.ward:2:22: error[W0001]: unexpected '"/x"'
 2 |   filesystem { allow "/x" }
   |                      ^~~~
  = hint: expected 'read', 'write' or 'exec'
)");
}

TEST_CASE("a value dropped after its own error is not also an empty list", "[diagnostics]") {
  auto r = CheckSource(R"(let broken = "${nope}"

policy p {
  filesystem { allow read "${nope}" }
  network { allow unix broken }
}
)");
  CHECK(r->codes() == "W1006 W1006");
  CHECK(r->text == R"(test.ward:1:15: error[W1006]: undefined name 'nope'
 1 | let broken = "${nope}"
   |               ^~~~~~~
  = hint: define it with `let nope = "..."` above this line
test.ward:4:28: error[W1006]: undefined name 'nope'
 4 |   filesystem { allow read "${nope}" }
   |                            ^~~~~~~
  = hint: define it with `let nope = "..."` above this line
)");
}

// ---- JSON -----------------------------------------------------------------

TEST_CASE("JSON: an error with a secondary span and a hint, and a warning", "[diagnostics][json]") {
  auto r = CheckSource(R"(policy web {}

policy web {
  network { allow tcp to 10.1.2.3/16 port 443 }
}
)");
  INFO(r->json);
  CHECK(MatchesGolden("language/testdata/diagnostics_duplicate_name.json", r->json));
}

TEST_CASE("JSON: a syntax error", "[diagnostics][json]") {
  auto r = CheckSource(R"(policy p {
  filesystem {
    allow read "/usr" "/lib"
  }
}
)");
  INFO(r->json);
  CHECK(MatchesGolden("language/testdata/diagnostics_syntax_error.json", r->json));
}

TEST_CASE("JSON: an import cycle across files", "[diagnostics][json]") {
  auto r = CheckSource(R"(import "./b.ward"
policy a {}
)",
                       {{"b.ward", R"(import "./test.ward"
policy b {}
)"}});
  INFO(r->json);
  CHECK(MatchesGolden("language/testdata/diagnostics_import_cycle.json", r->json));
}

}  // namespace
}  // namespace ward
