// Every lint rule: a policy that triggers it (the exact id, position and
// message) and a near miss that must not. Plus suppression comments and the
// configuration.
#include <catch2/catch.hpp>
#include <iostream>
#include <set>

#include "compiler/lint/lint.h"
#include "tests/language/frontend_fixture.h"

using namespace ward;

namespace {

// "ID line:col message" for each finding, suppressed ones marked.
std::vector<std::string> LintSource(const std::string& source, lint::Options options = {}) {
  auto r = test::CheckSource(source);
  INFO(r->text);
  REQUIRE(!r->sink.has_errors());
  std::vector<lint::Finding> findings = lint::Lint(r->program, r->sources, options, r->sink);
  std::vector<std::string> out;
  for (const lint::Finding& f : findings) {
    Location loc = r->sources.LocationOf(f.span.file, f.span.begin);
    out.push_back(std::string(f.rule->id) + " " + std::to_string(loc.line) + ":" +
                  std::to_string(loc.column) + " " + f.message +
                  (f.suppressed ? " [suppressed: " + f.suppression_reason + "]" : ""));
  }
  return out;
}

std::vector<std::string> Only(const std::vector<std::string>& all, const std::string& id) {
  std::vector<std::string> out;
  for (const std::string& s : all) {
    if (s.rfind(id + " ", 0) == 0) out.push_back(s);
  }
  return out;
}

struct Case {
  const char* id;
  const char* trigger;
  const char* expected;  // the first finding of `id`
  const char* near_miss;
};

const Case kCases[] = {
    {"L2101", "policy p {\n  syscalls {\n    arch x86_64\n    default allow\n  }\n}\n",
     "L2101 4:5 the default action is allow: every syscall no rule names runs, including ones "
     "added later",
     "policy p {\n  syscalls {\n    arch x86_64\n    default errno EPERM\n    allow read\n  "
     "}\n}\n"},
    {"L2102", "policy p {\n  syscalls {\n    allow read\n  }\n}\n",
     "L2102 2:3 policy 'p' does not pin its architectures: the filter is x86_64 only and kills "
     "everything on any other architecture",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow read\n  }\n}\n"},
    {"L2103", "policy p {\n  syscalls {\n    arch x86_64\n    allow io_uring_setup\n  }\n}\n",
     "L2103 4:5 io_uring_setup is allowed (on x86_64): io_uring runs file and network operations "
     "that no syscall filter sees",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow @system-service\n  }\n}\n"},
    {"L2104",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow clone, clone3\n    errno EPERM clone if "
     "arg0 & CLONE_NEWUSER == CLONE_NEWUSER\n  }\n}\n",
     "L2104 4:5 clone3 is allowed while clone's flags are filtered (on x86_64): clone3 creates "
     "what the clone filter refuses",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow clone\n    errno EPERM clone if arg0 & "
     "CLONE_NEWUSER == CLONE_NEWUSER\n    errno ENOSYS clone3\n  }\n}\n"},
    {"L2105",
     "policy p {\n  syscalls {\n    arch x86\n    allow socketcall, socket\n    errno EAFNOSUPPORT "
     "socket if arg0 not in [AF_UNIX, AF_INET]\n  }\n}\n",
     "L2105 4:5 socketcall is allowed (on x86) while calls it reaches are filtered: through it "
     "they run unfiltered",
     "policy p {\n  syscalls {\n    arch x86\n    allow socket\n    errno EAFNOSUPPORT socket if "
     "arg0 not in [AF_UNIX, AF_INET]\n  }\n}\n"},
    {"L2106", "policy p {\n  syscalls {\n    arch x86_64\n    allow ptrace\n  }\n}\n",
     "L2106 4:5 ptrace is allowed: it breaks out of, or see through, the sandbox",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow personality if arg0 == 0xffffffff\n  "
     "}\n}\n"},
    {"L2107",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow socket\n    allow socket if arg0 == "
     "AF_UNIX\n  }\n}\n",
     "L2107 5:21 the condition on allow socket limits nothing: an unconditional allow of socket "
     "admits every call",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow socket if arg0 == AF_UNIX\n  }\n}\n"},
    {"L2108",
     "policy p {\n  syscalls {\n    arch x86_64\n    default errno EPERM\n    kill socket\n    "
     "allow socket if arg0 == AF_UNIX\n  }\n}\n",
     "L2108 6:5 this rule decides no call on any architecture: other rules take every call it "
     "names",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow socket\n    kill socket if arg0 == "
     "AF_PACKET\n  }\n}\n"},
    {"L2109", "policy p {\n  network {\n    allow tcp to 10.0.0.1 port 443\n  }\n}\n",
     "L2109 1:8 policy 'p' has no syscalls section: every syscall would be killed; extend "
     "linux-base",
     "import \"std/linux.ward\"\npolicy p extends linux-base {\n  network {\n    allow tcp to "
     "10.0.0.1 port 443\n  }\n}\n"},
    {"L2201", "policy p {\n  network {\n    allow tcp to \"example.com\" port 443\n  }\n}\n",
     "L2201 3:18 'example.com' is allowed by name, but no DNS egress (port 53) is: the name cannot "
     "resolve",
     "policy p {\n  network {\n    allow tcp to \"example.com\" port 443\n    allow udp to "
     "10.0.0.53 port 53\n  }\n}\n"},
    {"L2202", "policy p {\n  network {\n    allow udp to 0.0.0.0/0 port 53\n  }\n}\n",
     "L2202 3:18 DNS (port 53) is allowed to public addresses such as 0.0.0.0: any resolver "
     "answers any name, a channel out of the sandbox",
     "policy p {\n  network {\n    allow udp to 10.0.0.53 port 53\n  }\n}\n"},
    {"L2203",
     "policy p {\n  network {\n    allow tcp to \"Example.COM\" port 443\n    allow udp to "
     "loopback port 53\n  }\n}\n",
     "L2203 3:18 'Example.COM' is matched as 'example.com'",
     "policy p {\n  network {\n    allow tcp to \"example.com\" port 443\n    allow udp to "
     "loopback port 53\n  }\n}\n"},
    {"L2204",
     "policy p {\n  network {\n    allow tcp to \"*.example.com\" port 443\n    allow udp to "
     "loopback port 53\n  }\n}\n",
     "L2204 3:18 '*.example.com' matches subdomains only, not 'example.com' itself, which no rule "
     "allows",
     "policy p {\n  network {\n    allow tcp to \"example.com\", \"*.example.com\" port 443\n    "
     "allow udp to loopback port 53\n  }\n}\n"},
    {"L2205", "policy p {\n  network {\n    allow tcp to any port 443\n  }\n}\n",
     "L2205 3:18 egress to any reaches every host in it, and any exfiltration sink",
     "policy p {\n  network {\n    allow tcp to 10.0.0.0/8 port 443\n  }\n}\n"},
    {"L2206",
     "policy p {\n  network {\n    allow tcp to \"raw.githubusercontent.com\" port 443\n    allow "
     "udp to loopback port 53\n  }\n}\n",
     "L2206 3:18 'raw.githubusercontent.com' reaches raw.githubusercontent.com, a shared-tenant "
     "domain where anyone can publish or receive data",
     "policy p {\n  network {\n    allow tcp to \"api.github.com\" port 443\n    allow udp to "
     "loopback port 53\n  }\n}\n"},
    {"L2207", "policy p {\n  network {\n    allow tcp to any port 80\n  }\n}\n",
     "L2207 3:18 the cloud metadata service 169.254.169.254 is reachable: this allow covers it and "
     "no deny refuses it",
     "policy p {\n  network {\n    allow tcp to any port 80\n    deny to 169.254.169.254, "
     "fd00:ec2::254\n  }\n}\n"},
    {"L2208",
     "policy p {\n  network {\n    allow tcp to any port 80\n    deny to 169.254.169.254, "
     "fd00:ec2::254\n  }\n}\n",
     "L2208 3:18 the link-local range 169.254.0.0/16 is reachable: this allow covers it and no "
     "deny refuses it",
     "policy p {\n  network {\n    allow tcp to any port 80\n    deny to 169.254.0.0/16, "
     "fe80::/10, fd00:ec2::254\n  }\n}\n"},
    {"L2209",
     "policy p {\n  process {\n    no_new_privileges\n    capabilities keep [CAP_NET_RAW]\n  }\n  "
     "syscalls {\n    arch x86_64\n    allow socket\n  }\n}\n",
     "L2209 4:24 CAP_NET_RAW is kept and socket() allows AF_PACKET: raw and packet sockets bypass "
     "every address and port rule",
     "policy p {\n  process {\n    no_new_privileges\n    capabilities keep "
     "[CAP_NET_BIND_SERVICE]\n  }\n  syscalls {\n    arch x86_64\n    allow socket\n  }\n}\n"},
    {"L2210", "policy p {\n  network {\n    allow unix \"/var/run/docker.sock\"\n  }\n}\n",
     "L2210 3:5 '/var/run/docker.sock' is the socket of the Docker daemon: whoever connects "
     "controls it, and through it the host",
     "policy p {\n  network {\n    allow unix \"/run/app.sock\"\n  }\n}\n"},
    {"L2211",
     "policy p {\n  network {\n    allow tcp to 10.0.0.0/8 port 443\n    deny to "
     "\"evil.example.com\"\n  }\n}\n",
     "L2211 4:13 the deny of 'evil.example.com' cannot be enforced by address: the name's other "
     "addresses get through",
     "policy p {\n  network {\n    allow tcp to 10.0.0.0/8 port 443\n    deny to 10.0.0.7\n  "
     "}\n}\n"},
    {"L2212", "policy p {\n  syscalls {\n    arch x86_64\n    allow socket\n  }\n}\n",
     "L2212 4:5 socket() allows AF_VSOCK, AF_TIPC, AF_RDS and 13 more (on x86_64): families "
     "outside IP and unix reach peers no network rule decides",
     "policy p {\n  syscalls {\n    arch x86_64\n    allow socket\n    errno EAFNOSUPPORT socket "
     "if arg0 not in [AF_UNIX, AF_INET, AF_INET6]\n  }\n}\n"},
    {"L2213", "policy p {\n  filesystem {\n    allow read \"/proc\"\n  }\n}\n",
     "L2213 3:5 '/proc' lets the workload read /proc/net: under ward run it lists this host's "
     "sockets (tcp, udp, unix), interfaces (dev) and routes (route)",
     "policy p {\n  filesystem {\n    allow read \"/proc/cpuinfo\", \"/proc/meminfo\"\n  "
     "}\n}\n"},
    {"L2214",
     "policy p {\n  network {\n    allow netlink route\n  }\n  syscalls {\n    default allow\n"
     "    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]\n  }\n}\n",
     "L2214 3:5 socket() refuses AF_NETLINK (on x86_64): the grant opens the interface ioctls "
     "only; getifaddrs and if_nameindex still fail",
     "policy p {\n  network {\n    allow netlink route\n  }\n  syscalls {\n    default allow\n"
     "    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6, AF_NETLINK]\n  "
     "}\n}\n"},
    {"L2301", "policy p {\n  filesystem {\n    allow read write \"/home/user\"\n  }\n}\n",
     "L2301 3:22 write access to '/home/user/.claude' (the agent's own settings) "
     "persists beyond the sandbox and runs later outside it",
     "policy p {\n  filesystem {\n    allow read write \"/tmp\"\n  }\n}\n"},
    {"L2302", "policy p {\n  filesystem {\n    allow read \"/home\"\n  }\n}\n",
     "L2302 3:16 '~/.aws' is readable through the broader grant '/home'",
     "policy p {\n  filesystem {\n    allow read \"~/.ssh/known_hosts\"\n  }\n}\n"},
    {"L2303",
     "abstract policy b {\n  filesystem {\n    deny read \"/srv/secret\"\n  }\n}\npolicy p extends "
     "b {\n  filesystem {\n    allow read \"/srv/secret/public\"\n  }\n}\n",
     "L2303 8:16 allow read '/srv/secret/public' opens part of the deny of '/srv/secret' in base "
     "'b'",
     "abstract policy b {\n  filesystem {\n    deny read \"/srv/secret\"\n  }\n}\npolicy p extends "
     "b {\n  filesystem {\n    allow read \"/srv/other\"\n  }\n}\n"},
    {"L2304",
     "policy p {\n  filesystem {\n    allow read \"/srv\"\n    deny read \"/srv/secret\"\n  }\n}\n",
     "L2304 4:15 deny read '/srv/secret' inside allow '/srv': Landlock can only approximate it (it "
     "grants what lies beside the denied path, as it exists when applied, and nothing created "
     "later next to it)",
     "policy p {\n  filesystem {\n    allow read \"/srv\"\n    deny read \"/opt\"\n  }\n}\n"},
    {"L2401",
     "policy p {\n  process {\n    no_new_privileges\n    capabilities keep [CAP_SYS_ADMIN]\n  "
     "}\n}\n",
     "L2401 4:24 CAP_SYS_ADMIN is kept: it amounts to root on the host or in its namespace",
     "policy p {\n  process {\n    no_new_privileges\n    capabilities keep "
     "[CAP_NET_BIND_SERVICE]\n  }\n}\n"},
    {"L2402", "policy p {\n  process {\n    capabilities drop all\n  }\n}\n",
     "L2402 2:3 no_new_privileges is not set: a setuid or file-capability binary regains "
     "privileges",
     "policy p {\n  process {\n    no_new_privileges\n    capabilities drop all\n  }\n}\n"},
    {"L2403",
     "abstract policy b {\n  limits {\n    memory 1GiB\n  }\n}\npolicy p extends b {\n  limits {\n "
     "   memory 2GiB\n  }\n}\n",
     "L2403 8:12 memory 2GiB raises the limit of 1GiB set by 'b'",
     "abstract policy b {\n  limits {\n    memory 1GiB\n  }\n}\npolicy p extends b {\n  limits {\n "
     "   memory 512MiB\n  }\n}\n"},
    {"L2404", "policy p {\n  limits {\n    memory 4G\n  }\n}\n",
     "L2404 3:12 memory 4G is 4000000000 bytes (decimal units); Docker reads 4G as 4GiB",
     "policy p {\n  limits {\n    memory 4GiB\n  }\n}\n"},
    {"L2501", "let unused = \"/x\"\npolicy p {\n}\n", "L2501 1:5 let 'unused' is never used",
     "let used = \"/x\"\npolicy p {\n  filesystem {\n    allow read used\n  }\n}\n"},
    {"L2502", "group @mine = [read]\npolicy p {\n}\n", "L2502 1:7 group @mine is never used",
     "group @mine = [read]\npolicy p {\n  syscalls {\n    allow @mine\n  }\n}\n"},
    {"L2503",
     "policy p {\n  filesystem {\n    allow read \"/usr\"\n    allow read \"/usr/lib\"\n  }\n}\n",
     "L2503 4:16 allow of '/usr/lib' changes nothing: '/usr' already decides it",
     "policy p {\n  filesystem {\n    allow read \"/usr\"\n    allow write \"/usr/lib\"\n  }\n}\n"},
    {"L2504",
     "abstract policy b {\n  filesystem {\n    allow read \"/usr\"\n  }\n}\npolicy p extends b {\n "
     " filesystem {\n    allow read \"/usr\"\n  }\n}\n",
     "L2504 8:16 allow of '/usr' repeats the rule of base 'b'",
     "abstract policy b {\n  filesystem {\n    allow read \"/usr\"\n  }\n}\npolicy p extends b {\n "
     " filesystem {\n    allow read \"/opt\"\n  }\n}\n"},
    {"L2505", "policy p {\n  syscalls {\n    // ward:allow L2101\n    default allow\n  }\n}\n",
     "L2505 3:8 the suppression of L2101 gives no reason",
     "policy p {\n  syscalls {\n    // ward:allow L2101 a legacy workload\n    default allow\n  "
     "}\n}\n"},
    {"L2506", "// ward:allow L2999 because\npolicy p {\n}\n",
     "L2506 1:4 'L2999' is not a lint rule",
     "// ward:allow L2102 a default-architecture policy\npolicy p {\n}\n"},
};

}  // namespace

TEST_CASE("every rule has a case, and every case names a rule") {
  std::set<std::string> covered;
  for (const Case& c : kCases) {
    CHECK(lint::FindRule(c.id) != nullptr);
    covered.insert(c.id);
  }
  for (const lint::RuleInfo& r : lint::AllRules()) {
    INFO(r.id);
    CHECK(covered.count(std::string(r.id)) == 1);
  }
}

TEST_CASE("each rule triggers with the exact position and message, and not on its near miss") {
  for (const Case& c : kCases) {
    INFO(c.id << "\n" << c.trigger);
    std::vector<std::string> hits = Only(LintSource(c.trigger), c.id);
    CHECK(!hits.empty());
    CHECK((hits.empty() ? "" : hits.front()) == c.expected);
    INFO("near miss:\n" << c.near_miss);
    std::vector<std::string> miss = Only(LintSource(c.near_miss), c.id);
    CHECK(miss.empty());
  }
}

// Not run by default: prints every finding of every case (to review or to
// update the expectations): `compiler_lint_test "[.dump]"`.
TEST_CASE("L2207/L2208: metadata reachable on any port or protocol counts, not only port 80") {
  const std::string tcp443 = "policy p {\n  network {\n    allow tcp to any port 443\n  }\n}\n";
  CHECK(
      Only(LintSource(tcp443), "L2207") ==
      std::vector<std::string>{
          "L2207 3:18 the cloud metadata service 169.254.169.254 is reachable: this allow covers "
          "it and no deny refuses it",
          "L2207 3:18 the cloud metadata service fd00:ec2::254 is reachable: this allow covers it "
          "and no deny refuses it"});
  const std::string udp =
      "policy p {\n  network {\n    allow udp to 169.254.0.0/16 port 5000\n  }\n}\n";
  CHECK(Only(LintSource(udp), "L2207").size() == 1);
  CHECK(Only(LintSource(udp), "L2208").size() == 1);
  const std::string icmp = "policy p {\n  network {\n    allow icmp to fd00:ec2::/64\n  }\n}\n";
  CHECK(Only(LintSource(icmp), "L2207").size() == 1);
  // Near miss: the metadata service denied, the rest of the allow kept.
  CHECK(Only(LintSource("policy p {\n  network {\n    allow tcp to any port 443\n    deny to "
                        "169.254.169.254, fd00:ec2::254\n  }\n}\n"),
             "L2207")
            .empty());
}

TEST_CASE("L2503/L2504: a netlink grant given twice, in the policy or across a base") {
  CHECK(Only(LintSource("policy p {\n  network {\n    allow netlink route\n    allow netlink "
                        "route\n  }\n}\n"),
             "L2503") ==
        std::vector<std::string>{"L2503 4:5 allow of netlink route is given twice in this policy"});
  CHECK(Only(LintSource("abstract policy b {\n  network {\n    allow netlink route\n  }\n}\n"
                        "policy p extends b {\n  network {\n    allow netlink route\n  }\n}\n"),
             "L2504") ==
        std::vector<std::string>{"L2504 8:5 allow of netlink route repeats the rule of base 'b'"});
  // Near miss: an allow and a deny are two rules, not a repeat.
  CHECK(Only(LintSource("policy p {\n  network {\n    allow netlink route\n    deny netlink "
                        "route\n  }\n}\n"),
             "L2503")
            .empty());
}

TEST_CASE("dump", "[.dump]") {
  for (const Case& c : kCases) {
    std::cout << "== " << c.id << " trigger\n";
    for (const std::string& s : LintSource(c.trigger)) std::cout << s << "\n";
    std::cout << "== " << c.id << " near miss\n";
    for (const std::string& s : LintSource(c.near_miss)) std::cout << s << "\n";
  }
}
