#include "compiler/extends.h"

#include <set>

namespace ward::ir {

std::vector<const ast::Policy*> ExtendsOrder(const Program& program, const ast::Policy& policy) {
  // A post-order walk with an explicit stack: a chain of extends can be far
  // deeper than the call stack.
  struct Frame {
    const ast::Policy* policy;
    size_t next = 0;
  };
  std::vector<const ast::Policy*> order;
  std::set<const ast::Policy*> seen = {&policy};
  std::vector<Frame> stack = {{&policy}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.policy->bases.size()) {
      order.push_back(top.policy);
      stack.pop_back();
      continue;
    }
    auto [file, index] = top.policy->bases[top.next++];
    const ast::Policy* base = &program.file(file)->policies[index];
    if (seen.insert(base).second) stack.push_back({base});
  }
  return order;
}

}  // namespace ward::ir
