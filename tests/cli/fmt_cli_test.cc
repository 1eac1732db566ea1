// `ward fmt [--check] FILE...` as a user runs it: exit codes, what is printed,
// and what is (and is not) written.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

const std::string kMessy = "policy p {\n  limits {   cpus 2\n memory 4GiB }\n}\n";
const std::string kCanonical = "policy p {\n  limits {\n    cpus 2\n    memory 4GiB\n  }\n}\n";
const std::string kBroken = "policy p {\n  limits { cpus 2 \n";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder for one test case's files.
std::string CaseDir(const std::string& name) {
  std::string dir = ScratchDir() + "/fmt-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST_CASE("ward fmt --check: exit 1 and a hint for a file that would change, nothing written",
          "[cli][fmt]") {
  std::string dir = CaseDir("check");
  std::string messy = Write(dir, "messy.ward", kMessy);
  std::string clean = Write(dir, "clean.ward", kCanonical);
  Run r = Ward("fmt --check " + dir);
  CHECK(r.status == 1);
  CHECK(r.out == "would reformat " + messy +
                     "\n"
                     "--- " +
                     messy +
                     "\n"
                     "+++ " +
                     messy +
                     " (formatted)\n"
                     "@@ -1,4 +1,6 @@\n"
                     " policy p {\n"
                     "-  limits {   cpus 2\n"
                     "- memory 4GiB }\n"
                     "+  limits {\n"
                     "+    cpus 2\n"
                     "+    memory 4GiB\n"
                     "+  }\n"
                     " }\n");
  CHECK(r.err == "ward fmt: 1 of 2 files would be reformatted\n");
  CHECK(Slurp(messy) == kMessy);
  CHECK(Slurp(clean) == kCanonical);

  r = Ward("fmt --check " + clean);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
}

TEST_CASE("ward fmt rewrites only files that change, keeping their mode", "[cli][fmt]") {
  std::string dir = CaseDir("rewrite");
  std::string messy = Write(dir, "messy.ward", kMessy);
  std::string clean = Write(dir, "clean.ward", kCanonical);
  chmod(messy.c_str(), 0640);
  auto clean_time = std::filesystem::last_write_time(clean);
  Run r = Ward("fmt " + messy + " " + clean);
  CHECK(r.status == 0);
  CHECK(r.out == "reformatted " + messy + "\n");
  CHECK(Slurp(messy) == kCanonical);
  CHECK(std::filesystem::last_write_time(clean) == clean_time);
  struct stat st {};
  REQUIRE(stat(messy.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  // No temporary files left behind.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);
  // Idempotent: a second run changes nothing.
  r = Ward("fmt " + dir);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(Ward("fmt --check " + dir).status == 0);
}

TEST_CASE("ward fmt refuses a file with a syntax error and leaves it untouched", "[cli][fmt]") {
  std::string dir = CaseDir("broken");
  std::string broken = Write(dir, "broken.ward", kBroken);
  std::string messy = Write(dir, "messy.ward", kMessy);
  Run r = Ward("fmt --color never " + broken + " " + messy);
  CHECK(r.status == 1);
  CHECK(r.out == "reformatted " + messy + "\n");
  CHECK(r.err.find(broken + ":3:1: error[W0001]: unexpected end of file") != std::string::npos);
  CHECK(Slurp(broken) == kBroken);
  CHECK(Slurp(messy) == kCanonical);

  r = Ward("fmt --check --color never " + broken);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error[W0001]") != std::string::npos);
}

TEST_CASE("ward fmt --format json: one document with each file's status", "[cli][fmt]") {
  std::string dir = CaseDir("json");
  std::string broken = Write(dir, "a-broken.ward", kBroken);
  std::string clean = Write(dir, "b-clean.ward", kCanonical);
  std::string messy = Write(dir, "c-messy.ward", kMessy);
  Run r = Ward("fmt --check --format json " + dir);
  CHECK(r.status == 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["files"] == nlohmann::json::parse(R"([
    {"file": ")" + broken + R"(", "status": "error"},
    {"file": ")" + clean + R"(", "status": "unchanged"},
    {"file": ")" + messy + R"(", "status": "would-reformat"}])"));
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0]["code"] == "W0001");
  CHECK(Slurp(messy) == kMessy);
}

TEST_CASE("ward fmt usage errors exit 2", "[cli][fmt]") {
  CHECK(Ward("fmt").status == 2);
  Run r = Ward("fmt " + ScratchDir() + "/no-such.ward");
  CHECK(r.status == 2);
  CHECK(r.err.find("no such file or directory") != std::string::npos);
  std::string empty = CaseDir("empty");
  r = Ward("fmt " + empty);
  CHECK(r.status == 2);
  CHECK(r.err == "ward fmt: no .ward files found\n");
}

TEST_CASE("ward fmt --check on the repository's policies: all canonical", "[cli][fmt]") {
  Run r = Ward(std::string("fmt --check ") + WARD_SOURCE_DIR + "/policies");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
}

}  // namespace
}  // namespace ward::test
