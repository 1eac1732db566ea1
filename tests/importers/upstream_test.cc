// The current default profiles of moby, podman (containers/common) and
// containerd, and security-profiles-operator SeccompProfile objects
// (testdata/upstream/, README.md there says where each comes from): each
// imports, the text checks, and the imported policies decide specific calls
// as the profile says (the IR's Decide, per host policy). Also the
// refusals and readings these inputs showed: architectures Ward does not
// compile for, minKernel as moby parses it, JSON as Go decodes it, the
// clone conditions past 4096 regions (the import fuzzer's W1043 finding).
#include <catch2/catch.hpp>

#include "compiler/policy.h"
#include "importers/checked_import.h"
#include "importers/docker_seccomp/docker_profile.h"
#include "importers/spo_seccomp/spo_seccomp.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {
namespace {

using importers::CheckedImport;
using importers::DockerImportOptions;
using importers::ImportResult;
using Args = std::array<uint64_t, 6>;

const std::string kStd = std::string(WARD_SOURCE_DIR) + "/policies/std";

std::string Messages(const ImportResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += std::string(d.severity == Severity::kError ? "error " : "warning ") +
           (d.line ? std::to_string(d.line) + ":" + std::to_string(d.column) + " " : "") + d.where +
           ": " + d.message + "\n";
  }
  return out;
}

// The imported policies, lowered, by name.
struct Imported {
  std::unique_ptr<FrontendResult> checked;
  std::map<std::string, ir::Policy> policies;
  std::string text;
  std::string messages;

  std::string Decide(const std::string& policy, const std::string& name, Args args = {},
                     Arch arch = Arch::kX86_64) const {
    auto p = policies.find(policy);
    REQUIRE(p != policies.end());
    return ir::ToString(p->second.syscalls.Decide(arch, name, args));
  }
};

void Lower(const ImportResult& r, Imported* out) {
  out->text = r.text;
  out->messages = Messages(r);
  INFO(out->messages);
  REQUIRE(r.ok);
  out->checked = CheckSource(r.text);
  INFO(out->checked->text);
  REQUIRE_FALSE(out->checked->sink.has_errors());
  const ast::File* file = out->checked->program.file(out->checked->program.roots.at(0));
  for (const ast::Policy& p : file->policies) {
    DiagnosticSink sink;
    out->policies.emplace(p.name.text, ir::Lower(out->checked->program, p, sink));
    REQUIRE_FALSE(sink.has_errors());
  }
}

Imported ImportFile(const std::string& file, std::vector<std::string> caps = {}) {
  DockerImportOptions options;
  options.name = "p";
  options.source = file;
  options.capabilities = std::move(caps);
  CheckedImport c;
  importers::ImportDockerSeccompChecked(ReadTestFile("importers/testdata/upstream/" + file),
                                        options, kStd, &c);
  INFO(Messages(c.result));
  REQUIRE_FALSE(c.internal_error);
  Imported out;
  Lower(c.result, &out);
  return out;
}

constexpr uint64_t kCloneNewUser = 0x10000000;
constexpr uint64_t kCloneNewNs = 0x00020000;
constexpr uint64_t kAfInet = 2, kAfAlg = 38, kAfVsock = 40;
const char* kEperm = "errno 1";

// What the three Docker-format defaults share (moby's and podman's per host
// policy, containerd's single amd64 one).
void CommonDefaults(const Imported& i, const std::string& p, Arch a = Arch::kX86_64) {
  CHECK(i.Decide(p, "read", {}, a) == "allow");
  CHECK(i.Decide(p, "getppid", {}, a) == "allow");
  // Newer than libseccomp 2.5.4's table, in the profile: kept (the
  // kernel's own table, branch sys).
  CHECK(i.Decide(p, "mseal", {}, a) == "allow");
  CHECK(i.Decide(p, "listmount", {}, a) == "allow");
  CHECK(i.Decide(p, "statmount", {}, a) == "allow");
  // socket: every family but AF_VSOCK and AF_ALG.
  CHECK(i.Decide(p, "socket", {kAfInet}, a) == "allow");
  CHECK(i.Decide(p, "socket", {kAfVsock}, a) == kEperm);
  CHECK(i.Decide(p, "socket", {kAfAlg}, a) == kEperm);
  CHECK(i.Decide(p, "socket", {kAfAlg + 1}, a) == "allow");
  // personality: exactly the five values the profiles list.
  for (uint64_t v : {0x0ull, 0x8ull, 0x20000ull, 0x20008ull, 0xffffffffull}) {
    CHECK(i.Decide(p, "personality", {v}, a) == "allow");
  }
  CHECK(i.Decide(p, "personality", {0x4}, a) == kEperm);
  CHECK(i.Decide(p, "personality", {0x0400000}, a) == kEperm);  // ADDR_NO_RANDOMIZE
  // clone: threads and forks, but no new namespace without CAP_SYS_ADMIN.
  CHECK(i.Decide(p, "clone", {0x3d0f00}, a) == "allow");
  CHECK(i.Decide(p, "clone", {kCloneNewUser}, a) == kEperm);
  CHECK(i.Decide(p, "clone", {kCloneNewNs | 0x11}, a) == kEperm);
  CHECK(i.Decide(p, "clone3", {}, a) == "errno 38");
  // The CAP_SYS_ADMIN group.
  CHECK(i.Decide(p, "mount", {}, a) == kEperm);
  CHECK(i.Decide(p, "unshare", {}, a) == kEperm);
  CHECK(i.Decide(p, "bpf", {}, a) == kEperm);
  // Not in the profile at all.
  CHECK(i.Decide(p, "kexec_load", {}, a) == kEperm);
}

// With CAP_SYS_ADMIN the cap-gated groups open (includes.caps).
void AdminDefaults(const Imported& i, const std::string& p) {
  CHECK(i.Decide(p, "clone", {kCloneNewUser}) == "allow");
  CHECK(i.Decide(p, "mount") == "allow");
  CHECK(i.Decide(p, "unshare") == "allow");
  CHECK(i.Decide(p, "clone3") == "allow");
  CHECK(i.Decide(p, "kexec_load") == kEperm);  // CAP_SYS_BOOT's, not admin's
}

TEST_CASE("upstream: moby's default profile (with loongarch64 in its archMap)") {
  Imported i = ImportFile("moby-default.json");
  // An architecture Ward does not compile for is a warning, not an error.
  CHECK(i.messages.find("warning /archMap/8/architecture: SCMP_ARCH_LOONGARCH64 is not "
                        "imported") != std::string::npos);
  CHECK(i.messages.find("error") == std::string::npos);
  CHECK(i.text.find("policy p-x86_64 {") != std::string::npos);
  CHECK(i.text.find("        allow clone if arg0 & 0x7e020000 == 0\n") != std::string::npos);
  CommonDefaults(i, "p-x86_64");
  CommonDefaults(i, "p-aarch64", Arch::kAarch64);
  CommonDefaults(i, "p-riscv64", Arch::kRiscv64);
  // The arch-gated entries (includes.arches).
  CHECK(i.Decide("p-x86_64", "arch_prctl") == "allow");
  CHECK(i.Decide("p-x86_64", "modify_ldt") == "allow");
  CHECK(i.Decide("p-aarch64", "modify_ldt", {}, Arch::kArm) == kEperm);
  CHECK(i.Decide("p-aarch64", "arm_fadvise64_64", {}, Arch::kArm) == "allow");
  Imported admin = ImportFile("moby-default.json", {"CAP_SYS_ADMIN"});
  AdminDefaults(admin, "p-x86_64");
}

TEST_CASE("upstream: podman's default profile (containers/common)") {
  Imported i = ImportFile("podman-seccomp.json");
  // podman's own "errno" names beside errnoRet are not Docker's: ignored.
  CHECK(i.messages.find("warning /syscalls/0/errno: unknown key 'errno' is ignored") !=
        std::string::npos);
  CHECK(i.messages.find("error") == std::string::npos);
  const std::string p = "p-x86_64";
  // podman's default is ENOSYS (defaultErrnoRet 38); its list of refusals
  // says EPERM.
  CHECK(i.Decide(p, "personality", {0x4}) == "errno 38");
  CHECK(i.Decide(p, "kexec_load") == kEperm);
  CHECK(i.Decide(p, "read") == "allow");
  CHECK(i.Decide(p, "personality", {0x8}) == "allow");
  // Without CAP_AUDIT_WRITE, a NETLINK_AUDIT socket gets EINVAL; other
  // sockets (AF_VSOCK too, unlike moby) are allowed.
  constexpr uint64_t kAfNetlink = 16, kNetlinkAudit = 9;
  CHECK(i.Decide(p, "socket", {kAfNetlink, 3, kNetlinkAudit}) == "errno 22");
  CHECK(i.Decide(p, "socket", {kAfNetlink, 3, 0}) == "allow");
  CHECK(i.Decide(p, "socket", {kAfInet, 1, kNetlinkAudit}) == "allow");
  CHECK(i.Decide(p, "socket", {kAfVsock}) == "allow");
  CHECK(i.Decide(p, "clone", {0x3d0f00}) == "allow");
  // podman allows clone, mount and unshare to every container (rootless
  // containers make user namespaces); its cap-gated groups are others.
  CHECK(i.Decide(p, "clone", {kCloneNewUser}) == "allow");
  CHECK(i.Decide(p, "mount") == "allow");
  CHECK(i.Decide(p, "init_module") == kEperm);
  Imported caps = ImportFile("podman-seccomp.json", {"CAP_AUDIT_WRITE", "CAP_SYS_MODULE"});
  CHECK(caps.Decide(p, "init_module") == "allow");
  CHECK(caps.Decide(p, "socket", {kAfNetlink, 3, kNetlinkAudit}) == "allow");
}

TEST_CASE("upstream: containerd's default profile, as DefaultProfile builds it on amd64") {
  Imported i = ImportFile("containerd-default-amd64.json");
  CHECK(i.messages ==
        "warning /architectures/2: SCMP_ARCH_X32 is not imported: Ward kills every "
        "architecture a policy does not list, and the x32 ABI always\n");
  CHECK(i.text.find("        arch x86_64, x86\n") != std::string::npos);
  CommonDefaults(i, "p");
  CHECK(i.Decide("p", "chroot") == "allow");  // CAP_SYS_CHROOT is in containerd's default set
  CHECK(i.Decide("p", "ptrace") == "allow");  // kernel 4.8 or later
  CHECK(i.Decide("p", "socket", {kAfInet}, Arch::kX86) == "allow");
}

TEST_CASE("upstream: security-profiles-operator SeccompProfile objects") {
  DockerImportOptions options;
  options.source = "spo.yaml";
  SECTION("four documents are four policies, named by metadata.name") {
    ImportResult r = importers::ImportSpoSeccomp(
        ReadTestFile("importers/testdata/upstream/spo-seccompprofile.yaml"), options);
    Imported i;
    Lower(r, &i);
    CHECK(i.messages.empty());
    CHECK(i.policies.size() == 4);
    CHECK(i.Decide("profile-block-all", "read") == kEperm);
    CHECK(i.Decide("profile-complain-unsafe", "read") == "log");
    CHECK(i.Decide("profile-allow-unsafe", "mount") == "allow");
    CHECK(i.Decide("profile-complain-block-high-risk", "futex") == "allow");
    CHECK(i.Decide("profile-complain-block-high-risk", "ptrace") == kEperm);
    CHECK(i.Decide("profile-complain-block-high-risk", "read") == "log");
    CHECK(i.text.find("by `ward import --from spo-seccomp`") != std::string::npos);
  }
  SECTION("the operator's runc base profile; a dotted name becomes a Ward name") {
    ImportResult r = importers::ImportSpoSeccomp(
        ReadTestFile("importers/testdata/upstream/spo-baseprofile-runc.yaml"), options);
    Imported i;
    Lower(r, &i);
    CHECK(i.messages ==
          "warning 5:9 /metadata/name: the policy for 'runc-v1.4.2' is named 'runc-v1-4-2'\n");
    CHECK(i.Decide("runc-v1-4-2", "execve") == "allow");
    CHECK(i.Decide("runc-v1-4-2", "mount") == kEperm);
  }
  SECTION("refusals, at their line and column") {
    struct Refusal {
      const char* yaml;
      const char* messages;
    };
    const Refusal kRefusals[] = {
        {"apiVersion: security-profiles-operator.x-k8s.io/v1beta1\n"
         "kind: SeccompProfile\n"
         "metadata:\n  name: app\n"
         "spec:\n  defaultAction: SCMP_ACT_ERRNO\n  baseProfileName: runc-v1.2.0\n",
         "error 7:20 /spec/baseProfileName: baseProfileName names another profile in the "
         "cluster, whose rules the operator merges into this one; the file does not hold "
         "them, so this profile cannot be imported faithfully (import the base's spec merged "
         "in, or drop baseProfileName)\n"},
        {"apiVersion: security-profiles-operator.x-k8s.io/v1\n"
         "kind: SeccompProfile\n"
         "metadata:\n  name: app\n"
         "spec:\n  defaultAction: SCMP_ACT_ERRNO\n  syscalls:\n"
         "  - action: SCMP_ACT_ALLOW\n    names: [read]\n    args:\n"
         "    - {index: 0, value: -1, op: SCMP_CMP_EQ}\n",
         "error 11:25 /spec/syscalls/0/args/0/value: expected a non-negative integer, found a "
         "negative or fractional number\n"},
        {"apiVersion: security-profiles-operator.x-k8s.io/v1\n"
         "kind: SeccompProfile\n"
         "metadata:\n  name: app\n"
         "spec:\n  defaultAction: SCMP_ACT_ERRNO\n  disabled: true\n",
         "error 7:13 /spec/disabled: the profile is disabled: the operator does not install it "
         "on any node\n"},
        {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
         "warning 1:1 : not a SeccompProfile of security-profiles-operator.x-k8s.io/*: "
         "skipped\n"
         "error : no SeccompProfile document in the file\n"},
        {"spec: [1, 2\n", "error 2:1 : not valid YAML: end of sequence flow not found\n"},
    };
    for (const Refusal& c : kRefusals) {
      INFO(c.yaml);
      ImportResult r = importers::ImportSpoSeccomp(c.yaml, options);
      CHECK_FALSE(r.ok);
      CHECK(Messages(r) == c.messages);
    }
  }
  SECTION("fields the SeccompProfile schema does not have are dropped, as the API server does") {
    ImportResult r = importers::ImportSpoSeccomp(
        "apiVersion: security-profiles-operator.x-k8s.io/v1\n"
        "kind: SeccompProfile\n"
        "metadata:\n  name: app\n"
        "spec:\n  defaultAction: SCMP_ACT_ERRNO\n  syscalls:\n"
        "  - action: SCMP_ACT_ALLOW\n    names: [read, mount]\n"
        "    includes: {caps: [CAP_SYS_ADMIN]}\n",
        options);
    Imported i;
    Lower(r, &i);
    CHECK(i.messages ==
          "warning 10:5 /spec/syscalls/0/includes: 'includes' is not a field of SeccompProfile; "
          "the API server drops it\n");
    CHECK(i.Decide("app", "mount") == "allow");
  }
  CHECK(importers::LooksLikeSpoSeccomp(
      ReadTestFile("importers/testdata/upstream/spo-seccompprofile.yaml")));
  CHECK_FALSE(importers::LooksLikeSpoSeccomp(
      ReadTestFile("importers/testdata/upstream/moby-default.json")));
}

ImportResult Import(const std::string& json) {
  DockerImportOptions options;
  options.source = "p.json";
  CheckedImport c;
  importers::ImportDockerSeccompChecked(json, options, kStd, &c);
  REQUIRE_FALSE(c.internal_error);
  return c.result;
}

TEST_CASE("import: architectures Ward does not compile for warn; unknown ones are errors") {
  for (const char* arch :
       {"SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPSEL", "SCMP_ARCH_PPC",
        "SCMP_ARCH_PPC64", "SCMP_ARCH_S390", "SCMP_ARCH_PARISC64", "SCMP_ARCH_X32"}) {
    ImportResult r = Import(std::string(R"({"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64", ")") +
                            arch + R"("]})");
    INFO(arch);
    CHECK(r.ok);
    CHECK(Messages(r) == std::string("warning /architectures/1: ") + arch +
                             " is not imported: Ward kills every architecture a policy does "
                             "not list, and the x32 ABI always\n");
  }
  for (const char* arch : {"SCMP_ARCH_RISCV32", "SCMP_ARCH_loongarch64", "loong64"}) {
    ImportResult r = Import(std::string(R"({"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": [")") +
                            arch + R"("]})");
    CHECK_FALSE(r.ok);
    CHECK(Messages(r) ==
          std::string("error /architectures/0: unknown architecture '") + arch + "'\n");
  }
}

TEST_CASE("import: minKernel is read as moby reads it") {
  auto with = [](const std::string& value) {
    return Import(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["ptrace"],
        "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": )" +
                  value + "}}]}");
  };
  // Refused, as moby's KernelVersion.UnmarshalJSON refuses them.
  const std::pair<const char*, const char*> kRefused[] = {
      {R"("4.15abc")",
       "invalid kernel version '4.15abc', expected \"<kernel>.<major>\": "
       "'15abc' is not a decimal number; Docker refuses the profile"},
      {R"("3.12.1\"")",
       "invalid kernel version '3.12.1\"', expected \"<kernel>.<major>\": "
       "not two numbers separated by one dot; Docker refuses the profile"},
      {R"("0.0")",
       "invalid kernel version '0.0', expected \"<kernel>.<major>\": version "
       "cannot be 0.0; Docker refuses the profile"},
      {R"("3.12.1")",
       "invalid kernel version '3.12.1', expected \"<kernel>.<major>\": not two "
       "numbers separated by one dot; Docker refuses the profile"},
      {R"("4.256")",
       "invalid kernel version '4.256', expected \"<kernel>.<major>\": '256' is "
       "out of range 0-255; Docker refuses the profile"},
      {R"(" 4.8")",
       "invalid kernel version ' 4.8', expected \"<kernel>.<major>\": ' 4' is not "
       "a decimal number; Docker refuses the profile"},
      {R"("+4.8")",
       "invalid kernel version '+4.8', expected \"<kernel>.<major>\": '+4' is not "
       "a decimal number; Docker refuses the profile"},
      {R"("4.")",
       "invalid kernel version '4.', expected \"<kernel>.<major>\": an empty number; "
       "Docker refuses the profile"},
      {"4.8", "invalid kernel version: expected a string \"<kernel>.<major>\", found number"},
  };
  for (const auto& [value, message] : kRefused) {
    INFO(value);
    ImportResult r = with(value);
    CHECK_FALSE(r.ok);
    CHECK(Messages(r) == std::string("error /syscalls/0/includes/minKernel: ") + message + "\n");
  }
  // Accepted: KERNEL.MAJOR, leading zeros, 0.x, "" (every kernel), null (absent).
  for (const char* value :
       {R"("4.8")", R"("04.08")", R"("0.1")", R"("255.255")", R"("")", "null"}) {
    INFO(value);
    ImportResult r = with(value);
    CHECK(r.ok);
    CHECK(Messages(r).empty());
  }
  std::string why;
  CHECK(importers::ParseMinKernel("5.10", &why).value() == std::array<uint64_t, 2>{5, 10});
}

TEST_CASE("import: JSON is decoded as Go's encoding/json decodes it into Docker's types") {
  const std::string head =
      R"({"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"], )";
  auto text = [&](const std::string& syscalls) {
    ImportResult r = Import(head + syscalls + "}");
    INFO(Messages(r));
    REQUIRE(r.ok);
    return r.text;
  };
  // Duplicate keys: the last decides.
  CHECK(text(R"("syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW",
      "action": "SCMP_ACT_LOG"}])")
            .find("        log read\n") != std::string::npos);
  // ... also when it is spelled in another case.
  CHECK(text(R"("syscalls": [{"names": ["read"], "ACTION": "SCMP_ACT_ALLOW",
      "Action": "SCMP_ACT_LOG"}])")
            .find("        log read\n") != std::string::npos);
  // A later duplicate array decodes into the items of the earlier one: the
  // second entry keeps the `names` the later object does not give.
  CHECK(text(R"("syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}],
      "syscalls": [{"action": "SCMP_ACT_LOG"}])")
            .find("        log read\n") != std::string::npos);
  // null leaves a string as it was.
  CHECK(text(R"("syscalls": [{"names": ["read"], "action": "SCMP_ACT_LOG", "action": null}])")
            .find("        log read\n") != std::string::npos);
  // null empties a slice.
  CHECK(text(R"("syscalls": [{"names": ["read"], "names": null, "action": "SCMP_ACT_ALLOW"}])")
            .find("read") == std::string::npos);
  // Keys match fields whatever their case, and with the two non-ASCII
  // letters Go folds to ASCII: U+212A (Kelvin) for k, U+017F (long s) for s.
  CHECK(text("\"syscalls\": [{\"name\xc5\xbf\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}]")
            .find("        allow read\n") != std::string::npos);
  {
    ImportResult r = Import(head + R"("syscalls": [{"names": ["ptrace"], "action": "SCMP_ACT_ALLOW",
        "includes": {"min)" +
                            std::string("\xe2\x84\xaa") + R"(ernel": "4.15abc"}}]})");
    CHECK_FALSE(r.ok);  // the key is minKernel, so its value is checked
  }
  // Unknown keys are ignored (with a warning): the finding's "ind[ex"
  // leaves the index at 0.
  {
    ImportResult r = Import(head + R"("syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ALLOW",
        "args": [{"ind[ex": 1, "value": 9, "op": "SCMP_CMP_EQ"}]}]})");
    REQUIRE(r.ok);
    CHECK(Messages(r) ==
          "warning /syscalls/0/args/0/ind[ex: unknown key 'ind[ex' is ignored, as Docker does\n");
    CHECK(r.text.find("        allow kill if arg0 == 9\n") != std::string::npos);
  }
  // A byte order mark: Go refuses the text.
  ImportResult bom = Import("\xef\xbb\xbf{}");
  CHECK_FALSE(bom.ok);
}

TEST_CASE("import: conditions past 4096 regions are refused at the entry (fuzzer finding)") {
  // tests/fuzz/corpus_docker_seccomp/w1043-clone-regions.json: Docker
  // accepts it; clone's `arg1 <= 0x406 and arg0 != ...` (an unknown key
  // leaves the second index 0) needs more regions than Ward's IR holds.
  ImportResult r = Import(ReadTestFile("fuzz/corpus_docker_seccomp/w1043-clone-regions.json"));
  CHECK_FALSE(r.ok);
  CHECK(r.text.empty());
  CHECK(Messages(r).find(
            "error /syscalls/3: the conditions on 'clone' split its arguments into more than "
            "4096 regions on x86_64: Ward's IR cannot hold them (a seccomp filter has at most "
            "4096 instructions), so this entry cannot be imported\n") != std::string::npos);
  // The positive control: one condition fewer imports and checks.
  ImportResult ok = Import(R"({"defaultAction": "SCMP_ACT_KILL_PROCESS",
    "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 1, "value": 1030, "op": "SCMP_CMP_LE"}]}]})");
  INFO(Messages(ok));
  CHECK(ok.ok);
}

}  // namespace
}  // namespace ward::test
