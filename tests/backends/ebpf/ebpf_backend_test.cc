// The ebpf backend's artifact: the map contents of the egress partition,
// deterministic, the partition split into CIDRs (exact addresses apart),
// rule ids on the port segments that denies refuse, and refusals.
#include <catch2/catch.hpp>

#include "backends/ebpf/ebpf_backend.h"
#include "backends/ebpf/maps.h"
#include "tests/backends/compile_fixture.h"

namespace ward::test {
namespace {

const backend::Backend& B() { return backend::EbpfBackend(); }

TEST_CASE("ebpf artifact: deterministic bytes, CIDRs, port segments with rule ids") {
  const std::string src = R"(policy p {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow tcp to 10.1.0.0/16 port 22
    deny tcp to 10.1.2.0/24 port 443
    allow udp to 10.0.0.5 ports 53, 8000-8100
    allow icmp to fd00::/64
  }
})";
  auto a = CompileWith(B(), src);
  auto b = CompileWith(B(), src);
  REQUIRE(a->result.ok);
  CHECK(a->Artifact("p.ebpf.json") == b->Artifact("p.ebpf.json"));
  const std::string& json = a->Artifact("p.ebpf.json");
  // The carved-out /24 names rule 3 for port 443 and allows 22.
  CHECK(json.find(R"("prefix": "10.1.2.0/24")") != std::string::npos);
  CHECK(json.find(R"("text": "deny tcp to 10.1.2.0/24 port 443")") != std::string::npos);
  CHECK(json.find(R"({
          "ports": "443",
          "allow": false,
          "rule": 3
        })") != std::string::npos);
  // A /32 piece goes to the exact map.
  CHECK(json.find(R"("addr": "10.0.0.5")") != std::string::npos);
  CHECK(json.find(R"("ingress": "unenforced")") != std::string::npos);
}

TEST_CASE("ebpf maps: a range that is no single CIDR is split, pieces are disjoint") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny tcp to 10.0.0.0/9
  }
})");
  REQUIRE(c->result.ok);
  backend::ebpf::MapContents m;
  DiagnosticSink sink;
  REQUIRE(backend::ebpf::BuildMaps(c->ir.network, &m, sink));
  std::vector<std::string> v4;
  for (const auto& cidr : m.prefixes) {
    if (cidr.v6) continue;
    v4.push_back(std::to_string(cidr.addr[0]) + "." + std::to_string(cidr.addr[1]) + "/" +
                 std::to_string(cidr.length));
  }
  // 0.0.0.0/0 minus 10/9 holds nothing to say (a miss refuses); 10/9 names
  // the deny, 10.128/9 allows 443.
  CHECK(v4 == std::vector<std::string>{"10.0/9", "10.128/9"});
  CHECK(m.exact.empty());
}

TEST_CASE("ebpf: deny by domain is refused, wildcard allows warned about") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow tcp to "*.example.com" port 443
    deny tcp to "evil.example.com"
  }
})");
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics().find("B3002") != std::string::npos);
  CHECK(c->Diagnostics().find("a deny by domain cannot be enforced by ebpf") != std::string::npos);
}

TEST_CASE("ebpf: ingress rules are reported as unenforced") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow ingress tcp from 10.0.0.0/8 port 8080
  }
})");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().find("B3001") != std::string::npos);
}

TEST_CASE("ebpf artifact: unix socket names, deny over allow, rule ids after the address rules") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow unix "/run/app.sock", "@bus", "/run/docker.sock"
    deny unix "/run/docker.sock", "@other"
  }
})");
  REQUIRE(c->result.ok);
  const std::string& json = c->Artifact("p.ebpf.json");
  CHECK(json.find(R"("unix": "ebpf")") != std::string::npos);
  CHECK(json.find(R"("cgroup/connect_unix",)") != std::string::npos);
  CHECK(json.find(R"("cgroup/sendmsg_unix",)") != std::string::npos);
  // Address rule 1, then the unix rules' sockets: 2, 3, 4 (allow), 5, 6 (deny).
  CHECK(json.find(R"(  "unix": [
    {
      "name": "/run/app.sock",
      "allow": true
    },
    {
      "name": "/run/docker.sock",
      "allow": false,
      "rule": 5
    },
    {
      "name": "@bus",
      "allow": true
    },
    {
      "name": "@other",
      "allow": false,
      "rule": 6
    }
  ]
})") != std::string::npos);
  CHECK(json.find(R"("text": "deny unix \"/run/docker.sock\"")") != std::string::npos);
  CHECK(json.find(R"("text": "deny unix \"@other\"")") != std::string::npos);
  CHECK(c->Diagnostics().find(
            "warning[B3002]: ebpf decides unix sockets by name only (it sees no bind): a socket "
            "the workload binds itself is refused like any other unless a rule grants it (lost: "
            "connecting to its own sockets)") != std::string::npos);
  CHECK(c->Diagnostics().find("does not enforce unix sockets") == std::string::npos);
}

TEST_CASE("ebpf: a policy without unix rules refuses every unix socket, and says so") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow tcp to 10.0.0.0/8 port 443
  }
})");
  REQUIRE(c->result.ok);
  CHECK(c->Artifact("p.ebpf.json").find(R"("unix": [])") != std::string::npos);
  CHECK(c->Diagnostics().find("warning[B3002]: ebpf decides unix sockets by name only") !=
        std::string::npos);
}

}  // namespace
}  // namespace ward::test
