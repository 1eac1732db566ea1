// [root] A dnsmasq the test runs in its own network namespace (netns_fixture.h),
// answering from a hosts file the test can change, for the tests of domain
// grants: the resolver, the address-based enforcers, `ward run`'s refresh.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "enforcers/linux/dns.h"
#include "tests/backends/nftables/netns_fixture.h"

namespace ward::test {

constexpr const char* kDnsAddress = "10.53.0.1";
constexpr uint16_t kDnsPort = 5353;  // the echo servers hold 53

// dnsmasq answering from a hosts file with a TTL of 2 s, on kDnsAddress in
// the test's namespace; `alias.ward.test` is a CNAME of `svc.ward.test`.
class Dnsmasq {
 public:
  Dnsmasq(const TestNetns& ns, const std::string& hosts) {
    hosts_ = "/tmp/ward-dns-test-" + std::to_string(getpid()) + ".hosts";
    pid_file_ = hosts_ + ".pid";
    Write(hosts);
    REQUIRE(ns.Sh(std::string("ip addr add ") + kDnsAddress + "/32 dev lo") == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const std::string addn = "--addn-hosts=" + hosts_, pid = "--pid-file=" + pid_file_,
                        listen = std::string("--listen-address=") + kDnsAddress,
                        port = "--port=" + std::to_string(kDnsPort);
      execlp("dnsmasq", "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", addn.c_str(), "--local-ttl=2", listen.c_str(), "--bind-interfaces",
             port.c_str(), "--user=root", "--group=root", pid.c_str(),
             "--cname=alias.ward.test,svc.ward.test", "--local=/ward.test/",
             "--log-facility=/dev/null", static_cast<char*>(nullptr));
      _exit(127);
    }
    // Ready when it answers.
    for (int i = 0; i < 50; ++i) {
      std::vector<enforce::DnsAnswer> answers;
      std::string error;
      if (enforce::ResolveName("svc.ward.test", Options(), &answers, &error) && !answers.empty()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // A constructor that fails runs no destructor: stop it here.
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    unlink(hosts_.c_str());
    FAIL("dnsmasq did not answer (is dnsmasq-base installed?)");
  }
  ~Dnsmasq() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    unlink(hosts_.c_str());
    unlink(pid_file_.c_str());
  }
  // Replaces the hosts file and makes dnsmasq read it again (SIGHUP).
  void Change(const std::string& hosts) {
    Write(hosts);
    REQUIRE(kill(pid_, SIGHUP) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  static enforce::DnsOptions Options() {
    enforce::DnsOptions o;
    o.servers = {kDnsAddress};
    o.port = kDnsPort;
    o.ttl_floor = 1;
    o.ttl_cap = 60;
    o.timeout_seconds = 1;
    o.attempts = 2;
    return o;
  }

 private:
  void Write(const std::string& hosts) {
    std::ofstream(hosts_ + ".tmp") << hosts;
    REQUIRE(rename((hosts_ + ".tmp").c_str(), hosts_.c_str()) == 0);
  }
  std::string hosts_, pid_file_;
  pid_t pid_ = -1;
};

}  // namespace ward::test
