// [root] `ward run` keeps a domain grant fresh while the command runs: the
// supervisor resolves the name again as its TTL runs out and moves the
// grant to the new address. A dnsmasq in the test's network namespace
// answers with a TTL of 2 s; a probe inside the run connects to the old and
// the new address over and over and logs each outcome; the test changes the
// hosts file in the middle of the run. Both outcomes of both addresses are
// observed in the same run (each deny has its positive control).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/backends/nftables/dnsmasq_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"
#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

const bool kRoot = (RequireRoot("run_dns_test"), true);

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits up to `seconds` for the probe's last line to be `line`.
bool LastLineBecomes(const std::string& log, const std::string& line, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    const std::string text = Slurp(log);
    const size_t end = text.rfind('\n');
    if (end != std::string::npos) {
      const size_t begin = text.rfind('\n', end - 1);
      const std::string last = text.substr(begin == std::string::npos ? 0 : begin + 1,
                                           end - (begin == std::string::npos ? 0 : begin + 1));
      if (last == line) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("ward run re-resolves a domain grant while the command runs", "[root]") {
  TestNetns ns;
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\n");
  const std::string dir = ScratchDir() + "/dns";
  fs::create_directories(dir);
  const std::string log = dir + "/probe.log", stop = dir + "/stop";
  fs::remove(log);
  fs::remove(stop);
  const std::string policy = WriteTemp("dns.ward", R"(ward 1
import "std/linux.ward"
policy rt-dns extends linux-base {
  filesystem {
    allow read write ")" + dir + R"("
  }
  network {
    allow tcp to "svc.ward.test" port 443
  }
}
)");
  // Each round: "old=<outcome> new=<outcome>", where outcome is ok or the
  // errno's name.
  const std::string probe = R"(
import errno, os, socket, time
def tcp(addr):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((addr, 443))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "timeout"
    finally:
        s.close()
while not os.path.exists(")" +
                            stop + R"("):
    with open(")" + log + R"(", "a") as f:
        f.write("old=%s new=%s\n" % (tcp("10.1.2.3"), tcp("10.1.2.4")))
    time.sleep(0.1)
)";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string std_env = "WARD_STD=" WARD_SOURCE_DIR "/policies/std";
    putenv(const_cast<char*>(std_env.c_str()));
    const std::string port = std::to_string(kDnsPort);
    execl(WARD_BINARY, WARD_BINARY, "run", policy.c_str(), "--dns-server", kDnsAddress,
          "--dns-port", port.c_str(), "--ttl-floor", "1", "--ttl-cap", "60", "--",
          "/usr/bin/python3", "-c", probe.c_str(), static_cast<char*>(nullptr));
    _exit(99);
  }
  // The name's address is reachable on the grant's port; the other is not.
  CHECK(LastLineBecomes(log, "old=ok new=EPERM", 15));
  dns.Change("10.1.2.4 svc.ward.test\n");
  // Within the TTL (2 s) and the refresh (half of it), the grant moves.
  CHECK(LastLineBecomes(log, "old=EPERM new=ok", 10));
  std::ofstream(stop) << "";
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  INFO(Slurp(log));
  CHECK_FALSE(fs::exists("/sys/fs/bpf/ward/run-" + std::to_string(pid) + "-rt-dns"));
}

}  // namespace ward::test
