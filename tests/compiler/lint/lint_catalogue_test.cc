// The lint rule catalogue: ids unique, well-formed, grouped by family, and
// each documented in compiler/lint/README.md with its name and level.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/lint/lint.h"

using namespace ward;

TEST_CASE("every lint rule is unique, well-formed and listed in compiler/lint/README.md") {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/compiler/lint/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  std::set<std::string_view> ids, names;
  std::string_view previous;
  for (const lint::RuleInfo& r : lint::AllRules()) {
    INFO(r.id);
    CHECK(r.id.size() == 5);
    CHECK(r.id.substr(0, 2) == "L2");
    CHECK(r.id > previous);  // sorted: FindRule bisects
    previous = r.id;
    CHECK(r.id[2] - '1' == static_cast<int>(r.family));
    CHECK(ids.insert(r.id).second);
    CHECK(names.insert(r.name).second);
    CHECK(!r.rationale.empty());
    CHECK(!r.help.empty());
    CHECK(lint::FindRule(r.id) == &r);
    CHECK(readme.find("| " + std::string(r.id) + " | " + std::string(r.name) + " | " +
                      std::string(lint::LevelName(r.level)) + " |") != std::string::npos);
  }
  CHECK(lint::FindRule("L2999") == nullptr);
}

TEST_CASE("configuration: levels by rule id") {
  lint::Config config;
  std::string error;
  REQUIRE(lint::ParseConfig("rules: {L2101: error, L2502: off}\n", &config, &error));
  CHECK(config.levels.at("L2101") == lint::Level::kError);
  CHECK(config.levels.at("L2502") == lint::Level::kOff);
  CHECK(lint::ParseConfig("", &config, &error));
  CHECK_FALSE(lint::ParseConfig("rules: {L2999: error}\n", &config, &error));
  CHECK(error == "unknown rule 'L2999'");
  CHECK_FALSE(lint::ParseConfig("rules: {L2101: loud}\n", &config, &error));
  CHECK(error == "rule L2101: level must be error, warning, note or off");
  CHECK_FALSE(lint::ParseConfig("severity: {}\n", &config, &error));
  CHECK(error == "unknown key 'severity' (expected 'rules')");
  CHECK_FALSE(lint::ParseConfig("rules: [L2101\n", &config, &error));
  CHECK_FALSE(error.empty());
}

TEST_CASE("every L code the lint sources name is in the catalogue") {
  // A finding added under an id the catalogue lacks would have no rule.
  size_t seen = 0;
  for (const char* file :
       {"syscalls.cc", "network.cc", "filesystem.cc", "process.cc", "hygiene.cc", "lint.cc"}) {
    std::ifstream in(std::string(WARD_SOURCE_DIR) + "/compiler/lint/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    INFO(file);
    CHECK(!text.empty());
    for (size_t at = text.find("\"L2"); at != std::string::npos; at = text.find("\"L2", at + 1)) {
      const std::string id = text.substr(at + 1, 5);
      INFO(id);
      CHECK(lint::FindRule(id) != nullptr);
      ++seen;
    }
  }
  CHECK(seen >= lint::AllRules().size());
}
