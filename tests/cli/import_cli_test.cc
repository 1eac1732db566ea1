// `ward import --from docker-seccomp` as a user runs it: stdout or -o, the
// diagnostics on stderr with their JSON pointers, exit codes, the options
// that decide includes/excludes, and output that `ward check` accepts.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/cli/run_ward.h"

using ward::test::Run;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {

const std::string kStd = ward::test::kStdEnv;

const char* kProfile = R"({
  "defaultAction": "SCMP_ACT_ERRNO",
  "defaultErrnoRet": 1,
  "architectures": ["SCMP_ARCH_X86_64"],
  "syscalls": [
    {"names": ["read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
    {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}},
    {"names": ["bogus_call"], "action": "SCMP_ACT_ALLOW"}
  ]
})";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("import: to stdout, warnings on stderr") {
  const std::string p = WriteTemp("docker-profile.json", kProfile);
  Run r = Ward("import --from docker-seccomp " + p, kStd);
  CHECK(r.status == 0);
  CHECK(r.err == p + "#/syscalls/3: warning: unknown syscall 'bogus_call' is ignored, as runc "
                     "does\n");
  CHECK(r.out.find("policy docker-profile {\n"
                   "    syscalls {\n"
                   "        arch x86_64\n"
                   "        default errno EPERM\n"
                   "        allow read, write, exit_group, ptrace\n"
                   "    }\n"
                   "}\n") != std::string::npos);
}

TEST_CASE("import: -o writes a file that ward check accepts, and ward compile -t oci reads") {
  const std::string p = WriteTemp("profile2.json", kProfile);
  const std::string out = ward::test::ScratchDir() + "/imported.ward";
  Run r = Ward("import --from docker-seccomp " + p + " -o " + out +
                   " --name web --capabilities CAP_SYS_ADMIN,CAP_CHOWN --kernel 4.4",
               kStd);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  const std::string text = Slurp(out);
  CHECK(text.find("//   capabilities: CAP_CHOWN, CAP_SYS_ADMIN (the policy keeps them)\n"
                  "//   kernel: 4.4.0\n") != std::string::npos);
  CHECK(text.find("        allow read, write, exit_group, mount\n") != std::string::npos);
  CHECK(text.find("ptrace") == std::string::npos);
  CHECK(text.find("        capabilities keep [CAP_CHOWN, CAP_SYS_ADMIN]\n") != std::string::npos);
  Run check = Ward("check " + out, kStd);
  CHECK(check.status == 0);
  CHECK(check.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  Run compile = Ward("compile " + out + " -t oci -o " + ward::test::ScratchDir() + "/web", kStd);
  CHECK(compile.status == 0);
}

TEST_CASE("import: a profile Docker would refuse exits 1 and writes nothing") {
  const std::string p = WriteTemp("bad-profile.json",
                                  R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                                      {"names": ["read"], "action": "SCMP_ACT_NOPE"}]})");
  const std::string out = ward::test::ScratchDir() + "/never.ward";
  Run r = Ward("import --from docker-seccomp " + p + " -o " + out, kStd);
  CHECK(r.status == 1);
  CHECK(r.err == p + "#/syscalls/0/action: error: unknown action 'SCMP_ACT_NOPE'\n"
                     "ward import: nothing written\n");
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("import: usage errors exit 2") {
  const std::string p = WriteTemp("profile3.json", kProfile);
  CHECK(Ward("import " + p, kStd).status == 2);                    // --from missing
  CHECK(Ward("import --from kubernetes " + p, kStd).status == 2);  // unknown format
  Run missing = Ward("import --from docker-seccomp /nonexistent.json", kStd);
  CHECK(missing.status == 2);
  CHECK(missing.err == "ward import: /nonexistent.json: no such file or directory\n");
  Run kernel = Ward("import --from docker-seccomp --kernel new " + p, kStd);
  CHECK(kernel.status == 2);
  CHECK(kernel.err == "ward import: --kernel takes MAJOR.MINOR[.PATCH], not 'new'\n");
  Run name = Ward("import --from docker-seccomp --name 9lives " + p, kStd);
  CHECK(name.status == 1);
  CHECK(name.err ==
        p + ": error: '9lives' is not a valid policy name\nward import: nothing written\n");
}

TEST_CASE(
    "import: conditions Ward's IR cannot hold are refused at the entry, not an internal error") {
  // The import fuzzer's W1043 finding (tests/fuzz/corpus_docker_seccomp/).
  const std::string p =
      std::string(WARD_SOURCE_DIR) + "/tests/fuzz/corpus_docker_seccomp/w1043-clone-regions.json";
  const std::string out = ward::test::ScratchDir() + "/w1043.ward";
  Run r = Ward("import --from docker-seccomp " + p + " -o " + out, kStd);
  CHECK(r.status == 1);
  CHECK(r.err.find(p + "#/syscalls/3: error: the conditions on 'clone' split its arguments into "
                       "more than 4096 regions on x86_64: Ward's IR cannot hold them (a seccomp "
                       "filter has at most 4096 instructions), so this entry cannot be "
                       "imported\nward import: nothing written\n") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // The positive control: moby's default profile imports and checks.
  const std::string moby =
      std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/upstream/moby-default.json";
  const std::string ok = ward::test::ScratchDir() + "/moby.ward";
  Run m = Ward("import --from docker-seccomp " + moby + " -o " + ok, kStd);
  CHECK(m.status == 0);
  CHECK(m.err.find("SCMP_ARCH_LOONGARCH64 is not imported") != std::string::npos);
  Run check = Ward("check " + ok, kStd);
  CHECK(check.status == 0);
}

TEST_CASE("import: --from spo-seccomp, and the hint for a SeccompProfile given as docker-seccomp") {
  const std::string p =
      std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/upstream/spo-baseprofile-runc.yaml";
  const std::string out = ward::test::ScratchDir() + "/spo.ward";
  Run r = Ward("import --from spo-seccomp " + p + " -o " + out, kStd);
  CHECK(r.status == 0);
  CHECK(r.err == p + ":5:9 #/metadata/name: warning: the policy for 'runc-v1.4.2' is named "
                     "'runc-v1-4-2'\n");
  CHECK(Slurp(out).find("policy runc-v1-4-2 {\n") != std::string::npos);
  Run check = Ward("check " + out, kStd);
  CHECK(check.status == 0);
  Run wrong = Ward("import --from docker-seccomp " + p, kStd);
  CHECK(wrong.status == 1);
  CHECK(wrong.err.find(p + ": error: this is a security-profiles-operator SeccompProfile: use "
                           "--from spo-seccomp\n") != std::string::npos);
}

TEST_CASE("import: --strict makes every warning an error, and nothing is written") {
  const std::string p = WriteTemp("profile-strict.json", kProfile);
  const std::string out = ward::test::ScratchDir() + "/strict.ward";
  Run r = Ward("import --from docker-seccomp --strict " + p + " -o " + out, kStd);
  CHECK(r.status == 1);
  CHECK(r.err == p + "#/syscalls/3: error: unknown syscall 'bogus_call' is ignored, as runc "
                     "does (--strict)\nward import: nothing written\n");
  CHECK_FALSE(std::filesystem::exists(out));
  // Without warnings, --strict changes nothing.
  const std::string clean = WriteTemp(
      "profile-clean.json",
      R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]})");
  CHECK(Ward("import --from docker-seccomp --strict " + clean, kStd).status == 0);
}

TEST_CASE("import: --from srt needs --cwd, and resolves relative paths there") {
  const std::string p =
      WriteTemp("srt-settings.json", R"({"network": {"allowedDomains": [], "deniedDomains": []},
        "filesystem": {"denyRead": [], "allowWrite": ["src"], "denyWrite": []}})");
  Run missing = Ward("import --from srt " + p, kStd);
  CHECK(missing.status == 2);
  CHECK(missing.err ==
        "ward import: --from srt needs --cwd DIR: the folder the tool would run in (its "
        "relative paths are resolved there)\n");
  Run r = Ward("import --from srt --cwd /w/proj " + p, kStd);
  CHECK(r.status == 0);
  CHECK(r.out.find("allow write \"/w/proj/src\"  // #/filesystem/allowWrite/0\n") !=
        std::string::npos);
}

TEST_CASE("import: several files only for networkpolicy, which needs --cluster and --pod") {
  const std::string p = WriteTemp("profile4.json", kProfile);
  Run two = Ward("import --from docker-seccomp " + p + " " + p, kStd);
  CHECK(two.status == 2);
  CHECK(two.err == "ward import: --from docker-seccomp reads one file, not 2\n");
  const std::string cluster = WriteTemp("cluster.json", R"({"apiVersion": "v1", "kind": "List",
    "items": [{"kind": "Namespace", "metadata": {"name": "app"}},
              {"kind": "Pod", "metadata": {"name": "db", "namespace": "app", "labels": {"role": "db"}},
               "status": {"phase": "Running", "podIP": "10.0.0.5"}},
              {"kind": "Pod", "metadata": {"name": "web", "namespace": "app", "labels": {"role": "web"}},
               "status": {"phase": "Running", "podIP": "10.0.0.6"}}]})");
  const std::string a = WriteTemp("np-a.yaml", R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-in, namespace: app}
spec:
  podSelector: {matchLabels: {role: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {role: web}}}]
    ports: [{port: 5432}]
)");
  const std::string b = WriteTemp("np-b.yaml", R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-out, namespace: app}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - ports: [{protocol: UDP, port: 53}, {protocol: SCTP, port: 9}]
)");
  Run usage = Ward("import --from networkpolicy " + a, kStd);
  CHECK(usage.status == 2);
  CHECK(usage.err.find("--from networkpolicy needs --cluster SNAPSHOT") != std::string::npos);
  CHECK(Ward("import --from srt --cwd /w --cluster " + cluster + " " + a, kStd).status == 2);
  const std::string out = ward::test::ScratchDir() + "/db.ward";
  Run r = Ward("import --from networkpolicy --cluster " + cluster + " --pod app/db " + a + " " + b +
                   " -o " + out,
               kStd);
  CHECK(r.status == 0);
  // The warning names the file it is in, not the first one.
  CHECK(r.err == b + ":8:40 #/spec/egress/0/ports/1: warning: SCTP is not allowed: a Ward "
                     "policy never grants SCTP (narrower than the cluster)\n");
  const std::string text = Slurp(out);
  CHECK(text.find("policy db {") != std::string::npos);
  Run in = Ward("explain " + out + " --listen 5432/tcp --from 10.0.0.6", kStd);
  CHECK(in.status == 0);
  CHECK(in.out.find("allow") != std::string::npos);
  Run denied = Ward("explain " + out + " --listen 5432/tcp --from 10.0.0.7", kStd);
  CHECK(denied.out.find("deny") != std::string::npos);
  Run dns = Ward("explain " + out + " --connect 10.9.9.9:53/udp", kStd);
  CHECK(dns.out.find("allow") != std::string::npos);
  Run strict = Ward(
      "import --from networkpolicy --strict --cluster " + cluster + " --pod app/db " + a + " " + b,
      kStd);
  CHECK(strict.status == 1);
}
