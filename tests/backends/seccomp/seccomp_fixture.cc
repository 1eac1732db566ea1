#include "tests/backends/seccomp/seccomp_fixture.h"

#include <seccomp.h>

#include <map>

#include "backends/seccomp/seccomp_backend.h"

namespace ward::test {

std::unique_ptr<Compiled> CompileSeccomp(const std::string& source) {
  auto c = CompileWith(backend::SeccompBackend(), source);
  INFO(source << "\n" << c->Diagnostics());
  REQUIRE(c->result.ok);
  return c;
}

const std::string& Bpf(const Compiled& c, Arch arch) {
  return c.Artifact("." + std::string(ArchName(arch)) + ".bpf");
}

cbpf::Program Interpreter(const std::string& bpf, Arch arch) {
  cbpf::Program p;
  std::string error;
  const bool loaded = cbpf::Load(bpf, arch == Arch::kS390x, &p, &error);
  INFO(error);
  REQUIRE(loaded);
  return p;
}

cbpf::Outcome Interpret(const cbpf::Program& program, Arch arch, uint32_t nr, const Args& args,
                        std::optional<uint32_t> audit_arch) {
  cbpf::SeccompData d;
  d.nr = static_cast<int32_t>(nr);
  d.arch = audit_arch ? *audit_arch : backend::seccomp::AuditArch(arch);
  d.instruction_pointer = 0x7f0000001000;
  d.args = args;
  return cbpf::Run(program, d);
}

std::optional<ir::SysAction> ActionOfRet(uint32_t ret) {
  using Kind = ir::SysAction::Kind;
  const uint32_t data = ret & cbpf::kRetData;
  switch (ret & cbpf::kRetActionFull) {
    case cbpf::kRetKillProcess:
      return ir::SysAction{Kind::kKill, 0};
    case cbpf::kRetKillThread:
      return ir::SysAction{Kind::kKillThread, 0};
    case cbpf::kRetTrap:
      if (data) return std::nullopt;
      return ir::SysAction{Kind::kTrap, 0};
    case cbpf::kRetErrno:
      return ir::SysAction{Kind::kErrno, static_cast<int>(data)};
    case cbpf::kRetUserNotif:
      return ir::SysAction{Kind::kNotify, 0};
    case cbpf::kRetLog:
      return ir::SysAction{Kind::kLog, 0};
    case cbpf::kRetAllow:
      return ir::SysAction{Kind::kAllow, 0};
  }
  return std::nullopt;
}

std::string SyscallName(Arch arch, uint32_t nr) {
  static const auto tables = [] {
    std::map<Arch, std::map<uint32_t, std::string>> all;
    for (Arch a : AllArches()) {
      for (const std::string& name : AllSyscallNames()) {
        if (auto n = SyscallNumber(a, name)) all[a][static_cast<uint32_t>(*n)] = name;
      }
    }
    return all;
  }();
  const auto& per_arch = tables.at(arch);
  auto it = per_arch.find(nr);
  return it == per_arch.end() ? "" : it->second;
}

ir::SysAction Expected(const ir::SyscallRules& rules, Arch arch, uint32_t nr, const Args& args) {
  if (arch == Arch::kX86_64 && nr >= 0x40000000 && nr != 0xffffffff) {
    return {ir::SysAction::Kind::kKill, 0};
  }
  const std::string name = SyscallName(arch, nr);
  // A syscall libseccomp does not know cannot be emitted off the build
  // host's architecture: the backend leaves its (narrower) rules out, so
  // the default decides there (backends/seccomp/README.md).
  if (!name.empty() && !LibseccompKnows(arch, name) &&
      backend::seccomp::AuditArch(arch) != seccomp_arch_native()) {
    return rules.default_action;
  }
  return rules.Decide(arch, name, args);
}

std::string Describe(const ir::SysAction& a) { return ir::ToString(a); }

}  // namespace ward::test
