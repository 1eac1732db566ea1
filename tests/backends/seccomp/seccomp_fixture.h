// Shared by the seccomp backend tests: compile a policy held in memory,
// load its programs into the cBPF interpreter, and say what language.md
// requires the filter to answer.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "backends/seccomp/filter.h"
#include "tests/backends/cbpf.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {

using Args = std::array<uint64_t, 6>;

// Compiles `source` (its last policy) with the seccomp backend; the test
// fails unless that succeeds.
std::unique_ptr<Compiled> CompileSeccomp(const std::string& source);

// The `.bpf` artifact for `arch`.
const std::string& Bpf(const Compiled& c, Arch arch);

// The program, checked as the kernel checks it at load time.
cbpf::Program Interpreter(const std::string& bpf, Arch arch);

// Runs one call of `arch` (its AUDIT_ARCH value unless `audit_arch`).
cbpf::Outcome Interpret(const cbpf::Program& program, Arch arch, uint32_t nr, const Args& args = {},
                        std::optional<uint32_t> audit_arch = std::nullopt);

// The action a SECCOMP_RET_* value stands for; nullopt for one Ward never
// emits (TRACE, a trap with data, an unknown action).
std::optional<ir::SysAction> ActionOfRet(uint32_t ret);

// The syscall with number `nr` on `arch`, or "" when none has it.
std::string SyscallName(Arch arch, uint32_t nr);

// What the filter for `arch` must answer for a call with that number:
// IR Decide by name (the default for a number no syscall has); on x86_64,
// a number with the x32 bit (0x40000000) or above it kills the process,
// except -1 (a tracer's skipped call), which takes the default.
ir::SysAction Expected(const ir::SyscallRules& rules, Arch arch, uint32_t nr, const Args& args);

std::string Describe(const ir::SysAction& a);

}  // namespace ward::test
