// bench_diff: how long ir::Diff takes on two generated policies of N rules
// each (2/5 network, 2/5 filesystem, 1/5 syscalls), after lowering. Prints
// figures; asserts nothing (conventions.md #20). The goal: two
// 10k-rule policies under 200 ms.
//
//   bench_diff [--sizes 1000,10000,100000] [--std DIR] [--repeat N]
//              [--pair equal|edited|unrelated]
//
// Pairs, per size:
//   equal     NEW is OLD with its rules in another order (no changes)
//   edited    NEW is OLD with 1% of its rules edited (a review's diff)
//   unrelated NEW is generated from another seed (every region changes)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/diff.h"
#include "compiler/policy.h"
#include "language/check.h"
#include "language/syscall_facts.h"

namespace {

std::string N(long n) { return std::to_string(n); }

// Network rules: CIDRs v4 and v6, ports, denies carving allows, domains and
// wildcards, ingress, unix sockets.
std::string NetRule(long i, uint32_t salt) {
  long a = (i * 7 + salt) % 200, b = (i / 3 + salt) % 250;
  switch (i % 8) {
    case 0:
      return "allow tcp to 10." + N(a) + "." + N(b) + ".0/24 ports 443, 8000-8100";
    case 1:
      return "deny tcp to 10." + N(a) + "." + N(b) + ".128/28";
    case 2:
      return "allow udp to 10.200." + N(a) + "." + N(b) + " port 53";
    case 3:
      return "allow tcp to \"svc-" + N(i) + ".example.com\" port 443";
    case 4:
      return "allow tcp to \"*.team-" + N(a) + ".example.org\" ports 443, 22";
    case 5:
      return "allow tcp to fd00:" + N(a) + ":" + N(b) + "::/48 port 22";
    case 6:
      return "allow ingress tcp from 192.168." + N(a) + ".0/24 port " + N(8000 + i % 1000);
    default:
      return "allow unix \"/run/app-" + N(a) + "/" + N(i) + ".sock\"";
  }
}

// Filesystem rules: trees, a deny carving each, `~`, `*` and `**`.
std::string FsRule(long i, uint32_t salt) {
  std::string app = "/srv/app-" + N((i + salt) % 97);
  switch (i % 7) {
    case 0:
      return "allow read \"" + app + "/data/" + N(i) + "\"";
    case 1:
      return "deny write \"" + app + "/data/" + N(i - 1) + "/secret\"";
    case 2:
      return "allow read write \"/tmp/app-" + N(i % 50) + "/" + N(i) + "\"";
    case 3:
      return "allow exec \"/opt/tool-" + N(i) + "/bin\"";
    case 4:
      return "deny read write \"~/.config/app-" + N(i) + "\"";
    case 5:
      return "allow read \"" + app + "/*/static/" + N(i % 11) + "\"";
    default:
      return "allow read \"~/.cache/app-" + N(i % 89) + "/**\"";
  }
}

// The x86_64 syscalls, and those whose arg0 is a scalar (filterable).
const std::vector<std::string>& Syscalls(bool filterable) {
  static const auto lists = [] {
    std::pair<std::vector<std::string>, std::vector<std::string>> out;
    for (const std::string& name : ward::AllSyscallNames()) {
      if (!ward::SyscallNumber(ward::Arch::kX86_64, name)) continue;
      out.first.push_back(name);
      auto sig = ward::SyscallSignature(name);
      if (sig && !sig->empty() &&
          ward::ClassifyParam((*sig)[0], ward::Arch::kX86_64).kind == ward::ParamKind::kScalar) {
        out.second.push_back(name);
      }
    }
    return out;
  }();
  return filterable ? lists.second : lists.first;
}

// Syscall rules: one action per syscall, whatever the salt (two
// unconditional rules of a policy must agree), and every fourth rule an
// errno for one value of a filterable syscall's arg0.
std::string SysRule(long i, uint32_t salt) {
  static const char* const kActions[] = {"allow", "kill", "errno EPERM", "log", "trap"};
  if (i % 4 == 3) {
    const std::vector<std::string>& names = Syscalls(true);
    return "errno EPERM " + names[(i * 7 + salt) % names.size()] +
           " if arg0 == " + N((i * 13 + salt) % 4096);
  }
  const std::vector<std::string>& names = Syscalls(false);
  const std::string& name = names[(i * 31 + salt) % names.size()];
  return std::string(kActions[std::hash<std::string>()(name) % 5]) + " " + name;
}

struct Rules {
  std::vector<std::string> net, fs, sys;
};

std::string Text(const Rules& r) {
  std::string t = "policy bench {\n  network {\n";
  for (const std::string& x : r.net) t += "    " + x + "\n";
  t += "  }\n  filesystem {\n";
  for (const std::string& x : r.fs) t += "    " + x + "\n";
  t += "  }\n  syscalls {\n    default errno EPERM\n    allow @system-service\n";
  for (const std::string& x : r.sys) t += "    " + x + "\n";
  return t + "  }\n}\n";
}

Rules Generate(long n, uint32_t salt) {
  Rules r;
  for (long i = 0; i < 2 * n / 5; ++i) r.net.push_back(NetRule(i, salt));
  for (long i = 0; i < 2 * n / 5; ++i) r.fs.push_back(FsRule(i, salt));
  for (long i = 0; i < n - 4 * n / 5; ++i) r.sys.push_back(SysRule(i, salt));
  return r;
}

// 1% of the rules replaced by rules of another salt (other addresses,
// paths, syscalls and values).
Rules Edit(Rules r, std::mt19937& rng) {
  std::string (*const makers[])(long, uint32_t) = {NetRule, FsRule, SysRule};
  std::vector<std::string>* lists[] = {&r.net, &r.fs, &r.sys};
  for (int l = 0; l < 3; ++l) {
    std::vector<std::string>& list = *lists[l];
    for (size_t k = 0; k < list.size() / 100 + 1; ++k) {
      long i = static_cast<long>(rng() % list.size());
      list[i] = makers[l](i, static_cast<uint32_t>(1000 + k));
    }
  }
  return r;
}

struct Lowered {
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  ward::Program program;
  ward::ir::Policy ir;
  double lower_ms = 0;
};

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

bool Lower(const std::string& text, const std::string& std_dir, Lowered* out) {
  ward::FrontendOptions options;
  options.std_dir = std_dir;
  options.memory_files["bench.ward"] = text;
  out->program = ward::RunFrontend({"bench.ward"}, options, out->sources, out->sink);
  if (out->sink.has_errors()) return false;
  std::string error;
  auto chosen = ward::ir::SelectPolicies(out->program, std::nullopt, &error);
  if (chosen.empty()) return false;
  auto start = std::chrono::steady_clock::now();
  out->ir = ward::ir::Lower(out->program, *chosen[0], out->sink);
  out->lower_ms = Ms(start);
  return !out->sink.has_errors();
}

void Measure(const char* label, long n, const Rules& before, const Rules& after,
             const std::string& std_dir, int repeat) {
  Lowered a, b;
  if (!Lower(Text(before), std_dir, &a) || !Lower(Text(after), std_dir, &b)) {
    std::printf("%-9s %7ld  the generated policy does not check\n", label, n);
    return;
  }
  std::vector<double> times;
  size_t changes = 0, syscall_changes = 0;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    ward::ir::DiffResult d = ward::ir::Diff(a.ir, b.ir);
    times.push_back(Ms(start));
    changes = d.changes.size();
    syscall_changes = static_cast<size_t>(std::count_if(
        d.changes.begin(), d.changes.end(),
        [](const ward::ir::Change& c) { return c.section == ward::ir::DiffSection::kSyscalls; }));
  }
  std::sort(times.begin(), times.end());
  std::printf("%-9s %7ld %10.1f %10.1f %10.1f %9zu %9zu\n", label, n, a.lower_ms, times[0],
              times[times.size() / 2], changes, syscall_changes);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes = {1000, 10000};
  std::string std_dir = WARD_BENCH_STD_DIR;
  int repeat = 5;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes.clear();
      for (char* s = std::strtok(argv[i + 1], ","); s; s = std::strtok(nullptr, ",")) {
        sizes.push_back(std::atol(s));
      }
    } else if (std::strcmp(argv[i], "--std") == 0) {
      std_dir = argv[i + 1];
    } else if (std::strcmp(argv[i], "--pair") == 0) {
      only = argv[i + 1];
    } else if (std::strcmp(argv[i], "--repeat") == 0) {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    }
  }
  std::printf("%-9s %7s %10s %10s %10s %9s %9s\n", "pair", "rules", "lower ms", "diff min",
              "diff med", "changes", "syscalls");
  for (long n : sizes) {
    std::mt19937 rng(42);
    Rules base = Generate(n, 0);
    Rules shuffled = base;
    std::shuffle(shuffled.net.begin(), shuffled.net.end(), rng);
    std::shuffle(shuffled.fs.begin(), shuffled.fs.end(), rng);
    std::shuffle(shuffled.sys.begin(), shuffled.sys.end(), rng);
    Rules edited = Edit(base, rng);
    if (only.empty() || only == "equal") Measure("equal", n, base, shuffled, std_dir, repeat);
    if (only.empty() || only == "edited") Measure("edited", n, base, edited, std_dir, repeat);
    if (only.empty() || only == "unrelated") {
      Measure("unrelated", n, base, Generate(n, 7), std_dir, repeat);
    }
  }
  return 0;
}
