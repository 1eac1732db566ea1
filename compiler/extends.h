// The order in which a policy's sources are pooled (language.md § Extends):
// the bases in the order listed, each preceded by its own bases, then the
// policy itself; a base reached twice (a diamond) counts once, where first
// reached.
#pragma once

#include <vector>

#include "language/loader.h"

namespace ward::ir {

std::vector<const ast::Policy*> ExtendsOrder(const Program& program, const ast::Policy& policy);

}  // namespace ward::ir
