// A deliberately simple evaluator of Docker seccomp profiles: what Docker,
// runc and libseccomp 2.5 do with one call, written from their sources and
// from behaviour measured on this machine, sharing nothing with importers/
// or backends/ but the syscall facts of language/. It reads a profile as
// written (Docker's `includes`/`excludes`, archMap) and the profiles Ward
// emits alike.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "language/syscall_facts.h"

namespace ward::test {

struct DockerHost {
  std::optional<Arch> arch;                       // the host; nullopt: unknown (no archMap match)
  std::vector<std::string> caps;                  // the container's bounding set
  std::optional<std::array<uint64_t, 3>> kernel;  // nullopt: newer than every minKernel
};

// The Ward architectures of the filter Docker builds on this host
// (libseccomp always adds the native one).
std::vector<Arch> FilterArches(const nlohmann::json& profile, const DockerHost& host);

struct Verdict {
  // "allow", "log", "notify", "trap", "kill-thread", "kill", "errno N".
  std::string action;
  // Conditional rules with different actions matched: libseccomp's choice
  // depends on rule order; `action` is then the most restrictive of them.
  bool ambiguous = false;
};

// The action for one call with argument registers `args` on `arch`.
Verdict Decide(const nlohmann::json& profile, const DockerHost& host, Arch arch,
               const std::string& name, const std::array<uint64_t, 6>& args);

}  // namespace ward::test
