// ir::Policy: the canonical, fully resolved meaning of one policy (no
// imports, no extends, no variables, no order). Two policies that mean the
// same thing have equal IRs; provenance (the spans of the rules behind each
// element) is kept beside the canonical form and ignored by operator==.
#pragma once

#include <optional>
#include <string>

#include "compiler/filesystem.h"
#include "compiler/network.h"
#include "compiler/process.h"
#include "compiler/syscalls.h"
#include "language/diagnostics.h"
#include "language/loader.h"

namespace ward::ir {

struct Policy {
  std::string name;
  Metadata metadata;
  FileRules filesystem;
  NetRules network;
  SyscallRules syscalls;
  ProcessRules process;
  Limits limits;
  Targets targets;

  bool operator==(const Policy& o) const {
    return metadata == o.metadata && filesystem == o.filesystem && network == o.network &&
           syscalls == o.syscalls && process == o.process && limits == o.limits &&
           targets == o.targets;
  }
};

// Lowers one checked policy (the program must have no errors). Semantic
// errors found only now (syscall conflicts, W1043, naming both rules) go to
// `sink`; the IR returned is then deterministic but must not be compiled.
Policy Lower(const Program& program, const ast::Policy& policy, DiagnosticSink& sink);

// `ward check`'s lowering (language/README.md: check reports every error
// compile would): lowers every policy of the program's root files, abstract
// ones included (so a base's own rules are checked even when nothing
// extends it), and reports each lowering-time error once into `sink`
// however many policies reach the rules behind it. The program must have no
// errors.
void CheckLowering(const Program& program, DiagnosticSink& sink);

// The non-abstract policies of the program's root files, in order; with a
// name, only that one. Reports (and returns empty) when a root file has
// several policies and no name is given, or the name is unknown.
std::vector<const ast::Policy*> SelectPolicies(const Program& program,
                                               const std::optional<std::string>& name,
                                               std::string* error);

}  // namespace ward::ir
