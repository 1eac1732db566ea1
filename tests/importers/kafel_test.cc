// `ward import --from kafel`, checked against kafel itself: every policy of
// kafel's own tests and samples, nsjail's configs and 300 random policies
// (tests/importers/testdata/kafel/, SOURCE.md says where each came from)
// was compiled by the real kafel and its filter run on chosen calls
// (cases.json, random_cases.json: kafel's exact SECCOMP_RET_* answers).
// Here each policy is imported, checked as `ward check` checks it,
// compiled by Ward's seccomp backend, and the filter run on the same calls
// through the cBPF interpreter: the answers must be equal.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/seccomp/seccomp_backend.h"
#include "importers/checked_import.h"
#include "importers/kafel/kafel.h"
#include "tests/backends/seccomp/seccomp_fixture.h"

namespace ward::test {
namespace {

const std::string kStd = std::string(WARD_SOURCE_DIR) + "/policies/std";
const std::string kData = std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/kafel";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Imported {
  importers::CheckedImport checked;
  std::string Diagnostics() const {
    std::string out;
    for (const auto& d : checked.result.diagnostics) {
      out += std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message + "\n";
    }
    return out;
  }
};

std::unique_ptr<Imported> Import(const std::string& path,
                                 const std::vector<std::string>& include_dirs = {}) {
  auto out = std::make_unique<Imported>();
  importers::ImportOptions options;
  options.name = "imported";
  options.from = "kafel";
  options.source = path.substr(path.rfind('/') + 1);
  options.path = path;
  options.include_dirs = include_dirs;
  out->checked.result = importers::ImportKafel(Slurp(path), options);
  if (out->checked.result.ok) importers::CheckImport(kStd, &out->checked);
  return out;
}

// What Ward's filter answers where kafel answered `ret`: the kernel's own
// reading of kafel's actions in Ward's (errno capped at 4095, a trap's data
// not kept, TRACE without a tracer an ENOSYS).
uint32_t WardRet(uint32_t ret) {
  const uint32_t action = ret & 0xffff0000u, data = ret & 0xffffu;
  if (action == 0x00050000u) return 0x00050000u | std::min<uint32_t>(data, 4095);
  if (action == 0x00030000u) return 0x00030000u;
  if (action == 0x7ff00000u) return 0x00050000u | 38;
  return ret;
}

bool Refusal(const std::string& diagnostics) {
  for (const char* known :
       {"compares two arguments", "a pointer: the kernel reads", "is not in x86_64's kernel table",
        "ERRNO(0)", "too complex to import", "Ward's IR cannot hold them",
        "Ward does not know that parameter's type"}) {
    if (diagnostics.find(known) != std::string::npos) return true;
  }
  return false;
}

struct Tally {
  int imported = 0, refused = 0, kafel_refused = 0, checks = 0, skipped = 0;
};

void RunCases(const std::string& file, Tally* tally) {
  const auto cases = nlohmann::json::parse(Slurp(kData + "/" + file));
  for (const auto& c : cases) {
    const std::string policy = c["policy"].get<std::string>();
    std::vector<std::string> include_dirs;
    if (c["include_dir"].is_string())
      include_dirs.push_back(kData + "/" + c["include_dir"].get<std::string>());
    auto imported = Import(kData + "/" + policy, include_dirs);
    const importers::ImportResult& r = imported->checked.result;
    INFO(policy << "\n" << Slurp(kData + "/" + policy) << "\n" << imported->Diagnostics());
    REQUIRE_FALSE(imported->checked.internal_error);
    if (!c["compiles"].get<bool>()) {
      // What kafel refuses, the importer refuses.
      CHECK_FALSE(r.ok);
      ++tally->kafel_refused;
      continue;
    }
    if (!r.ok) {
      CHECK(Refusal(imported->Diagnostics()));
      ++tally->refused;
      continue;
    }
    INFO(r.text);
    const bool narrowed =
        imported->Diagnostics().find("bits the kernel reads") != std::string::npos;
    auto compiled = CompileWith(backend::SeccompBackend(), r.text);
    if (!compiled->result.ok) {
      // A filter past the kernel's 4096 instructions: Ward refuses it
      // when it compiles (as kafel would past its own 65535).
      INFO(compiled->Diagnostics());
      CHECK(compiled->Diagnostics().find("4096") != std::string::npos);
      ++tally->refused;
      continue;
    }
    ++tally->imported;
    const cbpf::Program program = Interpreter(Bpf(*compiled, Arch::kX86_64), Arch::kX86_64);
    for (const auto& check : c["checks"]) {
      const uint32_t nr = check["nr"].get<uint32_t>();
      Args args{};
      for (size_t i = 0; i < 6; ++i) args[i] = std::stoull(check["args"][i].get<std::string>());
      // x32 and above: Ward kills them whatever kafel's DEFAULT says.
      if (nr >= 0x40000000u) {
        ++tally->skipped;
        continue;
      }
      // Where kafel compared bits the kernel does not read, Ward decides
      // as kafel does for the value extended: only such values compare.
      if (narrowed) {
        bool canonical = true;
        const std::string name = SyscallName(Arch::kX86_64, nr);
        if (auto sig = SyscallSignature(name)) {
          for (size_t i = 0; i < sig->size() && i < 6; ++i) {
            const ParamType t = ClassifyParam((*sig)[i], Arch::kX86_64);
            if (t.kind != ParamKind::kScalar || t.bits >= 64) continue;
            const uint64_t low = args[i] & ((uint64_t{1} << t.bits) - 1);
            const bool negative = t.is_signed && (low >> (t.bits - 1)) & 1;
            const uint64_t extended = negative ? (low | ~((uint64_t{1} << t.bits) - 1)) : low;
            if (args[i] != extended) canonical = false;
          }
        }
        if (!canonical) {
          ++tally->skipped;
          continue;
        }
      }
      const uint32_t kafel =
          static_cast<uint32_t>(std::stoul(check["ret"].get<std::string>(), nullptr, 16));
      const cbpf::Outcome o = Interpret(program, Arch::kX86_64, nr, args);
      INFO("nr " << nr << " args " << args[0] << " " << args[1] << " " << args[2] << " " << args[3]
                 << " " << args[4] << " " << args[5]);
      REQUIRE(o.error.empty());
      CHECK(o.ret == WardRet(kafel));
      ++tally->checks;
    }
  }
}

TEST_CASE("kafel's tests, samples and nsjail's configs decide as kafel decides") {
  Tally t;
  RunCases("cases.json", &t);
  WARN("imported " << t.imported << ", refused " << t.refused << ", refused by kafel too "
                   << t.kafel_refused << "; " << t.checks << " calls compared, " << t.skipped
                   << " skipped");
  CHECK(t.imported >= 40);
  CHECK(t.checks > 1000);
}

TEST_CASE("300 random kafel policies decide as kafel decides") {
  Tally t;
  RunCases("random_cases.json", &t);
  WARN("imported " << t.imported << ", refused " << t.refused << "; " << t.checks
                   << " calls compared, " << t.skipped << " skipped");
  CHECK(t.imported >= 80);
}

TEST_CASE("kafel comparisons of two arguments are refused, the rest decides as kafel") {
  Tally t;
  RunCases("random_argarg_cases.json", &t);
  WARN("imported " << t.imported << ", refused " << t.refused << "; " << t.checks
                   << " calls compared");
  CHECK(t.refused >= 20);
}

TEST_CASE("kafel: nsjail's bash config, exactly") {
  auto imported = Import(kData + "/policies/nsjail/bash-with-fake-geteuid.policy");
  INFO(imported->Diagnostics());
  REQUIRE(imported->checked.result.ok);
  CHECK(
      imported->checked.result.text ==
      "// Imported from bash-with-fake-geteuid.policy by `ward import --from kafel`, for x86_64.\n"
      "// kafel decides a call by the first rule that matches it: each rule below holds only\n"
      "// the calls no earlier kafel rule matched, so Ward's precedence decides them alike.\n"
      "// note: kafel sends x32 calls (numbers from 0x40000000) to DEFAULT ALLOW; Ward kills them\n"
      "\n"
      "policy imported {\n"
      "    syscalls {\n"
      "        arch x86_64\n"
      "        default allow\n"
      "        errno 1337 geteuid\n"
      "        errno EPERM ptrace, sched_setaffinity\n"
      "        kill syslog\n"
      "    }\n"
      "}\n");
}

TEST_CASE("kafel: first match kept where Ward's precedence would differ") {
  // kafel: read with fd 0 and count 0 is allowed (the first rule); Ward's
  // most restrictive rule would make it ERRNO(1) had the import not cut
  // the second rule down.
  auto imported = Import(kData + "/policies/basic_rules_order_2.policy");
  REQUIRE(imported->checked.result.ok);
  auto compiled = CompileSeccomp(imported->checked.result.text);
  const cbpf::Program program = Interpreter(Bpf(*compiled, Arch::kX86_64), Arch::kX86_64);
  CHECK(Interpret(program, Arch::kX86_64, 0, {0, 0, 0}).ret == 0x7fff0000u);
  CHECK(Interpret(program, Arch::kX86_64, 0, {5, 0, 0}).ret == 0x00050001u);
  CHECK(Interpret(program, Arch::kX86_64, 0, {5, 0, 1}).ret == 0x00000000u);
}

TEST_CASE("kafel: what kafel refuses, with kafel's words and place") {
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {"", "1:1: syntax error, unexpected end of file"},
      {"ALLOW { nosuch }", "1:9: Undefined identifier `nosuch'"},
      {"ALLOW { write { nosuch == 1 } }", "1:17: Undefined identifier `nosuch'"},
      {"/* a **/ ALLOW { read }", "1:1: unterminated comment"},
      {"ALLOW { _llseek }", "1:9: unexpected char `_'"},
      {"ERRNO(65536) { read }", "1:7: Errno value 65536 out of range (0-65535)"},
      {"DEFAULT KILL DEFAULT ALLOW", "1:14: Redefinition of default action"},
      {"USE nosuch", "1:5: Undefined policy `nosuch'"},
      {"#define X 1\n#define X 2",
       "2:9: Redefinition of constant `X' with different value (was: 1 is: 2)"},
      {"ALLOW { read ON nosuch }", "1:17: Unknown architecture `nosuch'"},
      {"#include \"missing.policy\"\n", "1:10: could not include file `missing.policy'"},
      {"ALLOW { write { buf == 1 } } DEFAULT ALLOW", "W1015"},
      {"ERRNO(0) { ptrace } DEFAULT ALLOW", "ERRNO(0)"},
      {"ALLOW { SYSCALL[1000] }", "syscall number 1000 is not in x86_64's kernel table"},
  };
  // A chain of USEs deeper than the importer follows.
  std::string chain = "POLICY p0 { ALLOW { read } }\n";
  for (int i = 1; i <= 1500; ++i) {
    chain += "POLICY p" + std::to_string(i) + " { USE p" + std::to_string(i - 1) + " }\n";
  }
  chain += "USE p1500";
  const Case deep{chain, "USE nested more than 1000 deep"};
  std::vector<Case> all(std::begin(cases), std::end(cases));
  all.push_back(deep);
  for (const Case& c : all) {
    importers::ImportOptions options;
    options.source = "inline.policy";
    const auto r = importers::ImportKafel(c.text, options);
    std::string got;
    for (const auto& d : r.diagnostics) {
      got += std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message + "\n";
    }
    INFO(c.text << "\n" << got);
    CHECK_FALSE(r.ok);
    CHECK(got.find(c.message) != std::string::npos);
  }
}

}  // namespace
}  // namespace ward::test
