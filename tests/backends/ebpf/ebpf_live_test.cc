// [root] Drift, the eBPF half (enforcers/linux/drift.h, ReadLiveEbpf): a
// policy applied with the ebpf enforcer on a fresh cgroup, then the kernel
// state changed behind Ward's back (a map element, a detached link, a
// foreign program); the live state read back must name exactly what
// changed through ir::Diff, and a probe in the cgroup confirms that the
// kernel really enforces what the read-back says.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <bpf/bpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

#include "backends/ebpf/bpf/ward_ebpf.h"
#include "compiler/diff.h"
#include "enforcers/linux/drift.h"
#include "enforcers/linux/ebpf.h"
#include "tests/backends/ebpf/ebpf_fixture.h"
#include "tests/root_guard.h"

namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf drift tests");

const char* const kLivePolicy = R"(policy ebpflive {
  network {
    allow tcp to 10.9.0.0/16 port 443
    deny tcp to 10.9.1.0/24 port 443
    allow udp to 10.9.0.5 port 53
    allow ingress tcp from 10.9.0.0/16 port 22
    allow unix "/run/ebpflive.sock"
  }
})";

struct Cleanup {
  ~Cleanup() {
    bool removed;
    std::string error;
    enforce::EbpfRemove("ebpflive", &removed, &error);
  }
};

enforce::LiveState ReadBack(const ir::Policy& desired, const std::string& cgroup) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kCgroup;
  t.cgroup = cgroup;
  enforce::LiveState live;
  std::string error;
  const bool ok = enforce::ReadLiveEbpf(desired, t, {}, &live, &error);
  INFO(error);
  REQUIRE(ok);
  return live;
}

std::vector<std::string> Lines(const ir::Policy& desired, const enforce::LiveState& live) {
  std::vector<std::string> out;
  for (const ir::Change& c : ir::Diff(desired, live.live).changes) {
    out.push_back(std::string(ir::KindName(c.kind)) + " " + c.line);
  }
  return out;
}

uint32_t ActiveGeneration() {
  enforce::EbpfConfig cfg;
  std::string error;
  REQUIRE(enforce::EbpfReadConfigAt(enforce::EbpfObjectDir("ebpflive"), &cfg, &error));
  return cfg.generation;
}

int OpenPinned(const std::string& name) {
  const int fd = bpf_obj_get((enforce::EbpfObjectDir("ebpflive") + "/" + name).c_str());
  REQUIRE(fd >= 0);
  return fd;
}

ward_v4_lpm_key Lpm(uint32_t gen, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t len) {
  ward_v4_lpm_key k{32u + len, gen, {a, b, c, d}};
  return k;
}

TEST_CASE("drift: the ebpf maps and links read back", "[root]") {
  Environment env;
  Cleanup cleanup;
  const std::string cg = env.Cgroup("live");
  const ir::Policy desired = CompilePolicy(kLivePolicy);
  Apply(desired, cg);
  Prober in(cg, env.netns_path());
  REQUIRE(in.Run(V4(Op::kTcp, "10.9.1.1", 443)) == EPERM);
  REQUIRE(in.Run(V4(Op::kTcp, "10.9.2.1", 443)) == 0);
  REQUIRE(in.Run(V4(Op::kUdpSendto, "10.9.0.5", 53)) == 0);

  SECTION("untouched: in sync, nothing differs") {
    const enforce::LiveState live = ReadBack(desired, cg);
    CHECK(live.present);
    CHECK(live.in_sync);
    CHECK(live.unknown.empty());
    CHECK(Lines(desired, live).empty());
  }
  SECTION("a map element changed: the permission gained") {
    // The piece the deny carves out (10.9.1.0/24) made to point at the
    // port sets of its neighbour 10.9.2.0/23, which allow 443.
    const uint32_t gen = ActiveGeneration();
    const int lpm = OpenPinned("v4_lpm");
    ward_entry neighbour{}, carved{};
    const ward_v4_lpm_key n = Lpm(gen, 10, 9, 2, 0, 23), c = Lpm(gen, 10, 9, 1, 0, 24);
    REQUIRE(bpf_map_lookup_elem(lpm, &n, &neighbour) == 0);
    REQUIRE(bpf_map_lookup_elem(lpm, &c, &carved) == 0);
    REQUIRE(bpf_map_update_elem(lpm, &c, &neighbour, BPF_EXIST) == 0);
    close(lpm);
    CHECK(in.Run(V4(Op::kTcp, "10.9.1.1", 443)) == 0);  // the kernel agrees
    const enforce::LiveState live = ReadBack(desired, cg);
    CHECK(live.present);
    CHECK_FALSE(live.in_sync);
    CHECK(live.unknown.empty());
    CHECK(Lines(desired, live) ==
          std::vector<std::string>{"widened + egress tcp 10.9.1.0/24 ports 443"});
  }
  SECTION("a map element deleted: the permissions lost") {
    const uint32_t gen = ActiveGeneration();
    const int exact = OpenPinned("v4_exact");
    const ward_v4_key k{gen, {10, 9, 0, 5}};
    REQUIRE(bpf_map_delete_elem(exact, &k) == 0);
    close(exact);
    CHECK(in.Run(V4(Op::kUdpSendto, "10.9.0.5", 53)) == EPERM);
    CHECK(in.Run(V4(Op::kTcp, "10.9.0.5", 443)) == EPERM);
    const enforce::LiveState live = ReadBack(desired, cg);
    CHECK_FALSE(live.in_sync);
    CHECK(Lines(desired, live) ==
          std::vector<std::string>{"narrowed - egress tcp 10.9.0.5/32 ports 443",
                                   "narrowed - egress udp 10.9.0.5/32 ports 53"});
  }
  SECTION("links detached: not in sync, the enforcement lost") {
    // The backstop and the IPv4 connect hook: IPv4 TCP and UDP (connected
    // sockets) and every ICMP echo are no longer refused.
    for (const char* link : {"link_egress", "link_connect4"}) {
      const int fd = OpenPinned(link);
      REQUIRE(bpf_link_detach(fd) == 0);
      close(fd);
    }
    CHECK(in.Run(V4(Op::kTcp, "10.9.1.1", 443)) == 0);
    CHECK(in.Run(V4(Op::kTcp, "10.200.0.1", 22)) == 0);
    CHECK(in.Run(V6(Op::kTcp, "fd00::1", 22)) == EPERM);  // connect6 still decides
    const enforce::LiveState live = ReadBack(desired, cg);
    CHECK(live.present);
    CHECK_FALSE(live.in_sync);
    CHECK(live.unknown ==
          std::vector<std::string>{"lost: link_connect4 is not attached to the cgroup",
                                   "lost: link_egress is not attached to the cgroup"});
    const std::vector<std::string> lines = Lines(desired, live);
    INFO(Catch::Detail::stringify(lines));
    CHECK(std::find(lines.begin(), lines.end(), "widened + egress tcp 10.9.1.0/24 ports 443") ==
          lines.end());  // it is in a wider line
    bool v4_tcp = false, v6_tcp = false;
    for (const std::string& l : lines) {
      CHECK(l.rfind("widened + egress ", 0) == 0);
      v4_tcp |= l.rfind("widened + egress tcp 0.0.0.0/", 0) == 0;
      v6_tcp |= l.find("egress tcp") != std::string::npos && l.find(':') != std::string::npos;
    }
    CHECK(v4_tcp);
    CHECK_FALSE(v6_tcp);
  }
  SECTION("a foreign program on the cgroup: unknown, never merged") {
    const bpf_insn allow_all[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_CGROUP_INET4_CONNECT);
    const int prog =
        bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "foreign", "GPL", allow_all, 2, &opts);
    REQUIRE(prog >= 0);
    const int cg_fd = open(cg.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(cg_fd >= 0);
    const int link = bpf_link_create(prog, cg_fd, BPF_CGROUP_INET4_CONNECT, nullptr);
    close(cg_fd);
    REQUIRE(link >= 0);
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    REQUIRE(bpf_obj_get_info_by_fd(prog, &info, &len) == 0);
    const enforce::LiveState live = ReadBack(desired, cg);
    close(link);
    close(prog);
    CHECK_FALSE(live.in_sync);
    REQUIRE(live.unknown.size() == 1);
    CHECK(live.unknown[0].rfind("program " + std::to_string(info.id) + " foreign (tag ", 0) == 0);
    CHECK(live.unknown[0].find(") attached at connect4 of the cgroup (not this policy's)") !=
          std::string::npos);
    // Both run (either refuses): nothing is gained.
    CHECK(Lines(desired, live).empty());
  }
  SECTION("removed: nothing enforces, everything gained") {
    Remove("ebpflive");
    const enforce::LiveState live = ReadBack(desired, cg);
    CHECK_FALSE(live.present);
    CHECK_FALSE(live.in_sync);
    const std::vector<std::string> lines = Lines(desired, live);
    INFO(Catch::Detail::stringify(lines));
    CHECK(std::find(lines.begin(), lines.end(), "widened + egress tcp 10.9.1.0/24 ports 443") ==
          lines.end());
    CHECK_FALSE(lines.empty());
    for (const std::string& l : lines) CHECK(l.rfind("widened + ", 0) == 0);
  }
}

}  // namespace
}  // namespace ward::test::ebpf
