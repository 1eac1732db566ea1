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
                                          const std::map<std::string, std::string>& extra = {},
                                          bool partial = false) {
  backend::Options options;
  options.home = home;
  options.partial = partial;
  return CompileWith(backend::SeatbeltBackend(), source, options, extra);
}

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ward::test
