#include "tests/language/frontend_fixture.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ward::test {

const ast::Policy& FrontendResult::policy(size_t index) const {
  return program.file(program.roots.at(0))->policies.at(index);
}

std::string FrontendResult::codes() const {
  std::string out;
  for (const Diagnostic& d : sink.diagnostics()) {
    out += (out.empty() ? "" : " ") + std::string(CodeString(d.code));
  }
  return out;
}

std::unique_ptr<FrontendResult> CheckSource(const std::string& source,
                                            const std::map<std::string, std::string>& extra) {
  auto r = std::make_unique<FrontendResult>();
  FrontendOptions options;
  options.std_dir = std::string(WARD_SOURCE_DIR) + "/policies/std";
  options.memory_files = extra;
  options.memory_files["test.ward"] = source;
  r->program = RunFrontend({"test.ward"}, options, r->sources, r->sink);
  r->text = RenderText(r->sources, r->sink, RenderOptions{});
  r->json = RenderJson(r->sources, r->sink);
  return r;
}

std::string ReadTestFile(const std::string& relative) {
  std::ifstream in(std::string(WARD_TESTDATA_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool MatchesGolden(const std::string& relative, const std::string& actual) {
  const char* update = std::getenv("UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream out(std::string(WARD_TESTDATA_DIR) + "/" + relative, std::ios::binary);
    out << actual;
    return true;
  }
  return ReadTestFile(relative) == actual;
}

}  // namespace ward::test
