// Compiles a policy held in memory with one backend, for the backend tests.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "compiler/policy.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {

struct Compiled {
  std::unique_ptr<FrontendResult> front;
  ir::Policy ir;
  DiagnosticSink sink;  // the lowering's and the backend's
  backend::Result result;

  // The backend's diagnostics, rendered as `ward compile` prints them.
  std::string Diagnostics() const { return RenderText(front->sources, sink, RenderOptions{}); }
  // The artifact whose path ends with `suffix`; fails the test when absent.
  const std::string& Artifact(const std::string& suffix) const {
    for (const backend::Artifact& a : result.artifacts) {
      if (a.path.size() >= suffix.size() &&
          a.path.compare(a.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return a.bytes;
      }
    }
    FAIL("no artifact ending in " << suffix);
    static const std::string none;
    return none;
  }
};

// Checks `source` (test.ward), lowers its last policy and compiles it.
inline std::unique_ptr<Compiled> CompileWith(const backend::Backend& backend,
                                             const std::string& source,
                                             const backend::Options& options = {},
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
  c->result = backend.Compile(c->ir, options, c->sink);
  return c;
}

}  // namespace ward::test
