// The method table and the roles file of wardd (enforcers/agent/access.h).
#include "enforcers/agent/access.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "compiler/agent_guard.h"
#include "enforcers/agent/listen.h"

using ward::agent::Allowed;
using ward::agent::LoadRoles;
using ward::agent::Role;
using ward::agent::Roles;

namespace {

std::string WriteTemp(const std::string& text) {
  char path[] = "/tmp/ward-roles-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("agent access: the exact method paths and the least role of each") {
  CHECK(Allowed(Role::kOperator, "/ward.agent.v1.Agent/Apply"));
  CHECK_FALSE(Allowed(Role::kReader, "/ward.agent.v1.Agent/Apply"));
  CHECK_FALSE(Allowed(Role::kReader, "/ward.agent.v1.Agent/Remove"));
  for (const char* m : {"List", "Get", "Check", "Watch"}) {
    CHECK(Allowed(Role::kReader, std::string("/ward.agent.v1.Agent/") + m));
    CHECK_FALSE(Allowed(Role::kNone, std::string("/ward.agent.v1.Agent/") + m));
  }
  CHECK(Allowed(Role::kReader, "/grpc.health.v1.Health/Check"));
  CHECK(Allowed(Role::kReader, "/grpc.health.v1.Health/Watch"));
  CHECK(Allowed(Role::kReader, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"));
  // Not normalised: each is another path, which nobody may call.
  for (const char* p :
       {"//ward.agent.v1.Agent/List", "/ward.agent.v1.agent/List", "/ward.agent.v1.Agent/list",
        "/ward.agent.v1.Agent/List/", "/./ward.agent.v1.Agent/List", "/ward.agent.v1.Agent/./List",
        "/ward.agent.v1.Agent/%4cist", "ward.agent.v1.Agent/List", "",
        "/grpc.health.v1.Health/check",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}) {
    CAPTURE(p);
    CHECK_FALSE(Allowed(Role::kOperator, p));
  }
  CHECK_FALSE(Allowed(Role::kOperator, std::string_view("/ward.agent.v1.Agent/List\0", 26)));
}

TEST_CASE("agent access: the roles file") {
  Roles roles;
  std::string error;
  std::string path = WriteTemp(
      "operator:\n  - spiffe://ward/ops\nreader:\n  - spiffe://ward/ro\n  - spiffe://ward/ops\n"
      "  - monitor\n");
  REQUIRE(LoadRoles(path, &roles, &error));
  CHECK(roles.Of("spiffe://ward/ops") == Role::kOperator);
  CHECK(roles.Of("spiffe://ward/ro") == Role::kReader);
  CHECK(roles.Of("monitor") == Role::kReader);
  CHECK(roles.Of("spiffe://ward/other") == Role::kNone);
  CHECK(roles.Of("") == Role::kNone);
  unlink(path.c_str());

  path = WriteTemp("operators:\n  - a\n");
  CHECK_FALSE(LoadRoles(path, &roles, &error));
  CHECK(error == path + ": unknown key 'operators' (expected operator, reader)");
  unlink(path.c_str());

  path = WriteTemp("reader: alice\n");
  CHECK_FALSE(LoadRoles(path, &roles, &error));
  CHECK(error == path + ": reader: expected a list of identities");
  unlink(path.c_str());

  path = WriteTemp("reader:\n  - [a]\n");
  CHECK_FALSE(LoadRoles(path, &roles, &error));
  CHECK(error == path + ": reader: expected a list of identities (non-empty strings)");
  unlink(path.c_str());

  CHECK_FALSE(LoadRoles("/nonexistent/roles.yaml", &roles, &error));
  CHECK(error == "/nonexistent/roles.yaml: cannot read the roles file");
}

TEST_CASE("agent access: --listen URLs") {
  ward::agent::ListenUrl u;
  std::string error;
  REQUIRE(ward::agent::ParseListenUrl("unix:///run/ward/agent/agent.sock", &u, &error));
  CHECK(u.kind == ward::agent::ListenUrl::kUnix);
  CHECK(u.path == "/run/ward/agent/agent.sock");
  REQUIRE(ward::agent::ParseListenUrl("tcp://127.0.0.1:8443", &u, &error));
  CHECK(u.kind == ward::agent::ListenUrl::kTcp);
  CHECK(u.address == "127.0.0.1:8443");
  CHECK(u.port == 8443);
  REQUIRE(ward::agent::ParseListenUrl("tcp://[::1]:9", &u, &error));
  CHECK(u.address == "[::1]:9");
  CHECK_FALSE(ward::agent::ParseListenUrl("unix://relative.sock", &u, &error));
  CHECK(error == "--listen unix://relative.sock: expected unix:///ABSOLUTE/PATH");
  CHECK_FALSE(ward::agent::ParseListenUrl("unix-abstract:ward", &u, &error));
  CHECK(error == "--listen unix-abstract:ward: expected unix:///PATH or tcp://HOST:PORT");
  CHECK_FALSE(ward::agent::ParseListenUrl("unix:@ward", &u, &error));
  CHECK_FALSE(ward::agent::ParseListenUrl("tcp://::1:9", &u, &error));
  CHECK(error == "--listen tcp://::1:9: expected tcp://HOST:PORT");
  CHECK_FALSE(ward::agent::ParseListenUrl("tcp://host:65536", &u, &error));
  CHECK_FALSE(ward::agent::ParseListenUrl("tcp://:80", &u, &error));
}

TEST_CASE("agent access: the endpoints file wardd publishes (compiler/agent_guard.h)") {
  char base[] = "/tmp/ward-endpoints-XXXXXX";
  REQUIRE(mkdtemp(base) != nullptr);
  std::string path = std::string(base) + "/agent/endpoints.json";
  std::string error;
  REQUIRE(ward::agent::PublishEndpoints(
      path,
      {"unix:///run/x/agent.sock", "tcp://127.0.0.1:9", "tcp://[::1]:10", "tcp://localhost:11"},
      &error));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto e = ward::ir::EndpointsFromJson(text, &error);
  REQUIRE(e.has_value());
  CHECK(e->unix_paths == std::vector<std::string>{"/run/x/agent.sock"});
  // A host name is published as every address: its port is denied everywhere.
  using Tcp = ward::ir::AgentEndpoints::Tcp;
  CHECK(e->tcp == std::vector<Tcp>{{"127.0.0.1", 9}, {"::1", 10}, {"0.0.0.0", 11}, {"::", 11}});
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);  // what HostAgentEndpoints trusts: no group/other write
  CHECK(st.st_uid == geteuid());
  REQUIRE(stat((std::string(base) + "/agent").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  // Replaced whole, no temporary left behind.
  REQUIRE(ward::agent::PublishEndpoints(path, {"unix:///run/y/agent.sock"}, &error));
  std::ifstream again(path);
  text.assign((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  e = ward::ir::EndpointsFromJson(text, &error);
  REQUIRE(e.has_value());
  CHECK(e->unix_paths == std::vector<std::string>{"/run/y/agent.sock"});
  CHECK(e->tcp.empty());
  int entries = 0;
  for ([[maybe_unused]] const auto& f :
       std::filesystem::directory_iterator(std::string(base) + "/agent"))
    ++entries;
  CHECK(entries == 1);
  std::filesystem::remove_all(base);
}
