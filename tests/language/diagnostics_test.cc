// SCRATCH dumper (temporary)
#include <catch2/catch.hpp>
#include <memory>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include "tests/language/frontend_fixture.h"
TEST_CASE("dump") {
  const char* dir = std::getenv("DUMP_DIR");
  if (!dir) return;
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().string());
  std::sort(names.begin(), names.end());
  for (auto& n : names) {
    if (n.size() < 3 || n.substr(n.size() - 3) != ".in") continue;
    std::ifstream in(n); std::stringstream ss; ss << in.rdbuf();
    std::string all = ss.str();
    // sections separated by lines "--- name"
    std::map<std::string, std::string> extra;
    std::string main;
    std::string cur = "";
    std::istringstream lines(all); std::string line; std::string buf;
    auto flush = [&]() { if (cur.empty()) main = buf; else extra[cur] = buf; buf.clear(); };
    while (std::getline(lines, line)) {
      if (line.rfind("--- ", 0) == 0) { flush(); cur = line.substr(4); continue; }
      buf += line + "\n";
    }
    flush();
    auto r = ward::test::CheckSource(main, extra);
    std::cout << "=== " << n << " [" << r->codes() << "]\n" << r->text;
    if (std::getenv("DUMP_JSON")) std::cout << r->json;
  }
}
