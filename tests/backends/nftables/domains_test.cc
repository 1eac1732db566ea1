// [root] Domain grants for real: the resolver (enforcers/linux/dns.h)
// against a dnsmasq this test runs in its own network namespace with a hosts
// file, then both address-based enforcers (nftables, eBPF) applying a policy
// with a domain grant, probed by a worker in a cgroup. The hosts file
// changes; the nftables elements time out with their TTL by themselves (the
// old address refused before any refresh), and a refresh moves the grant to
// the new address. Every deny has its positive control (the same probe
// before the policy, or to the address the name resolves to).
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

#include "backends/nftables/nftables_backend.h"
#include "enforcers/linux/dns.h"
#include "enforcers/linux/enforcer.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/dnsmasq_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("backend_nftables_domains_test"), true);

std::vector<std::string> Addresses(const std::vector<enforce::DnsAnswer>& answers) {
  std::vector<std::string> out;
  for (const auto& a : answers) {
    out.push_back(a.address.v6 ? ir::FormatV6(ir::V6Range(a.address).lo)
                               : ir::FormatV4(ir::V4Range(a.address).lo));
  }
  return out;
}

TEST_CASE("the resolver: A and AAAA with TTLs, CNAME chains, clamping, failures", "[root]") {
  TestNetns ns;
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\nfd00:200::5 svc.ward.test\n10.1.2.9 other.ward.test\n");
  std::vector<enforce::DnsAnswer> answers;
  std::string error;
  REQUIRE(enforce::ResolveName("svc.ward.test", Dnsmasq::Options(), &answers, &error));
  CHECK(Addresses(answers) == std::vector<std::string>{"10.1.2.3", "fd00:200::5"});
  for (const auto& a : answers) CHECK(a.ttl == 2);
  // Through the CNAME: the target's addresses, nothing of other names.
  REQUIRE(enforce::ResolveName("alias.ward.test", Dnsmasq::Options(), &answers, &error));
  CHECK(Addresses(answers) == std::vector<std::string>{"10.1.2.3", "fd00:200::5"});
  // The floor lifts a short TTL; the cap lowers a long one.
  enforce::DnsOptions o = Dnsmasq::Options();
  o.ttl_floor = 30;
  o.ttl_cap = 60;
  REQUIRE(enforce::ResolveName("svc.ward.test", o, &answers, &error));
  for (const auto& a : answers) CHECK(a.ttl == 30);
  o.ttl_floor = 1;
  o.ttl_cap = 1;
  REQUIRE(enforce::ResolveName("svc.ward.test", o, &answers, &error));
  for (const auto& a : answers) CHECK(a.ttl == 1);
  // A name that does not exist: no answers, not a failure.
  REQUIRE(enforce::ResolveName("missing.ward.test", Dnsmasq::Options(), &answers, &error));
  CHECK(answers.empty());
  // No server: a failure with a reason.
  o = Dnsmasq::Options();
  o.servers = {"10.53.0.2"};
  o.attempts = 1;
  CHECK_FALSE(enforce::ResolveName("svc.ward.test", o, &answers, &error));
  CHECK(error.find("no answer for svc.ward.test") != std::string::npos);
  CHECK_FALSE(enforce::ResolveName("*.ward.test", Dnsmasq::Options(), &answers, &error));
}

TEST_CASE("the resolver keeps one family's answers when the other query fails", "[root]") {
  TestNetns ns;
  // Outside the zone dnsmasq holds (--local=/ward.test/), a name of the
  // hosts file is answered for A, and its AAAA query is refused (no
  // upstream): what a dnsmasq serving IPv4-only records does.
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\n10.1.2.7 v4only.example\n");
  std::vector<enforce::DnsAnswer> answers;
  std::string error;
  REQUIRE(enforce::ResolveName("v4only.example", Dnsmasq::Options(), &answers, &error));
  CHECK(Addresses(answers) == std::vector<std::string>{"10.1.2.7"});
  CHECK(error == "no answer for v4only.example (AAAA): Host name lookup failure");
  // The grant keeps the IPv4 address and says what stays denied.
  auto compiled = CompileWith(backend::NftablesBackend(),
                              "policy p { network { allow tcp to \"v4only.example\" port 443 } }");
  REQUIRE(compiled);
  DiagnosticSink sink;
  const auto resolved = enforce::ResolveDomainGrants(compiled->ir, Dnsmasq::Options(), sink);
  REQUIRE(resolved.size() == 1);
  CHECK(ir::FormatV4(ir::V4Range(resolved[0].address).lo) == "10.1.2.7");
  REQUIRE(sink.diagnostics().size() == 1);
  CHECK(sink.diagnostics()[0].message ==
        "\"v4only.example\" resolved only in part: no answer for v4only.example (AAAA): Host name "
        "lookup failure; its IPv4 addresses are allowed, IPv6 flows to it stay denied until "
        "it answers");
  CHECK(sink.diagnostics()[0].span.valid());  // at the rule that grants the name
  // Positive control: a name both queries answer gives no warning.
  compiled = CompileWith(backend::NftablesBackend(),
                         "policy p { network { allow tcp to \"svc.ward.test\" port 443 } }");
  REQUIRE(compiled);
  DiagnosticSink quiet;
  CHECK(enforce::ResolveDomainGrants(compiled->ir, Dnsmasq::Options(), quiet).size() == 1);
  CHECK(quiet.diagnostics().empty());
  // Both refused: a failure, nothing kept.
  CHECK_FALSE(enforce::ResolveName("nowhere.example", Dnsmasq::Options(), &answers, &error));
  CHECK(answers.empty());
  CHECK(error ==
        "no answer for nowhere.example (A): Host name lookup failure; no answer for "
        "nowhere.example (AAAA): Host name lookup failure");
}

TEST_CASE("the resolver asks the servers named, even when resolv.conf lists IPv6 ones", "[root]") {
  TestNetns ns;
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\n");
  const std::string conf = "/tmp/ward-dns-test-" + std::to_string(getpid()) + ".resolv.conf";
  std::ofstream(conf) << "nameserver fd00:53::1\nnameserver fd00:53::2\n";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // A private view of /etc/resolv.conf naming only IPv6 servers nobody
    // runs (glibc keeps those apart from the IPv4 list Ward overrides): the
    // servers Ward names must still be the ones asked.
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount(conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
      _exit(2);
    }
    std::vector<enforce::DnsAnswer> answers;
    std::string error;
    const bool ok = enforce::ResolveName("svc.ward.test", Dnsmasq::Options(), &answers, &error);
    _exit(ok && answers.size() == 1 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  unlink(conf.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

const char* kPolicy = R"(policy dom { network {
  allow tcp to "svc.ward.test" port 443
  allow tcp to "blocked.ward.test" port 443
  deny tcp to 10.1.9.0/24 port 443
} })";

ir::Policy Lowered() { return CompileWith(backend::NftablesBackend(), kPolicy)->ir; }

enforce::Target CgroupTarget(const TestCgroup& c) {
  enforce::Target t;
  t.kind = enforce::Target::Kind::kCgroup;
  t.cgroup = c.path();
  return t;
}

enforce::ApplyOptions Options() {
  enforce::ApplyOptions o;
  o.dns = Dnsmasq::Options();
  o.dns.ttl_cap = 2;
  return o;
}

void Apply(const enforce::NetworkEnforcer& e, const TestCgroup& cg) {
  DiagnosticSink sink;
  std::string error;
  const bool ok = e.Apply(Lowered(), CgroupTarget(cg), Options(), sink, &error);
  INFO(error);
  REQUIRE(ok);
}

void Refresh(const enforce::NetworkEnforcer& e) {
  DiagnosticSink sink;
  std::string error;
  uint32_t next = 0;
  const bool ok = e.RefreshDomains(Lowered(), Options(), sink, &next, &error);
  INFO(error);
  REQUIRE(ok);
  CHECK(next == 1);  // half the 2 s TTL
}

void Remove(const enforce::NetworkEnforcer& e) {
  bool removed = false;
  std::string error;
  REQUIRE(e.Remove("dom", &removed, &error));
  CHECK(removed);
}

// The denial each enforcer gives a TCP connect: nftables resets it, eBPF's
// connect4 hook refuses the call.
Outcome Denied(const enforce::NetworkEnforcer& e) {
  return Failed(e.name() == "nftables" ? ECONNREFUSED : EPERM);
}

TEST_CASE("nftables: a domain grant follows DNS; elements expire with their TTL", "[root]") {
  TestNetns ns;
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\n10.1.9.9 blocked.ward.test\n");
  TestCgroup cg("dom");
  Worker in(cg.path());
  const auto& nft = enforce::NftablesEnforcer();
  // Positive controls: without the policy every address answers.
  for (const char* a : {"10.1.2.3", "10.1.2.4", "10.1.9.9"}) {
    CHECK(in.Run(Op::kTcp, a, 443) == kOk);
  }
  Apply(nft, cg);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == kOk);          // the name's address
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 80) == Denied(nft));   // not the grant's port
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == Denied(nft));  // not the name's address
  CHECK(in.Run(Op::kTcp, "10.1.9.9", 443) == Denied(nft));  // an address deny wins
  // The element carries the TTL as its timeout.
  std::string listing, error;
  REQUIRE(
      enforce::RunNft("list set inet ward_dom egress_v4_dom_tcp", false, false, &listing, &error));
  CHECK(listing.find("10.1.2.3 . 443 timeout 2s") != std::string::npos);

  dns.Change("10.1.2.4 svc.ward.test\n10.1.9.9 blocked.ward.test\n");
  // Nobody refreshed: the old answer expires by itself.
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == Denied(nft));
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == Denied(nft));
  Refresh(nft);
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == kOk);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == Denied(nft));
  CHECK(in.Run(Op::kTcp, "10.1.9.9", 443) == Denied(nft));
  Remove(nft);
  CHECK(in.Run(Op::kTcp, "10.1.9.9", 443) == kOk);
}

TEST_CASE("ebpf: a domain grant follows DNS; answers expire with their TTL", "[root]") {
  const enforce::NetworkEnforcer* ebpf = enforce::FindNetworkEnforcer("ebpf");
  REQUIRE(ebpf != nullptr);
  TestNetns ns;
  Dnsmasq dns(ns, "10.1.2.3 svc.ward.test\n10.1.9.9 blocked.ward.test\n");
  TestCgroup cg("dom");
  Worker in(cg.path());
  for (const char* a : {"10.1.2.3", "10.1.2.4", "10.1.9.9"}) {
    CHECK(in.Run(Op::kTcp, a, 443) == kOk);
  }
  Apply(*ebpf, cg);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == kOk);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 80) == Denied(*ebpf));
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == Denied(*ebpf));
  CHECK(in.Run(Op::kTcp, "10.1.9.9", 443) == Denied(*ebpf));
  dns.Change("10.1.2.4 svc.ward.test\n10.1.9.9 blocked.ward.test\n");
  // Nobody refreshed: the answer's deadline passes, the programs stop
  // trusting it by themselves.
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == Denied(*ebpf));
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == Denied(*ebpf));
  Refresh(*ebpf);
  CHECK(in.Run(Op::kTcp, "10.1.2.4", 443) == kOk);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == Denied(*ebpf));
  CHECK(in.Run(Op::kTcp, "10.1.9.9", 443) == Denied(*ebpf));
  Remove(*ebpf);
  CHECK(in.Run(Op::kTcp, "10.1.2.3", 443) == kOk);
}

}  // namespace
}  // namespace ward::test
