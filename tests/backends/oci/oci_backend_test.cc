// The oci backend: the seccomp profile and the runtime fragment as bytes
// (goldens), the profile's shape (what libseccomp needs), its meaning (the
// reference evaluator of Docker/runc/libseccomp semantics against the IR on
// sampled calls), determinism, and every refusal and warning.
#include <catch2/catch.hpp>
#include <ctime>
#include <random>
#include <set>

#include "backends/oci/oci_backend.h"
#include "tests/backends/compile_fixture.h"
#include "tests/importers/docker_reference.h"

namespace ward::test {
namespace {

using nlohmann::json;
using Args = std::array<uint64_t, 6>;

std::unique_ptr<Compiled> Oci(const std::string& source) {
  return CompileWith(backend::OciBackend(), source);
}

const char* kAgent = R"(
policy agent {
  syscalls {
    arch x86_64, aarch64
    default errno EPERM
    allow read, write, close, exit_group, getppid, clone, socket
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
    allow personality if arg0 == 0
    log getpid
    trap mkdirat if arg2 & 0x800 == 0x800
    kill-thread iopl
    kill ptrace, bpf
  }
  process {
    no_new_privileges
    capabilities keep [CAP_NET_BIND_SERVICE, CAP_CHOWN]
    user 1000:1000
  }
  limits {
    cpus 1.5
    memory 512MiB
    pids 64
    open_files 256
  }
}
)";

TEST_CASE("oci: goldens of the profile and the runtime fragment") {
  auto c = Oci(kAgent);
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().empty());
  REQUIRE(c->result.artifacts.size() == 2);
  CHECK(c->result.artifacts[0].path == "agent.seccomp.json");
  CHECK(c->result.artifacts[1].path == "agent.runtime.json");
  CHECK(MatchesGolden("backends/oci/testdata/agent.seccomp.json", c->Artifact(".seccomp.json")));
  CHECK(MatchesGolden("backends/oci/testdata/agent.runtime.json", c->Artifact(".runtime.json")));
  CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kSyscalls,
                                                            backend::Section::kProcess,
                                                            backend::Section::kLimits});
}

TEST_CASE("oci: the profile gives libseccomp disjoint rules, none equal to the default") {
  auto c = Oci(kAgent);
  const json p = json::parse(c->Artifact(".seccomp.json"));
  CHECK(p["defaultAction"] == "SCMP_ACT_ERRNO");
  CHECK(p["defaultErrnoRet"] == 1);
  CHECK(p["architectures"] == json::array({"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}));
  std::set<std::string> keys;
  for (const json& e : p["syscalls"]) {
    INFO(e.dump());
    // Never the default's action (libseccomp refuses it: the runc pitfall).
    CHECK_FALSE((e["action"] == "SCMP_ACT_ERRNO" && e.value("errnoRet", 0) == 1));
    // Names sorted; one entry per action and arguments.
    std::vector<std::string> names = e["names"];
    CHECK(std::is_sorted(names.begin(), names.end()));
    json key = e;
    key.erase("names");
    CHECK(keys.insert(key.dump()).second);
    // One masked comparison per argument, masks within the parameter.
    std::set<uint64_t> indices;
    for (const json& a : e.value("args", json::array())) {
      CHECK(a["op"] == "SCMP_CMP_MASKED_EQ");
      CHECK(indices.insert(a["index"].get<uint64_t>()).second);
      CHECK((a["valueTwo"].get<uint64_t>() & ~a["value"].get<uint64_t>()) == 0);
    }
  }
  // `int` arguments are compared on their low 32 bits only.
  bool socket_masked = false;
  for (const json& e : p["syscalls"]) {
    if (e["names"] != json::array({"socket"})) continue;
    for (const json& a : e["args"]) socket_masked |= a["value"] == 0xffffffffu;
    for (const json& a : e["args"]) CHECK(a["value"].get<uint64_t>() <= 0xffffffffu);
  }
  CHECK(socket_masked);
}

// The profile's meaning, as Docker/runc/libseccomp read it, is the IR's.
void CheckMeaning(const std::string& source, uint32_t seed) {
  auto c = Oci(source);
  REQUIRE(c->result.ok);
  const json p = json::parse(c->Artifact(".seccomp.json"));
  std::mt19937_64 rng(seed);
  INFO("seed " << seed << "\n" << source);
  const uint64_t interesting[] = {0,          1,          2,           10,
                                  17,         0x800,      0x10000000,  0x7fffffff,
                                  0x80000000, 0xffffffff, 0x100000000, 0xffffffffffffffff};
  std::set<std::string> names;
  for (const auto& [arch, per_arch] : c->ir.syscalls.syscalls) {
    for (const auto& [name, regions] : per_arch) names.insert(name);
  }
  names.insert("getppid");
  names.insert("openat");
  for (Arch arch : c->ir.syscalls.arches) {
    for (const std::string& name : names) {
      if (!SyscallNumber(arch, name)) continue;
      for (int n = 0; n < 300; ++n) {
        Args a{};
        for (uint64_t& v : a) {
          v = rng() % 2 ? interesting[rng() % std::size(interesting)] : rng() >> (rng() % 64);
        }
        // What the kernel reads of each parameter: the register with the
        // bits above the parameter's width cleared (those bits are what the
        // masks leave out, tested separately below).
        if (auto sig = SyscallSignature(name)) {
          for (size_t i = 0; i < sig->size() && i < 6; ++i) {
            ParamType t = ClassifyParam((*sig)[i], arch);
            if (t.kind == ParamKind::kScalar && t.bits < 64) a[i] &= (uint64_t{1} << t.bits) - 1;
          }
        }
        INFO(ArchName(arch) << " " << name << "(" << a[0] << ", " << a[1] << ", " << a[2] << ")");
        const Verdict v = Decide(p, {arch, {}, std::nullopt}, arch, name, a);
        CHECK_FALSE(v.ambiguous);
        CHECK(v.action == ir::ToString(c->ir.syscalls.Decide(arch, name, a)));
      }
    }
  }
}

TEST_CASE("oci: the profile means what the IR means, on sampled calls") {
  const uint32_t seed = static_cast<uint32_t>(std::time(nullptr));
  CheckMeaning(kAgent, seed);
  CheckMeaning(R"(policy p { syscalls {
      default allow
      errno EACCES setpriority if arg2 < -5
      kill setpriority if arg1 == 0
      errno ENOENT lseek if arg2 in [0, 1, 4] and arg0 != 3
      trap mprotect if arg2 & 4 == 4
      errno EPERM unshare if arg0 > 0x10000
    } })",
               seed);
  CheckMeaning(R"(policy p { syscalls {
      arch x86, arm
      default kill
      allow read, write, exit_group
      allow ioctl if arg1 == 0x5401
      allow fcntl if arg1 <= 4
    } })",
               seed);
}

TEST_CASE("oci: rule 1, a direct conditional allow leaves no group grant in the profile") {
  const char* text = R"(policy p { syscalls { arch x86_64, aarch64
      default errno EPERM
      allow @network-io
      allow socket if arg0 in [AF_UNIX, AF_INET, AF_INET6] } })";
  auto c = Oci(text);
  REQUIRE(c->result.ok);
  const json p = json::parse(c->Artifact(".seccomp.json"));
  for (Arch arch : {Arch::kX86_64, Arch::kAarch64}) {
    INFO(ArchName(arch));
    auto decide = [&](const std::string& name, uint64_t arg0) {
      const Verdict v = Decide(p, {arch, {}, std::nullopt}, arch, name, Args{arg0});
      CHECK_FALSE(v.ambiguous);
      return v.action;
    };
    CHECK(decide("socket", 16) == "errno 1");  // AF_NETLINK
    CHECK(decide("socket", 17) == "errno 1");  // AF_PACKET
    CHECK(decide("socket", 2) == "allow");
    CHECK(decide("socket", 10) == "allow");
    CHECK(decide("connect", 0) == "allow");
  }
  CheckMeaning(text, static_cast<uint32_t>(std::time(nullptr)));
}

TEST_CASE("oci: high bits of an int argument do not escape a rule") {
  // libseccomp compares 64 bits; the profile masks to the parameter's 32,
  // so AF_PACKET with bit 32 set is still AF_PACKET, as the kernel reads it.
  auto c = Oci(R"(policy p { syscalls {
      default allow
      errno EPERM socket if arg0 == AF_PACKET
    } })");
  const json p = json::parse(c->Artifact(".seccomp.json"));
  const DockerHost host{Arch::kX86_64, {}, std::nullopt};
  CHECK(Decide(p, host, Arch::kX86_64, "socket", {17}).action == "errno 1");
  CHECK(Decide(p, host, Arch::kX86_64, "socket", {17 | (uint64_t{1} << 32)}).action == "errno 1");
  CHECK(Decide(p, host, Arch::kX86_64, "socket", {2 | (uint64_t{1} << 32)}).action == "allow");
}

TEST_CASE("oci: same IR, same bytes") {
  auto a = Oci(kAgent);
  auto b = Oci(R"(
policy agent {
  limits { open_files 256
    pids 64
    memory 536870912B
    cpus 1.500 }
  process { user 1000:1000
    capabilities keep [CAP_CHOWN]
    capabilities keep [CAP_NET_BIND_SERVICE]
    no_new_privileges }
  syscalls {
    kill bpf
    kill ptrace
    kill-thread iopl
    trap mkdirat if arg2 & 0x800 == 0x800
    log getpid
    allow personality if arg0 == 0
    errno EAFNOSUPPORT socket if arg0 not in [AF_INET6, AF_INET, AF_UNIX]
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    allow socket, clone, getppid
    allow exit_group, close
    allow write, read
    default errno EPERM
    arch aarch64, x86_64
  }
}
)");
  REQUIRE(a->result.ok);
  REQUIRE(b->result.ok);
  CHECK(a->Artifact(".seccomp.json") == b->Artifact(".seccomp.json"));
  CHECK(a->Artifact(".runtime.json") == b->Artifact(".runtime.json"));
}

TEST_CASE("oci: actions") {
  auto c = Oci(R"(policy p { syscalls {
      default kill
      allow read
      log getpid
      notify uname
      errno 4095 mkdir
      trap chmod
      kill-thread iopl
    } })");
  REQUIRE(c->result.ok);
  const json p = json::parse(c->Artifact(".seccomp.json"));
  CHECK(p["defaultAction"] == "SCMP_ACT_KILL_PROCESS");
  CHECK_FALSE(p.contains("defaultErrnoRet"));
  std::map<std::string, std::string> action;
  for (const json& e : p["syscalls"]) {
    for (const json& n : e["names"]) action[n] = e["action"];
  }
  CHECK(action["read"] == "SCMP_ACT_ALLOW");
  CHECK(action["getpid"] == "SCMP_ACT_LOG");
  CHECK(action["uname"] == "SCMP_ACT_NOTIFY");
  CHECK(action["mkdir"] == "SCMP_ACT_ERRNO");
  CHECK(action["chmod"] == "SCMP_ACT_TRAP");
  CHECK(action["iopl"] == "SCMP_ACT_KILL_THREAD");
  CHECK(c->Diagnostics() ==
        "test.ward:5:7: warning[B3002]: SCMP_ACT_NOTIFY needs a seccomp agent: set "
        "linux.seccomp.listenerPath for runc or crun; Docker cannot load this profile\n"
        " 5 |       notify uname\n"
        "   |       ^~~~~~~~~~~~\n");
}

TEST_CASE("oci: refusals") {
  SECTION("notify as the default") {
    auto c = Oci("policy p { syscalls { default notify } }");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics() ==
          "test.ward:1:23: error[B3002]: an OCI profile cannot have notify as its default action\n"
          " 1 | policy p { syscalls { default notify } }\n"
          "   |                       ^~~~~~~~~~~~~~\n"
          "  = hint: runc refuses SCMP_ACT_NOTIFY as defaultAction; notify only named syscalls\n");
  }
  SECTION("notify on write") {
    auto c = Oci("policy p { syscalls { default allow\n notify write } }");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics().find("error[B3002]: an OCI profile cannot notify on 'write'") !=
          std::string::npos);
  }
  SECTION("argument rules that differ between architectures") {
    auto c = Oci(R"(policy p { syscalls {
      arch x86_64, x86
      default allow
      errno EPERM mprotect if arg2 > 7
    } })");
    CHECK_FALSE(c->result.ok);
    CHECK(c->Diagnostics() ==
          "test.ward:4:7: error[B3002]: 'mprotect' has different argument rules on x86_64 and "
          "x86, but an OCI seccomp profile applies its rules to every architecture\n"
          " 4 |       errno EPERM mprotect if arg2 > 7\n"
          "   |       ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
          "  = hint: compile a policy per architecture, or filter only parameters of the same "
          "width on every architecture\n");
  }
}

TEST_CASE("oci: a syscall missing on one architecture is no conflict") {
  auto c = Oci(R"(policy p { syscalls {
      arch x86_64, aarch64
      default errno EPERM
      allow open, openat
    } })");
  REQUIRE(c->result.ok);
  const json p = json::parse(c->Artifact(".seccomp.json"));
  CHECK(p["syscalls"][0]["names"] == json::array({"open", "openat"}));
}

TEST_CASE("oci: a deny of a syscall newer than libseccomp is a warning; an allow is not") {
  // mseal (462 on x86_64) is past libseccomp 2.5.4's table: runc and crun
  // linked with it skip the name (oci_runtime_test shows it).
  REQUIRE_FALSE(LibseccompKnows(Arch::kX86_64, "mseal"));
  const std::string warning = "'mseal' is newer than this host's libseccomp (" +
                              LibseccompVersion() +
                              "): an OCI runtime linked with it (runc, crun) skips the name";
  auto deny = Oci("policy p { syscalls {\n  default allow\n  errno EPERM mseal\n} }");
  REQUIRE(deny->result.ok);
  CHECK(deny->Diagnostics().find("test.ward:3:3: warning[B3002]: " + warning) != std::string::npos);
  CHECK(json::parse(deny->Artifact(".seccomp.json"))["syscalls"][0]["names"] ==
        json::array({"mseal"}));
  // Positive controls: an allow under a refusing default (a skipped name is
  // narrower), and a deny of a name libseccomp knows.
  auto allow = Oci("policy p { syscalls {\n  default errno EPERM\n  allow mseal\n} }");
  REQUIRE(allow->result.ok);
  CHECK(allow->Diagnostics().find("newer than") == std::string::npos);
  auto known = Oci("policy p { syscalls {\n  default allow\n  errno EPERM mkdir\n} }");
  REQUIRE(known->result.ok);
  CHECK(known->Diagnostics().find("newer than") == std::string::npos);
}

TEST_CASE("oci: the runtime fragment") {
  SECTION("absent sections: the strictest reading") {
    auto c = Oci("policy p {}");
    REQUIRE(c->result.ok);
    CHECK(c->Artifact(".runtime.json").find("\"noNewPrivileges\": true") != std::string::npos);
    const json f = json::parse(c->Artifact(".runtime.json"));
    CHECK(f["process"]["capabilities"]["bounding"] == json::array());
    CHECK_FALSE(f["process"].contains("user"));
    CHECK_FALSE(f["process"].contains("rlimits"));
    CHECK_FALSE(f["linux"].contains("resources"));
    CHECK(f["linux"]["seccomp"]["defaultAction"] == "SCMP_ACT_KILL_PROCESS");
  }
  SECTION("root keeps capabilities without ambient ones") {
    auto c = Oci("policy p { process { capabilities keep [CAP_KILL] } }");
    const json f = json::parse(c->Artifact(".runtime.json"));
    CHECK(f["process"]["noNewPrivileges"] == false);
    CHECK(f["process"]["capabilities"]["effective"] == json::array({"CAP_KILL"}));
    CHECK(f["process"]["capabilities"]["ambient"] == json::array());
  }
  SECTION("limits an OCI config cannot hold are warnings, and limits are then unenforced") {
    auto c = Oci(R"(policy p {
  process { no_new_privileges
    env allow ["PATH"] }
  limits { disk 1GiB
    timeout 10m
    cpu_time 1500ms }
})");
    REQUIRE(c->result.ok);
    CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kSyscalls});
    const json f = json::parse(c->Artifact(".runtime.json"));
    CHECK(f["process"]["rlimits"] ==
          json::parse(R"([{"type": "RLIMIT_CPU", "hard": 1, "soft": 1}])"));
    CHECK(c->Diagnostics() ==
          "test.ward:6:5: warning[B3002]: cpu_time becomes RLIMIT_CPU of 1 s, which bounds each "
          "process, not the container's total\n"
          " 6 |     cpu_time 1500ms }\n"
          "   |     ^~~~~~~~~~~~~~~\n"
          "  = hint: compile with -t process as well: `ward run` bounds the total\n"
          "test.ward:4:12: warning[B3002]: an OCI runtime config has no field for the limit "
          "'disk'\n"
          " 4 |   limits { disk 1GiB\n"
          "   |            ^~~~~~~~~\n"
          "  = hint: the limit is not enforced by this target\n"
          "test.ward:5:5: warning[B3002]: an OCI runtime config has no field for the limit "
          "'timeout'\n"
          " 5 |     timeout 10m\n"
          "   |     ^~~~~~~~~~~\n"
          "  = hint: the limit is not enforced by this target\n"
          "warning[B3002]: an OCI runtime config cannot filter the environment: `env allow` is "
          "not enforced by this target\n"
          "  = hint: process.env in config.json is the whole environment the workload gets\n");
  }
}

}  // namespace
}  // namespace ward::test
