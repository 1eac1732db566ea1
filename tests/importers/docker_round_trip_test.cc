// Round trip: a Docker profile imported to Ward, compiled back with
// `-t oci`, means what the original meant. Both profiles are evaluated by
// docker_reference.cc (Docker + runc + libseccomp semantics) on sampled
// calls: every syscall the profile names, on every architecture of the
// filter Docker builds, with arguments at and around every value the
// profile compares with, and random ones. The IR's own decision is checked
// against the same expectation. Profiles in testdata/ cover every field.
#include <catch2/catch.hpp>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "backends/oci/oci_backend.h"
#include "compiler/policy.h"
#include "importers/docker_seccomp/docker_seccomp.h"
#include "tests/importers/docker_reference.h"
#include "tests/language/frontend_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using nlohmann::json;
using Args = std::array<uint64_t, 6>;

struct Case {
  std::string file;
  std::vector<std::string> caps;
  std::optional<std::array<uint64_t, 3>> kernel;
  // Random calls per syscall after the boundary values: the upstream
  // defaults name some 400 syscalls each, so fewer there.
  int samples = 200;
};

uint64_t Width(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// The widths the kernel reads each parameter at (pointers: the register).
std::vector<int> Widths(const std::string& name, Arch arch) {
  std::vector<int> out(6, ArchBits(arch));
  if (auto sig = SyscallSignature(name)) {
    for (size_t i = 0; i < sig->size() && i < 6; ++i) {
      ParamType t = ClassifyParam((*sig)[i], arch);
      if (t.kind == ParamKind::kScalar && t.bits > 0) out[i] = t.bits;
    }
  }
  return out;
}

// Values worth trying for each argument of `name`: the profile's datums
// and their neighbours, the sign and width boundaries.
std::vector<std::vector<uint64_t>> Candidates(const json& profile, const std::string& name,
                                              const std::vector<int>& widths) {
  std::vector<std::set<uint64_t>> sets(6);
  for (int i = 0; i < 6; ++i) {
    const uint64_t max = Width(widths[i]);
    for (uint64_t v :
         {uint64_t{0}, uint64_t{1}, uint64_t{2}, max, max - 1, max >> 1, (max >> 1) + 1}) {
      sets[i].insert(v);
    }
  }
  for (const json& e : profile.value("syscalls", json::array())) {
    const json names = e.value("names", json::array());
    const bool named =
        std::find(names.begin(), names.end(), name) != names.end() || e.value("name", "") == name;
    if (!named) continue;
    for (const json& a : e.value("args", json::array())) {
      const size_t i = a["index"];
      if (i > 5) continue;
      const uint64_t v = a["value"], v2 = a.value("valueTwo", uint64_t{0});
      for (uint64_t c : {v, v - 1, v + 1, v2, v2 | v, v2 & v, ~v, v2 ^ v}) sets[i].insert(c);
    }
  }
  std::vector<std::vector<uint64_t>> out(6);
  for (int i = 0; i < 6; ++i) {
    for (uint64_t v : sets[i]) out[i].push_back(v & Width(widths[i]));
  }
  return out;
}

std::vector<std::string> NamesOf(const json& profile) {
  std::set<std::string> names = {"io_uring_setup", "io_uring_enter", "io_uring_register",
                                 "clone3",         "socketcall",     "ipc",
                                 "getppid",        "execve",         "mkdir"};
  for (const json& e : profile.value("syscalls", json::array())) {
    for (const json& n : e.value("names", json::array())) names.insert(n.get<std::string>());
    if (e.contains("name")) names.insert(e["name"].get<std::string>());
  }
  return {names.begin(), names.end()};
}

// The host a policy of the import stands for: NAME-ARCH, or the profile's
// only archMap host, or none.
std::optional<Arch> HostOf(const std::string& policy, const std::string& base,
                           const json& profile) {
  if (policy.size() > base.size() + 1) return ParseArch(policy.substr(base.size() + 1));
  std::optional<Arch> only;
  for (const json& m : profile.value("archMap", json::array())) {
    std::string a = m["architecture"];
    if (a == "SCMP_ARCH_X86_64") only = Arch::kX86_64;
    if (a == "SCMP_ARCH_AARCH64") only = only ? only : Arch::kAarch64;
  }
  return only;
}

std::string Outcome(const ir::SysAction& a) { return ir::ToString(a); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void RoundTrip(const Case& c, uint32_t seed) {
  const std::string text =
      c.file.front() == '/' ? ReadFile(c.file) : ReadTestFile("importers/testdata/" + c.file);
  const json original = json::parse(text);
  importers::DockerImportOptions options;
  options.name = "rt";
  options.source = c.file;
  options.capabilities = c.caps;
  options.kernel = c.kernel;
  importers::ImportResult imported = importers::ImportDockerSeccomp(text, options);
  INFO(c.file << " seed " << seed);
  REQUIRE(imported.ok);
  INFO(imported.text);
  auto checked = CheckSource(imported.text);
  INFO(checked->text);
  REQUIRE_FALSE(checked->sink.has_errors());
  const ast::File* file = checked->program.file(checked->program.roots.at(0));
  REQUIRE(file != nullptr);
  std::mt19937_64 rng(seed);
  const int random_samples = Rounds(c.samples);  // per call, after the boundary values
  size_t points = 0, ambiguous = 0;
  for (const ast::Policy& p : file->policies) {
    DiagnosticSink sink;
    ir::Policy ir = ir::Lower(checked->program, p, sink);
    REQUIRE_FALSE(sink.has_errors());
    backend::Result r = backend::OciBackend().Compile(ir, {}, sink);
    REQUIRE(r.ok);
    const json emitted = json::parse(r.artifacts.at(0).bytes);
    DockerHost host{HostOf(p.name.text, "rt", original), c.caps, c.kernel};
    DockerHost plain{host.arch, {}, std::nullopt};
    // The architectures: those of Docker's filter that Ward compiles for.
    std::vector<Arch> expected_arches = FilterArches(original, host);
    if (expected_arches.empty()) expected_arches = {kDefaultArch};
    CHECK(ir.syscalls.arches == expected_arches);
    for (Arch arch : ir.syscalls.arches) {
      for (const std::string& name : NamesOf(original)) {
        if (!SyscallNumber(arch, name)) continue;
        const std::vector<int> widths = Widths(name, arch);
        const auto candidates = Candidates(original, name, widths);
        std::vector<Args> samples;
        for (int i = 0; i < 6; ++i) {
          for (uint64_t v : candidates[i]) {
            Args a{};
            a[i] = v;
            samples.push_back(a);
          }
        }
        for (int n = 0; n < random_samples; ++n) {
          Args a{};
          for (int i = 0; i < 6; ++i) {
            a[i] = rng() % 4 == 0 ? rng() & Width(widths[i])
                                  : candidates[i][rng() % candidates[i].size()];
          }
          samples.push_back(a);
        }
        for (const Args& a : samples) {
          const Verdict want = Decide(original, host, arch, name, a);
          const Verdict got = Decide(emitted, plain, arch, name, a);
          INFO(p.name.text << " " << ArchName(arch) << " " << name << "(" << a[0] << ", " << a[1]
                           << ", " << a[2] << ", " << a[3] << ", " << a[4] << ", " << a[5] << ")");
          CHECK_FALSE(got.ambiguous);
          CHECK(got.action == want.action);
          CHECK(Outcome(ir.syscalls.Decide(arch, name, a)) == want.action);
          ++points;
          ambiguous += want.ambiguous;
        }
      }
    }
  }
  // At least the random samples of five syscalls (1000 at full rounds).
  CHECK(points > 5 * static_cast<size_t>(random_samples));
  // Where libseccomp's outcome depended on rule order, the import said so.
  if (ambiguous > 0) {
    bool warned = false;
    for (const auto& d : imported.diagnostics) {
      warned |= d.message.find("with a different action") != std::string::npos;
    }
    CHECK(warned);
  }
}

uint32_t Seed() {
  static const uint32_t seed = static_cast<uint32_t>(std::time(nullptr));
  return seed;
}

TEST_CASE("round trip: every field, no capabilities, any kernel") {
  RoundTrip({"every_field.json", {}, std::nullopt}, Seed());
}

TEST_CASE("round trip: every field, CAP_SYS_ADMIN, kernel 4.0") {
  RoundTrip({"every_field.json", {"CAP_SYS_ADMIN"}, std::array<uint64_t, 3>{4, 0, 0}}, Seed());
}

TEST_CASE("round trip: architectures and includes.arches") {
  RoundTrip({"architectures.json", {}, std::nullopt}, Seed());
}

TEST_CASE("round trip: default allow, bypass classes, signed ranges, overlaps") {
  RoundTrip({"default_allow.json", {}, std::nullopt}, Seed());
}

TEST_CASE("round trip: an empty profile is unconfined") {
  RoundTrip({"disabled.json", {}, std::nullopt}, Seed());
}

// The current upstream defaults (testdata/upstream/README.md).
TEST_CASE("round trip: moby's default profile, without and with CAP_SYS_ADMIN") {
  RoundTrip({"upstream/moby-default.json", {}, std::nullopt, 40}, Seed());
  RoundTrip({"upstream/moby-default.json", {"CAP_SYS_ADMIN"}, std::nullopt, 40}, Seed());
}

TEST_CASE("round trip: podman's default profile") {
  RoundTrip({"upstream/podman-seccomp.json", {}, std::nullopt, 40}, Seed());
}

TEST_CASE("round trip: containerd's default profile (amd64)") {
  RoundTrip({"upstream/containerd-default-amd64.json", {}, std::nullopt, 40}, Seed());
}

// Real-world profiles by hand: WARD_ROUND_TRIP_PROFILE=/path/profile.json,
// optionally WARD_ROUND_TRIP_CAPS=CAP_A,CAP_B.
TEST_CASE("round trip: the profile WARD_ROUND_TRIP_PROFILE names") {
  const char* path = std::getenv("WARD_ROUND_TRIP_PROFILE");
  if (!path || !*path) return;
  Case c{path, {}, std::nullopt};
  if (const char* caps = std::getenv("WARD_ROUND_TRIP_CAPS")) {
    std::string list = caps;
    for (size_t pos = 0; pos < list.size();) {
      size_t comma = std::min(list.find(',', pos), list.size());
      if (comma > pos) c.caps.push_back(list.substr(pos, comma - pos));
      pos = comma + 1;
    }
    std::sort(c.caps.begin(), c.caps.end());
  }
  RoundTrip(c, Seed());
}

}  // namespace
}  // namespace ward::test
