// Compiles a policy held in memory with the seatbelt backend and a home
// directory, and asks the SBPL reader about files, for the seatbelt tests.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "backends/seatbelt/seatbelt_backend.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/seatbelt/sbpl_reader.h"

namespace ward::test {

inline const char* kHome = "/Users/agent";

// The operation a file right's use is checked as.
inline const char* Operation(ir::FsRight right) {
  switch (right) {
    case ir::FsRight::kRead:
      return "file-read-data";
    case ir::FsRight::kWrite:
      return "file-write-data";
    case ir::FsRight::kExec:
      return "process-exec";
  }
  return "";
}

inline bool OpAllowed(const sbpl::Profile& p, const std::string& operation,
                      const std::string& path) {
  sbpl::Query q;
  q.operation = operation;
  q.path = path;
  return p.Allows(q);
}

inline bool FileAllowed(const sbpl::Profile& p, ir::FsRight right, const std::string& path) {
  return OpAllowed(p, Operation(right), path);
}

// WARD_SEED, or a fresh seed.
inline uint32_t Seed() {
  std::random_device rd;
  return std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
}

inline std::unique_ptr<Compiled> Seatbelt(const std::string& source,
                                          const std::optional<std::string>& home = kHome,
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
