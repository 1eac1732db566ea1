// bench_ir: lowering to the IR and `explain` queries on generated policies of
// 1k, 10k and 100k network and filesystem rules (one policy; half network,
// half filesystem). Prints figures; asserts nothing (conventions.md #20).
//
//   bench_ir [--sizes 1000,10000,100000] [--queries N]
//
// Goal (issue 3): explain under 1 ms per query after load.
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "compiler/explain.h"
#include "compiler/policy.h"
#include "language/check.h"

namespace {

std::string N(long n) { return std::to_string(n); }

std::string Generate(long rules) {
  std::string text = "policy bench {\n  network {\n";
  long net = rules / 2;
  for (long i = 0; i < net; ++i) {
    std::string a = N(i / 250 % 250), b = N(i % 250);
    switch (i % 5) {
      case 0:
        text += "    allow tcp to 10." + a + "." + b + ".0/24 ports 5432, 6379, 8000-8100\n";
        break;
      case 1:
        text += "    deny tcp to 10." + a + "." + b + ".128/25 port 6379\n";
        break;
      case 2:
        text += "    allow udp to 172.16." + b + "." + N(i % 200) + " port 53\n";
        break;
      case 3:
        text += "    allow tcp to fd00:" + a + ":" + b + "::/48 port 443\n";
        break;
      default:
        text += "    allow tcp to \"svc-" + N(i) + ".example.com\" port 443\n";
        break;
    }
  }
  text += "  }\n  filesystem {\n";
  for (long i = net; i < rules; ++i) {
    switch (i % 4) {
      case 0:
        text += "    allow read write \"/srv/app-" + N(i) + "\"\n";
        break;
      case 1:
        text += "    deny write \"/srv/app-" + N(i - 1) + "/secrets\"\n";
        break;
      case 2:
        text += "    allow read \"/data/*/shard-" + N(i) + "\"\n";
        break;
      default:
        text += "    allow exec \"/opt/tool-" + N(i) + "/bin\"\n";
        break;
    }
  }
  return text + "  }\n}\n";
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Run(long rules, int queries) {
  ward::FrontendOptions options;
  options.std_dir = WARD_BENCH_STD_DIR;
  options.memory_files["bench.ward"] = Generate(rules);
  ward::SourceManager sources;
  ward::DiagnosticSink sink;
  auto start = std::chrono::steady_clock::now();
  ward::Program program = ward::RunFrontend({"bench.ward"}, options, sources, sink);
  double front = Since(start);
  if (sink.has_errors()) {
    std::printf("%7ld rules: front end reported %zu errors\n", rules, sink.error_count());
    return;
  }
  const ward::ast::Policy& policy = program.file(program.roots[0])->policies[0];
  start = std::chrono::steady_clock::now();
  ward::ir::Policy ir = ward::ir::Lower(program, policy, sink);
  double lower = Since(start);

  std::mt19937 rng(42);
  std::vector<ward::ir::FlowQuery> flows(queries);
  for (ward::ir::FlowQuery& q : flows) {
    q.host = "10." + N(rng() % 250) + "." + N(rng() % 250) + "." + N(rng() % 256);
    q.port = static_cast<uint16_t>(rng() % 2 ? 6379 : 8050);
  }
  std::string error;
  size_t allowed = 0;
  start = std::chrono::steady_clock::now();
  for (const ward::ir::FlowQuery& q : flows) {
    allowed += ward::ir::ExplainFlow(ir, q, &error)->decision == "allow";
  }
  double per_flow = Since(start) / queries;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < queries; ++i) {
    std::string path = "/srv/app-" + N(rules / 2 + (rng() % (rules / 2 + 1))) + "/secrets/x";
    allowed += ward::ir::ExplainPath(ir, path, ward::ir::FsRight::kWrite, std::nullopt, &error)
                   ->decision == "allow";
  }
  double per_path = Since(start) / queries;
  std::printf(
      "%7ld rules: front end %7.3f s, lower %7.3f s (%zu v4 pieces), explain --connect %8.3f "
      "ms/query, explain --path %8.3f ms/query (%zu allowed)\n",
      rules, front, lower, ir.network.egress.v4.size(), per_flow * 1e3, per_path * 1e3, allowed);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes = {1000, 10000, 100000};
  int queries = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--queries") queries = std::atoi(argv[i + 1]);
    if (flag == "--sizes") {
      sizes.clear();
      std::string list = argv[i + 1];
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        sizes.push_back(std::stol(list.substr(pos, comma - pos)));
        pos = comma + 1;
      }
    }
  }
  for (long n : sizes) Run(n, queries);
  return 0;
}
