// [root] `ward apply`, `ward status` and `ward remove` as a user runs them,
// inside a fresh network namespace this test enters (the ward processes
// inherit it): enforcement outlives the `ward apply` process, `remove` takes
// it away, and the refusals (no privileges, no scope, -t ebpf not built, a
// deny by domain) have exact messages and exit codes (cli.md).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "enforcers/linux/enforcer.h"
#include "tests/backends/nftables/netns_fixture.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("apply_cli_test"), true);

const char* kPolicy = R"(policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.200.9.0/24
  }
}
)";

// The cgroup path relative to the v2 mount, as status prints it.
std::string Relative(const TestCgroup& c) {
  std::string error;
  const std::string mount = enforce::CgroupV2Mount(&error);
  return c.path().substr(mount.size() + 1);
}

// What every apply to a cgroup or a user says (enforcer.h, WarnNonIpSockets).
std::string NonIpWarning(const std::string& enforcer) {
  return "warning[B3002]: " + enforcer +
         " does not see packet sockets (AF_PACKET, with CAP_NET_RAW) nor other families outside "
         "IP such as vsock: they send past it\n"
         "  = hint: drop CAP_NET_RAW in the scope and refuse other socket families with seccomp "
         "(ward run does both)\n";
}

}  // namespace

TEST_CASE("ward apply / status / remove on a cgroup, enforced after ward exits", "[root]") {
  TestNetns ns;
  TestCgroup cgroup("cli");
  Worker in(cgroup.path());
  const std::string file = WriteTemp("web.ward", kPolicy);
  REQUIRE(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);  // positive control

  Run r = Ward("apply " + file + " --cgroup " + cgroup.path(), kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string scope =
      "cgroup " + Relative(cgroup) + " (id " + std::to_string(cgroup.id()) + ")";
  CHECK(r.out == "applied web with nftables (table ward_web, generation 1) to " + scope + "\n");
  CHECK(r.err == NonIpWarning("nftables"));
  // `ward apply` has exited; the kernel still enforces.
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == Failed(ECONNREFUSED));
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 443) == kOk);
  CHECK(in.Run(Op::kTcp, "10.200.9.1", 443) == Failed(ECONNREFUSED));

  r = Ward("status");
  CHECK(r.status == 0);
  CHECK(r.out == "web: nftables table ward_web, generation 1, " + scope + ", 2 set elements\n");
  r = Ward("status --format json");
  CHECK(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["enforced"][0]["policy"] == "web");
  CHECK(j["enforced"][0]["scope"] == "cgroup");
  CHECK(j["enforced"][0]["cgroup_id"] == cgroup.id());

  // Re-applying replaces the table: a new generation, one table.
  r = Ward("apply " + file + " --cgroup " + Relative(cgroup), kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "applied web with nftables (table ward_web, generation 2) to " + scope + "\n");

  r = Ward("remove --policy web");
  CHECK(r.status == 0);
  CHECK(r.out == "removed web from nftables\n");
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);
  r = Ward("remove " + file, kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "nftables holds nothing for web\n");
  r = Ward("status");
  CHECK(r.out == "no ward policy is enforced on this host\n");
}

TEST_CASE("ward apply refusals", "[root]") {
  TestNetns ns;
  TestCgroup cgroup("refusals");
  const std::string file = WriteTemp("web.ward", kPolicy);

  Run r;
  if (enforce::FindNetworkEnforcer("ebpf") == nullptr) {
    r = Ward("apply " + file + " --cgroup " + cgroup.path() + " -t ebpf", kStdEnv);
    CHECK(r.status == 2);
    CHECK(r.err == "ward apply: enforcer 'ebpf' is not built yet in this ward; use -t nftables\n");
  }
  std::string known;
  for (const enforce::NetworkEnforcer* e : enforce::NetworkEnforcers()) {
    known += " " + std::string(e->name());
  }
  r = Ward("apply " + file + " --cgroup " + cgroup.path() + " -t pf", kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward apply: unknown enforcer 'pf'; known:" + known + "\n");

  r = Ward("apply " + file, kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward apply: name exactly one scope: --cgroup PATH, --uid UID or --interface IF\n");
  r = Ward("apply " + file + " --uid 1000 --interface tap0", kStdEnv);
  CHECK(r.status == 2);

  // Without privileges: a clear refusal, nothing loaded.
  r = Ward("apply " + file + " --uid 1000",
           kStdEnv + " setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward apply: needs CAP_NET_ADMIN to load nftables rules (run as root); nothing changed\n");
  r = Ward("status", "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward status: nftables: needs CAP_NET_ADMIN to read nftables rules (run as root)\n");

  r = Ward("apply " + file + " --cgroup " + cgroup.path() + "-absent", kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward apply: cgroup " + cgroup.path() + "-absent does not exist; nothing changed\n");

  const std::string domains =
      WriteTemp("d.ward", "policy d { network { deny to \"evil.example.com\" } }\n");
  r = Ward("apply " + domains + " --uid 1000", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err.find("error[B3002]: nftables cannot enforce a deny by domain") != std::string::npos);
  CHECK(r.err.find("ward apply: nothing changed\n") != std::string::npos);
  r = Ward("status");
  CHECK(r.out == "no ward policy is enforced on this host\n");
}

TEST_CASE("ward apply -t ebpf / status / remove on a cgroup, enforced after ward exits", "[root]") {
  REQUIRE(enforce::FindNetworkEnforcer("ebpf") != nullptr);
  TestNetns ns;
  TestCgroup cgroup("cli-ebpf");
  Worker in(cgroup.path());
  const std::string file = WriteTemp("web.ward", kPolicy);
  REQUIRE(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);  // positive controls
  REQUIRE(in.Run(Op::kTcp, "10.200.9.1", 443) == kOk);

  Run r = Ward("apply " + file + " --cgroup " + cgroup.path() + " -t ebpf", kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("applied web with ebpf ", 0) == 0);
  CHECK(r.err == NonIpWarning("ebpf"));
  // `ward apply` has exited; the pinned programs still decide. connect()
  // refused by a cgroup program fails with EPERM.
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == Failed(EPERM));
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 443) == kOk);
  CHECK(in.Run(Op::kTcp, "10.200.9.1", 443) == Failed(EPERM));

  r = Ward("status -t ebpf");
  CHECK(r.status == 0);
  CHECK(r.out.rfind("web: ebpf ", 0) == 0);

  // `status --follow` prints the denials as they happen, until SIGINT (sent
  // by this test: `timeout(1)` would resume the process when LeakSanitizer's
  // exit check stops it, and the two then wait on each other for ever).
  const std::string follow = WriteTemp("follow.out", "");
  const pid_t follower = fork();
  REQUIRE(follower >= 0);
  if (follower == 0) {
    const int fd = open(follow.c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(127);
    execl(WARD_BINARY, WARD_BINARY, "status", "--follow", "-t", "ebpf",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  usleep(800 * 1000);
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == Failed(EPERM));
  CHECK(in.Run(Op::kTcp, "10.200.9.1", 443) == Failed(EPERM));
  usleep(500 * 1000);
  REQUIRE(kill(follower, SIGINT) == 0);
  int status = -1;
  for (int i = 0; i < 100 && waitpid(follower, &status, WNOHANG) == 0; ++i) usleep(100 * 1000);
  if (!WIFEXITED(status)) {
    kill(follower, SIGKILL);
    waitpid(follower, &status, 0);
    FAIL("ward status --follow did not end on SIGINT");
  }
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream f(follow);
  const std::string printed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  INFO(printed);
  CHECK(printed.find("web: connect to 10.5.0.1:22 denied (no rule matched)\n") !=
        std::string::npos);
  CHECK(printed.find("web: connect to 10.200.9.1:443 denied (rule 2: deny to 10.200.9.0/24)\n") !=
        std::string::npos);

  r = Ward("remove --policy web -t ebpf");
  CHECK(r.status == 0);
  CHECK(r.out == "removed web from ebpf\n");
  CHECK(in.Run(Op::kTcp, "10.5.0.1", 22) == kOk);
  r = Ward("status -t ebpf");
  CHECK(r.out == "no ward policy is enforced on this host\n");
}

}  // namespace ward::test
