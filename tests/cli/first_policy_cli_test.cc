// What `ward check`, `ward ir`, `ward compile` and `ward explain` say to a
// new user's first policy (issue 22, "The CLI front door"): every misspelt
// word in source order with its "did you mean" (ties listed), the '{' an
// early end of file leaves open, binary input escaped, an IR hash that does
// not depend on how the file was named, explain's --arg constants and the
// nearest rule of a denied question, and explain's options on either side
// of FILE.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_ward.h"

using ward::test::kStdEnv;
using ward::test::Run;
using ward::test::ScratchDir;
using ward::test::Shell;
using ward::test::WriteTemp;

namespace {

const std::string kData = std::string(WARD_SOURCE_DIR) + "/tests/cli/testdata/first_policy";

// `ward ARGS` run from `dir`, so that files are named as a user in that
// folder would name them.
Run WardIn(const std::string& dir, const std::string& args) {
  return Shell("cd '" + dir + "' && env " + kStdEnv + " " + WARD_BINARY + " " + args);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a first policy with typos: every unknown word in source order, each with its hint") {
  Run r = WardIn(kData, "check typos.ward");
  CHECK(r.status == 1);
  CHECK(r.err == R"(typos.ward:4:3: error[W0001]: unknown section 'filesytem'
 4 |   filesytem {
   |   ^~~~~~~~~
  = hint: did you mean 'filesystem'?
typos.ward:5:5: error[W0001]: unknown keyword 'alow'
 5 |     alow read "/workspace/**"
   |     ^~~~
  = hint: did you mean 'allow'?
typos.ward:7:3: error[W0001]: unknown section 'syscals'
 7 |   syscals {
   |   ^~~~~~~
  = hint: did you mean 'syscalls'?
typos.ward:8:11: error[W1010]: unknown syscall 'opn'
 8 |     allow opn
   |           ^~~
  = hint: did you mean 'open' or 'openat'?
typos.ward:9:11: error[W1024]: unknown group '@network'
 9 |     allow @network
   |           ^~~~~~~~
  = hint: did you mean '@network-io'?
typos.ward:11:3: error[W0001]: unknown section 'proces'
 11 |   proces { capabilities keep [CAP_NET_ADMN] }
    |   ^~~~~~
   = hint: did you mean 'process'?
typos.ward:11:31: error[W1038]: unknown capability 'CAP_NET_ADMN'
 11 |   proces { capabilities keep [CAP_NET_ADMN] }
    |                               ^~~~~~~~~~~~
   = hint: did you mean 'CAP_NET_ADMIN'?
typos.ward:13:12: error[W1008]: 'memory' expects a size with a unit such as 4GiB, found an unrecognised literal '4gb'
 13 |     memory 4gb
    |            ^~~
   = hint: did you mean 4GiB (4 x 2^30 bytes) or 4GB (4 x 10^9 bytes)?
typos.ward:14:13: error[W1008]: 'timeout' expects a duration such as 30s, 5m or 2h, found an unrecognised literal '10sec'
 14 |     timeout 10sec
    |             ^~~~~
   = hint: did you mean 10s? (units: ms, s, m, h, d)
)");
  CHECK(r.out == "checked 1 file, 1 policy: 9 errors, 0 warnings\n");
  // A misspelt keyword is read on from, never accepted: the file is not
  // compiled or formatted.
  const std::string out = ScratchDir() + "/typos-out";
  CHECK(WardIn(kData, "compile typos.ward -t seccomp -o " + out).status == 1);
  CHECK_FALSE(std::filesystem::exists(out + "/manifest.json"));
  Run fmt = WardIn(kData, "fmt --check typos.ward");
  CHECK(fmt.status != 0);
  CHECK(fmt.err.rfind("typos.ward:4:3: error[W0001]: unknown section 'filesytem'\n", 0) == 0);
  // Positive control: the same policy spelt right checks clean.
  Run fixed = WardIn(kData, "check fixed.ward");
  CHECK(fixed.status == 0);
  CHECK(fixed.err == "");
  CHECK(fixed.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
}

TEST_CASE("tied candidates are all listed, and a tie is not guessed at") {
  std::string dir = ScratchDir();
  WriteTemp(
      "tie.ward",
      "ward 1\npolicy p {\n  network {\n    allow tpc to any portz 443\n  }\n  limts {}\n}\n");
  Run r = WardIn(dir, "check tie.ward");
  CHECK(r.status == 1);
  // `tpc` has one closest keyword and is read on as `tcp`; `portz` is as
  // close to `port` as to `ports`, so the parse stops there (limts is not
  // reached).
  CHECK(r.err == R"(tie.ward:4:11: error[W0001]: unknown keyword 'tpc'
 4 |     allow tpc to any portz 443
   |           ^~~
  = hint: did you mean 'tcp'?
tie.ward:4:22: error[W0001]: unknown keyword 'portz'
 4 |     allow tpc to any portz 443
   |                      ^~~~~
  = hint: did you mean 'port' or 'ports'?
)");
  // A word close to nothing keeps the plain syntax error.
  WriteTemp("far.ward", "ward 1\npolicy p {\n  zzzzqq {}\n}\n");
  CHECK(WardIn(dir, "check far.ward").err == R"(far.ward:3:3: error[W0001]: unexpected 'zzzzqq'
 3 |   zzzzqq {}
   |   ^~~~~~
)");
}

TEST_CASE("sizes and durations: a unit in the wrong case is named, never corrected") {
  std::string dir = ScratchDir();
  WriteTemp("units.ward",
            "ward 1\npolicy p {\n  limits {\n    memory 512mib\n    disk 1g\n"
            "    cpu_time 2HOURS\n  }\n}\n");
  Run r = WardIn(dir, "check --format json units.ward");
  CHECK(r.status == 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["diagnostics"].size() == 3);
  CHECK(j["diagnostics"][0]["hint"] == "did you mean 512MiB (512 x 2^20 bytes)?");
  CHECK(j["diagnostics"][1]["hint"] ==
        "did you mean 1GiB (1 x 2^30 bytes) or 1GB (1 x 10^9 bytes)?");
  CHECK(j["diagnostics"][2]["hint"] == "did you mean 2h? (units: ms, s, m, h, d)");
  // Positive control: the spellings the hints name are accepted.
  WriteTemp("units-ok.ward",
            "ward 1\npolicy p {\n  limits {\n    memory 512MiB\n    disk 1GB\n"
            "    cpu_time 2h\n  }\n}\n");
  CHECK(WardIn(dir, "check units-ok.ward").status == 0);
}

TEST_CASE("unexpected end of file names the '{' left open, and the blocks around it") {
  Run r = WardIn(kData, "check unclosed.ward");
  CHECK(r.status == 1);
  CHECK(
      r.err ==
      R"(unclosed.ward:5:1: error[W0001]: unexpected end of file: 'filesystem {' opened at 3:14 is not closed
 5 | 
   | ^
unclosed.ward:3:14: note: 'filesystem {' opened here is not closed
 3 |   filesystem {
   |              ^
unclosed.ward:2:10: note: 'policy p {' opened here is not closed
 2 | policy p {
   |          ^
  = hint: add the missing '}' (2 blocks are open)
)");
  // Positive control: closed, the same text checks clean.
  std::string dir = ScratchDir();
  WriteTemp("closed.ward", Slurp(kData + "/unclosed.ward") + "  }\n}\n");
  CHECK(WardIn(dir, "check closed.ward").status == 0);
}

TEST_CASE("binary input is never echoed raw: NUL, invalid UTF-8 and control bytes are escaped") {
  std::string dir = ScratchDir();
  WriteTemp("nul.ward", std::string("ward 1\npolicy p {\0 }\n", 20));
  Run nul = WardIn(dir, "check nul.ward");
  CHECK(nul.status == 1);
  CHECK(nul.err ==
        "nul.ward:2:11: error[W0002]: NUL byte in source: this looks like a binary file, not a "
        "policy\n"
        " 2 | policy p {\\x00 }\n"
        "   |           ^~~~\n"
        "  = hint: policies are UTF-8 text without NUL bytes\n"
        "");
  WriteTemp("ff.ward", "ward 1\npolicy p {\xff }\n");
  Run ff = WardIn(dir, "check ff.ward");
  CHECK(ff.err ==
        "ff.ward:2:11: error[W0005]: invalid UTF-8 byte '\\xff' in source\n"
        " 2 | policy p {\\xff }\n"
        "   |           ^~~~\n"
        "  = hint: policies must be UTF-8 text\n"
        "");
  // An escape sequence inside a string reaches the checker, which quotes
  // it in the message: escaped there too, and the caret still lines up.
  WriteTemp("esc.ward", "ward 1\npolicy p {\n  filesystem { allow read \"\x1b[31mred\" }\n}\n");
  Run esc = WardIn(dir, "check esc.ward");
  CHECK(esc.err ==
        "esc.ward:3:27: error[W1028]: invalid path \"\\x1b[31mred\": not absolute\n"
        " 3 |   filesystem { allow read \"\\x1b[31mred\" }\n"
        "   |                           ^~~~~~~~~~~~~\n"
        "  = hint: start it with / or ~/\n"
        "");
  for (const Run* r : {&nul, &ff, &esc}) {
    for (char c : r->err) {
      unsigned char u = static_cast<unsigned char>(c);
      CHECK(((u >= 0x20 && u < 0x7f) || u == '\n'));
    }
  }
  // JSON escapes by its own rules, and names the byte.
  nlohmann::json j = nlohmann::json::parse(WardIn(dir, "check --format json esc.ward").out);
  CHECK(j["diagnostics"][0]["message"] == "invalid path \"\x1b[31mred\": not absolute");
  // Positive control: a UTF-8 string is shown as it is.
  WriteTemp("utf8.ward", "ward 1\npolicy p {\n  filesystem { allow read \"caf\xc3\xa9\" }\n}\n");
  CHECK(WardIn(dir, "check utf8.ward").err ==
        "utf8.ward:3:27: error[W1028]: invalid path \"caf\xc3\xa9\": not absolute\n"
        " 3 |   filesystem { allow read \"caf\xc3\xa9\" }\n"
        "   |                           ^~~~~~\n"
        "  = hint: start it with / or ~/\n"
        "");
}

TEST_CASE("the IR and ir_sha256 do not depend on how the file was named") {
  std::string dir = ScratchDir() + "/hash";
  std::filesystem::create_directories(dir + "/x/lib");
  std::ofstream(dir + "/x/lib/base.ward")
      << "ward 1\nabstract policy base {\n  filesystem {\n    allow read \"/usr/**\"\n  }\n}\n";
  std::ofstream(dir + "/x/p.ward")
      << "ward 1\nimport \"lib/base.ward\"\nimport \"std/linux.ward\"\n"
      << "policy agent extends linux-base, base {\n"
      << "  filesystem {\n    allow read \"/workspace/**\"\n  }\n}\n";
  // From the file's folder, from its parent, by absolute path, through ..
  const std::string x = dir + "/x";
  const std::vector<std::pair<std::string, std::string>> spellings = {
      {x, "p.ward"}, {x, "./p.ward"}, {x, x + "/p.ward"}, {x, "../x/p.ward"}, {dir, "x/p.ward"}};
  std::string ir, sha;
  for (const auto& [from, file] : spellings) {
    INFO(file);
    Run r = WardIn(from, "ir " + file);
    REQUIRE(r.status == 0);
    const std::string out = ScratchDir() + "/hash-out";
    std::filesystem::remove_all(out);
    REQUIRE(WardIn(from, "compile " + file + " -t seccomp -o " + out).status == 0);
    std::string manifest_sha =
        nlohmann::json::parse(Slurp(out + "/manifest.json"))["ir_sha256"].get<std::string>();
    if (ir.empty()) {
      ir = r.out;
      sha = manifest_sha;
    }
    CHECK(r.out == ir);
    CHECK(manifest_sha == sha);
  }
  // Files are named relative to the root file's folder, std/ as std/.
  CHECK(ir.find("\"p.ward:6:5\"") != std::string::npos);
  CHECK(ir.find("\"lib/base.ward:4:5\"") != std::string::npos);
  CHECK(ir.find("\"std/linux.ward:") != std::string::npos);
  CHECK(ir.find(dir) == std::string::npos);
  // Diagnostics still name the file as the user did.
  CHECK(WardIn(x, "check ./p.ward").out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  // Positive control: a real change changes the IR and its hash.
  std::ofstream(dir + "/x/p.ward", std::ios::app) << "policy other extends agent {\n"
                                                  << "  filesystem { allow read \"/srv\" }\n}\n";
  Run changed = WardIn(x, "ir p.ward --policy other");
  REQUIRE(changed.status == 0);
  CHECK(changed.out != ir);
  const std::string out = ScratchDir() + "/hash-out";
  std::filesystem::remove_all(out);
  REQUIRE(WardIn(x, "compile p.ward --policy other -t seccomp -o " + out).status == 0);
  CHECK(nlohmann::json::parse(Slurp(out + "/manifest.json"))["ir_sha256"] != sha);
}

TEST_CASE("explain --arg takes the language's constants, or-ed, with a did-you-mean") {
  Run packet = WardIn(kData, "explain explain.ward --syscall socket --arg 0=AF_PACKET");
  CHECK(packet.status == 0);
  CHECK(packet.out ==
        "errno EAFNOSUPPORT syscall socket(arg0=0x11) on x86_64\n"
        "  std/linux.ward:36:5: errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, "
        "AF_INET6]\n"
        "  nearest rule: explain.ward:11:5: allow socket if arg0 == AF_INET (does not match: arg0 "
        "is 0x11, the rule needs arg0 & 0xffffffff == 0x2)\n"
        "  note: argument region: arg0 & 0xfffffff0 == 0x10\n");
  // The same as the number.
  CHECK(WardIn(kData, "explain explain.ward --syscall socket --arg 0=17").out == packet.out);
  // Or-ed flags, and options before FILE.
  Run ored = WardIn(kData,
                    "explain --arg 0=AF_INET --arg '1=SOCK_STREAM|SOCK_CLOEXEC' explain.ward "
                    "--syscall socket");
  CHECK(ored.status == 0);
  CHECK(ored.out ==
        "allow syscall socket(arg0=0x2, arg1=0x80001) on x86_64\n"
        "  explain.ward:11:5: allow socket if arg0 == AF_INET\n"
        "  note: argument region: arg0 & 0xffffffff == 0x2\n");
  Run typo = WardIn(kData, "explain explain.ward --syscall socket --arg 0=AF_PAKET");
  CHECK(typo.status == 2);
  CHECK(typo.out == "");
  CHECK(typo.err ==
        "ward explain: --arg 0=AF_PAKET: unknown constant 'AF_PAKET'\n"
        "  = hint: did you mean 'AF_PACKET'?\n");
  Run nothing = WardIn(kData, "explain explain.ward --syscall socket --arg 0=ZZZZZZZZ");
  CHECK(nothing.status == 2);
  CHECK(nothing.err ==
        "ward explain: --arg 0=ZZZZZZZZ: unknown constant 'ZZZZZZZZ'\n"
        "  = hint: a number (decimal, 0x hex, or negative) or a constant such as AF_INET, or "
        "several or-ed with |\n");
}

TEST_CASE("explain of a denied question shows the nearest rule and why it did not match") {
  Run path = WardIn(kData, "explain explain.ward --path /workspace2/x --access read");
  CHECK(path.status == 0);
  CHECK(path.out ==
        "deny read /workspace2/x\n"
        "  no rule matched: denied by default\n"
        "  nearest rule: explain.ward:5:5: allow read \"/workspace/**\" (does not match: "
        "/workspace2 is not under /workspace)\n");
  CHECK(WardIn(kData, "explain explain.ward --path /workspace/x --access write").out ==
        "deny write /workspace/x\n"
        "  no rule matched: denied by default\n"
        "  nearest rule: explain.ward:5:5: allow read \"/workspace/**\" (does not match: grants "
        "read, not write)\n");
  Run port = WardIn(kData, "explain explain.ward --connect api.github.com:80");
  CHECK(port.out ==
        "deny egress tcp to api.github.com port 80\n"
        "  no rule matched: denied by default\n"
        "  nearest rule: explain.ward:8:5: allow tcp to \"api.github.com\" port 443 (does not "
        "match: matches the host, not the port: it allows tcp 443)\n"
        "  note: 'api.github.com' was not resolved: only domain rules were consulted (give "
        "--resolve api.github.com=IP to add the address rules)\n");
  CHECK(WardIn(kData, "explain explain.ward --connect 192.0.2.1:443").out ==
        "deny egress tcp to 192.0.2.1 port 443\n"
        "  no rule matched: denied by default\n"
        "  nearest rule: explain.ward:8:5: allow tcp to \"api.github.com\" port 443 (does not "
        "match: matches the port, not the host)\n");
  nlohmann::json j = nlohmann::json::parse(
      WardIn(kData, "explain explain.ward --path /workspace2/x --access read --format json").out);
  CHECK(j["nearest"] == nlohmann::json({{"location", "explain.ward:5:5"},
                                        {"text", "allow read \"/workspace/**\""},
                                        {"why", "/workspace2 is not under /workspace"}}));
  // Positive controls: allowed questions name the rule that decided, and
  // no nearest rule.
  Run allowed = WardIn(kData, "explain explain.ward --path /workspace/x --access read");
  CHECK(allowed.out ==
        "allow read /workspace/x\n"
        "  explain.ward:5:5: allow read \"/workspace/**\"\n"
        "  note: most specific pattern: /workspace/**\n");
  Run https = WardIn(kData, "explain explain.ward --connect api.github.com:443");
  CHECK(https.out.rfind("allow egress tcp to api.github.com port 443\n"
                        "  explain.ward:8:5: allow tcp to \"api.github.com\" port 443\n",
                        0) == 0);
  CHECK(https.out.find("nearest") == std::string::npos);
}

TEST_CASE("explain's options mean the same before and after FILE") {
  // --resolve and --arg take one value each (repeat them): before, the
  // first swallowed FILE ("file is required").
  Run before = WardIn(kData,
                      "explain --resolve api.github.com=192.0.2.1 explain.ward --connect "
                      "api.github.com:443");
  Run after = WardIn(kData,
                     "explain explain.ward --connect api.github.com:443 --resolve "
                     "api.github.com=192.0.2.1");
  CHECK(before.status == 0);
  CHECK(before.err == "");
  CHECK(before.out.rfind("allow egress tcp to api.github.com (192.0.2.1) port 443\n", 0) == 0);
  CHECK(before.out == after.out);
  Run two = WardIn(kData,
                   "explain --resolve a.example=192.0.2.1 --resolve api.github.com=192.0.2.1 "
                   "explain.ward --connect 192.0.2.1:443");
  CHECK(two.status == 0);
  CHECK(two.out.find("api.github.com resolves here") != std::string::npos);
}

TEST_CASE("ward lint escapes control bytes in its excerpts too") {
  std::string dir = ScratchDir();
  WriteTemp("lint-esc.ward", "ward 1\npolicy p { description \"\x1b[2J\" }\n");
  Run r = WardIn(dir, "lint lint-esc.ward");
  INFO(r.out << r.err);
  const std::string all = r.out + r.err;
  CHECK(all.find('\x1b') == std::string::npos);
  CHECK(all.find(" 2 | policy p { description \"\\x1b[2J\" }\n   |        ^\n") !=
        std::string::npos);
  CHECK(all.find("lint-esc.ward:2:8: warning L2109 no-syscall-rules: ") != std::string::npos);
}
