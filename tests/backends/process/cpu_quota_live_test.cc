// [root] `limits { cpus N }` as the kernel takes it: the cpu.max value the
// process backend writes (the one ward run, runc and Firecracker's jailer
// apply) is written into a scratch cgroup of this host's cpu controller, and
// the kernel must accept it. A quota under the kernel's minimum (1 ms) is
// refused by Ward's checker before any kernel sees it; the positive control
// writes such a quota directly and watches the kernel refuse it (EINVAL),
// so the minimum Ward enforces is the kernel's.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/process/process_backend.h"
#include "tests/backends/compile_fixture.h"

#include "tests/root_guard.h"
namespace ward::test {
namespace {

WARD_SKIP_UNLESS_ROOT("the cpu quota test writes a scratch cgroup");

// A scratch cgroup of the cpu controller: v2 where the unified hierarchy
// offers it, else the v1 cpu hierarchy (hybrid hosts). Removed at the end.
struct ScratchCgroup {
  std::string dir;
  bool v2 = false;
  ScratchCgroup() {
    const std::string name = "ward-test-cpuquota-" + std::to_string(getpid());
    for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      std::ifstream controllers(std::string(root) + "/cgroup.controllers");
      std::string all((std::istreambuf_iterator<char>(controllers)), {});
      std::ifstream subtree(std::string(root) + "/cgroup.subtree_control");
      std::string enabled((std::istreambuf_iterator<char>(subtree)), {});
      // Only where the cpu controller is already enabled for children: the
      // test must not change the host's cgroup set-up.
      if (enabled.find("cpu") != std::string::npos && all.find("cpu") != std::string::npos) {
        dir = std::string(root) + "/" + name;
        v2 = true;
        break;
      }
    }
    if (dir.empty()) dir = "/sys/fs/cgroup/cpu/" + name;
    if (mkdir(dir.c_str(), 0755) != 0) dir.clear();
  }
  ~ScratchCgroup() {
    if (!dir.empty()) rmdir(dir.c_str());
  }
  // Writes a cpu.max value ("QUOTA PERIOD") the way the kernel's interface
  // takes it; 0 or the errno of the write.
  int Write(const std::string& cpu_max) const {
    std::istringstream in(cpu_max);
    std::string quota, period;
    in >> quota >> period;
    if (v2) return WriteFile(dir + "/cpu.max", cpu_max);
    if (int e = WriteFile(dir + "/cpu.cfs_period_us", period)) return e;
    return WriteFile(dir + "/cpu.cfs_quota_us", quota);
  }
  static int WriteFile(const std::string& path, const std::string& value) {
    FILE* f = fopen(path.c_str(), "w");
    if (!f) return errno;
    int e = 0;
    if (fputs(value.c_str(), f) < 0) e = errno;
    if (fclose(f) != 0 && e == 0) e = errno;
    return e;
  }
};

std::string CpuMax(const std::string& cpus) {
  auto c =
      CompileWith(backend::ProcessBackend(), "policy p {\n  limits { cpus " + cpus + " }\n}\n");
  REQUIRE(c->result.ok);
  auto j = nlohmann::json::parse(c->result.artifacts.at(0).bytes);
  return j["cgroup"]["cpu.max"].get<std::string>();
}

TEST_CASE("cpus: the compiled cpu.max is accepted by this kernel, down to the minimum") {
  ScratchCgroup cg;
  REQUIRE_FALSE(cg.dir.empty());
  INFO("cgroup " << cg.dir << (cg.v2 ? " (v2)" : " (v1)"));
  for (const char* cpus : {"0.01", "0.5", "1", "2", "64"}) {
    const std::string value = CpuMax(cpus);
    INFO("cpus " << cpus << " -> cpu.max " << value);
    CHECK(cg.Write(value) == 0);
  }
  CHECK(CpuMax("0.01") == "1000 100000");
  // Positive control: the kernel itself refuses a quota under 1 ms, which
  // `cpus 0.009` would have produced ("900 100000").
  CHECK(cg.Write("900 100000") == EINVAL);
  CHECK(cg.Write("100 100000") == EINVAL);
}

TEST_CASE("cpus: a value under the kernel's minimum is refused by the checker, at the value") {
  for (const char* cpus : {"0.001", "0.009"}) {
    auto front = CheckSource(std::string("policy p {\n  limits { cpus ") + cpus + " }\n}\n");
    const std::string& text = front->text;
    INFO(text);
    CHECK(front->sink.has_errors());
    CHECK(text.find("test.ward:2:17: error[W1018]: 'cpus' must be at least 0.01: a CPU quota "
                    "under 1 ms per 100 ms period is refused by the kernel (cpu.max)") !=
          std::string::npos);
  }
  auto ok = CheckSource("policy p {\n  limits { cpus 0.01 }\n}\n");
  CHECK_FALSE(ok->sink.has_errors());
  auto huge = CheckSource("policy p {\n  limits { cpus 200000000 }\n}\n");
  CHECK(huge->sink.has_errors());
}

}  // namespace
}  // namespace ward::test
