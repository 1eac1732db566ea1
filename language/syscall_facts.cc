#include "language/syscall_facts.h"

#include <seccomp.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <set>
#include <utility>

namespace ward {
namespace {

struct ArchInfo {
  Arch arch;
  std::string_view name;
  uint32_t token;
  int bits;
};

constexpr std::array<ArchInfo, 7> kArches = {{
    {Arch::kX86_64, "x86_64", SCMP_ARCH_X86_64, 64},
    {Arch::kX86, "x86", SCMP_ARCH_X86, 32},
    {Arch::kAarch64, "aarch64", SCMP_ARCH_AARCH64, 64},
    {Arch::kArm, "arm", SCMP_ARCH_ARM, 32},
    {Arch::kRiscv64, "riscv64", SCMP_ARCH_RISCV64, 64},
    {Arch::kPpc64le, "ppc64le", SCMP_ARCH_PPC64LE, 64},
    {Arch::kS390x, "s390x", SCMP_ARCH_S390X, 64},
}};

constexpr std::array<Arch, 7> kArchList = {Arch::kX86_64, Arch::kX86,     Arch::kAarch64,
                                           Arch::kArm,    Arch::kRiscv64, Arch::kPpc64le,
                                           Arch::kS390x};

const ArchInfo& Info(Arch arch) {
  for (const ArchInfo& i : kArches) {
    if (i.arch == arch) return i;
  }
  return kArches[0];
}

struct Signature {
  const char* name;
  std::initializer_list<const char*> args;
};

const Signature kSignatures[] = {
#include "language/facts/syscall_signatures.inc"
};

// Every syscall's number per architecture, from the kernel's own tables
// (facts/kernel/*.tbl, through facts/gen_kernel_syscalls.py), sorted by
// architecture, then name.
struct KernelSyscall {
  Arch arch;
  const char* name;
  int nr;
};

const KernelSyscall kKernelSyscalls[] = {
#include "language/facts/kernel_syscalls.inc"
};

// tracefs names a few syscalls by the kernel's internal function name.
const std::map<std::string_view, std::string_view> kTraceNames = {
    {"stat", "newstat"},   {"lstat", "newlstat"},      {"fstat", "newfstat"},
    {"uname", "newuname"}, {"sendfile", "sendfile64"}, {"umount2", "umount"},
};

}  // namespace

std::span<const Arch> AllArches() { return kArchList; }
std::string_view ArchName(Arch arch) { return Info(arch).name; }
int ArchBits(Arch arch) { return Info(arch).bits; }

std::optional<Arch> ParseArch(std::string_view name) {
  for (const ArchInfo& i : kArches) {
    if (i.name == name) return i.arch;
  }
  return std::nullopt;
}

namespace {

// The syscalls that have their own number on `arch`, by name: libseccomp's
// number-to-name table. Its name-to-number resolver answers a pseudo-number
// for the socket and SysV IPC calls of architectures with socketcall and
// ipc multiplexers (x86, ppc64le, s390x), even where the kernel also wires
// them directly (socket is 359 on x86 since Linux 4.3).
const std::map<std::string, int>& DirectNumbers(Arch arch) {
  static const auto tables = [] {
    std::map<Arch, std::map<std::string, int>> all;
    for (const ArchInfo& a : kArches) {
      std::map<std::string, int>& names = all[a.arch];
      for (auto [first, last] : {std::pair{0, 1024}, std::pair{0xf0000, 0xf0100}}) {
        for (int nr = first; nr < last; ++nr) {
          if (char* n = seccomp_syscall_resolve_num_arch(a.token, nr)) {
            names.emplace(n, nr);
            free(n);
          }
        }
      }
    }
    return all;
  }();
  return tables.at(arch);
}

}  // namespace

std::optional<int> SyscallNumber(Arch arch, std::string_view name) {
  const KernelSyscall* begin = std::begin(kKernelSyscalls);
  const KernelSyscall* end = std::end(kKernelSyscalls);
  auto key = [](const KernelSyscall& k) { return std::pair{static_cast<int>(k.arch), k.name}; };
  const std::pair<int, std::string_view> want{static_cast<int>(arch), name};
  auto it = std::lower_bound(begin, end, want, [&](const KernelSyscall& k, const auto& w) {
    const auto have = key(k);
    return have.first != w.first ? have.first < w.first : std::string_view(have.second) < w.second;
  });
  if (it == end || it->arch != arch || it->name != name) return std::nullopt;
  return it->nr;
}

bool LibseccompKnows(Arch arch, std::string_view name) {
  std::string n(name);
  return seccomp_syscall_resolve_name_arch(Info(arch).token, n.c_str()) != __NR_SCMP_ERROR;
}

const std::string& LibseccompVersion() {
  static const std::string version = [] {
    const scmp_version* v = seccomp_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->micro);
  }();
  return version;
}

std::optional<int> LibseccompNumber(Arch arch, std::string_view name) {
  std::string n(name);
  int nr = seccomp_syscall_resolve_name_arch(Info(arch).token, n.c_str());
  if (nr >= 0) return nr;
  // A negative pseudo-number: the syscall is absent, or only its direct
  // number was hidden behind a multiplexer.
  const std::map<std::string, int>& direct = DirectNumbers(arch);
  auto it = direct.find(n);
  if (it == direct.end()) return std::nullopt;
  return it->second;
}

bool SyscallExistsAnywhere(std::string_view name) {
  for (Arch a : kArchList) {
    if (SyscallNumber(a, name)) return true;
  }
  return false;
}

const std::vector<std::string>& AllSyscallNames() {
  static const std::vector<std::string> names = [] {
    std::set<std::string> all;
    for (const KernelSyscall& k : kKernelSyscalls) all.insert(k.name);
    return std::vector<std::string>(all.begin(), all.end());
  }();
  return names;
}

std::optional<std::vector<std::string>> SyscallSignature(std::string_view name) {
  auto alias = kTraceNames.find(name);
  std::string_view key = alias != kTraceNames.end() ? alias->second : name;
  auto it = std::lower_bound(std::begin(kSignatures), std::end(kSignatures), key,
                             [](const Signature& s, std::string_view k) { return s.name < k; });
  if (it == std::end(kSignatures) || it->name != key) return std::nullopt;
  return std::vector<std::string>(it->args.begin(), it->args.end());
}

bool ParamOrderDiffers(std::string_view name, int arg, Arch arch) {
  if (name != "clone") return false;
  switch (arch) {
    case Arch::kS390x:
      return arg == 0 || arg == 1;
    case Arch::kX86:
    case Arch::kArm:
    case Arch::kPpc64le:
      return arg == 3 || arg == 4;
    case Arch::kX86_64:
    case Arch::kAarch64:
    case Arch::kRiscv64:
      return false;
  }
  return true;
}

ParamType ClassifyParam(std::string_view c_type, Arch arch) {
  std::string t(c_type);
  // `const` does not change how the value is passed.
  if (t.rfind("const ", 0) == 0) t = t.substr(6);
  ParamType p;
  p.c_type = std::string(c_type);
  // Pointer types and typedefs of pointers: the kernel reads what they point
  // to after the filter ran, so they cannot be filtered.
  static const std::set<std::string> kPointerTypedefs = {"cap_user_header_t", "cap_user_data_t",
                                                         "__sighandler_t", "caddr_t"};
  if (t.find('*') != std::string::npos || kPointerTypedefs.count(t)) {
    p.kind = ParamKind::kPointer;
    p.bits = ArchBits(arch);
    return p;
  }
  struct Scalar {
    const char* name;
    int bits;  // 0 = the arch's long
    bool is_signed;
  };
  static constexpr Scalar kScalars[] = {
      {"int", 32, true},
      {"unsigned int", 32, false},
      {"unsigned", 32, false},
      {"pid_t", 32, true},
      {"uid_t", 32, false},
      {"gid_t", 32, false},
      {"u32", 32, false},
      {"__u32", 32, false},
      {"clockid_t", 32, true},
      {"timer_t", 32, true},
      {"mqd_t", 32, true},
      {"key_t", 32, true},
      {"key_serial_t", 32, true},
      {"rwf_t", 32, true},
      {"qid_t", 32, false},
      {"umode_t", 16, false},
      {"long", 0, true},
      {"unsigned long", 0, false},
      {"size_t", 0, false},
      {"off_t", 0, true},
      {"aio_context_t", 0, false},
      {"loff_t", 64, true},
      {"u64", 64, false},
      {"__u64", 64, false},
      {"s64", 64, true},
      {"long long", 64, true},
      {"unsigned long long", 64, false},
      {"__kernel_old_time_t", 0, true},
      {"__s32", 32, true},
      {"enum landlock_rule_type", 32, true},
  };
  for (const Scalar& s : kScalars) {
    if (t == s.name) {
      p.kind = ParamKind::kScalar;
      p.bits = s.bits ? s.bits : ArchBits(arch);
      p.is_signed = s.is_signed;
      return p;
    }
  }
  return p;  // kUnknown: conditions on it are refused
}

}  // namespace ward
