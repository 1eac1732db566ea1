// B3003 (bypass-reopened): the warnings every backend that enforces the
// syscalls section gives for the rules re-opening a bypass class the IR
// closes (compiler/syscalls.h, Bypass).
#pragma once

#include "compiler/syscalls.h"
#include "language/diagnostics.h"

namespace ward::backend {

// One warning per rule and class, at the rule, in source order.
void WarnReopenedBypasses(const ir::SyscallRules& rules, DiagnosticSink& sink);

}  // namespace ward::backend
