// `ward ir` JSON read back (compiler/ir_json.h FromJson): lossless for the
// canonical form, and fail-closed on malformed or hostile input.
#include <catch2/catch.hpp>
#include <ctime>
#include <iostream>
#include <random>

#include "compiler/ir_json.h"
#include "compiler/policy.h"
#include "tests/language/frontend_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using nlohmann::json;

struct Lowered {
  std::unique_ptr<FrontendResult> r;
  ir::Policy ir;
  json j;
};

Lowered LowerText(const std::string& text) {
  Lowered l;
  l.r = CheckSource(text);
  INFO(text << "\n" << l.r->text);
  REQUIRE_FALSE(l.r->sink.has_errors());
  const ast::File* f = l.r->program.file(l.r->program.roots.at(0));
  const ast::Policy* chosen = nullptr;
  for (const ast::Policy& p : f->policies) {
    if (!p.is_abstract) chosen = &p;
  }
  REQUIRE(chosen != nullptr);
  l.ir = ir::Lower(l.r->program, *chosen, l.r->sink);
  REQUIRE_FALSE(l.r->sink.has_errors());
  l.j = json::parse(ir::ToJson(l.ir, l.r->sources).dump());
  return l;
}

// The JSON without provenance ("rules"), which FromJson does not restore.
json WithoutRules(json j) {
  if (j.is_object()) {
    j.erase("rules");
    for (auto& [k, v] : j.items()) v = WithoutRules(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = WithoutRules(v);
  }
  return j;
}

void CheckRoundTrip(const Lowered& l) {
  std::string error;
  std::optional<ir::Policy> back = ir::FromJson(l.j, &error);
  INFO(error);
  REQUIRE(back.has_value());
  CHECK(*back == l.ir);
  CHECK(back->name == l.ir.name);
  SourceManager none;
  CHECK(WithoutRules(json::parse(ir::ToJson(*back, none).dump())) == WithoutRules(l.j));
}

const char* kRich = R"(policy rich {
  description "every section"
  labels { team = "platform"  tier = "1" }
  filesystem {
    allow read write "/workspace"
    allow read "/usr", "/etc/ssl"
    deny write "/workspace/.git/hooks"
    allow exec "/usr/bin"
    allow read "/home/*/.cache"
  }
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow tcp to 10.1.0.0/16 port 22
    deny to 10.1.99.0/24
    allow udp to fd00::/8 ports 53, 8000-8100
    allow icmp to 192.168.0.0/16
    allow tcp to "*.github.com", "registry.npmjs.org" port 443
    deny to "evil.example.com"
    allow ingress tcp from 10.2.0.0/16 port 8080
    allow unix "/run/app.sock"
    allow unix "@abstract-name"
    allow netlink route
    deny to 255.255.255.255
    allow tcp to ::/0 port 80
  }
  syscalls {
    arch x86_64, aarch64, x86
    default errno EPERM
    allow read, write, close, clone, socket
    errno EACCES clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    kill socket if arg0 == AF_PACKET
    trap ptrace
    log getpid
  }
  process {
    capabilities keep [CAP_NET_BIND_SERVICE]
    user 1000:1000
    env allow ["HOME", "PATH", "LC_*"]
  }
  limits { memory 4GiB  pids 512  cpus 2  timeout 1h }
  target kubernetes { namespace "agents"  pod_selector { app = "agent" } }
}
)";

}  // namespace

TEST_CASE("FromJson: a policy with every section round-trips") { CheckRoundTrip(LowerText(kRich)); }

TEST_CASE("FromJson: the bundled policies round-trip") {
  CheckRoundTrip(LowerText(ReadTestFile("../policies/coding-agent.ward")));
  CheckRoundTrip(LowerText("import \"std/linux.ward\"\npolicy p extends linux-base { }"));
  CheckRoundTrip(LowerText("policy empty { }"));
}

TEST_CASE("FromJson: random policies round-trip") {
  const unsigned seed = static_cast<unsigned>(std::time(nullptr));
  std::mt19937 rng(seed);
  INFO("seed " << seed);
  auto pick = [&rng](std::initializer_list<const char*> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  for (int round = 0; round < 40; ++round) {
    std::string text = "policy p {\n  network {\n";
    for (int i = 0; i < 6; ++i) {
      text += std::string("    ") + pick({"allow", "deny"}) + " " + pick({"tcp ", "udp ", ""}) +
              "to " +
              pick({"10.0.0.0/8", "10.1.2.0/24", "10.1.2.3", "::/0", "fd00::/16", "::ffff:10.0.0.1",
                    "64:ff9b::a00:1", "0.0.0.0/0"}) +
              " " + pick({"port 443", "ports 1-1024", "port 22", ""}) + "\n";
    }
    text += "  }\n  syscalls {\n    default " +
            std::string(pick({"kill", "errno EPERM", "allow"})) + "\n";
    for (int i = 0; i < 4; ++i) {
      text += std::string("    ") + pick({"allow", "kill", "errno EPERM", "trap", "log"}) + " " +
              pick({"socket", "mkdir", "getpid", "openat"}) + " " +
              pick({"if arg1 == 3", "if arg1 < 100", "if arg1 & 8 == 8", ""}) + "\n";
    }
    text += "  }\n}\n";
    auto r = CheckSource(text);
    if (r->sink.has_errors()) continue;  // W1043 conflicts and the like
    const ast::Policy& p = r->policy();
    DiagnosticSink sink;
    ir::Policy lowered = ir::Lower(r->program, p, sink);
    if (sink.has_errors()) continue;
    json j = json::parse(ir::ToJson(lowered, r->sources).dump());
    std::string error;
    std::optional<ir::Policy> back = ir::FromJson(j, &error);
    INFO(text << error);
    REQUIRE(back.has_value());
    CHECK(*back == lowered);
  }
}

TEST_CASE("FromJson: malformed input is refused with the field named") {
  Lowered l = LowerText(kRich);
  auto refused = [&](const std::function<void(json&)>& edit, const std::string& expect) {
    json j = l.j;
    edit(j);
    std::string error;
    CHECK_FALSE(ir::FromJson(j, &error).has_value());
    CHECK(error.find(expect) != std::string::npos);
    INFO(error);
  };
  refused([](json& j) { j["version"] = 2; }, "version");
  refused([](json& j) { j.erase("syscalls"); }, "ir.syscalls: missing");
  refused([](json& j) { j["policy"] = 3; }, "policy: not a string");
  refused([](json& j) { j["filesystem"]["read"][0]["pattern"] = "relative"; }, "pattern");
  refused([](json& j) { j["network"]["egress"]["v4"][0]["to"] = "not-an-ip"; }, "v4[0].to");
  refused(
      [](json& j) {
        auto& v4 = j["network"]["egress"]["v4"];
        v4.push_back(v4[0]);
      },
      "overlap");
  refused([](json& j) { j["network"]["egress"]["v4"][0]["allow"]["tcp"] = "0-70000"; }, "tcp");
  // A syscall's regions must be disjoint and cover every input.
  refused(
      [](json& j) {
        auto& clone = j["syscalls"]["by_arch"]["x86_64"]["clone"];
        clone.erase(clone.begin());
      },
      "do not cover every input");
  refused(
      [](json& j) {
        auto& clone = j["syscalls"]["by_arch"]["x86_64"]["clone"];
        clone[0]["when"] = json::array();
      },
      "overlap");
  refused([](json& j) { j["syscalls"]["by_arch"]["x86_64"]["nosuch"] = json::array(); },
          "no such syscall");
  refused(
      [](json& j) {
        j["syscalls"]["by_arch"]["x86_64"]["clone"][0]["when"][0]["value"] = "0xffffffffffff";
      },
      "bad mask or value");
  refused([](json& j) { j["syscalls"]["default"] = {{"action", "errno"}, {"errno", 0}}; }, "errno");
  refused([](json& j) { j["syscalls"]["arches"].push_back("mips"); }, "unknown architecture");
  refused([](json& j) { j["process"]["user"] = {{"uid", -1}, {"gid", 0}}; }, "uid");
  refused([](json& j) { j["network"]["netlink"] = {"sock_diag"}; },
          "network.netlink: only \"route\" can be granted");
  refused([](json& j) { j["network"]["netlink"] = "route"; }, "network.netlink");
}

TEST_CASE("FromJson: netlink grants, and an IR written before them (none granted)") {
  Lowered l = LowerText(kRich);
  CHECK(l.j["network"]["netlink"] == json::array({"route"}));
  std::string error;
  auto back = ir::FromJson(l.j, &error);
  REQUIRE(back);
  CHECK(back->network.netlink == std::set<std::string>{"route"});
  json old = l.j;
  old["network"].erase("netlink");
  back = ir::FromJson(old, &error);
  REQUIRE(back);
  CHECK(back->network.netlink.empty());
}

TEST_CASE("FromJson: random mutations never crash and never give a partial policy") {
  const unsigned seed = static_cast<unsigned>(std::time(nullptr));
  std::mt19937 rng(seed);
  INFO("seed " << seed);
  Lowered l = LowerText(kRich);
  json junk[] = {nullptr,        0,    -1,         1.5,       "x",    "0x1", json::array(),
                 json::object(), true, "10.0.0.1", "1-65535", "allow"};
  // Every location in the document, as JSON pointers.
  std::vector<json::json_pointer> pointers;
  std::function<void(const json&, const json::json_pointer&)> walk =
      [&](const json& j, const json::json_pointer& at) {
        pointers.push_back(at);
        if (j.is_object()) {
          for (const auto& [k, v] : j.items()) walk(v, at / k);
        } else if (j.is_array()) {
          for (size_t i = 0; i < j.size(); ++i) walk(j[i], at / i);
        }
      };
  walk(l.j, json::json_pointer());
  for (int i = 0, n = Rounds(3000); i < n; ++i) {
    json j = l.j;
    const json::json_pointer& at =
        pointers[std::uniform_int_distribution<size_t>(1, pointers.size() - 1)(rng)];
    j[at] = junk[std::uniform_int_distribution<size_t>(0, std::size(junk) - 1)(rng)];
    std::string error;
    std::optional<ir::Policy> back = ir::FromJson(j, &error);
    if (back) {
      // Accepted: then it is a whole policy whose JSON reads back the same.
      SourceManager none;
      json again = json::parse(ir::ToJson(*back, none).dump());
      std::optional<ir::Policy> twice = ir::FromJson(again, &error);
      REQUIRE(twice.has_value());
      CHECK(*twice == *back);
    } else {
      CHECK_FALSE(error.empty());
    }
  }
}

}  // namespace ward::test
