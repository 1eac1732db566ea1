#include "tests/compiler/diff_fixture.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "compiler/extends.h"
#include "compiler/ir_json.h"

namespace ward::test {

std::optional<Loaded> TryLoad(const std::string& text, const std::string& name) {
  Loaded l;
  l.r = CheckSource(text);
  if (l.r->sink.has_errors()) return std::nullopt;
  std::string error;
  std::vector<const ast::Policy*> chosen = ir::SelectPolicies(l.r->program, name, &error);
  if (chosen.size() != 1) return std::nullopt;
  l.sources = ir::ExtendsOrder(l.r->program, *chosen[0]);
  DiagnosticSink sink;
  l.ir = ir::Lower(l.r->program, *chosen[0], sink);
  if (sink.has_errors()) return std::nullopt;
  return l;
}

Loaded Load(const std::string& text, const std::string& name) {
  std::optional<Loaded> l = TryLoad(text, name);
  INFO(text << "\n" << CheckSource(text)->text);
  REQUIRE(l);
  return std::move(*l);
}

Strings Lines(const ir::DiffResult& d) {
  Strings out;
  for (const ir::Change& c : d.changes) out.push_back(c.line);
  return out;
}

Strings Lines(const std::string& before, const std::string& after) {
  Loaded b = Load(before), a = Load(after);
  return Lines(ir::Diff(b.ir, a.ir));
}

Strings Where(const Loaded& l, const std::vector<Span>& spans) {
  Strings out;
  out.reserve(spans.size());
  for (Span s : spans) out.push_back(ir::Where(l.r->sources, s));
  return out;
}

Strings Split(const std::string& s, char sep) {
  Strings out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace ward::test
