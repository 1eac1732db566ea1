// The landlock backend: the ruleset artifact as bytes (golden), what it
// handles for absent sections, its diagnostics (B3002), determinism, and
// the JSON round trip the enforcer reads.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backends/landlock/landlock_backend.h"
#include "backends/landlock/ruleset.h"
#include "tests/backends/compile_fixture.h"

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

}  // namespace
}  // namespace ward::test
