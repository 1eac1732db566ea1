// bench_audit_verify: `ward audit verify` on a generated log of N records
// (default 100,000) with a checkpoint every 1,000 signed by a fresh host
// key, against two peers over the same file in the same run: `sha256sum`
// (one hash over the bytes: the floor of reading and hashing them) and a
// python verifier that parses every line as JSON (what a script would
// write). Prints the file's size, then per runner the best and median wall
// time of --repeat runs and its exit code. Goal: 100k records in under 2 s.
//
//   bench_audit_verify [--records N] [--repeat R] [--keep FILE]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "backends/signing.h"
#include "enforcers/agent/audit_record.h"

namespace {

// A python verifier of the same log: json.loads per line, the chain and
// each record's own hash (no checkpoint signatures: hashlib has no Ed25519).
constexpr const char* kPythonVerifier = R"(import hashlib, json, sys
prev, seq = '0' * 64, 0
with open(sys.argv[1]) as f:
    for n, line in enumerate(f, 1):
        line = line.rstrip('\n')
        r = json.loads(line)
        seq += 1
        if r['seq'] != seq or r['prev'] != prev:
            sys.exit('%d: broken chain' % n)
        if hashlib.sha256((line[:-75] + '}').encode()).hexdigest() != r['hash']:
            sys.exit('%d: hash' % n)
        prev = r['hash']
print('intact, %d records' % seq)
)";

std::string Time(uint64_t i) {
  // One record every 10 ms from 2026-12-02T00:00:00Z: strictly increasing.
  const uint64_t ms = i * 10;
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-12-02T%02llu:%02llu:%02llu.%03lluZ",
                static_cast<unsigned long long>(ms / 3600000 % 24),
                static_cast<unsigned long long>(ms / 60000 % 60),
                static_cast<unsigned long long>(ms / 1000 % 60),
                static_cast<unsigned long long>(ms % 1000));
  return buf;
}

bool Generate(const std::string& path, uint64_t records, const ward::trust::PrivateKey& key) {
  std::ofstream out(path, std::ios::binary);
  std::string prev = ward::audit::kGenesis;
  for (uint64_t seq = 1; seq <= records; ++seq) {
    ward::audit::Record r;
    r.seq = seq;
    r.time = Time(seq);
    r.prev = prev;
    if (seq % 1000 == 0) {
      r.who = "wardd";
      r.method = "checkpoint";
      r.result = "ok";
      r.size = seq - 1;
      r.head = prev;
      r.key_id = key.id();
      r.sig = ward::trust::Base64(key.Sign(ward::trust::CheckpointBytes(r.size, prev, key.id())));
    } else {
      r.who = seq % 7 == 0 ? "spiffe://example.org/ci/deployer" : "uid:0";
      r.method = seq % 5 == 0 ? "remove" : "apply";
      r.policy = "policy-" + std::to_string(seq % 97);
      r.sha256 = ward::trust::Hex(std::string(32, static_cast<char>(seq)));
      r.generation = seq / 97 + 1;
      r.result = seq % 11 == 0 ? "refused: bundle.sha256: does not match the content" : "ok";
    }
    out << ward::audit::RecordLine(r, &prev) << "\n";
  }
  return static_cast<bool>(out);
}

// Runs `argv` with stdout and stderr to /dev/null: its wall time in
// seconds and exit code.
double Run(const std::vector<std::string>& argv, int* code) {
  std::fflush(stdout);  // else the child's freopen writes our buffer again
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t records = 100000;
  int repeat = 5;
  std::string keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--records") records = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--repeat") repeat = std::max(1, std::atoi(argv[i + 1]));
    if (flag == "--keep") keep = argv[i + 1];
  }
  char tmpl[] = "/tmp/bench-audit-XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  const std::string dir = tmpl;
  const std::string log = keep.empty() ? dir + "/audit.log" : keep;
  std::string error;
  auto key = ward::trust::PrivateKey::Generate(&error);
  if (!key) {
    std::cerr << "bench_audit_verify: " << error << "\n";
    return 2;
  }
  const std::string pub = dir + "/audit.pub";
  std::ofstream(pub) << key->public_key().Pem();
  std::ofstream(dir + "/verify.py") << kPythonVerifier;
  const auto t0 = std::chrono::steady_clock::now();
  if (!Generate(log, records, *key)) return 2;
  const double generated =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("log: %llu records (%llu checkpoints), %.1f MB, generated in %.2f s\n",
              static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(records / 1000),
              std::filesystem::file_size(log) / 1e6, generated);

  struct Runner {
    const char* name;
    std::vector<std::string> argv;
  };
  const std::vector<Runner> runners = {
      {"ward audit verify --key", {WARD_BENCH_WARD_BIN, "audit", "verify", log, "--key", pub}},
      {"ward audit verify (no --key)", {WARD_BENCH_WARD_BIN, "audit", "verify", log}},
      {"sha256sum (peer: the bytes hashed once)", {"sha256sum", log}},
      {"python json.loads per line (peer)", {"/usr/bin/python3", dir + "/verify.py", log}},
  };
  std::printf("%-42s %9s %9s %5s\n", "runner", "best s", "median s", "exit");
  for (const Runner& r : runners) {
    std::vector<double> times;
    int code = 0;
    for (int i = 0; i < repeat; ++i) times.push_back(Run(r.argv, &code));
    std::sort(times.begin(), times.end());
    std::printf("%-42s %9.3f %9.3f %5d\n", r.name, times.front(), times[times.size() / 2], code);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
