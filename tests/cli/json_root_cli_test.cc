// [root] `ward apply`, `ward status`, `ward remove` and `ward run --dry-run`
// with --format json (cli/README.md), in a fresh network namespace this test
// enters (the ward processes inherit it) with a dnsmasq of its own for the
// domain grant: each document parsed and checked field by field against
// what the kernel holds and what the text form says; the refusals (a policy
// the enforcer cannot carry, no privileges, a policy without syscalls) as
// JSON with the right exit codes and nothing changed.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <regex>

#include "enforcers/linux/enforcer.h"
#include "tests/backends/nftables/dnsmasq_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

using nlohmann::json;

const bool kRoot = (RequireRoot("json_root_cli_test"), true);

const char* kPolicy = R"(policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
    allow tcp to "svc.ward.test" port 22
    deny to 10.200.9.0/24
  }
}
)";

std::string Relative(const TestCgroup& c) {
  std::string error;
  const std::string mount = enforce::CgroupV2Mount(&error);
  return c.path().substr(mount.size() + 1);
}

std::string DnsFlags() {
  return std::string(" --dns-server ") + kDnsAddress + " --dns-port " + std::to_string(kDnsPort);
}

}  // namespace

TEST_CASE("apply / status / remove --format json on a cgroup", "[root]") {
  TestNetns ns;
  Dnsmasq dns(ns, "10.5.0.7 svc.ward.test\n");
  TestCgroup cgroup("json");
  Worker in(cgroup.path());
  const std::string file = WriteTemp("web.ward", kPolicy);
  REQUIRE(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);  // positive control

  Run r =
      Ward("apply " + file + " --cgroup " + cgroup.path() + " --format json" + DnsFlags(), kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // The advice is on stderr: stdout is the document alone.
  CHECK(r.err ==
        "note: addresses resolved for domain grants are trusted for their DNS TTL (30-3600 s); "
        "keep them fresh with `ward apply --refresh`\n");
  const json j = json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["policy"] == "web");
  CHECK(j["enforcer"] == "nftables");
  CHECK(j["scope"] == json({{"kind", "cgroup"}, {"cgroup", cgroup.path()}}));
  REQUIRE(j["applied"].size() == 1);
  const json& a = j["applied"][0];
  CHECK(a["enforcer"] == "nftables");
  CHECK(a["policy"] == "web");
  CHECK(a["table"] == "ward_web");
  CHECK(a["generation"] == 1);
  CHECK(a["scope"] == "cgroup");
  CHECK(a["cgroup_id"] == cgroup.id());
  CHECK(a["cgroup"] == Relative(cgroup));
  CHECK(j["resolved"] == json::array({{{"direction", "egress"},
                                       {"name", "svc.ward.test"},
                                       {"address", "10.5.0.7"},
                                       {"ttl", 30}}}));
  CHECK(j["error"] == nullptr);
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0]["code"] == "B3002");
  CHECK(j["diagnostics"][0]["severity"] == "warning");
  CHECK(j["errors"] == 0);
  CHECK(j["warnings"] == 1);
  // What the document says is what the kernel enforces: the resolved
  // address on port 22, nothing else there.
  CHECK(in.Run(Op::kTcp, "10.5.0.7", 22) == kOk);
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == Failed(ECONNREFUSED));
  CHECK(in.Run(Op::kTcp, "10.200.9.1", 443) == Failed(ECONNREFUSED));

  // status lists the same enforcement, in the same shape.
  r = Ward("status -t nftables --format json");
  CHECK(r.status == 0);
  json s = json::parse(r.out);
  CHECK(s["version"] == 1);
  REQUIRE(s["enforced"].size() == 1);
  CHECK(s["enforced"][0] == a);
  CHECK(s["runs"] == json::array());  // -t nftables: no runs (theirs is ebpf)
  CHECK(s["error"] == nullptr);
  CHECK(s["diagnostics"] == json::array());
  // The text form says the same.
  r = Ward("status -t nftables");
  CHECK(r.out == "web: nftables table ward_web, generation 1, cgroup " + Relative(cgroup) +
                     " (id " + std::to_string(cgroup.id()) + "), " +
                     std::to_string(a["elements"].get<size_t>()) + " set elements\n");
  CHECK(a["elements"] > 2);  // the two addresses written, and the one resolved
  // --follow prints text lines only: refused with JSON, not ignored.
  r = Ward("status --follow --format json");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ward status: --follow prints text lines; use it without --format json\n");

  r = Ward("remove " + file + " --format json", kStdEnv);
  CHECK(r.status == 0);
  json m = json::parse(r.out);
  CHECK(m == json({{"version", 1},
                   {"policy", "web"},
                   {"enforcer", "nftables"},
                   {"removed", true},
                   {"error", nullptr},
                   {"diagnostics", json::array()},
                   {"errors", 0},
                   {"warnings", 0}}));
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);
  r = Ward("remove --policy web --format json");
  CHECK(r.status == 0);
  CHECK(json::parse(r.out)["removed"] == false);
  r = Ward("status -t nftables --format json");
  CHECK(json::parse(r.out)["enforced"] == json::array());
}

TEST_CASE("apply -t ebpf --format json: the answers the programs hold", "[root]") {
  REQUIRE(enforce::FindNetworkEnforcer("ebpf") != nullptr);
  TestNetns ns;
  Dnsmasq dns(ns, "10.5.0.7 svc.ward.test\n");
  TestCgroup cgroup("json-ebpf");
  Worker in(cgroup.path());
  const std::string file = WriteTemp("web.ward", kPolicy);
  REQUIRE(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);  // positive control
  Run r = Ward("apply " + file + " --cgroup " + cgroup.path() + " -t ebpf --format json" +
                   DnsFlags() + " --ttl-floor 60",
               kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["enforcer"] == "ebpf");
  REQUIRE(j["applied"].size() == 1);
  CHECK(j["applied"][0]["enforcer"] == "ebpf");
  CHECK(j["applied"][0]["policy"] == "web");
  CHECK(j["applied"][0]["scope"] == "cgroup");
  CHECK(j["applied"][0]["cgroup_id"] == cgroup.id());
  CHECK(j["resolved"] == json::array({{{"direction", "egress"},
                                       {"name", "svc.ward.test"},
                                       {"address", "10.5.0.7"},
                                       {"ttl", 60}}}));
  CHECK(in.Run(Op::kTcp, "10.5.0.7", 22) == kOk);
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == Failed(EPERM));
  r = Ward("status -t ebpf --format json");
  const json status = json::parse(r.out);
  json held;
  for (const json& e : status["enforced"]) {
    if (e["policy"] == "web") held = e;
  }
  CHECK(held == j["applied"][0]);
  r = Ward("remove --policy web -t ebpf --format json");
  CHECK(r.status == 0);
  CHECK(json::parse(r.out)["removed"] == true);
  CHECK(json::parse(r.out)["enforcer"] == "ebpf");
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);
}

TEST_CASE("apply --format json refusals: JSON diagnostics or error, nothing changed", "[root]") {
  TestNetns ns;
  // A deny by domain: nftables cannot carry it (exit 1).
  const std::string domains =
      WriteTemp("d.ward", "policy d { network { deny to \"evil.example.com\" } }\n");
  Run r = Ward("apply " + domains + " --uid 1000 --format json", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err == "ward apply: nothing changed\n");
  json j = json::parse(r.out);
  CHECK(j["policy"] == "d");
  CHECK(j["scope"] == json({{"kind", "uid"}, {"uid", 1000}}));
  CHECK(j["applied"] == json::array());
  CHECK(j["error"] == nullptr);
  bool b3002 = false;
  for (const json& d : j["diagnostics"]) {
    b3002 = b3002 || (d["code"] == "B3002" && d["severity"] == "error" &&
                      d["message"].get<std::string>().rfind(
                          "nftables cannot enforce a deny by domain", 0) == 0);
  }
  CHECK(b3002);
  CHECK(j["errors"] >= 1);

  // A policy with a syntax error: its diagnostics, exit 1.
  const std::string bad = WriteTemp("bad.ward", "policy bad {\n  network {\n    allow tcp to\n");
  r = Ward("apply " + bad + " --uid 1000 --format json", kStdEnv);
  CHECK(r.status == 1);
  j = json::parse(r.out);
  CHECK(j["policy"] == nullptr);
  CHECK(j["errors"] >= 1);
  CHECK(j["diagnostics"][0]["file"] == bad);
  CHECK(j["diagnostics"] ==
        json::parse(Ward("check " + bad + " --format json", kStdEnv).out)["diagnostics"]);

  // Without privileges: an operational failure (2), in "error".
  const std::string web = WriteTemp("web.ward", kPolicy);
  r = Ward("apply " + web + " --uid 1000 --format json",
           kStdEnv + " setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all");
  CHECK(r.status == 2);
  j = json::parse(r.out);
  CHECK(j["error"] == "needs CAP_NET_ADMIN to load nftables rules (run as root)");
  CHECK(j["applied"] == json::array());
  r = Ward("status -t nftables --format json");
  CHECK(json::parse(r.out)["enforced"] == json::array());
}

TEST_CASE("run --dry-run --format json: every layer as data, as the text says", "[root]") {
  const std::string dir = ScratchDir() + "/json-dry";
  std::filesystem::create_directories(dir);
  const std::string file = WriteTemp("dry.ward",
                                     "import \"std/linux.ward\"\n"
                                     "policy json-dry extends linux-base {\n"
                                     "  filesystem {\n"
                                     "    allow read write \"" +
                                         dir +
                                         "\"\n"
                                         "  }\n"
                                         "  network {\n"
                                         "    allow tcp to 127.0.0.1 port 9\n"
                                         "  }\n"
                                         "  limits { memory 256MiB  open_files 100 }\n"
                                         "}\n");
  Run r = Ward("run " + file + " --dry-run --format json -- /usr/bin/true", kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["policy"] == "json-dry");
  CHECK(j["command"] == json({{"path", "/usr/bin/true"}, {"argv", {"/usr/bin/true"}}}));
  CHECK(j["front_end"] == "compiled now");
  REQUIRE(j["layers"].size() == 5);
  const char* names[] = {"cgroup", "network", "filesystem", "process", "seccomp"};
  for (int i = 0; i < 5; ++i) {
    CHECK(j["layers"][i]["step"] == i + 1);
    CHECK(j["layers"][i]["layer"] == names[i]);
  }
  const json& cg = j["layers"][0];
  CHECK(cg["namespace"] == true);
  CHECK(cg["limits"] ==
        json::array(
            {{{"name", "memory"}, {"value", 268435456}, {"by", "cgroup"}, {"at", file + ":9:12"}},
             {{"name", "open_files"}, {"value", 100}, {"by", "rlimit"}, {"at", file + ":9:27"}}}));
  const json& net = j["layers"][1];
  CHECK(net["enforcer"] == "ebpf");
  CHECK(net["pinned_as"].get<std::string>().rfind("run-", 0) == 0);
  json granted;
  for (const json& rule : net["rules"]) {
    if (rule["at"] == file + ":7:5") granted = rule;
  }
  CHECK(granted == json({{"direction", "egress"},
                         {"allow", true},
                         {"rule", "allow tcp to 127.0.0.1 port 9"},
                         {"at", file + ":7:5"}}));
  CHECK(net["resolved"] == json::array());
  const json& fs = j["layers"][2];
  CHECK(fs["landlock_abi"] >= 1);
  CHECK(fs["mounts"]["read_only_root"] == true);
  CHECK(fs["mounts"]["writable"] == json::array({dir}));
  bool dir_granted = false;
  for (const json& g : fs["grants"]) {
    if (g["path"] == dir) dir_granted = g["rights"].size() >= 2 && g["rights"][0] == "read";
  }
  CHECK(dir_granted);
  const json& proc = j["layers"][3];
  CHECK(proc["no_new_privileges"] == true);
  CHECK(proc["capabilities_kept"] == json::array());
  CHECK(proc["rlimits"] == json::array({{{"resource", "RLIMIT_NOFILE"}, {"value", 100}}}));
  CHECK(proc["environment"]["filtered"] == false);
  const json& sc = j["layers"][4];
  CHECK(sc["guard"]["netlink_route"] == false);
  CHECK(sc["instructions"] > 0);
  CHECK(j["error"] == nullptr);
  CHECK(j["diagnostics"] == json::array());

  // The text form says the same numbers (positive control of the text).
  Run text = Ward("run " + file + " --dry-run -- /usr/bin/true", kStdEnv);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("5. seccomp: " + std::to_string(sc["instructions"].get<size_t>()) +
                      " instructions for " + sc["arch"].get<std::string>() + ", ") !=
        std::string::npos);
  CHECK(text.out.find("3. filesystem: mount namespace, then landlock (ABI " +
                      std::to_string(fs["landlock_abi"].get<int>()) + ",") != std::string::npos);
  CHECK(text.out.find("   limit memory: 268435456 bytes, no swap on top\n") != std::string::npos);

  // JSON describes a plan only.
  r = Ward("run " + file + " --format json -- /usr/bin/true", kStdEnv);
  CHECK(r.status == 125);
  CHECK(r.out.empty());
  CHECK(r.err == "ward run: --format json needs --dry-run\n");

  // A policy without syscalls: refused (125) with the reason in "error".
  const std::string bare = WriteTemp("bare.ward", "policy json-bare {\n  limits { pids 10 }\n}\n");
  r = Ward("run " + bare + " --dry-run --format json -- /usr/bin/true", kStdEnv);
  CHECK(r.status == 125);
  const json b = json::parse(r.out);
  CHECK(b["policy"] == nullptr);
  CHECK(b["layers"] == json::array());
  CHECK(b["error"] ==
        "policy json-bare has no syscalls section: every syscall would be killed; extend "
        "linux-base");

  // A policy with errors: its diagnostics, and run's setup failure (125).
  const std::string bad = WriteTemp("dry-bad.ward", "policy x {\n  limits { memory 4gb }\n}\n");
  r = Ward("run " + bad + " --dry-run --format json -- /usr/bin/true", kStdEnv);
  CHECK(r.status == 125);
  const json e = json::parse(r.out);
  CHECK(e["errors"] >= 1);
  CHECK(e["diagnostics"][0]["file"] == bad);
  CHECK(e["diagnostics"] ==
        json::parse(Ward("check " + bad + " --format json", kStdEnv).out)["diagnostics"]);
}

}  // namespace ward::test
