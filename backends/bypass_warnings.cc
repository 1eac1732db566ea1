#include "backends/bypass_warnings.h"

#include <cstring>
#include <map>
#include <set>
#include <tuple>

namespace ward::backend {
namespace {

struct Reopening {
  Span rule;
  std::set<std::string> names;
  std::vector<Arch> arches;  // in rules.arches order
  ir::SysAction fallback;
};

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// "errno ENOSYS" rather than "errno 38".
std::string ActionText(const ir::SysAction& a) {
  const char* name =
      a.kind == ir::SysAction::Kind::kErrno ? strerrorname_np(a.errno_value) : nullptr;
  return name ? "errno " + std::string(name) : ir::ToString(a);
}

std::string Message(ir::Bypass bypass, const Reopening& r) {
  std::vector<std::string> arches;
  for (Arch a : r.arches) arches.push_back(std::string(ArchName(a)));
  const std::string on = " on " + Join(arches);
  switch (bypass) {
    case ir::Bypass::kIoUring:
      return "this rule re-opens io_uring (" +
             Join(std::vector<std::string>(r.names.begin(), r.names.end())) +
             "), closed by default: the operations io_uring submits are not syscalls, so no "
             "seccomp filter sees them";
    case ir::Bypass::kClone3:
      return "this rule re-opens clone3" + on +
             ", where clone's flags are filtered: clone3 passes its flags behind a pointer, "
             "which no seccomp filter can read";
    case ir::Bypass::kSocketcall:
      return "this rule re-opens socketcall" + on +
             ", where the socket calls are filtered: socketcall passes their arguments behind "
             "a pointer, which no seccomp filter can read";
    case ir::Bypass::kIpc:
      return "this rule re-opens ipc" + on +
             ", where the SysV IPC calls are filtered: ipc passes their arguments behind a "
             "pointer, which no seccomp filter can read";
  }
  return "";
}

}  // namespace

void WarnReopenedBypasses(const ir::SyscallRules& rules, DiagnosticSink& sink) {
  using Key = std::tuple<FileId, uint32_t, ir::Bypass>;
  std::map<Key, Reopening> found;
  for (Arch arch : rules.arches) {
    auto per_arch = rules.closed.find(arch);
    if (per_arch == rules.closed.end()) continue;
    for (const auto& [name, closure] : per_arch->second) {
      for (Span s : closure.reopened) {
        Reopening& r = found[{s.file, s.begin, closure.bypass}];
        r.rule = s;
        r.names.insert(name);
        if (r.arches.empty() || r.arches.back() != arch) r.arches.push_back(arch);
        r.fallback = closure.fallback;
      }
    }
  }
  for (const auto& [key, r] : found) {
    sink.Warning(Code::kBypassReopened, r.rule, Message(std::get<2>(key), r),
                 "keep it only if the workload needs it; without it these calls get " +
                     ActionText(r.fallback));
  }
}

}  // namespace ward::backend
