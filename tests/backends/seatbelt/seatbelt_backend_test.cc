// The seatbelt backend: goldens for the policies in policies/, what it
// refuses and what it leaves out, the startup list's limits, determinism,
// and the differential tests: random policies (Ward source), the emitted
// profile read by the SBPL reader (sbpl_reader.h, validated by its own
// table), its answers compared with the IR's Decide on many file and
// network queries. WARD_SEED=N replays a run; the seed is printed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <random>

#include "compiler/ip.h"
#include "language/literals.h"
#include "tests/backends/seatbelt/sbpl_reader.h"
#include "tests/backends/seatbelt/seatbelt_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using sbpl::Profile;
using sbpl::Query;

bool NetAllowed(const Profile& p, ir::Direction dir, ir::Protocol proto, const std::string& addr,
                uint16_t port) {
  Query q;
  q.operation = dir == ir::Direction::kEgress ? "network-outbound" : "network-inbound";
  q.protocol = ir::ProtocolName(proto);
  q.address = addr;
  q.port = port;
  return p.Allows(q);
}

bool UnixAllowed(const Profile& p, const std::string& path) {
  Query q;
  q.operation = "network-outbound";
  q.unix_socket = true;
  q.path = path;
  return p.Allows(q);
}

IpPrefix Ip(const std::string& text) {
  std::string error;
  auto p = ParseIpOrCidr(text, &error);
  REQUIRE(p.has_value());
  return *p;
}

bool UnderAlias(const std::string& path) {
  for (std::string a : {"/tmp", "/var", "/etc"}) {
    if (path == a || path.rfind(a + "/", 0) == 0) return true;
  }
  return false;
}

// ---- goldens ---------------------------------------------------------------

TEST_CASE("seatbelt: policies/coding-agent.ward needs a proxy for its domains") {
  const std::string agent = ReadSourceFile("policies/coding-agent.ward");
  auto c = Seatbelt(agent);
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(MatchesGolden("backends/seatbelt/testdata/coding-agent.diagnostics.txt", c->Diagnostics()));
}

const char* kAgentMac = R"(import "./coding-agent.ward"

// The coding agent on macOS: a filtering proxy on localhost:3128 holds the
// domain rules.
policy coding-agent-mac extends coding-agent {
  target seatbelt { proxy_port 3128 }
}
)";

TEST_CASE("seatbelt: golden of policies/coding-agent.ward with a proxy port") {
  const std::string agent = ReadSourceFile("policies/coding-agent.ward");
  auto c = Seatbelt(kAgentMac, kHome, {{"coding-agent.ward", agent}});
  INFO(c->Diagnostics());
  REQUIRE(c->result.ok);
  REQUIRE(c->result.artifacts.size() == 1);
  CHECK(c->result.artifacts[0].path == "coding-agent-mac.sb");
  CHECK(MatchesGolden("backends/seatbelt/testdata/coding-agent-mac.sb",
                      c->result.artifacts[0].bytes));
  CHECK(MatchesGolden("backends/seatbelt/testdata/coding-agent-mac.diagnostics.txt",
                      c->Diagnostics()));
  CHECK(c->result.enforced ==
        std::vector<backend::Section>{backend::Section::kFilesystem, backend::Section::kNetwork});

  // What the profile says, read back, is what the IR decides.
  Profile p(c->result.artifacts[0].bytes);
  const std::optional<std::string> home = kHome;
  for (const char* path :
       {"/workspace", "/workspace/src/main.rs", "/workspace/.git/hooks/pre-commit",
        "/workspace/.git/config", "/workspace/.git/HEAD", "/workspace/.envrc", "/tmp/x",
        "/Users/agent/.ssh/id_ed25519", "/Users/agent/.cache/pip/x", "/Users/agent/.gitconfig",
        "/Users/agent/.docker/config.json", "/Users/agent/.docker/other", "/usr/bin/cc",
        "/etc/passwd", "/etc/ssl/certs/ca.pem", "/home/other", "/proc/self/mem", "/"}) {
    for (ir::FsRight right : ir::kFsRights) {
      INFO(path << " right " << Operation(right));
      const bool want = c->ir.filesystem.Decide(path, right, home).allow;
      CHECK(FileAllowed(p, right, path) == want);
      if (UnderAlias(path)) CHECK(FileAllowed(p, right, std::string("/private") + path) == want);
    }
  }
  // The proxy, the loopback resolver; nothing by address beyond that.
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "127.0.0.1", 3128));
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kUdp, "127.0.0.1", 53));
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "::1", 53));
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "140.82.112.3", 443));
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "169.254.169.254", 80));
}

// ---- refusals and what is left out -------------------------------------

TEST_CASE("seatbelt: `~` needs a home") {
  auto c = Seatbelt(R"(policy p { filesystem { deny read "~/.ssh"  allow read "/usr" } })",
                    std::nullopt);
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics().find("error[B3002]") != std::string::npos);
  CHECK(c->Diagnostics().find("--home") != std::string::npos);
  // Without `~` no home is needed.
  auto d = Seatbelt(R"(policy p { filesystem { allow read "/usr" } })", std::nullopt);
  CHECK(d->result.ok);
  // A trailing slash on the home changes nothing.
  const char* tilde = R"(policy p { filesystem { allow read "~/src"  deny read "~/src/.env" } })";
  auto e = Seatbelt(tilde, "/Users/agent/");
  auto f = Seatbelt(tilde, "/Users/agent");
  REQUIRE(e->result.ok);
  CHECK(e->result.artifacts[0].bytes == f->result.artifacts[0].bytes);
  Profile p(e->result.artifacts[0].bytes);
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/Users/agent/src/main.c"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/Users/agent/src/.env"));
}

TEST_CASE("seatbelt: paths SBPL strings would need escapes for are refused") {
  for (const char* source : {R"(policy p { filesystem { allow read "/a\"b" } })",
                             R"(policy p { filesystem { allow read "/a\\b" } })",
                             R"(policy p { filesystem { allow read "/a\nb" } })",
                             R"(policy p { network { allow unix "/run/a\"b.sock" } })"}) {
    INFO(source);
    auto c = Seatbelt(source);
    CHECK_FALSE(c->result.ok);
    CHECK(c->result.artifacts.empty());
    CHECK(c->Diagnostics().find("error[B3002]") != std::string::npos);
  }
}

TEST_CASE("seatbelt: domains need a proxy port; with one they go through it") {
  const char* rules = R"(
  network {
    allow tcp to "example.com", "*.example.org" port 443
    allow tcp to any port 22
  })";
  auto c = Seatbelt(std::string("policy p {") + rules + "}");
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics().find("error[B3002]") != std::string::npos);
  CHECK(c->Diagnostics().find("proxy_port") != std::string::npos);

  auto d =
      Seatbelt(std::string("policy p {") + rules + "\n  target seatbelt { proxy_port 8888 }\n}");
  REQUIRE(d->result.ok);
  CHECK(d->Diagnostics().empty());
  Profile p(d->result.artifacts[0].bytes);
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "127.0.0.1", 8888));
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kUdp, "127.0.0.1", 8888));
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "93.184.216.34", 443));
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "93.184.216.34", 22));
  CHECK(d->result.artifacts[0].bytes.find(";;   allow *.example.org: tcp 443") !=
        std::string::npos);
}

TEST_CASE("seatbelt: addresses SBPL cannot name are left out with a warning") {
  auto c = Seatbelt(R"(policy p { network {
    allow tcp to 10.0.0.0/8 port 5432
    allow udp to any port 53
    allow icmp to any
  } })");
  REQUIRE(c->result.ok);
  const std::string d = c->Diagnostics();
  CHECK(d.find("warning[B3002]") != std::string::npos);
  CHECK(d.find("tcp to 10.0.0.0/8 port 5432") != std::string::npos);
  CHECK(d.find("icmp to any") != std::string::npos);
  Profile p(c->result.artifacts[0].bytes);
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "10.1.2.3", 5432));
  CHECK(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kUdp, "8.8.8.8", 53));

  // A port set is listed, or its complement denied after `*:*`; when both
  // are long it is left out.
  auto most = Seatbelt(R"(policy p { network {
    allow tcp to any
    deny tcp to any port 25
    allow udp to any ports 1-20000
  } })");
  REQUIRE(most->result.ok);
  Profile q(most->result.artifacts[0].bytes);
  CHECK(NetAllowed(q, ir::Direction::kEgress, ir::Protocol::kTcp, "8.8.8.8", 80));
  CHECK(NetAllowed(q, ir::Direction::kEgress, ir::Protocol::kTcp, "::1", 65535));
  CHECK_FALSE(NetAllowed(q, ir::Direction::kEgress, ir::Protocol::kTcp, "8.8.8.8", 25));
  CHECK_FALSE(NetAllowed(q, ir::Direction::kEgress, ir::Protocol::kUdp, "8.8.8.8", 53));
  CHECK(most->Diagnostics().find("udp to any port 1-20000 (SBPL lists ports one by one") !=
        std::string::npos);
}

TEST_CASE("seatbelt: unix sockets by path, abstract ones left out") {
  auto c = Seatbelt(R"(policy p { network {
    allow unix "/var/run/app.sock", "/Users/agent/.colima/docker.sock"
    allow unix "@abstract"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  CHECK(UnixAllowed(p, "/var/run/app.sock"));
  CHECK(UnixAllowed(p, "/private/var/run/app.sock"));
  CHECK(UnixAllowed(p, "/Users/agent/.colima/docker.sock"));
  CHECK_FALSE(UnixAllowed(p, "/var/run/docker.sock"));
  CHECK(c->Diagnostics().find("@abstract") != std::string::npos);
}

TEST_CASE("seatbelt: the startup list stays narrow") {
  auto c = Seatbelt("policy p {}");
  REQUIRE(c->result.ok);
  const std::string& text = c->result.artifacts[0].bytes;
  Profile p(text);
  for (const Profile::RuleInfo& r : p.Rules()) {
    for (const std::string& op : r.operations) {
      INFO(op);
      CHECK(op != "lsopen");
      CHECK(op != "appleevent-send");
      if (r.allow && (op == "mach-lookup" || op == "mach*" || op == "sysctl-read")) {
        CHECK(r.filters > 0);
      }
      if (r.allow) CHECK(op.rfind("file", 0) != 0);  // no file grant the policy did not make
      if (r.allow) CHECK(op.rfind("network", 0) != 0);
    }
  }
  std::string lower = text;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  CHECK(lower.find("launchservices") == std::string::npos);
  CHECK(lower.find("appleevent") == std::string::npos);
  // An empty policy: nothing to read, write, run or reach.
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/etc/passwd"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kExec, "/bin/sh"));
  CHECK_FALSE(NetAllowed(p, ir::Direction::kEgress, ir::Protocol::kTcp, "127.0.0.1", 80));
  CHECK_FALSE(UnixAllowed(p, "/var/run/mDNSResponder"));
}

TEST_CASE("seatbelt: same IR, same bytes") {
  auto a = Seatbelt(R"(policy p {
  filesystem {
    allow read "/usr", "/etc", "~/src"
    deny read "/usr/*/secret", "~/.ssh"
    allow read write "/tmp"
    allow exec "/usr/bin"
  }
  network { allow tcp to any port 443, 80  allow to loopback port 53 }
})");
  auto b = Seatbelt(R"(policy p {
  network { allow to loopback port 53
    allow tcp to any port 80
    allow tcp to any port 443 }
  filesystem {
    allow exec "/usr/bin"
    allow write "/tmp"
    deny read "~/.ssh"
    allow read "/tmp", "~/src", "/etc"
    deny read "/usr/*/secret"
    allow read "/usr/"
  }
})");
  REQUIRE(a->result.ok);
  REQUIRE(b->result.ok);
  CHECK(a->result.artifacts[0].bytes == b->result.artifacts[0].bytes);
  auto again = Seatbelt(R"(policy p { filesystem { allow read "/usr" } })");
  auto again2 = Seatbelt(R"(policy p { filesystem { allow read "/usr" } })");
  CHECK(again->result.artifacts[0].bytes == again2->result.artifacts[0].bytes);
}

TEST_CASE("seatbelt: glob patterns are regexes with escaped literals") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read "/srv/x.y", "/srv/*/data", "/srv/**/logs", "/srv/a*b"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/x.y/z"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/srv/xzy"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/app/data/f"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/srv/app/x/data"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/logs"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/a/b/c/logs/today"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/ab"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/srv/axxb/f"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/srv/axxc"));
}

// ---- differential: filesystem ---------------------------------------------

TEST_CASE("seatbelt property: file decisions of the profile equal the IR's") {
  const uint32_t seed = Seed();
  std::mt19937 rng(seed);
  std::cout << "seatbelt filesystem property: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const char* kLiterals[] = {"a", "b", "c", "tmp", "var", "etc", "Users", "agent", "x.y"};
  static const char* kGlobs[] = {"*", "**", "b*", "*c", "x*y"};
  static const char* kAliasRoots[] = {"tmp", "var", "etc"};
  static const char* kPathParts[] = {"a",     "b",     "c",   "tmp", "var", "etc",
                                     "Users", "agent", "x.y", "xzy", "bc",  "ab"};
  static const char* kRights[] = {"read",       "write",     "exec",
                                  "read write", "read exec", "read write exec"};
  const std::optional<std::string> home = kHome;
  int policies = std::getenv("WARD_PROPERTY_POLICIES")
                     ? std::atoi(std::getenv("WARD_PROPERTY_POLICIES"))
                     : Rounds(300);
  size_t queries = 0, allowed = 0;
  for (int round = 0; round < policies; ++round) {
    std::string rules;
    for (int i = 1 + pick(8); i > 0; --i) {
      std::string pattern = pick(5) == 0 ? "~" : "";
      const int n = 1 + pick(3);
      std::string prev;
      for (int k = 0; k < n; ++k) {
        std::string comp;
        if (k == 0 && pattern.empty() && pick(3) == 0) {
          comp = kAliasRoots[pick(3)];
        } else if (pick(10) < 3) {
          comp = kGlobs[pick(5)];
          if (comp == "**" && prev == "**") comp = "*";
        } else {
          comp = kLiterals[pick(9)];
        }
        pattern += "/" + comp;
        prev = comp;
      }
      rules += std::string("    ") + (pick(3) ? "allow " : "deny ") + kRights[pick(6)] + " \"" +
               pattern + "\"\n";
    }
    const std::string text = "policy p {\n  filesystem {\n" + rules + "  }\n}\n";
    INFO(text);
    // --partial: a `**` deny whose directories could be renamed out of it is
    // otherwise refused; the rename guard changes no decision checked here.
    auto c = Seatbelt(text, kHome, {}, true);
    REQUIRE(c->result.ok);
    INFO(c->result.artifacts[0].bytes);
    Profile p(c->result.artifacts[0].bytes);
    for (int q = 0; q < 60; ++q) {
      std::string path = pick(4) == 0 ? kHome : "";
      if (path.empty() && pick(3) == 0) path = std::string("/") + kAliasRoots[pick(3)];
      for (int k = pick(4); k >= 0; --k) path += std::string("/") + kPathParts[pick(12)];
      for (ir::FsRight right : ir::kFsRights) {
        INFO("path " << path << " " << Operation(right));
        const bool want = c->ir.filesystem.Decide(path, right, home).allow;
        REQUIRE(FileAllowed(p, right, path) == want);
        if (UnderAlias(path)) REQUIRE(FileAllowed(p, right, "/private" + path) == want);
        ++queries;
        allowed += want;
      }
    }
  }
  std::cout << "  " << policies << " policies, " << queries << " queries, " << allowed
            << " allowed\n";
  CHECK(allowed > queries / 20);  // the generator reaches both answers
  CHECK(allowed < queries);
}

// ---- differential: network -------------------------------------------------

TEST_CASE("seatbelt property: network decisions never wider, exact where SBPL can say it") {
  const uint32_t seed = Seed();
  std::mt19937 rng(seed);
  std::cout << "seatbelt network property: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const char* kPeers[] = {"any",       "loopback",    "10.0.0.0/8",  "10.1.2.3",
                                 "127.0.0.1", "::1",         "fd00::/8",    "0.0.0.0/0",
                                 "::/0",      "127.0.0.0/8", "192.0.2.0/24"};
  static const char* kPorts[] = {"22", "53", "443", "8000-8002", "1-65535", "1-1023"};
  static const char* kAddresses[] = {"1.2.3.4",   "10.0.0.1", "10.1.2.3",       "127.0.0.1",
                                     "127.9.9.9", "::1",      "fd00::1",        "2001:db8::1",
                                     "192.0.2.7", "0.0.0.1",  "255.255.255.255"};
  static const uint16_t kQueryPorts[] = {1, 22, 53, 443, 8000, 8001, 8002, 8003, 1023, 1024, 65535};
  int policies = std::getenv("WARD_PROPERTY_POLICIES")
                     ? std::atoi(std::getenv("WARD_PROPERTY_POLICIES"))
                     : Rounds(300);
  size_t queries = 0, allowed = 0, exact = 0;
  for (int round = 0; round < policies; ++round) {
    std::string rules;
    for (int i = 1 + pick(6); i > 0; --i) {
      const bool allow = pick(3) != 0;
      const bool ingress = pick(4) == 0;
      const int proto = pick(4);
      rules += allow ? "    allow" : "    deny";
      if (ingress) rules += " ingress";
      rules += proto == 0 ? " tcp" : proto == 1 ? " udp" : proto == 2 ? "" : " icmp";
      rules += std::string(ingress ? " from " : " to ") + kPeers[pick(11)];
      if (proto != 3 && pick(3) != 0) rules += std::string(" port ") + kPorts[pick(6)];
      rules += "\n";
    }
    const std::string text = "policy p {\n  network {\n" + rules + "  }\n}\n";
    INFO(text);
    auto c = Seatbelt(text);
    REQUIRE(c->result.ok);
    INFO(c->result.artifacts[0].bytes);
    Profile p(c->result.artifacts[0].bytes);
    const ir::NetRules& net = c->ir.network;
    bool lost = false;
    for (ir::Direction dir : {ir::Direction::kEgress, ir::Direction::kIngress}) {
      const ir::Partition& part = dir == ir::Direction::kEgress ? net.egress : net.ingress;
      for (ir::Protocol proto : {ir::Protocol::kTcp, ir::Protocol::kUdp}) {
        for (uint16_t port : kQueryPorts) {
          // What SBPL can say: the port to every address (one address per
          // piece of the partition stands for it), or, egress, to every
          // loopback address.
          bool everywhere = true, loopback = true;
          for (const auto& piece : part.v4) {
            const bool ok = net.Decide(dir, proto, Ip(ir::FormatV4(piece.range.lo)), port);
            everywhere = everywhere && ok;
            if (piece.range.hi >= 0x7f000000u && piece.range.lo <= 0x7fffffffu) {
              loopback = loopback && ok;
            }
          }
          for (const auto& piece : part.v6) {
            if (ir::IsMapped(piece.range.lo)) continue;
            everywhere =
                everywhere && net.Decide(dir, proto, Ip(ir::FormatV6(piece.range.lo)), port);
          }
          loopback = loopback && net.Decide(dir, proto, Ip("::1"), port);
          for (const char* addr : kAddresses) {
            INFO(ir::ProtocolName(proto) << " " << addr << " port " << port << " ingress "
                                         << (dir == ir::Direction::kIngress));
            const bool ir_allows = net.Decide(dir, proto, Ip(addr), port);
            const bool sb_allows = NetAllowed(p, dir, proto, addr, port);
            REQUIRE((!sb_allows || ir_allows));  // never wider
            const bool is_loopback =
                std::string(addr).rfind("127.", 0) == 0 || std::string(addr) == "::1";
            const bool expressible =
                everywhere || (dir == ir::Direction::kEgress && is_loopback && loopback);
            REQUIRE(sb_allows == (ir_allows && expressible));
            lost = lost || (ir_allows && !sb_allows);
            ++queries;
            allowed += ir_allows;
            exact += sb_allows;
          }
        }
      }
    }
    // Whatever is left out is said.
    if (lost) REQUIRE(c->Diagnostics().find("warning[B3002]") != std::string::npos);
  }
  std::cout << "  " << policies << " policies, " << queries << " queries, " << allowed
            << " allowed by the IR, " << exact << " by the profile\n";
  CHECK(exact > 0);
  CHECK(exact < allowed);  // the generator reaches what SBPL cannot say
}

}  // namespace
}  // namespace ward::test
