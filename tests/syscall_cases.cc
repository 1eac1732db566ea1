#include "tests/syscall_cases.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

namespace ward::test::sys {
namespace {

// Syscalls whose conditions the generator writes, when the parameter is a
// scalar on every architecture of the policy.
const std::vector<std::string> kConditional = {
    "socket", "kill",     "personality", "prctl", "ioctl",  "fcntl",  "dup3",     "lseek",
    "setuid", "mprotect", "madvise",     "flock", "tgkill", "listen", "shutdown", "clone"};
const std::vector<std::string> kPlain = {
    "read",    "write",        "getppid",        "getpid",         "openat",     "close",
    "mmap",    "clone3",       "io_uring_setup", "io_uring_enter", "socketcall", "ipc",
    "connect", "semget",       "shmat",          "sendto",         "exit_group", "ptrace",
    "bpf",     "open",         "@basic-io",      "@network-io",    "@process",   "@io-uring",
    "@ipc",    "@file-system", "@system-service"};
const std::vector<std::string> kActions = {"allow",        "allow",      "allow", "errno EPERM",
                                           "errno EACCES", "errno 4095", "kill",  "kill-thread",
                                           "trap",         "log",        "notify"};

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

const std::vector<Arch>& AllArches() {
  static const std::vector<Arch> v = {Arch::kX86_64, Arch::kX86,     Arch::kAarch64, Arch::kArm,
                                      Arch::kS390x,  Arch::kPpc64le, Arch::kRiscv64};
  return v;
}

std::string Generator::Program() {
  arches_.clear();
  arches_.push_back(Coin(3) ? Arch::kX86_64 : Pick(AllArches()));
  for (int n = Coin(3); n > 0; --n) arches_.push_back(Pick(AllArches()));
  std::string arch_list;
  for (Arch a : std::set<Arch>(arches_.begin(), arches_.end())) {
    arch_list += (arch_list.empty() ? "" : ", ") + std::string(ArchName(a));
  }
  std::vector<std::string> rules[2];  // base's, p's
  for (int n = Coin(4); n > 0; --n) rules[0].push_back(Rule());
  for (int n = 1 + Coin(8); n > 0; --n) rules[1].push_back(Rule());
  // Half the programs, on purpose: a group rule and a rule naming one of
  // its members directly, of any actions, in one policy or across
  // extends, either one first.
  for (int n = Coin(2) ? 1 + Coin(3) : 0; n > 0; --n) {
    for (const std::string& r : GroupAndDirect()) {
      std::vector<std::string>& into = rules[Coin(2)];
      into.insert(into.begin() + Coin(static_cast<int>(into.size()) + 1), r);
    }
  }
  std::string base = "abstract policy base { syscalls {\n";
  for (const std::string& r : rules[0]) base += "  " + r + "\n";
  std::string p = "policy p extends base { syscalls {\n  arch " + arch_list + "\n";
  if (Coin(4)) p += "  default " + Pick(kActions) + "\n";
  for (const std::string& r : rules[1]) p += "  " + r + "\n";
  return base + "} }\n" + p + "} }\n";
}

// One name in three from every name the tables know (new ones included).
std::string Generator::PlainName() {
  if (Coin(3) == 0) return Pick(AllSyscallNames());
  return Pick(kPlain);
}

// {group rule, direct rule}; the direct one conditional two times in three.
std::vector<std::string> Generator::GroupAndDirect() {
  static const std::vector<std::pair<std::string, std::string>> kMembers = {
      {"@network-io", "socket"},
      {"@network-io", "listen"},
      {"@network-io", "shutdown"},
      {"@process", "kill"},
      {"@process", "prctl"},
      {"@process", "clone"},
      {"@process", "tgkill"},
      {"@basic-io", "lseek"},
      {"@basic-io", "dup3"},
      {"@system-service", "ioctl"},
      {"@system-service", "personality"},
      {"@system-service", "madvise"},
      {"@system-service", "flock"},
      {"@system-service", "socket"}};
  const auto& [group, member] = Pick(kMembers);
  std::string direct = Pick(kActions) + " " + member;
  if (Coin(3)) {
    const std::string c = Condition(member);
    if (!c.empty()) direct += " if " + c;
  }
  return {Pick(kActions) + " " + group, direct};
}

std::string Generator::Rule() {
  if (Coin(5) < 2) {
    std::string r = Pick(kActions) + " " + PlainName();
    for (int n = Coin(3); n > 0; --n) r += ", " + PlainName();
    return r;
  }
  // A conditional rule, on a listed syscall or, one in six, on any name
  // (no condition when its parameter is not a scalar everywhere).
  const std::string name = Coin(6) ? Pick(kConditional) : Pick(AllSyscallNames());
  std::string conds;
  for (int n = Coin(4) ? 1 : 2; n > 0; --n) {
    const std::string c = Condition(name);
    if (!c.empty()) conds += (conds.empty() ? "" : " and ") + c;
  }
  return Pick(kActions) + " " + name + (conds.empty() ? "" : " if " + conds);
}

// A condition on a parameter that is a scalar, in the same place, on
// every architecture of the policy; "" when the pick is not one.
std::string Generator::Condition(const std::string& name) {
  auto sig = SyscallSignature(name);
  if (!sig || sig->empty()) return "";
  const int arg = Coin(static_cast<int>(std::min<size_t>(sig->size(), 4)));
  int bits = 64;
  bool is_signed = true;
  for (Arch a : arches_) {
    const ParamType t = ClassifyParam((*sig)[arg], a);
    if (t.kind != ParamKind::kScalar || ParamOrderDiffers(name, arg, a)) return "";
    bits = std::min(bits, t.bits);
    is_signed &= t.is_signed;
  }
  const std::string a = "arg" + std::to_string(arg);
  switch (Coin(9)) {
    case 0:
      return a + " == " + Value(bits, is_signed);
    case 1:
      return a + " != " + Value(bits, is_signed);
    case 2:
      return a + " < " + Value(bits, is_signed);
    case 3:
      return a + " <= " + Value(bits, is_signed);
    case 4:
      return a + " > " + Value(bits, is_signed);
    case 5:
      return a + " >= " + Value(bits, is_signed);
    case 6: {
      static const std::vector<uint64_t> kMasks = {
          0xff, 0xf0, 1, 0x80000000, 0x10000000, 0xffffffff, 0x100000000, 0xffffffff00000000};
      uint64_t mask = Pick(kMasks);
      if (bits < 64) mask &= 0xffffffff;
      if (!mask) mask = 1;
      const uint64_t value = Coin(2) ? mask : mask & rng_();
      Remember(value);
      Remember(mask);
      return a + " & " + Hex(mask) + " == " + Hex(value);
    }
    case 7:
      return a + " in [" + Value(bits, is_signed) + ", " + Value(bits, is_signed) + "]";
    default:
      return a + " not in [" + Value(bits, is_signed) + ", " + Value(bits, is_signed) + "]";
  }
}

std::string Generator::Value(int bits, bool is_signed) {
  static const std::vector<uint64_t> k32 = {
      0, 1, 2, 3, 10, 17, 0x7f, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 0x10000000};
  static const std::vector<uint64_t> k64 = {0x100000000, 0xffffffffffffffff, 0x8000000000000000,
                                            0x10000000a};
  if (is_signed && Coin(5) == 0) {
    const int64_t v = -1 - Coin(3);
    Remember(static_cast<uint64_t>(v));
    return std::to_string(v);
  }
  const uint64_t v = bits == 64 && Coin(4) == 0 ? Pick(k64) : Pick(k32);
  Remember(v);
  return Hex(v);
}

void Generator::Remember(uint64_t v) {
  for (uint64_t w : {v, v + 1, v - 1, v | (uint64_t{1} << 32), v & 0xffffffff, ~v}) {
    values_.push_back(w);
  }
}

}  // namespace ward::test::sys
