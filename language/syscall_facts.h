// Facts about system calls the checker needs: architectures, names per
// architecture (the kernel's own tables, facts/kernel/), and every parameter's C type (a table
// generated from the kernel's tracefs formats, facts/syscall_signatures.inc).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ward {

enum class Arch { kX86_64, kX86, kAarch64, kArm, kRiscv64, kPpc64le, kS390x };

inline constexpr Arch kDefaultArch = Arch::kX86_64;

std::span<const Arch> AllArches();
std::string_view ArchName(Arch arch);  // libseccomp's spelling: "x86_64", "x86", ...
std::optional<Arch> ParseArch(std::string_view name);
int ArchBits(Arch arch);  // 64 or 32: the width of `long` and pointers

// The syscall's number on `arch`, or nullopt when it does not exist there,
// from the kernel's own tables (facts/kernel/, facts/kernel_syscalls.inc).
// Where x86 and s390x wire a socket or SysV IPC call directly as well as
// through socketcall/ipc, this is the direct number (socket is 359 on x86).
std::optional<int> SyscallNumber(Arch arch, std::string_view name);
// libseccomp's own number for the name on `arch` (its resolver, and for the
// calls it hides behind a multiplexer its number-to-name table), or
// nullopt: for the tests that check the two tables agree.
std::optional<int> LibseccompNumber(Arch arch, std::string_view name);
// True when libseccomp resolves the name on `arch` (to a number or to a
// pseudo-number of its own); a rule on any other name cannot be given to
// libseccomp by name.
bool LibseccompKnows(Arch arch, std::string_view name);
// The version of the libseccomp this process runs with, "2.5.4".
const std::string& LibseccompVersion();
bool SyscallExistsAnywhere(std::string_view name);
// Every syscall name of some architecture's kernel table, sorted.
const std::vector<std::string>& AllSyscallNames();

enum class ParamKind { kScalar, kPointer, kUnknown };

struct ParamType {
  ParamKind kind = ParamKind::kUnknown;
  int bits = 0;  // 16, 32 or 64 for scalars
  bool is_signed = false;
  std::string c_type;
};

// The C types of the syscall's parameters, or nullopt when the table has no
// entry (the syscall does not exist on the kernel it was generated from).
std::optional<std::vector<std::string>> SyscallSignature(std::string_view name);
// True when parameter `arg` of the syscall is not the table's parameter on
// `arch` (the table follows x86_64): clone's order differs where the kernel
// is built with CLONE_BACKWARDS (x86, arm, ppc64le: tls and child_tid
// swapped, args 3 and 4) or CLONE_BACKWARDS2 (s390x: newsp and flags
// swapped, args 0 and 1). A condition there would test another value than
// the one the policy names, so the checker refuses it (W1044).
bool ParamOrderDiffers(std::string_view name, int arg, Arch arch);
// How `arch` passes a parameter of this C type.
ParamType ClassifyParam(std::string_view c_type, Arch arch);

}  // namespace ward
