#include "compiler/extends.h"

#include <functional>
#include <set>

namespace ward::ir {

std::vector<const ast::Policy*> ExtendsOrder(const Program& program, const ast::Policy& policy) {
  std::vector<const ast::Policy*> order;
  std::set<const ast::Policy*> seen;
  std::function<void(const ast::Policy&)> walk = [&](const ast::Policy& p) {
    if (!seen.insert(&p).second) return;
    for (auto [file, index] : p.bases) walk(program.file(file)->policies[index]);
    order.push_back(&p);
  };
  walk(policy);
  return order;
}

}  // namespace ward::ir
