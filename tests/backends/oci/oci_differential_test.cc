// Differential: the OCI seccomp profile read back. For random policies
// (tests/syscall_cases.h: every action, conditions at the edges of 32 and
// 64 bits, groups beside direct rules, extends) compiled with `-t oci`, the
// emitted JSON evaluated as Docker, runc and libseccomp read it
// (tests/importers/docker_reference.h: defaultAction and defaultErrnoRet,
// an entry's args ANDed, entries of one name ORed with libseccomp's
// precedence where they overlap, errnoRet, the architectures list) answers
// every random (architecture, syscall, arguments) call as IR decide() does.
// The seed is printed; WARD_SEED=N replays a run.
#include <catch2/catch.hpp>
#include <iostream>
#include <random>

#include "backends/oci/oci_backend.h"
#include "compiler/policy.h"
#include "tests/importers/docker_reference.h"
#include "tests/language/frontend_fixture.h"
#include "tests/property_rounds.h"
#include "tests/syscall_cases.h"

namespace ward::test {
namespace {

using nlohmann::json;
using Args = std::array<uint64_t, 6>;

// The refusals -t oci may give a random policy (backends/oci/README.md):
// anything else failing is a bug.
bool KnownRefusal(const std::string& diagnostics) {
  for (const char* m : {"cannot have notify as its default action", "cannot notify on 'write'",
                        "but an OCI seccomp profile applies its rules to every architecture"}) {
    if (diagnostics.find(m) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("oci differential: the profile read back decides every call as IR decide()") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::cout << "oci differential: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  std::mt19937 rng(seed);
  int compiled = 0, queries = 0, mismatches = 0;
  int refused_front = 0, refused_lower = 0, refused_oci = 0;
  std::map<std::string, int> outcomes;
  const int rounds = Rounds(200);
  for (int round = 0; round < rounds; ++round) {
    sys::Generator gen(rng);
    const std::string text = gen.Program();
    INFO("round " << round << "\n" << text);
    auto front = CheckSource(text);
    if (front->sink.has_errors()) {
      ++refused_front;
      continue;
    }
    const ast::File* f = front->program.file(front->program.roots.at(0));
    DiagnosticSink sink;
    const ir::Policy ir = ir::Lower(front->program, f->policies.back(), sink);
    if (sink.has_errors()) {
      ++refused_lower;  // conflicts, too many regions
      continue;
    }
    const backend::Result result = backend::OciBackend().Compile(ir, backend::Options{}, sink);
    const std::string diagnostics = RenderText(front->sources, sink, RenderOptions{});
    INFO(diagnostics);
    if (!result.ok) {
      REQUIRE(KnownRefusal(diagnostics));
      ++refused_oci;
      continue;
    }
    ++compiled;
    const std::string* bytes = nullptr;
    for (const backend::Artifact& a : result.artifacts) {
      if (a.path == "p.seccomp.json") bytes = &a.bytes;
    }
    REQUIRE(bytes != nullptr);
    const json profile = json::parse(*bytes);
    const std::vector<uint64_t>& values = gen.values();
    for (Arch arch : ir.syscalls.arches) {
      // The names the rules decide, asked about more often than the rest.
      std::vector<std::string> ruled;
      if (auto it = ir.syscalls.syscalls.find(arch); it != ir.syscalls.syscalls.end()) {
        for (const auto& [name, regions] : it->second) ruled.push_back(name);
      }
      const DockerHost host{arch, {}, std::nullopt};
      for (int k = 0; k < 300; ++k) {
        const std::string& name = !ruled.empty() && rng() % 2
                                      ? ruled[rng() % ruled.size()]
                                      : AllSyscallNames()[rng() % AllSyscallNames().size()];
        if (!SyscallNumber(arch, name)) continue;  // no such call there
        Args args;
        for (uint64_t& a : args) {
          a = rng() % 6 == 0 ? (uint64_t{rng()} << 32 | rng()) : values[rng() % values.size()];
          // A 32-bit task's registers hold 32 bits; a 64-bit one's may carry
          // high bits above an int parameter, which neither side may read.
          if (ArchBits(arch) == 32) a &= 0xffffffff;
        }
        const Verdict got = Decide(profile, host, arch, name, args);
        const std::string want = ir::ToString(ir.syscalls.Decide(arch, name, args));
        ++queries;
        ++outcomes[got.action.substr(0, got.action.find(' '))];
        if (got.ambiguous || got.action != want) {
          ++mismatches;
          FAIL_CHECK(ArchName(arch)
                     << " " << name << "(" << std::hex << args[0] << ", " << args[1] << ", "
                     << args[2] << ", " << args[3] << ")" << std::dec << ": IR " << want
                     << ", profile " << got.action
                     << (got.ambiguous ? " (ambiguous: overlapping entries)" : "") << "\n"
                     << *bytes);
        }
      }
    }
  }
  std::cout << "oci differential: " << queries << " calls on " << compiled
            << " policies (refused: " << refused_front << " by the checker, " << refused_lower
            << " by the lowering, " << refused_oci << " by -t oci), " << mismatches
            << " mismatches; outcomes:";
  for (const auto& [kind, n] : outcomes) std::cout << " " << kind << " " << n;
  std::cout << " (seed " << seed << ")\n";
  CHECK(mismatches == 0);
  // Not degenerate: most programs compile, and calls reach several outcomes.
  CHECK(compiled * 5 >= rounds * 2);
  CHECK(outcomes.size() >= 4);
}

// The positive control: the comparison sees a profile that means something
// else. One entry's masked comparison loosened (a valueTwo the IR never
// tests for, as a writer dropping the mask would give), one entry's
// errnoRet changed, one entry's args dropped: each is caught on calls the
// unchanged profile decides as the IR does.
TEST_CASE("oci differential: a profile that differs from the IR is caught") {
  const std::string text = R"(policy p { syscalls {
      arch x86_64
      default allow
      errno EPERM socket if arg0 == AF_PACKET
      errno EACCES personality if arg0 == 8
    } })";
  auto front = CheckSource(text);
  REQUIRE_FALSE(front->sink.has_errors());
  DiagnosticSink sink;
  const ir::Policy ir = ir::Lower(
      front->program, front->program.file(front->program.roots.at(0))->policies.back(), sink);
  const backend::Result result = backend::OciBackend().Compile(ir, backend::Options{}, sink);
  REQUIRE(result.ok);
  const json good = json::parse(result.artifacts.at(0).bytes);
  const DockerHost host{Arch::kX86_64, {}, std::nullopt};
  const std::vector<std::pair<std::string, Args>> calls = {{"socket", {17}},
                                                           {"socket", {2}},
                                                           {"socket", {17 | (uint64_t{1} << 32)}},
                                                           {"personality", {8}},
                                                           {"personality", {0}}};
  auto differences = [&](const json& profile) {
    int n = 0;
    for (const auto& [name, args] : calls) {
      n += Decide(profile, host, Arch::kX86_64, name, args).action !=
           ir::ToString(ir.syscalls.Decide(Arch::kX86_64, name, args));
    }
    return n;
  };
  CHECK(differences(good) == 0);
  INFO(good.dump());
  for (int mutation = 0; mutation < 3; ++mutation) {
    json bad = good;
    json* found = nullptr;
    for (json& e : bad["syscalls"]) {
      if (e["names"] == json::array({"socket"})) found = &e;
    }
    REQUIRE(found != nullptr);
    json& entry = *found;
    INFO("mutation " << mutation << ": " << entry.dump());
    if (mutation == 0) entry["args"][0]["value"] = ~uint64_t{0};  // compares 64 bits
    if (mutation == 1) entry["errnoRet"] = entry["errnoRet"].get<int>() + 1;
    if (mutation == 2) entry.erase("args");
    CHECK(differences(bad) > 0);
  }
}

}  // namespace ward::test
