// cli/unified_diff.h against its real consumer: GNU patch applies every diff
// it prints and gets the new text back, over random texts and contexts.
// (front_door_cli_test compares a whole `fmt --diff` with diff -u's hunks.)
#include "cli/unified_diff.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "tests/cli/run_ward.h"
#include "tests/property_rounds.h"

using ward::cli::UnifiedDiff;
using ward::test::Run;
using ward::test::ScratchDir;
using ward::test::Shell;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Lines from a small alphabet, so that texts share many lines; sometimes no
// newline at the end, sometimes empty.
std::string RandomText(std::mt19937_64& rng) {
  const int lines = static_cast<int>(rng() % 40);
  std::string text;
  for (int i = 0; i < lines; ++i) text += "line " + std::to_string(rng() % 6) + "\n";
  if (!text.empty() && rng() % 4 == 0) text.pop_back();
  return text;
}

// A mutation of `text`: lines dropped, added and changed here and there.
std::string Mutate(const std::string& text, std::mt19937_64& rng) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(start, end - start);
    switch (rng() % 10) {
      case 0:
        break;  // dropped
      case 1:
        out += "new " + std::to_string(rng() % 3) + "\n" + line;
        break;  // added
      case 2:
        out += "changed\n";
        break;
      default:
        out += line;
    }
    start = end;
  }
  if (rng() % 5 == 0) out += "tail";
  return out;
}

}  // namespace

TEST_CASE("unified diff: equal texts give nothing; edge ranges are GNU diff's", "[cli][fmt]") {
  CHECK(UnifiedDiff("a/x", "b/x", "same\n", "same\n").empty());
  CHECK(UnifiedDiff("a/x", "b/x", "", "one\n") == "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+one\n");
  CHECK(UnifiedDiff("a/x", "b/x", "one\n", "") == "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-one\n");
  CHECK(UnifiedDiff("a/x", "b/x", "x\n", "x") ==
        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n");
}

TEST_CASE("unified diff: patch turns the old text into the new, over random texts", "[cli][fmt]") {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("WARD_SEED")) seed = std::strtoull(s, nullptr, 10);
  INFO("seed " << seed << " (replay: WARD_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  const std::string dir = ScratchDir() + "/unified-diff";
  std::filesystem::create_directories(dir);
  const int rounds = ward::test::Rounds(200);
  for (int round = 0; round < rounds; ++round) {
    const std::string before = RandomText(rng);
    const std::string after = rng() % 8 == 0 ? RandomText(rng) : Mutate(before, rng);
    const size_t context = rng() % 4;
    const std::string diff = UnifiedDiff("a/f", "b/f", before, after, context);
    INFO("round " << round << ", context " << context << "\n" << diff);
    if (before == after) {
      CHECK(diff.empty());
      continue;
    }
    Put(dir + "/f", before);
    Put(dir + "/f.diff", diff);
    Run r = Shell("cd " + dir + " && patch -p1 --quiet --force < f.diff");
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    REQUIRE(Slurp(dir + "/f") == after);
  }
}
