// `ward lint` as a user runs it: text, JSON and SARIF (validated against the
// OASIS schema), suppression comments, the configuration file, --fail-on
// and its exit codes, policies with errors, and the bundled policies.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_ward.h"

using ward::test::kStdEnv;
using ward::test::Run;
using ward::test::ScratchDir;
using ward::test::Shell;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {

// Warnings (L2101, L2106, L2212), one error (L2210, suppressed with a
// reason), one error (L2401) and a fix (L2101).
const char* kPolicy =
    "policy p {\n"
    "  syscalls {\n"
    "    arch x86_64\n"
    "    default allow\n"
    "  }\n"
    "  network {\n"
    "    // ward:allow L2210 the build talks to the host's Docker on purpose\n"
    "    allow unix \"/var/run/docker.sock\"\n"
    "  }\n"
    "  process {\n"
    "    no_new_privileges\n"
    "    capabilities keep [CAP_SYS_ADMIN]\n"
    "  }\n"
    "}\n";

// Only a warning.
const char* kWarningOnly =
    "policy p {\n"
    "  syscalls {\n"
    "    arch x86_64\n"
    "    default errno EPERM\n"
    "    allow read, write\n"
    "  }\n"
    "  limits {\n"
    "    memory 4G\n"
    "  }\n"
    "}\n";

std::string InScratch(const std::string& env = kStdEnv) {
  return "cd " + ScratchDir() + " && " + env;
}

}  // namespace

TEST_CASE("lint: text output names the rule, the place and the fix; exit codes follow --fail-on") {
  WriteTemp("warn.ward", kWarningOnly);
  Run r = Ward("lint --color never warn.ward", InScratch());
  INFO(r.out << r.err);
  CHECK(r.status == 0);  // default --fail-on error: a warning does not fail
  CHECK(r.out ==
        "warn.ward:8:12: warning L2404 decimal-size-unit: memory 4G is 4000000000 bytes "
        "(decimal units); Docker reads 4G as 4GiB\n"
        " 8 |     memory 4G\n"
        "   |            ^~\n"
        "  = hint: write the binary unit (GiB) if 2^30 was meant, or `4000MB` to keep 10^9\n"
        "  = fix: use the binary unit: `4GiB`\n"
        "linted 1 file, 1 policy: 0 errors, 1 warning, 0 notes, 0 suppressed\n");
  CHECK(Ward("lint --fail-on warning warn.ward", InScratch()).status == 1);
  CHECK(Ward("lint --fail-on never warn.ward", InScratch()).status == 0);
  CHECK(Ward("lint --fail-on error warn.ward", InScratch()).status == 0);
}

TEST_CASE("lint: an error finding fails by default; a suppressed one does not") {
  WriteTemp("p.ward", kPolicy);
  Run r = Ward("lint --color never p.ward", InScratch());
  INFO(r.out << r.err);
  CHECK(r.status == 1);  // L2401 is an error
  CHECK(r.out.find("p.ward:12:24: error L2401 root-capability: CAP_SYS_ADMIN is kept: it "
                   "amounts to root on the host or in its namespace\n") != std::string::npos);
  CHECK(r.out.find("L2210") == std::string::npos);  // suppressed: not in text
  CHECK(r.out.find("linted 1 file, 1 policy: 1 error, 3 warnings, 0 notes, 1 suppressed\n") !=
        std::string::npos);
  CHECK(Ward("lint --fail-on never p.ward", InScratch()).status == 0);
}

TEST_CASE("lint --format json: versioned, every finding with its place; suppressions listed") {
  WriteTemp("p.ward", kPolicy);
  Run r = Ward("lint --format json p.ward", InScratch());
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  auto j = nlohmann::ordered_json::parse(r.out);
  CHECK(j["version"] == 1);
  std::vector<std::string> keys;
  for (auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"version", "findings", "diagnostics", "errors", "warnings",
                                         "notes", "suppressed"});
  CHECK(j["errors"] == 1);
  CHECK(j["warnings"] == 3);
  CHECK(j["suppressed"] == 1);
  const auto& first = j["findings"][0];
  std::vector<std::string> fkeys;
  for (auto& [k, v] : first.items()) fkeys.push_back(k);
  CHECK(fkeys == std::vector<std::string>{"rule", "name", "severity", "message", "file", "line",
                                          "column", "end_line", "end_column", "hint", "fix",
                                          "suppressed"});
  CHECK(first["rule"] == "L2101");
  CHECK(first["line"] == 4);
  CHECK(first["column"] == 5);
  CHECK(first["fix"]["replacement"] == "default errno EPERM");
  bool found = false;
  for (const auto& f : j["findings"]) {
    if (f["rule"] != "L2210") continue;
    found = true;
    CHECK(f["suppressed"] == true);
    CHECK(f["suppression"]["kind"] == "comment");
    CHECK(f["suppression"]["reason"] == "the build talks to the host's Docker on purpose");
    CHECK(f["suppression"]["line"] == 7);
  }
  CHECK(found);
}

TEST_CASE("lint --format sarif: valid SARIF 2.1.0 with rule metadata, regions, fixes") {
  WriteTemp("p.ward", kPolicy);
  Run r = Ward("lint --format sarif p.ward", InScratch());
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  const std::string file = WriteTemp("p.sarif", r.out);
  const std::string script = std::string(WARD_SOURCE_DIR) + "/tests/cli/lint_validate_sarif.py";
  const std::string schema =
      std::string(WARD_SOURCE_DIR) + "/../shared/schemas/sarif-schema-2.1.0.json";
  Run v = Shell("python3 " + script + " " + schema + " " + file);
  INFO(v.out << v.err);
  CHECK(v.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["version"] == "2.1.0");
  const auto& run = j["runs"][0];
  const auto& rule = run["tool"]["driver"]["rules"][0];
  CHECK(rule["id"] == "L2101");
  CHECK(rule["name"] == "default-allow");
  CHECK(rule["defaultConfiguration"]["level"] == "warning");
  CHECK(rule["shortDescription"]["text"] ==
        "a syscall deny-list admits every syscall added to the kernel later");
  const auto& res = run["results"][0];
  CHECK(res["ruleId"] == "L2101");
  const auto& loc = res["locations"][0]["physicalLocation"];
  CHECK(loc["artifactLocation"]["uri"] == "p.ward");
  CHECK(loc["region"] ==
        nlohmann::json{{"startLine", 4}, {"startColumn", 5}, {"endLine", 4}, {"endColumn", 18}});
  CHECK(res["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] ==
        "default errno EPERM");
  bool suppressed = false;
  for (const auto& x : run["results"]) {
    if (x["ruleId"] != "L2210") continue;
    suppressed = true;
    CHECK(x["suppressions"][0]["kind"] == "inSource");
    CHECK(x["suppressions"][0]["justification"] ==
          "the build talks to the host's Docker on purpose");
  }
  CHECK(suppressed);
}

TEST_CASE(
    "lint: a suppression needs a reason; without one it is a finding and suppresses nothing") {
  WriteTemp("noreason.ward",
            "policy p {\n  syscalls {\n    arch x86_64\n    // ward:allow L2101\n    default "
            "allow\n  }\n}\n");
  Run r = Ward("lint --color never --fail-on warning noreason.ward", InScratch());
  INFO(r.out);
  CHECK(r.status == 1);
  CHECK(r.out.find("noreason.ward:4:8: warning L2505 suppression-without-reason: the "
                   "suppression of L2101 gives no reason\n") != std::string::npos);
  CHECK(r.out.find("warning L2101 default-allow") != std::string::npos);
}

TEST_CASE("lint --config: levels change, off is listed as suppressed, bad files are usage errors") {
  WriteTemp("warn.ward", kWarningOnly);
  WriteTemp("strict.yaml", "rules:\n  L2404: error\n");
  Run r = Ward("lint --color never --config strict.yaml warn.ward", InScratch());
  CHECK(r.status == 1);
  CHECK(r.out.find("error L2404 decimal-size-unit") != std::string::npos);
  WriteTemp("off.yaml", "rules: {L2404: off}\n");
  r = Ward("lint --format json --fail-on warning --config off.yaml warn.ward", InScratch());
  CHECK(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["findings"][0]["rule"] == "L2404");
  CHECK(j["findings"][0]["suppressed"] == true);
  CHECK(j["findings"][0]["suppression"]["kind"] == "config");
  CHECK(j["findings"][0]["suppression"]["reason"] == "rule L2404 is off in the configuration");
  // .ward-lint.yaml in the current folder is read without --config.
  WriteTemp(".ward-lint.yaml", "rules: {L2404: error}\n");
  CHECK(Ward("lint warn.ward", InScratch()).status == 1);
  std::filesystem::remove(ScratchDir() + "/.ward-lint.yaml");
  WriteTemp("bad.yaml", "rules: {L9999: error}\n");
  r = Ward("lint --config bad.yaml warn.ward", InScratch());
  CHECK(r.status == 2);
  CHECK(r.err == "ward lint: bad.yaml: unknown rule 'L9999'\n");
  CHECK(Ward("lint --config missing.yaml warn.ward", InScratch()).status == 2);
}

TEST_CASE("lint: policy errors are reported like check and exit 1; missing files exit 2") {
  WriteTemp("broken.ward", "policy p {\n  network {\n    allow tcp to 10.0.0.0/8 port x\n  }\n}\n");
  Run r = Ward("lint --color never broken.ward", InScratch());
  CHECK(r.status == 1);
  CHECK(r.err.find("broken.ward:3:34: error[") != std::string::npos);
  r = Ward("lint --format json broken.ward", InScratch());
  CHECK(r.status == 1);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["findings"].empty());
  CHECK(j["diagnostics"].size() == 1);
  CHECK(j["errors"] == 1);
  r = Ward("lint --format sarif broken.ward", InScratch());
  CHECK(r.status == 1);
  CHECK(nlohmann::json::parse(r.out)["runs"][0]["results"][0]["level"] == "error");
  CHECK(Ward("lint --fail-on never broken.ward", InScratch()).status == 1);
  CHECK(Ward("lint nothing-here.ward", InScratch()).status == 2);
  CHECK(Ward("lint --format yaml broken.ward", InScratch()).status == 2);
  // Garbage never crashes.
  WriteTemp("garbage.ward", std::string("\xff\xfe policy {{{ \"\0x", 18));
  CHECK(Ward("lint garbage.ward", InScratch()).status == 1);
}

TEST_CASE("lint: every bundled policy lints clean (findings only as justified suppressions)") {
  Run r = Ward("lint --color never --fail-on warning " + std::string(WARD_SOURCE_DIR) + "/policies",
               kStdEnv);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("0 errors, 0 warnings, 0 notes") != std::string::npos);
  r = Ward("lint --format json " + std::string(WARD_SOURCE_DIR) + "/policies", kStdEnv);
  const nlohmann::json listed = nlohmann::json::parse(r.out);
  CHECK(listed["findings"].size() == 8);
  for (const auto& f : listed["findings"]) {
    CHECK(f["suppressed"] == true);
    CHECK(!f["suppression"]["reason"].get<std::string>().empty());
  }
}
