// The pooling order of extends: bases first, in the order listed, a base
// reached twice counted once; deep chains do not exhaust the stack.
#include <catch2/catch.hpp>

#include "compiler/extends.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {
namespace {

std::string Order(const FrontendResult& r, const std::string& name) {
  for (const ast::Policy& p : r.program.file(r.program.roots.at(0))->policies) {
    if (p.name.text != name) continue;
    std::string out;
    for (const ast::Policy* s : ir::ExtendsOrder(r.program, p)) {
      out += (out.empty() ? "" : " ") + s->name.text;
    }
    return out;
  }
  return "?";
}

}  // namespace

TEST_CASE("extends: bases in order, each after its own bases; a diamond counts once") {
  auto r = CheckSource(R"(
abstract policy d {}
abstract policy b extends d {}
abstract policy c extends d {}
policy a extends b, c {}
policy e extends c, b {}
)");
  REQUIRE(r->codes() == "");
  CHECK(Order(*r, "a") == "d b c a");
  CHECK(Order(*r, "e") == "d c b e");
  CHECK(Order(*r, "d") == "d");
}

TEST_CASE("extends: a chain of 5,000 policies") {
  std::string text = "abstract policy p0 {}\n";
  for (int i = 1; i < 5000; ++i) {
    text +=
        "abstract policy p" + std::to_string(i) + " extends p" + std::to_string(i - 1) + " {}\n";
  }
  text += "policy top extends p4999 {}\n";
  auto r = CheckSource(text);
  REQUIRE(r->codes() == "");
  const ast::Policy& top = r->program.file(r->program.roots.at(0))->policies.back();
  std::vector<const ast::Policy*> order = ir::ExtendsOrder(r->program, top);
  REQUIRE(order.size() == 5001);
  CHECK(order.front()->name.text == "p0");
  CHECK(order.back()->name.text == "top");
}

}  // namespace ward::test
