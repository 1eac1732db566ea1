// The process backend: process.json as bytes (golden), its defaults for
// absent sections, determinism, and its JSON Schema (README.md) checked
// with python3-jsonschema on what the backend writes.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "backends/process/process_backend.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

using nlohmann::json;

std::unique_ptr<Compiled> Process(const std::string& source) {
  return CompileWith(backend::ProcessBackend(), source);
}

const char* kFull = R"(
policy worker {
  process {
    no_new_privileges
    capabilities keep [CAP_NET_BIND_SERVICE]
    user 1000:100
    env allow ["PATH", "HOME", "LC_*"]
  }
  limits {
    cpus 0.5
    memory 1GiB
    pids 128
    open_files 1024
    disk 10G
    cpu_time 2m
    timeout 1h
  }
}
)";

TEST_CASE("process: golden") {
  auto c = Process(kFull);
  REQUIRE(c->result.ok);
  // Nothing on a host bounds `disk` (ward run refuses it): not claimed.
  CHECK(c->Diagnostics() ==
        "test.ward:14:5: warning[B3002]: `disk` is not enforced by -t process: ward run and ward "
        "apply have no scratch file system to bound (ward run refuses the limit)\n"
        " 14 |     disk 10G\n    |     ^~~~~~~~\n"
        "   = hint: -t kubernetes bounds it (ephemeral-storage); for ward run, remove it\n");
  REQUIRE(c->result.artifacts.size() == 1);
  CHECK(c->result.artifacts[0].path == "worker.process.json");
  CHECK(
      MatchesGolden("backends/process/testdata/worker.process.json", c->result.artifacts[0].bytes));
  CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kProcess});
  CHECK(c->result.fields ==
        std::vector<std::string>{"process.no_new_privileges", "process.capabilities",
                                 "process.user", "process.env_allow", "limits.cpu_time",
                                 "limits.cpus", "limits.memory", "limits.open_files", "limits.pids",
                                 "limits.timeout"});
}

TEST_CASE("process: absent sections are the strictest reading") {
  auto c = Process("policy p {}");
  REQUIRE(c->result.ok);
  CHECK(c->result.artifacts[0].bytes ==
        "{\n"
        "  \"version\": 1,\n"
        "  \"policy\": \"p\",\n"
        "  \"no_new_privileges\": true,\n"
        "  \"capabilities\": {\n"
        "    \"keep\": []\n"
        "  },\n"
        "  \"user\": null,\n"
        "  \"env_allow\": null,\n"
        "  \"limits\": {},\n"
        "  \"rlimits\": [],\n"
        "  \"cgroup\": {}\n"
        "}\n");
}

TEST_CASE("process: a process section without no_new_privileges turns it off") {
  auto c = Process("policy p { process { user 0:0 } }");
  const json j = json::parse(c->result.artifacts[0].bytes);
  CHECK(j["no_new_privileges"] == false);
  CHECK(j["user"] == json::parse(R"({"uid": 0, "gid": 0})"));
}

TEST_CASE("process: same IR, same bytes") {
  auto a = Process(kFull);
  auto b = Process(R"(
policy worker {
  limits { timeout 60m
    cpu_time 120s
    disk 10000000000B
    open_files 1024
    pids 128
    memory 1024MiB
    cpus 0.500 }
  process { env allow ["LC_*", "HOME"]
    env allow ["PATH"]
    user 1000:100
    capabilities keep [CAP_NET_BIND_SERVICE]
    no_new_privileges }
}
)");
  CHECK(a->result.artifacts[0].bytes == b->result.artifacts[0].bytes);
}

TEST_CASE("process: the schema in README.md accepts what the backend writes") {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ward-process-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const char* source : {kFull, "policy p {}", "policy p { process { user 0:0 } }"}) {
    auto c = Process(source);
    std::ofstream(dir + "/" + std::to_string(n++) + ".process.json")
        << c->result.artifacts[0].bytes;
  }
  // A negative control: the schema is not vacuous.
  std::ofstream(dir + "/bad.json")
      << R"({"version": 1, "policy": "p", "no_new_privileges": "yes"})";
  const std::string script = std::string(WARD_SOURCE_DIR) + "/tests/backends/validate_json.py";
  const std::string schema = std::string(WARD_SOURCE_DIR) + "/backends/process/process.schema.json";
  const std::string run = "python3 " + script + " --schema " + schema + " ";
  CHECK(std::system((run + dir + "/0.process.json " + dir + "/1.process.json " + dir +
                     "/2.process.json >/dev/null")
                        .c_str()) == 0);
  CHECK(std::system((run + dir + "/bad.json >/dev/null 2>&1").c_str()) != 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ward::test
