// Diagnostics as `ward check`, `ward compile` and `ward lint` print them
// (issue 19, items 3 and 9): the text cap keeps errors, then security
// warnings, then the rest, and counts what it drops per code; JSON and SARIF
// list every diagnostic; an imported Docker profile compiles with one W1011
// note instead of dozens of warnings; B3004 when a chosen target would
// install a filter that kills every syscall.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/cli/run_ward.h"

using ward::test::kStdEnv;
using ward::test::Run;
using ward::test::ScratchDir;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// 60 W1020 warnings (host bits set) after a rule that re-opens socketcall
// on x86 (B3003 from the seccomp backend, reported after the front end's).
std::string ManyWarnings() {
  std::string text =
      "ward 1\nimport \"std/linux.ward\"\npolicy many extends linux-base {\n"
      "  syscalls {\n    arch x86\n    allow socketcall\n  }\n  network {\n";
  for (int i = 1; i <= 60; ++i) {
    text += "    allow tcp to 10.0." + std::to_string(i) + ".1/24 port 443\n";
  }
  return text + "  }\n}\n";
}

TEST_CASE("an imported Docker profile: one W1011 note, and its B3003 warnings are shown") {
  const std::string out = ScratchDir() + "/docker-out";
  Run r = Ward("compile " + std::string(WARD_SOURCE_DIR) +
                   "/tests/cli/testdata/docker-default.ward --policy docker-default-x86_64 "
                   "-t seccomp -o " +
                   out,
               kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  // Before: 50 W1011 warnings (x86 names such as _llseek, chown32 that
  // x86_64 lacks), then "too many diagnostics", and no B3003.
  CHECK(Count(r.err, "warning[W1011]") == 0);
  // One note per policy with several architectures (x86_64 + x86,
  // aarch64 + arm; riscv64's policy has one).
  CHECK(Count(r.err, "note[W1011]") == 2);
  CHECK(r.err.find("syscalls named here exist on some of the policy's architectures only; their "
                   "rules apply where they exist") != std::string::npos);
  CHECK(r.err.find("not on x86_64: ") != std::string::npos);
  CHECK(r.err.find("_llseek") != std::string::npos);
  CHECK(r.err.find("W0010") == std::string::npos);
  CHECK(r.err.find("warning[B3003]: this rule re-opens socketcall on x86") != std::string::npos);
  // Positive control: a name on neither architecture is still a warning.
  const std::string none = WriteTemp(
      "none.ward",
      "ward 1\npolicy none {\n  syscalls {\n    arch x86_64, x86\n    default errno EPERM\n"
      "    allow read, set_tls\n  }\n}\n");
  r = Ward("check " + none, kStdEnv);
  CHECK(r.err.find("warning[W1011]: syscall 'set_tls' does not exist on x86_64, x86") !=
        std::string::npos);
}

TEST_CASE("the text cap shows the security warning and counts the rest; JSON lists all") {
  const std::string file = WriteTemp("many.ward", ManyWarnings());
  const std::string out = ScratchDir() + "/many-out";
  Run r = Ward("compile " + file + " -t seccomp -o " + out, kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  // B3003 and B3001 first, then 48 of the 60 W1020.
  CHECK(Count(r.err, "warning[W1020]") == 48);
  CHECK(Count(r.err, "warning[B3003]") == 1);
  CHECK(Count(r.err, "warning[B3001]") == 1);
  CHECK(r.err.find("note[W0010]: too many diagnostics; 12 not shown (dropped 12 W1020)\n") !=
        std::string::npos);

  // ward check --format json: every one, no cap note.
  r = Ward("check " + file + " --format json", kStdEnv);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["diagnostics"].size() == 60u);
  CHECK(j["warnings"] == 60);
  CHECK(r.out.find("W0010") == std::string::npos);
  // ward check's text: 50, then the note.
  r = Ward("check " + file, kStdEnv);
  CHECK(Count(r.err, "warning[W1020]") == 50);
  CHECK(r.err.find("(dropped 10 W1020)") != std::string::npos);

  // ward lint --format json and sarif: every front-end diagnostic too.
  r = Ward("lint " + file + " --format json --fail-on never", kStdEnv);
  j = nlohmann::json::parse(r.out);
  size_t w1020 = 0;
  for (const auto& d : j["diagnostics"]) w1020 += d["code"] == "W1020";
  CHECK(w1020 == 60u);
  r = Ward("lint " + file + " --format sarif --fail-on never", kStdEnv);
  j = nlohmann::json::parse(r.out);
  size_t results = 0;
  for (const auto& x : j["runs"][0]["results"]) results += x["ruleId"] == "W1020";
  CHECK(results == 60u);
}

TEST_CASE("B3004: compile warns when a target would kill every syscall") {
  const std::string bare =
      WriteTemp("bare.ward",
                "ward 1\npolicy bare {\n  network {\n    allow tcp to 10.0.0.1 port 443\n  }\n}\n");
  const std::string out = ScratchDir() + "/bare-out";
  const std::string expected =
      "bare.ward:2:8: warning[B3004]: policy 'bare' has no syscalls section: every syscall would "
      "be killed (by the filter of seccomp, oci)\n"
      " 2 | policy bare {\n"
      "   |        ^~~~\n"
      "  = hint: extend linux-base (`policy bare extends linux-base`), or write a syscalls "
      "section\n";
  Run r = Ward("compile " + bare + " -t seccomp,oci,nftables -o " + out, kStdEnv);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find(expected) != std::string::npos);
  r = Ward("compile " + bare + " -t kubernetes -o " + out, kStdEnv);
  CHECK(r.err.find("warning[B3004]: policy 'bare' has no syscalls section: every syscall would "
                   "be killed (by the filter of kubernetes)") != std::string::npos);
  // No target that filters syscalls: nothing to say (the policy is for
  // `ward apply`'s network enforcers).
  r = Ward("compile " + bare + " -t nftables -o " + out, kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.err.find("B3004") == std::string::npos);
  // Positive control: the same network rules on linux-base.
  const std::string based =
      WriteTemp("based.ward",
                "ward 1\nimport \"std/linux.ward\"\npolicy based extends linux-base {\n"
                "  network {\n    allow tcp to 10.0.0.1 port 443\n  }\n}\n");
  r = Ward("compile " + based + " -t seccomp,oci -o " + out, kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.err.find("B3004") == std::string::npos);
}

}  // namespace
