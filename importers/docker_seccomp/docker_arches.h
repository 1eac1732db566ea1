// Architectures as Docker profiles name them: the OCI names of
// `architectures`/`archMap` (SCMP_ARCH_X86_64, ...) and libseccomp's names
// of the host that `includes.arches`/`excludes.arches` compare with (amd64,
// arm64, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "language/syscall_facts.h"

namespace ward::importers {

struct OciArch {
  const char* oci;
  std::optional<Arch> ward;  // nullopt: one Ward does not compile for (x32, MIPS, ...)
};

// The OCI architecture runc accepts under this name, or nullptr.
const OciArch* FindOciArch(std::string_view name);

// libseccomp's name of a host architecture ("amd64" for x86_64).
std::string_view NativeName(Arch arch);
std::optional<Arch> FromNativeName(std::string_view name);

// Adds `a` once, keeping AllArches() order.
void AddArch(std::vector<Arch>* arches, Arch a);

}  // namespace ward::importers
