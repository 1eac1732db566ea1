// `ward compile -t oci,process` as a user runs it: the files written, the
// manifest, deterministic bytes, and the artifacts valid against the OCI
// runtime-spec schema and process.json's schema (python3-jsonschema).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/cli/run_ward.h"

using nlohmann::json;
using ward::test::Run;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {

const std::string kStd = ward::test::kStdEnv;

const char* kPolicy = R"(policy agent {
  syscalls {
    arch x86_64, aarch64
    default errno EPERM
    allow @system-service
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
    kill ptrace
  }
  process {
    no_new_privileges
    capabilities keep [CAP_NET_BIND_SERVICE]
    user 1000:1000
  }
  limits {
    cpus 2
    memory 4GiB
    pids 512
    open_files 4096
  }
}
)";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Dir(const std::string& name) { return ward::test::ScratchDir() + "/" + name; }

}  // namespace

TEST_CASE("compile -t oci,process: files, manifest and coverage") {
  const std::string p = WriteTemp("agent.ward", kPolicy);
  const std::string out = Dir("oci1");
  Run r = Ward("compile --color never " + p + " -t oci,process -o " + out, kStd);
  CHECK(r.status == 0);
  CHECK(r.out == out + "/agent.process.json\n" + out + "/agent.runtime.json\n" + out +
                     "/agent.seccomp.json\n" + out + "/manifest.json\n");
  CHECK(r.err == "warning[B3001]: not enforced by the chosen targets: filesystem, network\n");
  const json m = json::parse(Slurp(out + "/manifest.json"));
  CHECK(m["targets"] == json::array({"oci", "process"}));
  CHECK(m["coverage"] == json::parse(R"({"syscalls": ["oci"], "filesystem": "unenforced",
      "network": "unenforced", "process": ["oci", "process"], "limits": ["oci", "process"]})"));
  std::vector<std::string> paths;
  for (const json& a : m["artifacts"]) paths.push_back(a["path"]);
  CHECK(paths ==
        std::vector<std::string>{"agent.process.json", "agent.runtime.json", "agent.seccomp.json"});
  CHECK(m["artifacts"][0]["target"] == "process");
  CHECK(m["artifacts"][2]["target"] == "oci");
  CHECK(m["artifacts"][2]["sha256"].get<std::string>().size() == 64);
}

TEST_CASE("compile -t oci,process: the same policy gives the same bytes") {
  const std::string p = WriteTemp("agent2.ward", kPolicy);
  REQUIRE(Ward("compile " + p + " -t process,oci -o " + Dir("det1"), kStd).status == 0);
  REQUIRE(Ward("compile " + p + " -t oci,process -o " + Dir("det2"), kStd).status == 0);
  for (const char* f :
       {"agent.process.json", "agent.runtime.json", "agent.seccomp.json", "manifest.json"}) {
    INFO(f);
    CHECK(Slurp(Dir("det1") + "/" + f) == Slurp(Dir("det2") + "/" + f));
    CHECK_FALSE(Slurp(Dir("det1") + "/" + f).empty());
  }
}

TEST_CASE("compile -t oci,process: the artifacts pass the published schemas") {
  const std::string p = WriteTemp("agent3.ward", kPolicy);
  const std::string bare = WriteTemp("bare.ward", "policy bare {}\n");
  const std::string out = Dir("schema");
  REQUIRE(Ward("compile " + p + " -t oci,process -o " + out, kStd).status == 0);
  REQUIRE(Ward("compile " + bare + " -t oci,process -o " + out, kStd).status == 0);
  const std::string script = std::string(WARD_SOURCE_DIR) + "/tests/backends/validate_json.py";
  const std::string oci =
      std::string(WARD_SOURCE_DIR) + "/../shared/schemas/oci-runtime-spec-v1.2.0";
  const std::string process =
      std::string(WARD_SOURCE_DIR) + "/backends/process/process.schema.json";
  Run valid = ward::test::Shell("python3 " + script + " --oci " + oci + " " + out +
                                "/agent.seccomp.json " + out + "/agent.runtime.json " + out +
                                "/bare.seccomp.json " + out + "/bare.runtime.json");
  CHECK(valid.status == 0);
  CHECK(valid.out == out + "/agent.seccomp.json: ok\n" + out + "/agent.runtime.json: ok\n" + out +
                         "/bare.seccomp.json: ok\n" + out + "/bare.runtime.json: ok\n");
  Run valid_process = ward::test::Shell("python3 " + script + " --schema " + process + " " + out +
                                        "/agent.process.json " + out + "/bare.process.json");
  CHECK(valid_process.status == 0);
  // A negative control: the validator refuses what runc would refuse.
  std::ofstream(out + "/broken.seccomp.json") << R"({"defaultAction": "SCMP_ACT_DENY"})";
  Run broken =
      ward::test::Shell("python3 " + script + " --oci " + oci + " " + out + "/broken.seccomp.json");
  CHECK(broken.status == 1);
  CHECK(broken.out.find("/linux/seccomp/defaultAction: 'SCMP_ACT_DENY' is not one of") !=
        std::string::npos);
}

TEST_CASE("compile -t oci: an error writes nothing") {
  const std::string p = WriteTemp("notify.ward", "policy n { syscalls { default notify } }\n");
  const std::string out = Dir("none");
  Run r = Ward("compile --color never " + p + " -t oci,process -o " + out, kStd);
  CHECK(r.status == 1);
  CHECK(r.err.find("error[B3002]: an OCI profile cannot have notify as its default action") !=
        std::string::npos);
  CHECK(r.err.find("ward compile: nothing written\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("compile -t help and unknown targets list oci and process") {
  Run help = Ward("compile -t help", kStd);
  CHECK(help.status == 0);
  CHECK(help.out.find("  oci - OCI/Docker seccomp profile JSON and an OCI runtime-spec "
                      "process/linux fragment (enforces syscalls, process, limits)\n") !=
        std::string::npos);
  CHECK(help.out.find("  process - JSON for ward run / ward apply: privileges, capabilities, "
                      "user, rlimits, cgroup limits (enforces process, limits)\n") !=
        std::string::npos);
  const std::string p = WriteTemp("any.ward", "policy a {}\n");
  Run unknown = Ward("compile " + p + " -t ocy -o " + Dir("x"), kStd);
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("ward compile: unknown target 'ocy'; known targets:") == 0);
  CHECK(unknown.err.find(" oci ") != std::string::npos);
  CHECK(unknown.err.find(" process") != std::string::npos);
}

TEST_CASE("compile -t oci,nftables,kubernetes-pod,seatbelt,firecracker: one folder, one manifest") {
  const std::string p = WriteTemp("svc.ward", R"(policy svc {
  filesystem {
    allow read "/srv/app"
    allow read write "/srv/app/data"
  }
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.200.0.0/16
  }
  limits { memory 512MiB  cpus 2 }
  target kubernetes { namespace "agents"  pod_selector { app = "svc" } }
  target firecracker { kernel "/vm/vmlinux"  rootfs "/vm/rootfs.ext4" read_only  tap "tap-svc" }
}
)");
  const std::string targets = " -t oci,nftables,kubernetes-pod,seatbelt,firecracker --partial";
  const std::string out = Dir("all1"), again = Dir("all2");
  Run r = Ward("compile --color never " + p + targets + " -o " + out, kStd);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string manifest = Slurp(out + "/manifest.json");
  const json m = json::parse(manifest);
  // Every artifact is in the folder with the hash the manifest gives, and
  // comes from one of the named backends (the profile names kubernetes).
  std::set<std::string> from;
  for (const json& a : m["artifacts"]) {
    const std::string path = out + "/" + a["path"].get<std::string>();
    REQUIRE(std::filesystem::exists(path));
    Run sum = ward::test::Shell("sha256sum " + path);
    CHECK(sum.out.substr(0, 64) == a["sha256"].get<std::string>());
    from.insert(a["target"].get<std::string>());
  }
  CHECK(from == std::set<std::string>{"firecracker", "kubernetes", "nftables", "oci", "seatbelt"});
  // Which backend enforces which section, in the order the targets were
  // named: filesystem only by seatbelt here, the network by four of them.
  const json& c = m["coverage"];
  CHECK(c["filesystem"] == json::array({"seatbelt"}));
  CHECK(c["network"] == json::array({"nftables", "kubernetes", "seatbelt", "firecracker"}));
  CHECK(c["syscalls"] == json::array({"oci", "kubernetes"}));
  // Same policy, same bytes, in a second folder.
  r = Ward("compile --color never " + p + targets + " -o " + again, kStd);
  REQUIRE(r.status == 0);
  CHECK(Slurp(again + "/manifest.json") == manifest);
}
