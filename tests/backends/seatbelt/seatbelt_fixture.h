// Compiles a policy held in memory with the seatbelt backend and a home
// directory, for the seatbelt tests.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "backends/seatbelt/seatbelt_backend.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {

inline std::unique_ptr<Compiled> Seatbelt(const std::string& source,
                                          const std::optional<std::string>& home = "/Users/agent",
                                          const std::map<std::string, std::string>& extra = {}) {
  auto c = std::make_unique<Compiled>();
  c->front = CheckSource(source, extra);
  INFO(source << "\n" << c->front->text);
  REQUIRE_FALSE(c->front->sink.has_errors());
  const ast::File* f = c->front->program.file(c->front->program.roots.at(0));
  REQUIRE(f != nullptr);
  c->ir = ir::Lower(c->front->program, f->policies.back(), c->sink);
  INFO(c->Diagnostics());
  REQUIRE_FALSE(c->sink.has_errors());
  backend::Options options;
  options.home = home;
  c->result = backend::SeatbeltBackend().Compile(c->ir, options, c->sink);
  return c;
}

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ward::test
