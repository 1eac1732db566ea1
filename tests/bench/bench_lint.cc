// bench_lint: `ward lint`'s work (front end, lowering, every lint rule,
// suppressions, SARIF rendering) on a generated policy of 10k rules (one
// policy: 40% filesystem, 30% network, 30% syscalls) extending a base, with
// suppression comments. Prints wall and CPU time per stage and the peak RSS
// (getrusage ru_maxrss); asserts nothing (conventions.md #20).
//
//   bench_lint [--rules N] [--repeat R]
//
// Goal (issue 8): under 1 s for 10k rules.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "compiler/lint/lint.h"
#include "compiler/lint/report.h"
#include "language/check.h"

namespace {

std::string N(long n) { return std::to_string(n); }

std::string Generate(long rules) {
  const long fs = rules * 4 / 10, net = rules * 3 / 10, sys = rules - fs - net;
  std::string t = "let root = \"/srv\"\n";
  t += "abstract policy base {\n  filesystem {\n    deny read write \"/srv/secret\"\n  }\n";
  t += "  limits {\n    memory 1GiB\n  }\n}\n";
  t += "policy bench extends base {\n  filesystem {\n";
  for (long i = 0; i < fs; ++i) {
    switch (i % 5) {
      case 0:
        t += "    allow read write \"${root}/app-" + N(i) + "\"\n";
        break;
      case 1:
        t += "    deny write \"/srv/app-" + N(i - 1) + "/.git/hooks\"\n";
        break;
      case 2:
        t += "    allow read \"/data/*/shard-" + N(i) + "\"\n";
        break;
      case 3:
        t += "    // ward:allow L2503 kept for the bench\n";
        t += "    allow read \"/srv/app-" + N(i - 3) + "/docs\"\n";
        break;
      default:
        t += "    allow exec \"/opt/tool-" + N(i) + "/bin\"\n";
        break;
    }
  }
  t += "  }\n  network {\n    allow udp to 10.0.0.53 port 53\n";
  for (long i = 0; i < net; ++i) {
    std::string a = N(i / 250 % 250), b = N(i % 250);
    switch (i % 4) {
      case 0:
        t += "    allow tcp to 10." + a + "." + b + ".0/24 ports 5432, 8000-8100\n";
        break;
      case 1:
        t += "    deny tcp to 10." + a + "." + b + ".128/25 port 5432\n";
        break;
      case 2:
        t += "    allow tcp to fd00:" + a + ":" + b + "::/48 port 443\n";
        break;
      default:
        t += "    allow tcp to \"svc-" + N(i) + ".example.com\" port 443\n";
        break;
    }
  }
  t += "  }\n  syscalls {\n    arch x86_64, aarch64\n    default errno EPERM\n";
  t += "    allow @system-service\n";
  static const char* const kCalls[] = {"read",  "write",  "openat",  "close",  "mmap",
                                       "futex", "socket", "connect", "getpid", "ioctl"};
  for (long i = 0; i < sys; ++i) {
    const char* c = kCalls[i % 10];
    switch (i % 3) {
      case 0:
        t += std::string("    allow ") + c + "\n";
        break;
      case 1:
        t += "    errno EPERM personality if arg0 == " + N(0x100 + i % 64) + "\n";
        break;
      default:
        t += "    kill ptrace, bpf\n";
        break;
    }
  }
  t += "  }\n  process {\n    no_new_privileges\n    capabilities drop all\n  }\n";
  t += "  limits {\n    memory 512MiB\n  }\n}\n";
  return t;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Cpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  long rules = 10000;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rules")) rules = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
  }
  const std::string text = Generate(rules);
  double best_front = 1e9, best_lint = 1e9, best_sarif = 1e9, best_cpu = 1e9;
  size_t findings = 0, suppressed = 0;
  for (int r = 0; r < repeat; ++r) {
    ward::SourceManager sources;
    ward::DiagnosticSink sink;
    ward::FrontendOptions options;
    options.std_dir = WARD_BENCH_STD_DIR;
    options.memory_files["bench.ward"] = text;
    const double c0 = Cpu(), t0 = Now();
    ward::Program program = ward::RunFrontend({"bench.ward"}, options, sources, sink);
    const double t1 = Now();
    if (sink.has_errors()) {
      std::fprintf(stderr, "bench_lint: the generated policy has errors:\n%s",
                   ward::RenderText(sources, sink, {}).c_str());
      return 1;
    }
    std::vector<ward::lint::Finding> out = ward::lint::Lint(program, sources, {}, sink);
    const double t2 = Now();
    std::string sarif = ward::lint::RenderFindingsSarif(sources, sink, out, {});
    const double t3 = Now(), c1 = Cpu();
    best_front = std::min(best_front, t1 - t0);
    best_lint = std::min(best_lint, t2 - t1);
    best_sarif = std::min(best_sarif, t3 - t2);
    best_cpu = std::min(best_cpu, c1 - c0);
    findings = out.size();
    suppressed = 0;
    for (const auto& f : out) suppressed += f.suppressed;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double total = best_front + best_lint + best_sarif;
  std::printf("rules %ld, bytes %zu, best of %d\n", rules, text.size(), repeat);
  std::printf("front end %.3f s, lower + lint %.3f s, SARIF %.3f s, total %.3f s (CPU %.3f s)\n",
              best_front, best_lint, best_sarif, total, best_cpu);
  std::printf("findings %zu (%zu suppressed), peak RSS %.1f MiB\n", findings, suppressed,
              ru.ru_maxrss / 1024.0);
  std::printf("goal: under 1 s: %s\n", total < 1.0 ? "met" : "MISSED");
  return 0;
}
