// The diagnostic code catalogue: unique, well-formed, and documented.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "language/codes.h"

using namespace ward;

namespace {

std::string ReadDoc(const std::string& relative) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("every code is unique, well-formed and listed in its folder's README.md") {
  // W codes in language/README.md, B codes (backends) in backends/README.md.
  const std::string language = ReadDoc("language/README.md");
  const std::string backends = ReadDoc("backends/README.md");
  std::set<std::string_view> codes, titles;
  for (int i = 0; i < static_cast<int>(Code::kCount); ++i) {
    Code c = static_cast<Code>(i);
    std::string_view code = CodeString(c);
    INFO(code);
    CHECK(code.size() == 5);
    CHECK(((code[0] == 'W' && (code[1] == '0' || code[1] == '1')) ||
           (code[0] == 'B' && code[1] == '3')));
    const std::string& readme = code[0] == 'W' ? language : backends;
    CHECK(codes.insert(code).second);
    CHECK(titles.insert(CodeTitle(c)).second);
    CHECK(readme.find("| " + std::string(code) + " | " + std::string(CodeTitle(c)) + " |") !=
          std::string::npos);
  }
}
