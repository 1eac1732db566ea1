#include "importers/docker_seccomp/docker_arches.h"

#include <algorithm>

namespace ward::importers {
namespace {

// The OCI names of the runtime spec and runc (moby's archMap lists
// loongarch64 since 2024); those without a Ward architecture are killed
// by every Ward policy (x32 always).
constexpr OciArch kOciArches[] = {
    {"SCMP_ARCH_X86_64", Arch::kX86_64},   {"SCMP_ARCH_X86", Arch::kX86},
    {"SCMP_ARCH_AARCH64", Arch::kAarch64}, {"SCMP_ARCH_ARM", Arch::kArm},
    {"SCMP_ARCH_RISCV64", Arch::kRiscv64}, {"SCMP_ARCH_PPC64LE", Arch::kPpc64le},
    {"SCMP_ARCH_S390X", Arch::kS390x},     {"SCMP_ARCH_X32", std::nullopt},
    {"SCMP_ARCH_MIPS", std::nullopt},      {"SCMP_ARCH_MIPS64", std::nullopt},
    {"SCMP_ARCH_MIPS64N32", std::nullopt}, {"SCMP_ARCH_MIPSEL", std::nullopt},
    {"SCMP_ARCH_MIPSEL64", std::nullopt},  {"SCMP_ARCH_MIPSEL64N32", std::nullopt},
    {"SCMP_ARCH_PPC", std::nullopt},       {"SCMP_ARCH_PPC64", std::nullopt},
    {"SCMP_ARCH_S390", std::nullopt},      {"SCMP_ARCH_PARISC", std::nullopt},
    {"SCMP_ARCH_PARISC64", std::nullopt},  {"SCMP_ARCH_LOONGARCH64", std::nullopt},
};

}  // namespace

const OciArch* FindOciArch(std::string_view name) {
  for (const OciArch& a : kOciArches) {
    if (name == a.oci) return &a;
  }
  return nullptr;
}

std::string_view NativeName(Arch arch) {
  switch (arch) {
    case Arch::kX86_64:
      return "amd64";
    case Arch::kX86:
      return "x86";
    case Arch::kAarch64:
      return "arm64";
    case Arch::kArm:
      return "arm";
    case Arch::kRiscv64:
      return "riscv64";
    case Arch::kPpc64le:
      return "ppc64le";
    case Arch::kS390x:
      return "s390x";
  }
  return "";
}

std::optional<Arch> FromNativeName(std::string_view name) {
  for (Arch a : AllArches()) {
    if (NativeName(a) == name) return a;
  }
  return std::nullopt;
}

void AddArch(std::vector<Arch>* arches, Arch a) {
  if (std::find(arches->begin(), arches->end(), a) == arches->end()) arches->push_back(a);
  std::sort(arches->begin(), arches->end());
}

}  // namespace ward::importers
