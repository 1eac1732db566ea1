// The Docker seccomp importer: the exact Ward text for small profiles, the
// golden import of testdata/every_field.json, and each refusal with its
// location and message.
#include <catch2/catch.hpp>

#include "importers/docker_seccomp/docker_seccomp.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {
namespace {

using importers::DockerImportOptions;
using importers::ImportResult;

ImportResult Import(const std::string& json, DockerImportOptions options = {}) {
  options.source = "p.json";
  return importers::ImportDockerSeccomp(json, options);
}

// "where: message" for each diagnostic, errors and warnings alike.
std::string Messages(const ImportResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += std::string(d.severity == Severity::kError ? "error " : "warning ") + d.where + ": " +
           d.message + "\n";
  }
  return out;
}

const char* kHeader =
    "// Imported from p.json by `ward import --from docker-seccomp`.\n"
    "// Docker decides `includes` and `excludes` when it loads a profile; here they were\n"
    "// decided for\n"
    "//   capabilities: none (the policy keeps none)\n"
    "//   kernel: new enough for every minKernel\n";

TEST_CASE("import: a small profile, exactly") {
  ImportResult r = Import(R"({
    "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
    "architectures": ["SCMP_ARCH_X86_64"],
    "syscalls": [
      {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["socket"], "action": "SCMP_ACT_ALLOW", "comment": "no AF_VSOCK",
       "args": [{"index": 0, "value": 40, "op": "SCMP_CMP_NE"}]},
      {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}
    ]})");
  INFO(Messages(r));
  REQUIRE(r.ok);
  CHECK(r.diagnostics.empty());
  CHECK(r.text == std::string(kHeader) +
                      "\n"
                      "policy imported {\n"
                      "    syscalls {\n"
                      "        arch x86_64\n"
                      "        default errno EPERM\n"
                      "        allow read, write\n"
                      "        errno ENOSYS clone3\n"
                      "        // /syscalls/1: no AF_VSOCK\n"
                      "        allow socket if arg0 != 0x28\n"
                      "    }\n"
                      "}\n");
}

TEST_CASE("import: unsigned comparisons on a signed parameter split at the sign") {
  ImportResult r = Import(R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
      {"names": ["setpriority"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
       "args": [{"index": 2, "value": 10, "op": "SCMP_CMP_GT"}]}]})");
  REQUIRE(r.ok);
  CHECK(r.text.find("        // /syscalls/0\n"
                    "        errno EACCES setpriority if arg2 >= 11\n"
                    "        errno EACCES setpriority if arg2 <= -1\n") != std::string::npos);
  // Under default allow, io_uring is named so that Ward leaves it open as
  // Docker does (clone3 too, but only where clone's flags are filtered).
  CHECK(r.text.find("        allow io_uring_setup, io_uring_enter, io_uring_register\n") !=
        std::string::npos);
}

TEST_CASE("import: the golden import of every field") {
  const std::string json = ReadTestFile("importers/testdata/every_field.json");
  DockerImportOptions options;
  options.name = "every-field";
  options.source = "every_field.json";
  ImportResult r = importers::ImportDockerSeccomp(json, options);
  INFO(Messages(r));
  REQUIRE(r.ok);
  CHECK(MatchesGolden("importers/testdata/every_field.ward", r.text));
  auto checked = CheckSource(r.text);
  INFO(checked->text);
  CHECK_FALSE(checked->sink.has_errors());
}

TEST_CASE("import: capabilities are kept by the policy and decide includes.caps") {
  const std::string json = R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
      {"names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
      {"names": ["chown"], "action": "SCMP_ACT_ALLOW", "excludes": {"caps": ["CAP_SYS_ADMIN"]}}]})";
  DockerImportOptions options;
  options.capabilities = {"CAP_SYS_ADMIN"};
  ImportResult r = Import(json, options);
  REQUIRE(r.ok);
  CHECK(r.text.find("allow mount\n") != std::string::npos);
  CHECK(r.text.find("chown") == std::string::npos);
  CHECK(r.text.find("    process {\n"
                    "        no_new_privileges\n"
                    "        capabilities keep [CAP_SYS_ADMIN]\n"
                    "    }\n") != std::string::npos);
  ImportResult none = Import(json);
  REQUIRE(none.ok);
  CHECK(none.text.find("mount") == std::string::npos);
  CHECK(none.text.find("allow chown\n") != std::string::npos);
  CHECK(none.text.find("process") == std::string::npos);
}

TEST_CASE("import: minKernel is decided for --kernel") {
  const std::string json = R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
      {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}}]})";
  DockerImportOptions old;
  old.kernel = importers::ParseKernelVersion("4.4.0-210-generic");
  CHECK(Import(json, old).text.find("ptrace") == std::string::npos);
  DockerImportOptions recent;
  recent.kernel = importers::ParseKernelVersion("4.8");
  CHECK(Import(json, recent).text.find("allow ptrace\n") != std::string::npos);
  CHECK(Import(json).text.find("allow ptrace\n") != std::string::npos);
}

TEST_CASE("import: archMap gives one policy per host architecture") {
  ImportResult r = Import(R"({"defaultAction": "SCMP_ACT_ERRNO", "archMap": [
      {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]},
      {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]}],
    "syscalls": [
      {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["arch_prctl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64"]}}]})");
  REQUIRE(r.ok);
  CHECK(Messages(r) ==
        "warning /archMap/0/subArchitectures/1: SCMP_ARCH_X32 is not imported: Ward kills every "
        "architecture a policy does not list, and the x32 ABI always\n");
  CHECK(r.text.find("policy imported-x86_64 {\n"
                    "    syscalls {\n"
                    "        arch x86_64, x86\n"
                    "        default errno EPERM\n"
                    "        allow read, arch_prctl\n") != std::string::npos);
  CHECK(r.text.find("policy imported-aarch64 {\n"
                    "    syscalls {\n"
                    "        arch aarch64, arm\n"
                    "        default errno EPERM\n"
                    "        allow read\n") != std::string::npos);
}

TEST_CASE("import: a host whose rules Ward cannot write is left out, with the reason") {
  // clone's flags are its second parameter on s390x (CLONE_BACKWARDS2), but
  // Ward's parameter table follows x86_64: Ward refuses conditions there.
  ImportResult r = Import(R"({"defaultAction": "SCMP_ACT_ERRNO", "archMap": [
      {"architecture": "SCMP_ARCH_X86_64"}, {"architecture": "SCMP_ARCH_S390X"}],
    "syscalls": [
      {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["s390x"]},
       "args": [{"index": 0, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}]},
      {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["s390x"]},
       "args": [{"index": 1, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}]}]})");
  REQUIRE(r.ok);
  CHECK(Messages(r) ==
        "warning /syscalls/1/args/0: no policy for s390x hosts: argument 1 of 'clone' is "
        "another parameter on s390x than in Ward's table (x86_64's order), so Ward cannot "
        "filter it there\n");
  CHECK(r.text.find("policy imported-x86_64 {") != std::string::npos);
  CHECK(r.text.find("s390x {") == std::string::npos);
  // With s390x alone, the same is an error.
  ImportResult alone = Import(R"({"defaultAction": "SCMP_ACT_ERRNO",
    "architectures": ["SCMP_ARCH_S390X"], "syscalls": [
      {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
       "args": [{"index": 1, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}]}]})");
  CHECK_FALSE(alone.ok);
  CHECK(Messages(alone) ==
        "error /syscalls/0/args/0: argument 1 of 'clone' is another parameter on s390x than in "
        "Ward's table (x86_64's order), so Ward cannot filter it there\n");
}

TEST_CASE("import: what libseccomp does with unconditional and overlapping rules") {
  ImportResult r = Import(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
      {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 3,
       "args": [{"index": 1, "value": 9, "op": "SCMP_CMP_EQ"}]},
      {"names": ["kill"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["tgkill"], "action": "SCMP_ACT_TRAP"},
      {"names": ["tgkill"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["bpf"], "action": "SCMP_ACT_ERRNO"},
      {"names": ["unshare"], "action": "SCMP_ACT_LOG",
       "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_GE"}]},
      {"names": ["unshare"], "action": "SCMP_ACT_TRAP",
       "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_LE"}]}]})");
  REQUIRE(r.ok);
  CHECK(Messages(r) ==
        "warning /syscalls/0: has no effect on 'kill': libseccomp lets the unconditional rule "
        "of /syscalls/1 decide every call\n"
        "warning /syscalls/3: has no effect on 'tgkill': libseccomp lets the unconditional rule "
        "of /syscalls/2 decide every call\n"
        "warning /syscalls/6: overlaps /syscalls/5 on 'unshare' with a different action: "
        "libseccomp's choice depends on rule order; Ward applies the most restrictive (trap)\n");
  CHECK(r.text.find("        allow kill\n        trap tgkill\n") != std::string::npos);
  CHECK(r.text.find("bpf") == std::string::npos);  // the default's action: runc skips it
}

struct Refusal {
  const char* json;
  const char* messages;
};

TEST_CASE("import: refusals name the place and the reason") {
  const Refusal kRefusals[] = {
      {"[1, 2",
       "error : not valid JSON: parse error at line 1, column 6: syntax error while parsing "
       "array - unexpected end of input; expected ']'\n"},
      {"[]", "error : expected an object, found array\n"},
      {R"({"syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]})",
       "error /defaultAction: the profile has syscall rules but no defaultAction\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
           "archMap": [{"architecture": "SCMP_ARCH_X86_64"}]})",
       "error : 'architectures' and 'archMap' are both given; Docker refuses the profile\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_Z80"]})",
       "error /architectures/0: unknown architecture 'SCMP_ARCH_Z80'\n"},
      {R"({"defaultAction": "SCMP_ACT_DENY"})",
       "error /defaultAction: unknown action 'SCMP_ACT_DENY'\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"name": "read", "names": ["write"],
           "action": "SCMP_ACT_ERRNO"}]})",
       "error /syscalls/0: 'name' and 'names' are both given; Docker refuses the profile\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"],
           "action": "SCMP_ACT_ERRNO", "errnoRet": 0}]})",
       "error /syscalls/0/errnoRet: errnoRet 0 makes the call return 0 without running it; "
       "Ward cannot express that\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"],
           "action": "SCMP_ACT_ERRNO", "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_XX"}]}]})",
       "error /syscalls/0/args/0/index: argument index 6 is out of range 0-5\n"
       "error /syscalls/0/args/0/op: unknown operator 'SCMP_CMP_XX'\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"],
           "action": "SCMP_ACT_ERRNO", "args": [{"index": -1, "value": 1.5, "op": 3}]}]})",
       "error /syscalls/0/args/0/index: expected a non-negative integer, found a negative or "
       "fractional number\n"
       "error /syscalls/0/args/0/value: expected a non-negative integer, found a negative or "
       "fractional number\n"
       "error /syscalls/0/args/0/op: expected a string, found number\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"],
           "action": "SCMP_ACT_ERRNO", "includes": {"minKernel": "four"}}]})",
       "error /syscalls/0/includes/minKernel: invalid kernel version 'four', expected "
       "\"<kernel>.<major>\": not two numbers separated by one dot; Docker refuses the "
       "profile\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["openat"],
           "action": "SCMP_ACT_ERRNO", "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]})",
       "error /syscalls/0/args/0: argument 1 of 'openat' (const char *) is a pointer; Ward "
       "cannot filter it, as the kernel reads what it points to after the filter has run\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["getppid"],
           "action": "SCMP_ACT_ERRNO", "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]}]})",
       "error /syscalls/0/args/0: 'getppid' has 0 parameters; argument 0 does not exist\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
           {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
            "args": [{"index": 1, "value": 9, "op": "SCMP_CMP_EQ"}]},
           {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
            "args": [{"index": 1, "value": 5, "op": "SCMP_CMP_GT"}]}]})",
       "error /syscalls/1: overlaps /syscalls/0 on 'kill' with another errno value: libseccomp "
       "picks one by rule order, and Ward refuses two errno values for one call\n"},
      {R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
           "syscalls": [{"names": ["mmap"], "action": "SCMP_ACT_ERRNO",
            "args": [{"index": 1, "value": 4294967296, "op": "SCMP_CMP_GE"}]}]})",
       "error /syscalls/0: the conditions on 'mmap' read differently on x86_64 and x86 (a "
       "parameter's width differs); one Ward policy applies one condition to every "
       "architecture\n"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
           {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]},
           {"names": ["clone3"],
           "action": "SCMP_ACT_ALLOW", "args": [{"index": 1, "value": 88, "op": "SCMP_CMP_EQ"}]}]})",
       "error /syscalls/1: cannot import 'clone3' exactly: Ward closes it unless a rule names "
       "it, and the default (errno EPERM) cannot be written beside this rule's allow\n"},
  };
  for (const Refusal& c : kRefusals) {
    ImportResult r = Import(c.json);
    INFO(c.json);
    CHECK_FALSE(r.ok);
    CHECK(Messages(r) == c.messages);
  }
}

TEST_CASE("import: warnings for what Docker ignores or Ward cannot keep") {
  ImportResult r = Import(R"({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 5000,
    "flags": ["SECCOMP_FILTER_FLAG_LOG"], "listenerPath": "/run/agent.sock", "extra": 1,
    "syscalls": [
      {"names": ["nosuchcall", "read"], "action": "SCMP_ACT_ALLOW", "errnoRet": 4},
      {"names": ["reboot"], "action": "SCMP_ACT_TRACE"},
      {"names": [], "action": "SCMP_ACT_ALLOW"},
      {"names": ["kill"], "action": "SCMP_ACT_ALLOW",
       "args": [{"index": 1, "value": 4294967296, "op": "SCMP_CMP_EQ"}]}]})");
  REQUIRE(r.ok);
  CHECK(Messages(r) ==
        "warning /extra: unknown key 'extra' is ignored, as Docker does\n"
        "warning /defaultErrnoRet: errnoRet 5000 reaches the caller as 4095\n"
        "warning /flags: seccomp flags are not imported: Ward has no equivalent\n"
        "warning /listenerPath: listenerPath is not imported: notify rules need an agent\n"
        "warning /syscalls/0/errnoRet: errnoRet is ignored with SCMP_ACT_ALLOW\n"
        "warning /syscalls/1/action: SCMP_ACT_TRACE is imported as errno ENOSYS, what the "
        "kernel answers when no tracer is attached\n"
        "warning /syscalls/2: the entry names no syscall\n"
        "warning /syscalls/0: unknown syscall 'nosuchcall' is ignored, as runc does\n"
        "warning /syscalls/3: never applies to 'kill': no value the kernel reads satisfies its "
        "conditions\n");
  CHECK(r.text.find("        default errno 4095\n") != std::string::npos);
  CHECK(r.text.find("        errno ENOSYS reboot\n") != std::string::npos);
  CHECK(r.text.find("// warning: /syscalls/3: never applies to 'kill'") != std::string::npos);
}

TEST_CASE("import: an empty profile is unconfined") {
  ImportResult r = Import("{}");
  REQUIRE(r.ok);
  CHECK(r.text.find("        default allow\n") != std::string::npos);
}

TEST_CASE("import: helpers") {
  CHECK(importers::ParseKernelVersion("5.10") == std::array<uint64_t, 3>{5, 10, 0});
  CHECK(importers::ParseKernelVersion(" 6.1.55-cloud") == std::array<uint64_t, 3>{6, 1, 55});
  CHECK_FALSE(importers::ParseKernelVersion("6"));
  CHECK_FALSE(importers::ParseKernelVersion("v6.1"));
  CHECK(importers::PolicyNameFromPath("/etc/docker/seccomp.default.json") == "seccomp");
  CHECK(importers::PolicyNameFromPath("my profile.json") == "my-profile");
  CHECK(importers::PolicyNameFromPath("2024.json") == "p-2024");
}

}  // namespace
}  // namespace ward::test
