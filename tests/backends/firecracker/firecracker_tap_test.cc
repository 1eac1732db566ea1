// [root] The tap ruleset the firecracker backend writes is one nftables
// accepts: `nft -c` (check) and then a real load in a fresh network
// namespace each (`unshare --net`), with the table read back. Exits 77
// (skipped) without root.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "backends/firecracker/firecracker_backend.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::cerr << "backend_firecracker_tap_test: needs root (a fresh network namespace); skipped\n";
    std::exit(77);
  }
  return true;
}();

std::string Sh(const std::string& command) {
  return "unshare --net sh -c '" + command + "' >/dev/null 2>&1";
}

TEST_CASE("firecracker: the tap ruleset loads in a fresh network namespace") {
  REQUIRE(kRoot);
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ward-fc-tap-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const char* policies[] = {
      R"(policy vm {
  network {
    allow tcp to any port 443
    allow udp to 10.0.0.53 port 53
    deny to 169.254.169.254, fd00:ec2::254
    allow to loopback port 53
    allow icmp to 10.0.0.0/8
    allow ingress tcp from 10.1.0.0/16 port 8080
    allow tcp to 10.20.0.0/16, fd00:20::/32 ports 5432, 6379, 8000-8100
  }
  target firecracker { kernel "/k"  rootfs "/r"  tap "wardtap0" }
})",
      R"(policy small { network { allow tcp to any port 443 } target firecracker { kernel "/k"  rootfs "/r" } })",
  };
  for (const char* source : policies) {
    auto c = CompileWith(backend::FirecrackerBackend(), source);
    REQUIRE(c->result.ok);
    const std::string file = dir + "/" + c->ir.name + ".tap.nft";
    std::ofstream(file) << c->Artifact(".tap.nft");
    INFO(c->Artifact(".tap.nft"));
    CHECK(std::system(Sh("nft -c -f " + file).c_str()) == 0);
    CHECK(std::system(Sh("nft -f " + file + " && nft list table inet ward_" + c->ir.name +
                         " | grep -q \"iifname\"")
                          .c_str()) == 0);
  }
  // A negative control: nft refuses a broken ruleset.
  std::ofstream(dir + "/bad.nft")
      << "table inet ward_bad { chain x { iifname \"a\" goto nowhere } }\n";
  CHECK(std::system(Sh("nft -c -f " + dir + "/bad.nft").c_str()) != 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ward::test
