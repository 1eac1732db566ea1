// What the diff tests share: policies from source text through the whole
// front end and lowering, and the diff's lines and rules as strings.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diff.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {

struct Loaded {
  std::unique_ptr<FrontendResult> r;
  std::vector<const ast::Policy*> sources;  // ExtendsOrder: bases first
  ir::Policy ir;
};

// The policy `name` of `text` ("test.ward"), lowered; the checker and the
// lowering must report no error.
Loaded Load(const std::string& text, const std::string& name = "p");
// The same, or nullopt when the checker or the lowering reports an error
// (random policies that happen to conflict).
std::optional<Loaded> TryLoad(const std::string& text, const std::string& name = "p");

using Strings = std::vector<std::string>;

Strings Lines(const ir::DiffResult& d);
// The lines of the diff from the policy `p` of `before` to that of `after`.
Strings Lines(const std::string& before, const std::string& after);
// "test.ward:LINE:COL" for each span.
Strings Where(const Loaded& l, const std::vector<Span>& spans);
// The non-empty parts of s between separators.
Strings Split(const std::string& s, char sep);

}  // namespace ward::test
