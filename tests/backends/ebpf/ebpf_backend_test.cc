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
  CHECK(json.find(R"("ingress": "ebpf")") != std::string::npos);
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

TEST_CASE("ebpf artifact: the ingress partition by remote address, the ports bind may take") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow ingress tcp from 10.0.0.0/8 port 8080
    deny ingress tcp from 10.1.0.0/16 port 8080
    allow ingress udp from ::1 port 5353
  }
})");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().find("B3001") == std::string::npos);
  const std::string& json = c->Artifact("p.ebpf.json");
  CHECK(json.find(R"("cgroup/bind4",)") != std::string::npos);
  CHECK(json.find(R"("cgroup/bind6",)") != std::string::npos);
  CHECK(json.find(R"("cgroup_skb/ingress",)") != std::string::npos);
  // Port sets: 0 empty, 1 = 443 (egress), 2 = 8080, 3 = 8080 refused by
  // rule 3, 4 = 5353.
  CHECK(json.find(R"(  "ingress": {
    "bind": {
      "tcp": 2,
      "udp": 4
    },
    "v4_exact": [],
    "v4_lpm": [
      {
        "prefix": "10.0.0.0/16",
        "tcp": 2,
        "udp": 0,
        "icmp": false
      },
      {
        "prefix": "10.1.0.0/16",
        "tcp": 3,
        "udp": 0,
        "icmp": false
      },
      {
        "prefix": "10.2.0.0/15",
        "tcp": 2,
        "udp": 0,
        "icmp": false
      },)") != std::string::npos);
  CHECK(json.find(R"("v6_exact": [
      {
        "addr": "::1",
        "tcp": 0,
        "udp": 4,
        "icmp": false
      }
    ],)") != std::string::npos);
  CHECK(json.find(R"("text": "deny ingress tcp from 10.1.0.0/16 port 8080")") != std::string::npos);
  backend::ebpf::MapContents m;
  DiagnosticSink sink;
  REQUIRE(backend::ebpf::BuildMaps(c->ir.network, &m, sink));
  // The egress maps hold the egress partition only.
  REQUIRE(m.prefixes.size() == 1);
  CHECK(m.prefixes[0].length == 8);
  CHECK(m.portsets[m.bind.tcp_set] == backend::ebpf::PortSetSegments{{8080, 8080, 0, true}});
}

TEST_CASE("ebpf: ingress by domain: allows are warned about (denied), denies refused") {
  auto c = CompileWith(B(), R"(policy p {
  network {
    allow ingress tcp from "peer.example.com" port 8080
  }
})");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().find("warning[B3002]: ebpf does not resolve the names of ingress rules: "
                              "connections from them are denied") != std::string::npos);
  auto d = CompileWith(B(), R"(policy p {
  network {
    allow ingress tcp from any port 8080
    deny ingress tcp from "evil.example.com"
  }
})");
  CHECK_FALSE(d->result.ok);
  CHECK(d->Diagnostics().find("a deny by domain cannot be enforced by ebpf") != std::string::npos);
}

TEST_CASE("ebpf maps: a bind set past the segment limit is widened across its smallest gaps") {
  // Two addresses, 33 ports each (within the limit per entry), 66 together.
  std::string a, b;
  for (int i = 0; i < 33; ++i) {
    a += (i ? ", " : "") + std::to_string(1000 + 10 * i);
    b += (i ? ", " : "") + std::to_string(2000 + 10 * i);
  }
  auto c =
      CompileWith(B(), "policy p {\n  network {\n    allow ingress udp from 10.0.0.1 ports " + a +
                           "\n    allow ingress udp from 10.0.0.2 ports " + b + "\n  }\n}\n");
  REQUIRE(c->result.ok);
  backend::ebpf::MapContents m;
  DiagnosticSink sink;
  REQUIRE(backend::ebpf::BuildMaps(c->ir.network, &m, sink));
  const backend::ebpf::PortSetSegments& bind = m.portsets[m.bind.udp_set];
  REQUIRE(bind.size() == 64);
  // 66 ports, 64 segments: the first two of the equal smallest gaps were
  // filled; the wide gap between the two lists stays.
  CHECK(bind[0] == backend::ebpf::Segment{1000, 1020, 0, true});
  CHECK(bind[1] == backend::ebpf::Segment{1030, 1030, 0, true});
  CHECK(bind[30] == backend::ebpf::Segment{1320, 1320, 0, true});
  CHECK(bind[31] == backend::ebpf::Segment{2000, 2000, 0, true});
  CHECK(bind[63] == backend::ebpf::Segment{2320, 2320, 0, true});
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
