// The diagnostic code catalogue: unique, well-formed, and documented.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "language/codes.h"

using namespace ward;

TEST_CASE("every code is unique, well-formed and listed in language/README.md") {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/language/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  std::set<std::string_view> codes, titles;
  for (int i = 0; i < static_cast<int>(Code::kCount); ++i) {
    Code c = static_cast<Code>(i);
    std::string_view code = CodeString(c);
    INFO(code);
    CHECK(code.size() == 5);
    CHECK((code[0] == 'W' && (code[1] == '0' || code[1] == '1')));
    CHECK(codes.insert(code).second);
    CHECK(titles.insert(CodeTitle(c)).second);
    CHECK(readme.find("| " + std::string(code) + " | " + std::string(CodeTitle(c)) + " |") !=
          std::string::npos);
  }
}
