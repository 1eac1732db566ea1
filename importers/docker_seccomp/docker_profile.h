// A Docker/OCI seccomp profile as Docker reads it (moby
// profiles/seccomp): the JSON decoded the way Go's encoding/json decodes it
// into Docker's types (members in order, keys folded as Go folds them, the
// last of duplicate keys deciding, unknown keys ignored; README.md), with no
// meaning attached yet.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "importers/import.h"

namespace ward::importers {

struct DockerArg {
  uint64_t index = 0;
  uint64_t value = 0;
  uint64_t value_two = 0;
  std::string op;     // "SCMP_CMP_EQ", ...
  std::string where;  // JSON pointer
};

// `includes` / `excludes`.
struct DockerFilter {
  std::vector<std::string> caps;
  std::vector<std::string> arches;  // libseccomp native names: "amd64", "arm64", ...
  // KERNEL.MAJOR as moby's KernelVersion decodes it; {0, 0} for "" (moby
  // keeps the pointer: every kernel is new enough).
  std::optional<std::array<uint64_t, 2>> min_kernel;
};

struct DockerSyscall {
  std::vector<std::string> names;  // `name` (deprecated) folded in
  std::string name;
  std::string action;
  std::optional<uint64_t> errno_ret;
  std::vector<DockerArg> args;
  std::string comment;
  DockerFilter includes;
  DockerFilter excludes;
  std::string where;
};

struct DockerArchMap {
  std::string arch;
  std::vector<std::string> sub_arches;
};

struct DockerProfile {
  std::string default_action;  // empty when absent
  std::optional<uint64_t> default_errno_ret;
  std::vector<std::string> architectures;
  std::vector<DockerArchMap> arch_map;
  std::vector<DockerSyscall> syscalls;
  std::vector<std::string> flags;
  std::string listener_path;
};

// moby's reading of a `minKernel` string: exactly two dot-separated
// decimal numbers, each 0-255 (Go's strconv.ParseUint(s, 10, 8)), not
// both 0. "" is {0, 0}. nullopt otherwise, with the reason in `why`.
std::optional<std::array<uint64_t, 2>> ParseMinKernel(std::string_view text, std::string* why);

// Decodes `json`; false after at least one error in `diagnostics` (where
// Docker would refuse to load the profile). Unknown keys are warnings.
bool ParseDockerProfile(std::string_view json, DockerProfile* out,
                        std::vector<ImportDiagnostic>* diagnostics);

}  // namespace ward::importers
