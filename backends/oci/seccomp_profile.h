// The OCI/Docker seccomp profile of the IR's syscall section: the JSON that
// `docker run --security-opt seccomp=FILE`, podman, runc/crun
// (`linux.seccomp`) and Kubernetes `seccompProfile: Localhost` read. Those
// runtimes hand it to libseccomp, so the profile gives libseccomp only the
// IR's disjoint regions: one entry per set of syscalls with the same action
// and the same argument tests, never a rule whose action is the default.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "compiler/syscalls.h"
#include "language/diagnostics.h"

namespace ward::backend::oci {

// libseccomp's OCI spelling of an architecture: "SCMP_ARCH_X86_64", ...
std::string_view OciArchName(Arch arch);
// The OCI action: "SCMP_ACT_ALLOW", ... (`kill` is SCMP_ACT_KILL_PROCESS:
// runc and crun read SCMP_ACT_KILL as kill-thread).
std::string_view OciActionName(ir::SysAction::Kind kind);

// Fills `out` with the profile. Returns false after an error diagnostic
// (B3002): a syscall whose regions differ between the policy's
// architectures (one profile applies one set of rules to all of them), or
// `notify` where runc refuses it (as the default, or for `write`).
bool SeccompProfile(const ir::SyscallRules& rules, DiagnosticSink& sink,
                    nlohmann::ordered_json* out);

}  // namespace ward::backend::oci
