// [root] `ward run` keeps a domain grant fresh while the command runs: the
// supervisor resolves the name again as its TTL runs out and moves the
// grant to the new address. A dnsmasq in the test's network namespace
// answers with a TTL of 2 s; a probe inside the run connects to the old and
// the new address over and over and logs each outcome; the test changes the
// hosts file in the middle of the run. Both outcomes of both addresses are
// observed in the same run (each deny has its positive control).
//
// And name lookups without the host's interfaces: ward run's guard refuses
// NETLINK_ROUTE unless the policy says `allow netlink route`, and glibc's
// getaddrinfo (AI_ADDRCONFIG) then assumes both address families; a name
// from /etc/hosts and a granted domain (through a dnsmasq on the loopback
// of a network namespace of the test's own) still resolve.
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
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

// Runs `argv` with stdout and stderr into `out`; its exit status (or
// 128+signal).
int RunTo(const std::vector<std::string>& argv, const std::string& out) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (!freopen(out.c_str(), "w", stdout) || dup2(1, 2) < 0) _exit(98);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(99);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_CASE("ward run resolves /etc/hosts names and granted domains without the host's interfaces",
          "[root]") {
  const std::string dir = ScratchDir() + "/lookup";
  fs::create_directories(dir);
  std::ofstream(dir + "/resolv.conf") << "nameserver 127.0.0.1\noptions timeout:1 attempts:2\n";
  std::ofstream(dir + "/hosts") << "127.0.0.1 localhost\n10.9.8.7 hosts-only.ward.test\n";
  std::ofstream(dir + "/dns.hosts") << "10.1.2.3 svc.ward.test\n";
  const std::string policy = WriteTemp("lookup.ward", R"(ward 1
policy lookup {
  filesystem {
    allow read exec "/usr", "/bin", "/lib", "/lib64"
    allow read "/etc"
  }
  network {
    allow tcp to "svc.ward.test" port 443
    allow udp to 127.0.0.1 port 53
  }
  syscalls {
    default allow
  }
  process {
    no_new_privileges
    capabilities drop all
  }
}

policy lookup-ifaces extends lookup {
  network {
    allow netlink route
  }
}
)");
  const std::string probe = R"(
import errno, socket
def gai(name):
    try:
        found = socket.getaddrinfo(name, 443, 0, socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)
        return ",".join(sorted({a[4][0] for a in found}))
    except socket.gaierror as e:
        return "gai %d" % e.errno
def ifaces():
    try:
        return ",".join(n for _, n in socket.if_nameindex())
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("hosts=%s dns=%s ifaces=%s" % (gai("hosts-only.ward.test"), gai("svc.ward.test"), ifaces()))
)";
  // Everything in a child of its own network and mount namespaces: its
  // /etc/resolv.conf and /etc/hosts are the test's, its only interface lo,
  // its resolver the dnsmasq it starts there. Each outcome to a file.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount((dir + "/resolv.conf").c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0 ||
        mount((dir + "/hosts").c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0 ||
        system("/usr/sbin/ip link set lo up") != 0) {
      _exit(90);
    }
    const pid_t dns = fork();
    if (dns == 0) {
      const std::string addn = "--addn-hosts=" + dir + "/dns.hosts",
                        pid_file = "--pid-file=" + dir + "/dnsmasq.pid";
      execlp("dnsmasq", "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", addn.c_str(), "--listen-address=127.0.0.1", "--bind-interfaces",
             "--port=53", "--user=root", "--group=root", pid_file.c_str(), "--local=/ward.test/",
             "--log-facility=/dev/null", static_cast<char*>(nullptr));
      _exit(127);
    }
    bool ready = false;
    for (int i = 0; i < 50 && !ready; ++i) {
      addrinfo* res = nullptr;
      ready = getaddrinfo("svc.ward.test", nullptr, nullptr, &res) == 0;
      if (res) freeaddrinfo(res);
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int code = 91;
    if (ready) {
      const std::string std_env = "WARD_STD=" WARD_SOURCE_DIR "/policies/std";
      putenv(const_cast<char*>(std_env.c_str()));
      auto warded = [&](const std::string& name) {
        return std::vector<std::string>{
            WARD_BINARY,  "run", policy, "--policy",         name, "--dns-server", "127.0.0.1",
            "--dns-port", "53",  "--",   "/usr/bin/python3", "-c", probe};
      };
      const int alone = RunTo({"/usr/bin/python3", "-c", probe}, dir + "/alone.out");
      const int plain = RunTo(warded("lookup"), dir + "/lookup.out");
      const int granted = RunTo(warded("lookup-ifaces"), dir + "/ifaces.out");
      code = alone == 0 && plain == 0 && granted == 0 ? 0 : 92;
    }
    kill(dns, SIGTERM);
    waitpid(dns, nullptr, 0);
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  INFO("alone: " << Slurp(dir + "/alone.out"));
  INFO("lookup: " << Slurp(dir + "/lookup.out"));
  INFO("lookup-ifaces: " << Slurp(dir + "/ifaces.out"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The positive control: outside the sandbox, lo is listed.
  CHECK(Slurp(dir + "/alone.out") == "hosts=10.9.8.7 dns=10.1.2.3 ifaces=lo\n");
  // Without the grant: the interfaces are refused, the lookups work.
  CHECK(Slurp(dir + "/lookup.out") == "hosts=10.9.8.7 dns=10.1.2.3 ifaces=EPROTONOSUPPORT\n");
  // With `allow netlink route`: the same as outside.
  CHECK(Slurp(dir + "/ifaces.out") == "hosts=10.9.8.7 dns=10.1.2.3 ifaces=lo\n");
}

}  // namespace ward::test
