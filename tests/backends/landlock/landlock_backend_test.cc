// The landlock backend: the ruleset artifact as bytes (golden), what it
// handles for absent sections, its diagnostics (B3002), determinism, and
// the JSON round trip the enforcer reads; and, over the awkward cases of
// tests/network_cases.h, that its TCP port grants never widen the policy.
#include <arpa/inet.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

#include "backends/landlock/landlock_backend.h"
#include "backends/landlock/ruleset.h"
#include "tests/backends/compile_fixture.h"
#include "tests/network_cases.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using nlohmann::json;
namespace ll = backend::landlock;

std::unique_ptr<Compiled> Landlock(const std::string& source) {
  return CompileWith(backend::LandlockBackend(), source);
}

const char* kAgent = R"(
policy agent {
  filesystem {
    allow read exec "/usr"
    allow read write "~"
    deny read write "~/.ssh"
    allow read "/etc/*.conf"
  }
  network {
    allow tcp to any port 443
    allow tcp to 10.0.0.0/8 port 5432
    allow to loopback port 53
    allow ingress tcp from any port 8080
  }
}
)";

TEST_CASE("landlock: golden") {
  auto c = Landlock(kAgent);
  REQUIRE(c->result.ok);
  REQUIRE(c->result.artifacts.size() == 1);
  CHECK(c->result.artifacts[0].path == "agent.landlock.json");
  CHECK(MatchesGolden("backends/landlock/testdata/agent.landlock.json",
                      c->result.artifacts[0].bytes));
  CHECK(c->result.enforced == std::vector<backend::Section>{backend::Section::kFilesystem});
}

TEST_CASE("landlock: approximations are B3002 warnings at the rules concerned") {
  auto c = Landlock(kAgent);
  REQUIRE(c->result.ok);
  CHECK(MatchesGolden("backends/landlock/testdata/agent.diagnostics.txt", c->Diagnostics()));
  for (const Diagnostic& d : c->sink.diagnostics()) {
    CHECK(d.code == Code::kCannotExpress);
    CHECK(d.severity == Severity::kWarning);
  }
}

TEST_CASE("landlock: absent sections handle everything and grant nothing") {
  auto c = Landlock("policy p {}");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics().empty());
  const json j = json::parse(c->result.artifacts[0].bytes);
  CHECK(j["abi"] == 6);
  CHECK(j["handled_access_fs"].size() == 16);
  CHECK(j["handled_access_net"] == json::parse(R"(["bind_tcp", "connect_tcp"])"));
  CHECK(j["scoped"] == json::parse(R"(["abstract_unix_socket", "signal"])"));
  CHECK(j["filesystem"] == json::parse(R"({"read": {}, "write": {}, "exec": {}})"));
  CHECK(j["net_port"] ==
        json::parse(R"({"connect_tcp": "", "bind_tcp": "", "connect_tcp_partial": ""})"));
  CHECK(j["rights"]["read"] == json::parse(R"(["read_file", "read_dir"])"));
  CHECK(j["rights"]["exec"] == json::parse(R"(["execute"])"));
  CHECK(j["rights"]["write"] ==
        json::parse(R"(["write_file", "remove_dir", "remove_file", "make_char", "make_dir",
                        "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer",
                        "truncate", "ioctl_dev"])"));
}

TEST_CASE("landlock: TCP open to every address and port is not handled") {
  auto c = Landlock("policy p { network { allow tcp to any\n allow ingress tcp from any } }");
  REQUIRE(c->result.ok);
  const json j = json::parse(c->result.artifacts[0].bytes);
  CHECK(j["handled_access_net"] == json::array());
  CHECK(c->Diagnostics().empty());
}

TEST_CASE("landlock: a deny by domain keeps its port out of the exact grants") {
  auto c = Landlock(
      "policy p { network { allow tcp to any port 443\n deny tcp to \"evil.example\" port 443 } "
      "}");
  REQUIRE(c->result.ok);
  const json j = json::parse(c->result.artifacts[0].bytes);
  CHECK(j["net_port"]["connect_tcp"] == "");
  CHECK(j["net_port"]["connect_tcp_partial"] == "443");
}

TEST_CASE("landlock: an abstract-socket grant drops the scope, with a warning") {
  auto c = Landlock("policy p { network { allow unix \"@dbus-x\" } }");
  REQUIRE(c->result.ok);
  const json j = json::parse(c->result.artifacts[0].bytes);
  CHECK(j["scoped"] == json::parse(R"(["signal"])"));
  CHECK(c->Diagnostics() ==
        "test.ward:1:22: warning[B3002]: landlock scopes abstract unix sockets all or none: with "
        "a grant of @dbus-x, the ruleset leaves every abstract socket reachable\n"
        " 1 | policy p { network { allow unix \"@dbus-x\" } }\n"
        "   |                      ^~~~~~~~~~~~~~~~~~~~\n"
        "  = hint: the other abstract names must be refused by another layer (ward run's "
        "unix-socket step)\n");
}

TEST_CASE("landlock: a `**` Landlock cannot even approximate is an error, nothing written") {
  auto c = Landlock("policy p { filesystem { allow read \"/src/**/build\" } }");
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics().find(
            "error[B3002]: allow read '/src/**/build': a `**` before the end needs a walk of a "
            "whole tree at apply time; landlock cannot express it") != std::string::npos);
  auto d = Landlock("policy p { filesystem { allow read \"~\"\n deny read \"~/**/.env\" } }");
  CHECK_FALSE(d->result.ok);
  CHECK(d->Diagnostics().find("error[B3002]: deny read '~/**/.env' inside allow '~': carving it "
                              "out needs a walk of the whole tree") != std::string::npos);
}

TEST_CASE("landlock: with partial, an unbounded pattern narrows towards deny") {
  auto c = Landlock(
      "policy p { filesystem { allow read \"/src\"\n deny read \"/src/**/.env\"\n "
      "allow read \"/a/**/b\" } }");
  ll::Ruleset r;
  DiagnosticSink sink;
  REQUIRE(ll::BuildRuleset(c->ir, /*partial=*/true, &r, sink));
  CHECK_FALSE(sink.has_errors());
  const auto& read = r.filesystem.rules[0];
  CHECK_FALSE(read.at("/src").allow);
  CHECK_FALSE(read.at("/a/**/b").allow);
  CHECK_FALSE(r.filesystem.Decide("/src/x", ir::FsRight::kRead, std::nullopt).allow);
}

TEST_CASE("landlock: same IR, same bytes") {
  auto a = Landlock(kAgent);
  auto b = Landlock(R"(
policy agent {
  network {
    allow ingress tcp from any port 8080
    allow to loopback port 53
    allow tcp to 10.0.0.0/8 port 5432
    allow tcp to any port 443
  }
  filesystem {
    allow read "/etc/*.conf"
    deny write read "~/.ssh/"
    allow write read "~"
    allow exec read "//usr"
  }
}
)");
  CHECK(a->result.artifacts[0].bytes == b->result.artifacts[0].bytes);
}

TEST_CASE("landlock: the JSON round trip gives the same ruleset") {
  auto c = Landlock(kAgent);
  ll::Ruleset r;
  std::string error;
  REQUIRE(ll::FromJson(c->result.artifacts[0].bytes, &r, &error));
  CHECK(ll::ToJson(r) == c->result.artifacts[0].bytes);
  CHECK(r.connect_tcp.ToString() == "443");
  CHECK(r.connect_tcp_partial.ToString() == "53,5432");
  CHECK(r.bind_tcp.ToString() == "8080");
  CHECK(r.filesystem.Decide("/home/u/.ssh/id", ir::FsRight::kRead, "/home/u").allow == false);
  CHECK(r.filesystem.Decide("/home/u/x", ir::FsRight::kRead, "/home/u").allow == true);
}

TEST_CASE("landlock: FromJson refuses what it does not know, naming the field") {
  auto c = Landlock("policy p {}");
  const std::string good = c->result.artifacts[0].bytes;
  auto refuse = [](std::string bytes) {
    ll::Ruleset r;
    std::string error;
    CHECK_FALSE(ll::FromJson(bytes, &r, &error));
    return error;
  };
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    REQUIRE(s.find(from) != std::string::npos);
    return s.replace(s.find(from), from.size(), to);
  };
  CHECK(refuse(edit("\"version\": 1", "\"version\": 2")) == "version: 2 is not 1");
  CHECK(refuse(edit("\"ioctl_dev\"", "\"ioctl_all\"")) ==
        "handled_access_fs: unknown right \"ioctl_all\"");
  CHECK(refuse(edit("\"read\": {}", "\"read\": {\"etc\": \"allow\"}")) ==
        "filesystem.read: bad entry \"etc\": \"allow\"");
  CHECK(refuse(edit("\"connect_tcp\": \"\"", "\"connect_tcp\": \"0-5\"")) ==
        "net_port.connect_tcp: missing or not a port list");
  CHECK(refuse("[]") == "not a JSON object");
}

TEST_CASE("landlock: the ABI each right needs") {
  auto c = Landlock("policy p {}");
  ll::Ruleset r;
  DiagnosticSink sink;
  REQUIRE(ll::BuildRuleset(c->ir, false, &r, sink));
  CHECK(r.Abi() == 6);
  CHECK(r.Missing(6).empty());
  CHECK(r.Missing(5) ==
        std::vector<std::string>{"scope abstract_unix_socket, scope signal need ABI 6"});
  CHECK(r.Missing(1) ==
        std::vector<std::string>{"scope abstract_unix_socket, scope signal need ABI 6",
                                 "ioctl_dev needs ABI 5", "bind_tcp, connect_tcp need ABI 4",
                                 "truncate needs ABI 3", "refer needs ABI 2"});
}

// Addresses to try a port grant at: the case's edges, random ones of the
// universe, and the far ends of both spaces and their special blocks.
std::vector<net::Addr> Witnesses(net::Rng& rng, const net::Universe& u, const net::Case& c) {
  std::vector<net::Addr> out = c.focus_addrs;
  for (int i = 0; i < 48; ++i) out.push_back(net::RandomProbe(rng, u).addr);
  for (const char* text : {"0.0.0.0", "255.255.255.255", "8.8.8.8", "127.0.0.1", "::", "::1",
                           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::1", "fe80::1",
                           "64:ff9b::808:808", "::808:808", "::fffe:808:808", "::ffff:8.8.8.8"}) {
    net::Addr a;
    a.v6 = std::string(text).find(':') != std::string::npos;
    REQUIRE(inet_pton(a.v6 ? AF_INET6 : AF_INET, text, a.b.data()) == 1);
    out.push_back(a);
  }
  return out;
}

// Landlock grants a TCP port to every address or to none (README.md § TCP):
// a port in connect_tcp (bind_tcp) must be allowed to (from) every address
// the reference is asked about, and a port the reference allows somewhere
// is granted outright or listed as partial (egress). The reference is the
// generator's (over the rules as written).
TEST_CASE("landlock property: TCP port grants hold at every address, over awkward cases") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  net::Rng rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  net::Universe u;
  u.ports = {22, 53, 80, 443, 1000, 5432, 8000, 8050, 8100, 8101};
  long granted = 0, partial = 0;
  for (int round = 0, rounds = Rounds(200); round < rounds; ++round) {
    const net::Case c = net::RandomCase(rng, u, round);
    INFO("case " << round << " (" << c.shape << "):\n" << c.text);
    auto front = CheckSource(c.text);
    REQUIRE_FALSE(front->sink.has_errors());
    const ast::File* f = front->program.file(front->program.roots.at(0));
    const ast::Policy* target = nullptr;
    for (const ast::Policy& p : f->policies) {
      if (p.name.text == c.target) target = &p;
    }
    REQUIRE(target != nullptr);
    DiagnosticSink sink;
    const ir::Policy policy = ir::Lower(front->program, *target, sink);
    REQUIRE_FALSE(sink.has_errors());
    // The ruleset as the enforcer reads it: the artifact read back.
    ll::Ruleset built, r;
    REQUIRE(ll::BuildRuleset(policy, /*partial=*/true, &built, sink));
    std::string error;
    REQUIRE(ll::FromJson(ll::ToJson(built), &r, &error));
    const bool connect = r.handled_access_net & ll::kNetRights[1].bit,
               bind = r.handled_access_net & ll::kNetRights[0].bit;
    CHECK(r.connect_tcp.Minus(r.connect_tcp_partial) == r.connect_tcp);
    const std::vector<net::Addr> witnesses = Witnesses(rng, u, c);
    std::vector<uint16_t> ports = u.ports;
    for (uint16_t port : {uint16_t{1}, uint16_t{7}, uint16_t{65535}}) ports.push_back(port);
    for (uint16_t port : ports) {
      for (const bool ingress : {false, true}) {
        const bool everywhere =
            ingress ? !bind || r.bind_tcp.Contains(port) : !connect || r.connect_tcp.Contains(port);
        bool somewhere = false;
        for (const net::Addr& a : witnesses) {
          net::Probe p;
          p.ingress = ingress;
          p.proto = net::Proto::kTcp;
          p.addr = a;
          p.port = port;
          const bool allowed = net::Reference(c.rules, p);
          somewhere |= allowed;
          INFO((ingress ? "bind" : "connect")
               << " tcp port " << port << " granted by landlock; " << p.Describe() << " is denied");
          if (everywhere) REQUIRE(allowed);
        }
        if (!ingress && somewhere) {
          INFO("tcp port " << port << " allowed somewhere: granted or partial");
          CHECK((everywhere || r.connect_tcp_partial.Contains(port)));
        }
        granted += everywhere && (ingress ? bind : connect);
        partial += !ingress && r.connect_tcp_partial.Contains(port);
      }
    }
  }
  WARN(granted << " ports granted outright, " << partial << " partial, checked at every witness");
}

}  // namespace
}  // namespace ward::test
