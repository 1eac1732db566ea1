// A small classic-BPF interpreter for seccomp programs, written from the
// kernel's documented semantics (Documentation/networking/filter.rst,
// Documentation/userspace-api/seccomp_filter.rst, and the load-time checks of
// bpf_check_classic and seccomp_check_filter), sharing nothing with the
// backend. The tests run every exported program through it and compare
// with the IR, and the benchmark counts executed instructions with it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ward::test::cbpf {

struct Insn {
  uint16_t code = 0;
  uint8_t jt = 0;
  uint8_t jf = 0;
  uint32_t k = 0;
};

// struct seccomp_data, as the kernel hands it to the filter.
struct SeccompData {
  int32_t nr = 0;
  uint32_t arch = 0;
  uint64_t instruction_pointer = 0;
  std::array<uint64_t, 6> args{};
};

struct Program {
  std::vector<Insn> insns;
  bool big_endian = false;  // the byte order of the machine the filter is for
};

// Decodes struct sock_filter[] bytes in the given byte order and applies the
// kernel's load-time checks: 1 to 4096 instructions, only the opcodes
// seccomp accepts, absolute loads 32-bit aligned inside seccomp_data, jumps
// inside the program, no constant division by zero or shift by 32 or more,
// scratch memory written before it is read on every path, and a RET last.
// False with *error naming the first violation.
bool Load(const std::string& bytes, bool big_endian, Program* out, std::string* error);

struct Outcome {
  uint32_t ret = 0;        // the SECCOMP_RET_* value
  int executed = 0;        // instructions executed, the RET included
  bool read_args = false;  // loaded a word of args[] or instruction_pointer
  std::string error;       // non-empty: behaviour this interpreter does not model
};

// Runs a loaded program on one system call.
Outcome Run(const Program& program, const SeccompData& data);

// SECCOMP_RET_* values and helpers.
inline constexpr uint32_t kRetKillProcess = 0x80000000;
inline constexpr uint32_t kRetKillThread = 0x00000000;
inline constexpr uint32_t kRetTrap = 0x00030000;
inline constexpr uint32_t kRetErrno = 0x00050000;
inline constexpr uint32_t kRetUserNotif = 0x7fc00000;
inline constexpr uint32_t kRetTrace = 0x7ff00000;
inline constexpr uint32_t kRetLog = 0x7ffc0000;
inline constexpr uint32_t kRetAllow = 0x7fff0000;
inline constexpr uint32_t kRetActionFull = 0xffff0000;
inline constexpr uint32_t kRetData = 0x0000ffff;

}  // namespace ward::test::cbpf
