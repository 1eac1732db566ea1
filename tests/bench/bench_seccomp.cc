// bench_seccomp: the seccomp backend's filter for a ~350-syscall allowlist
// (`allow @system-service`) with a few argument-checked syscalls. Prints
// figures; asserts nothing (conventions.md #20).
//
//   bench_seccomp [--calls N] [--repeat R] [--attach K]
//
// - the program's size and, through the cBPF interpreter of the tests, the
//   instructions executed per syscall (longest, average, argument-checked);
// - ns per call of getppid (no parameters, so Ward cannot filter its
//   arguments) and getpgid(0) (one pid_t parameter) in a child with no
//   filter, with Ward's filter (both allowed unconditionally), and with the
//   same policy plus `errno EPERM getpgid if arg0 == 12345` (argument-checked,
//   the call still allowed); best of R batches of N calls;
// - the time to attach the compiled filter (seccomp(2) in fresh children).
//
// Goals (issue 4): unconditional allowed syscalls within 5% of no filter (the
// kernel's constant-action cache skips the filter for them only if the
// program reaches their verdict from arch and number alone); an
// argument-checked syscall at most 25 executed instructions; attach under
// 200 us.
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/seccomp/filter.h"
#include "compiler/policy.h"
#include "enforcers/linux/seccomp.h"
#include "language/check.h"
#include "tests/backends/cbpf.h"

namespace {

using ward::Arch;
namespace sc = ward::backend::seccomp;
namespace cbpf = ward::test::cbpf;

const char* const kPolicy = R"(policy bench {
  syscalls {
    default errno EPERM
    allow @system-service
    allow getppid, getpgid
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno ENOSYS clone3
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
    errno EPERM personality if arg0 != PER_LINUX and arg0 != 0xffffffff
    errno EPERM ioctl if arg1 == 0x5412
    kill prctl if arg0 == PR_SET_MM
    errno EPERM mprotect if arg2 & PROT_EXEC == PROT_EXEC
%s  }
}
)";

struct Compiled {
  ward::ir::Policy ir;
  std::string bpf;
  double compile_ms = 0;
};

bool Compile(const std::string& extra, Compiled* out) {
  char text[2048];
  std::snprintf(text, sizeof text, kPolicy, extra.c_str());
  ward::FrontendOptions options;
  options.std_dir = WARD_BENCH_STD_DIR;
  options.memory_files["bench.ward"] = text;
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  ward::Program program = ward::RunFrontend({"bench.ward"}, options, sources, sink);
  if (sink.has_errors()) return false;
  out->ir = ward::ir::Lower(program, program.file(program.roots[0])->policies[0], sink);
  const auto start = std::chrono::steady_clock::now();
  sc::Filter filter;
  if (sink.has_errors() || !sc::BuildFilter(out->ir.syscalls, Arch::kX86_64, &filter, sink)) {
    std::fputs(ward::RenderText(sources, sink, ward::RenderOptions{}).c_str(), stderr);
    return false;
  }
  out->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out->bpf = std::move(filter.bpf);
  return true;
}

// ---- executed instructions --------------------------------------------------

void PathFigures(const Compiled& c) {
  cbpf::Program program;
  std::string error;
  if (!cbpf::Load(c.bpf, false, &program, &error)) {
    std::printf("the interpreter refuses the program: %s\n", error.c_str());
    return;
  }
  const auto& per_arch = c.ir.syscalls.syscalls.at(Arch::kX86_64);
  std::map<uint32_t, std::string> names;
  for (const std::string& name : ward::AllSyscallNames()) {
    if (auto nr = ward::SyscallNumber(Arch::kX86_64, name)) names[*nr] = name;
  }
  // The call a workload makes all the time, per checked syscall.
  const std::map<std::string, std::array<uint64_t, 6>> typical = {
      {"socket", {2, 1}},          // AF_INET, SOCK_STREAM
      {"ioctl", {1, 0x5401}},      // TCGETS
      {"prctl", {15}},             // PR_SET_NAME
      {"clone", {0x3d0f00}},       // pthread_create's flags
      {"mprotect", {0, 4096, 3}},  // PROT_READ | PROT_WRITE
      {"personality", {0xffffffff}},
      {"getpgid", {0}}};
  // Arguments worth trying on a checked syscall: each region's own values.
  auto samples = [&](const std::string& name) {
    std::vector<std::array<uint64_t, 6>> out = {{}};
    auto it = per_arch.find(name);
    if (it == per_arch.end()) return out;
    for (const ward::ir::Region& r : it->second) {
      std::array<uint64_t, 6> args{};
      for (const ward::ir::ArgTest& t : r.tests) args[t.arg] = t.value;
      out.push_back(args);
    }
    return out;
  };
  const uint32_t allow = sc::RetValue({ward::ir::SysAction::Kind::kAllow, 0});
  int longest = 0, cache_misses = 0;
  long total = 0, allowed_total = 0, allowed = 0;
  std::string longest_name;
  struct Checked {
    std::string name;
    size_t regions, emitted;
    int typical, longest;
  };
  std::vector<Checked> checked;
  for (const auto& [nr, name] : names) {
    auto it = per_arch.find(name);
    const bool conditional = it != per_arch.end() && it->second.size() > 1;
    int worst = 0, best_allowed = 1 << 30;
    for (const auto& args : samples(name)) {
      cbpf::SeccompData d;
      d.nr = static_cast<int32_t>(nr);
      d.arch = sc::AuditArch(Arch::kX86_64);
      d.args = args;
      const cbpf::Outcome o = cbpf::Run(program, d);
      worst = std::max(worst, o.executed);
      if (o.ret == allow) best_allowed = std::min(best_allowed, o.executed);
      if (!conditional && o.ret == allow) cache_misses += o.read_args;
    }
    total += worst;
    if (worst > longest) longest = worst, longest_name = name;
    if (!conditional && best_allowed < (1 << 30)) {
      allowed_total += best_allowed;
      ++allowed;
    }
    if (conditional) {
      size_t emitted = 0;
      for (const ward::ir::Region& r : it->second) {
        emitted += !(r.action == c.ir.syscalls.default_action);
      }
      cbpf::SeccompData d;
      d.nr = static_cast<int32_t>(nr);
      d.arch = sc::AuditArch(Arch::kX86_64);
      if (typical.count(name)) d.args = typical.at(name);
      checked.push_back({name, it->second.size(), emitted, cbpf::Run(program, d).executed, worst});
    }
  }
  size_t regions = 0;
  for (const auto& [name, list] : per_arch) regions += list.size();
  std::printf(
      "x86_64 filter: %zu instructions; %zu syscalls with regions (%zu regions), "
      "%zu argument-checked; built in %.2f ms\n",
      c.bpf.size() / 8, per_arch.size(), regions, checked.size(), c.compile_ms);
  std::printf(
      "executed instructions over the %zu x86_64 syscall numbers: longest %d (%s), "
      "average %.1f; the %ld unconditionally allowed: average %.1f\n",
      names.size(), longest, longest_name.c_str(), double(total) / names.size(), allowed,
      double(allowed_total) / std::max(allowed, 1L));
  std::printf("  argument-checked      regions  emitted  typical call  longest   [goal <= 25]\n");
  for (const Checked& k : checked) {
    std::printf("  %-20s %8zu %8zu %13d %8d\n", k.name.c_str(), k.regions, k.emitted, k.typical,
                k.longest);
  }
  std::printf(
      "unconditionally allowed syscalls whose path reads an argument: %d  "
      "[0: all eligible for the kernel's constant-action cache]\n",
      cache_misses);
}

// ---- timings in children -----------------------------------------------------

struct Shared {
  double ns[4];
  double attach_us;
  int ok;
};

Shared* Page() {
  static Shared* page = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  return page;
}

// Thread CPU time: the machine is shared, and a preempted batch should not
// count the time other jobs ran. A syscall's kernel time is the thread's.
double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double Wall() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double NsPerCall(long nr, long arg, long calls) {
  const double start = Now();
  for (long i = 0; i < calls; ++i) syscall(nr, arg);
  return (Now() - start) / calls;
}

// In a child: no_new_privs, the filter (if any), then the loops.
void Measure(const std::string& bpf, long calls, double out[2]) {
  std::memset(Page(), 0, sizeof(Shared));
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    std::string error;
    if (!bpf.empty() && !ward::enforce::LoadSeccompFilter(bpf, {}, nullptr, &error)) _exit(1);
    NsPerCall(SYS_getppid, 0, calls / 10);  // warm up
    Page()->ns[0] = NsPerCall(SYS_getppid, 0, calls);
    Page()->ns[1] = NsPerCall(SYS_getpgid, 0, calls);
    Page()->ok = 1;
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  out[0] = Page()->ok ? Page()->ns[0] : -1;
  out[1] = Page()->ok ? Page()->ns[1] : -1;
}

// Wall-clock microseconds of LoadSeccompFilter in a fresh child (the
// kernel checks the program, translates and JITs it, and computes the
// constant-action cache).
// With `warm_up`, a first filter is attached before the one timed, so that
// the child's first seccomp call and its page faults are not counted.
double AttachMicros(const std::string& bpf, const std::string& warm_up) {
  std::memset(Page(), 0, sizeof(Shared));
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    std::string error;
    if (!warm_up.empty()) ward::enforce::LoadSeccompFilter(warm_up, {}, nullptr, &error);
    const double start = Wall();
    const bool ok = ward::enforce::LoadSeccompFilter(bpf, {}, nullptr, &error);
    Page()->attach_us = (Wall() - start) / 1000;
    Page()->ok = ok;
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return Page()->ok ? Page()->attach_us : -1;
}

void AttachFigures(const char* what, const std::string& bpf, const std::string& warm_up,
                   int count) {
  std::vector<double> us;
  for (int i = 0; i < count; ++i) us.push_back(AttachMicros(bpf, warm_up));
  std::sort(us.begin(), us.end());
  std::printf(
      "attach %s (%zu instructions)%s, %d children: min %.1f us, median %.1f us, "
      "max %.1f us\n",
      what, bpf.size() / 8, warm_up.empty() ? "" : " after a first filter", count, us.front(),
      us[us.size() / 2], us.back());
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 2000000;
  int repeat = 7, attach = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls") calls = std::stol(argv[i + 1]);
    if (flag == "--repeat") repeat = std::stoi(argv[i + 1]);
    if (flag == "--attach") attach = std::stoi(argv[i + 1]);
  }
  Compiled plain, checked;
  if (!Compile("", &plain) || !Compile("    errno EPERM getpgid if arg0 == 12345\n", &checked)) {
    std::printf("the benchmark policy does not compile\n");
    return 1;
  }
  PathFigures(plain);
  std::printf("with `errno EPERM getpgid if arg0 == 12345`: %zu instructions\n",
              checked.bpf.size() / 8);
  PathFigures(checked);

  // `default allow`: the cost of having any filter at all (every call then
  // takes the kernel's seccomp entry path), which no program can avoid.
  ward::ir::Policy empty;
  empty.syscalls.arches = {Arch::kX86_64};
  empty.syscalls.default_action = {ward::ir::SysAction::Kind::kAllow, 0};
  sc::Filter tiny;
  ward::DiagnosticSink sink;
  if (!sc::BuildFilter(empty.syscalls, Arch::kX86_64, &tiny, sink)) return 1;

  // Interleaved, best of `repeat`: the machine is shared.
  const std::pair<const char*, const std::string*> configs[] = {
      {"no filter", nullptr},
      {"`default allow` filter", &tiny.bpf},
      {"Ward's filter", &plain.bpf},
      {"argument-checked getpgid", &checked.bpf}};
  constexpr int kConfigs = 4;
  double best[kConfigs][2];
  for (auto& b : best) b[0] = b[1] = 1e18;
  for (int r = 0; r < repeat; ++r) {
    for (int c = 0; c < kConfigs; ++c) {
      double ns[2];
      Measure(configs[c].second ? *configs[c].second : "", calls, ns);
      for (int k = 0; k < 2; ++k) {
        if (ns[k] > 0) best[c][k] = std::min(best[c][k], ns[k]);
      }
    }
  }
  std::printf("\nCPU ns per call (thread time), best of %d x %ld calls:\n", repeat, calls);
  std::printf("  %-26s %10s %10s   vs no filter      vs `default allow`\n", "", "getppid",
              "getpgid(0)");
  for (int c = 0; c < kConfigs; ++c) {
    std::printf("  %-26s %10.1f %10.1f   %+6.1f%% %+6.1f%%   %+6.1f%% %+6.1f%%\n", configs[c].first,
                best[c][0], best[c][1], 100 * (best[c][0] / best[0][0] - 1),
                100 * (best[c][1] / best[0][1] - 1), 100 * (best[c][0] / best[1][0] - 1),
                100 * (best[c][1] / best[1][1] - 1));
  }
  std::printf("  [goal: unconditional allowed calls within 5%% of no filter]\n");

  std::printf("\n");
  AttachFigures("`default allow`", tiny.bpf, "", attach);
  AttachFigures("Ward's filter", plain.bpf, "", attach);
  AttachFigures("`default allow`", tiny.bpf, tiny.bpf, attach);
  AttachFigures("Ward's filter", plain.bpf, tiny.bpf, attach);
  std::printf("  [goal: attaching a compiled filter under 200 us]\n");
  return 0;
}
