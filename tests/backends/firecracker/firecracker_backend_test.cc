// The firecracker backend: goldens of the VM configuration, the jailer
// arguments and the tap's ruleset (for policies/coding-agent.ward with a
// `target firecracker` block, and a policy using every key), the mapping
// of limits and network_rate, refusals, determinism, and the emitted
// configurations validated against #/definitions/FullVmConfiguration of
// Firecracker's API schema with python3-jsonschema.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/firecracker/firecracker_backend.h"
#include "backends/firecracker/vm_config.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

using nlohmann::json;

std::unique_ptr<Compiled> Compile(const std::string& source,
                                  const std::map<std::string, std::string>& extra = {}) {
  return CompileWith(backend::FirecrackerBackend(), source, {}, extra);
}

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const char* kFull = R"(
policy vm {
  network {
    allow tcp to any port 443
    allow udp to 10.0.0.53 port 53
    deny to 169.254.169.254
    allow ingress tcp from 10.1.0.0/16 port 8080
  }
  process { user 1000:1000 }
  limits {
    cpus 1.5
    memory 2GiB
  }
  target firecracker {
    kernel "/var/lib/ward/vmlinux"
    rootfs "/var/lib/ward/rootfs.ext4" read_only
    boot_args "console=ttyS0 reboot=k panic=1 pci=off"
    network_rate 100Mbit
    tap "wardtap0"
  }
}
)";

const char* kAgentVm = R"(import "./coding-agent.ward"

// The coding agent in a microVM.
policy coding-agent-vm extends coding-agent {
  target firecracker {
    kernel "/var/lib/ward/vmlinux"
    rootfs "/var/lib/ward/agent-rootfs.ext4" read_only
    network_rate 50MiB/s
  }
}
)";

TEST_CASE("firecracker: golden of a policy using every key") {
  auto c = Compile(kFull);
  INFO(c->Diagnostics());
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().empty());
  REQUIRE(c->result.artifacts.size() == 3);
  CHECK(c->result.artifacts[0].path == "vm.firecracker.json");
  CHECK(c->result.artifacts[1].path == "vm.jailer.args");
  CHECK(c->result.artifacts[2].path == "vm.tap.nft");
  CHECK(MatchesGolden("backends/firecracker/testdata/vm.firecracker.json",
                      c->Artifact(".firecracker.json")));
  CHECK(MatchesGolden("backends/firecracker/testdata/vm.jailer.args", c->Artifact(".jailer.args")));
  CHECK(MatchesGolden("backends/firecracker/testdata/vm.tap.nft", c->Artifact(".tap.nft")));
  CHECK(c->result.enforced ==
        std::vector<backend::Section>{backend::Section::kNetwork, backend::Section::kLimits});

  const json j = json::parse(c->Artifact(".firecracker.json"));
  CHECK(j["boot-source"]["kernel_image_path"] == "/var/lib/ward/vmlinux");
  CHECK(j["drives"][0]["is_read_only"] == true);
  CHECK(j["drives"][0]["is_root_device"] == true);
  CHECK(j["machine-config"]["vcpu_count"] == 2);  // 1.5 CPUs, rounded up ...
  CHECK(j["machine-config"]["mem_size_mib"] == 2048);
  // 100 Mbit/s = 12.5 MB/s; 100 ms of it is 1.25 MB.
  for (const char* dir : {"rx_rate_limiter", "tx_rate_limiter"}) {
    CHECK(j["network-interfaces"][0][dir]["bandwidth"]["size"] == 1250000);
    CHECK(j["network-interfaces"][0][dir]["bandwidth"]["refill_time"] == 100);
  }
  CHECK(j["network-interfaces"][0]["host_dev_name"] == "wardtap0");

  const std::vector<std::string> args = Lines(c->Artifact(".jailer.args"));
  auto after = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) return args[i + 1];
    }
    return std::string();
  };
  CHECK(after("--uid") == "1000");
  CHECK(after("--gid") == "1000");
  CHECK(after("--cgroup") == "cpu.max=150000 100000");  // ... and held to 1.5 by the cgroup
  CHECK(std::find(args.begin(), args.end(), "--no-seccomp") == args.end());
  CHECK(after("--config-file") == "vm.firecracker.json");

  // The tap: VM egress arrives from it, dropped unless allowed.
  const std::string& nft = c->Artifact(".tap.nft");
  CHECK(nft.find("iifname \"wardtap0\" goto egress_drop") != std::string::npos);
  CHECK(nft.find("oifname \"wardtap0\" goto ingress_drop") != std::string::npos);
}

TEST_CASE("firecracker: policies/coding-agent.ward") {
  const std::string agent = ReadSourceFile("policies/coding-agent.ward");
  // As it is: no kernel, no root filesystem.
  auto bare = Compile(agent);
  CHECK_FALSE(bare->result.ok);
  CHECK(bare->result.artifacts.empty());
  CHECK(MatchesGolden("backends/firecracker/testdata/coding-agent.diagnostics.txt",
                      bare->Diagnostics()));
  // With a target block.
  auto c = Compile(kAgentVm, {{"coding-agent.ward", agent}});
  REQUIRE(c->result.ok);
  CHECK(MatchesGolden("backends/firecracker/testdata/coding-agent-vm.firecracker.json",
                      c->Artifact(".firecracker.json")));
  CHECK(MatchesGolden("backends/firecracker/testdata/coding-agent-vm.jailer.args",
                      c->Artifact(".jailer.args")));
  CHECK(MatchesGolden("backends/firecracker/testdata/coding-agent-vm.tap.nft",
                      c->Artifact(".tap.nft")));
  CHECK(MatchesGolden("backends/firecracker/testdata/coding-agent-vm.diagnostics.txt",
                      c->Diagnostics()));
  // pids, open_files and timeout are the guest's: limits is not claimed.
  CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kNetwork});
  CHECK(c->Diagnostics().find("warning[B3001]: limit `pids`") != std::string::npos);
}

TEST_CASE("firecracker: defaults and refusals") {
  // No network grant: no NIC, no tap ruleset; one vCPU and 128 MiB.
  auto c = Compile(R"(policy p { target firecracker { kernel "/k"  rootfs "/r" } })");
  REQUIRE(c->result.ok);
  REQUIRE(c->result.artifacts.size() == 2);
  const json j = json::parse(c->Artifact(".firecracker.json"));
  CHECK(j["network-interfaces"].empty());
  CHECK(j["machine-config"]["vcpu_count"] == 1);
  CHECK(j["machine-config"]["mem_size_mib"] == 128);
  CHECK(j["drives"][0]["is_read_only"] == false);
  // The VMM never runs as root: without a user (or with user 0) it is nobody.
  const std::vector<std::string> args = Lines(c->Artifact(".jailer.args"));
  CHECK(args.at(1) == "65534");
  CHECK(args.at(3) == "65534");
  auto root = Compile(
      R"(policy p { process { user 0:0 } target firecracker { kernel "/k"  rootfs "/r" } })");
  CHECK(Lines(root->Artifact(".jailer.args")).at(1) == "65534");

  auto vcpus =
      Compile(R"(policy p { limits { cpus 64 } target firecracker { kernel "/k"  rootfs "/r" } })");
  CHECK(json::parse(vcpus->Artifact(".firecracker.json"))["machine-config"]["vcpu_count"] == 32);
  auto too_many =
      Compile(R"(policy p { target firecracker { kernel "/k"  rootfs "/r"  vcpus 33 } })");
  CHECK_FALSE(too_many->result.ok);
  auto tiny = Compile(
      R"(policy p { limits { memory 512KiB } target firecracker { kernel "/k"  rootfs "/r" } })");
  CHECK_FALSE(tiny->result.ok);
  CHECK(tiny->result.artifacts.empty());
  auto odd_mem = Compile(
      R"(policy p { limits { memory 1G } target firecracker { kernel "/k"  rootfs "/r" } })");
  // 10^9 bytes: 953.67 MiB, rounded down.
  CHECK(json::parse(odd_mem->Artifact(".firecracker.json"))["machine-config"]["mem_size_mib"] ==
        953);
  auto no_kernel = Compile(R"(policy p { target firecracker { rootfs "/r" } })");
  CHECK_FALSE(no_kernel->result.ok);
  CHECK(no_kernel->Diagnostics().find("`kernel`") != std::string::npos);
  auto bad_tap =
      Compile(R"(policy p { target firecracker { kernel "/k"  rootfs "/r"  tap "a/b" } })");
  CHECK_FALSE(bad_tap->result.ok);
  // A deny by domain cannot be held by the tap's address sets.
  auto domain = Compile(R"(policy p {
    network { allow tcp to any port 443  deny to "evil.example" }
    target firecracker { kernel "/k"  rootfs "/r" } })");
  CHECK_FALSE(domain->result.ok);
  CHECK(domain->result.artifacts.empty());
  // Unix socket grants reach nothing from inside a VM.
  auto unix_rule = Compile(R"(policy p {
    network { allow unix "/run/app.sock" }
    target firecracker { kernel "/k"  rootfs "/r" } })");
  REQUIRE(unix_rule->result.ok);
  CHECK(unix_rule->Diagnostics().find("warning[B3002]") != std::string::npos);
}

TEST_CASE("firecracker: token buckets are 100 ms of the rate") {
  using backend::firecracker::BucketFor;
  CHECK(BucketFor(12'500'000).size == 1'250'000);
  CHECK(BucketFor(12'500'000).refill_ms == 100);
  CHECK(BucketFor(10).size == 1);
  auto c = Compile(R"(policy p {
    network { allow tcp to any port 443 }
    target firecracker { kernel "/k"  rootfs "/r"  network_rate 10MiB/s } })");
  const json j = json::parse(c->Artifact(".firecracker.json"));
  CHECK(j["network-interfaces"][0]["tx_rate_limiter"]["bandwidth"]["size"] == 1048576);
  auto slow = Compile(R"(policy p {
    network { allow tcp to any port 443 }
    target firecracker { kernel "/k"  rootfs "/r"  network_rate 40bit } })");
  CHECK_FALSE(slow->result.ok);
}

TEST_CASE("firecracker: same IR, same bytes") {
  auto a = Compile(kFull);
  auto b = Compile(R"(
policy vm {
  target firecracker {
    tap "wardtap0"
    network_rate 100000Kbit
    boot_args "console=ttyS0 reboot=k panic=1 pci=off"
    rootfs "/var/lib/ward/rootfs.ext4" read_only
    kernel "/var/lib/ward/vmlinux"
  }
  limits { memory 2048MiB  cpus 1.50 }
  process { user 1000:1000 }
  network {
    allow ingress tcp from 10.1.0.0/16 port 8080
    deny to 169.254.169.254
    allow udp to 10.0.0.53 port 53
    allow tcp to any port 443
  }
}
)");
  REQUIRE(a->result.ok);
  REQUIRE(b->result.ok);
  REQUIRE(a->result.artifacts.size() == b->result.artifacts.size());
  for (size_t i = 0; i < a->result.artifacts.size(); ++i) {
    CHECK(a->result.artifacts[i].path == b->result.artifacts[i].path);
    CHECK(a->result.artifacts[i].bytes == b->result.artifacts[i].bytes);
  }
}

TEST_CASE("firecracker: configurations are valid FullVmConfigurations") {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ward-firecracker-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string agent = ReadSourceFile("policies/coding-agent.ward");
  std::vector<std::unique_ptr<Compiled>> all;
  all.push_back(Compile(kFull));
  all.push_back(Compile(kAgentVm, {{"coding-agent.ward", agent}}));
  all.push_back(Compile(R"(policy p { target firecracker { kernel "/k"  rootfs "/r" } })"));
  all.push_back(Compile(R"(policy p {
    network { allow to any }
    limits { cpus 0.25  memory 64MiB }
    target firecracker { kernel "/k"  rootfs "/r"  vcpus 4  network_rate 1Gbit } })"));
  std::string files;
  for (size_t i = 0; i < all.size(); ++i) {
    REQUIRE(all[i]->result.ok);
    const std::string path = dir + "/" + std::to_string(i) + ".firecracker.json";
    std::ofstream(path) << all[i]->Artifact(".firecracker.json");
    files += " " + path;
  }
  // A negative control: the schema is not vacuous.
  std::ofstream(dir + "/bad.json")
      << R"({"machine-config": {"vcpu_count": 0, "mem_size_mib": 128}, "drives": [{"drive_id": "r"}]})";
  const std::string run =
      "python3 " + std::string(WARD_SOURCE_DIR) + "/tests/backends/validate_json.py --openapi " +
      std::string(WARD_SOURCE_DIR) +
      "/../shared/schemas/firecracker-api.yaml#/definitions/FullVmConfiguration";
  CHECK(std::system((run + files).c_str()) == 0);
  CHECK(std::system((run + " " + dir + "/bad.json >/dev/null 2>&1").c_str()) != 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ward::test
