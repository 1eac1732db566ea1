// `ward ir` and `ward explain` as a user runs them: exact output, exit codes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_ward.h"

using namespace ward::test;

namespace {

const char* kPolicy = R"(let home_secrets = ["~/.ssh", "~/.aws"]

policy agent {
  filesystem {
    allow read write "/workspace"
    allow read "~"
    deny read home_secrets
  }
  network {
    allow tcp to "registry.npmjs.org", "*.github.com" port 443
    allow to loopback port 53
    allow tcp to 10.20.0.0/16 ports 5432, 8000-8100
    deny to 169.254.169.254
    deny tcp to 10.20.99.0/24
    allow ingress tcp from 10.1.0.0/16 port 8080
    allow unix "/run/app.sock"
  }
}
)";

std::string PolicyFile() { return WriteTemp("agent.ward", kPolicy); }

}  // namespace

TEST_CASE("explain --connect: allowed by an address rule, with the rule's location") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.1.5:5432", kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "allow egress tcp to 10.20.1.5 port 5432\n  " + p +
                     ":12:5: allow tcp to 10.20.0.0/16 ports 5432, 8000-8100\n");
}

TEST_CASE("explain --connect: a deny carved out of the allow names the deny") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.99.7:8050 --fail-on deny", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.out ==
        "deny egress tcp to 10.20.99.7 port 8050\n  " + p + ":14:5: deny tcp to 10.20.99.0/24\n");
}

TEST_CASE("explain --connect: nothing matched is a deny by default") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect [2001:db8::1]:443", kStdEnv);
  CHECK(r.status == 0);
  // The nearest rule (issue 22): an allow for the port, to other hosts.
  CHECK(r.out ==
        "deny egress tcp to 2001:db8::1 port 443\n  no rule matched: denied by default\n"
        "  nearest rule: " +
            p +
            ":10:5: allow tcp to \"registry.npmjs.org\", \"*.github.com\" port 443 "
            "(does not match: matches the port, not the host)\n");
}

TEST_CASE("explain --connect: names, --resolve, and the metadata address") {
  std::string p = PolicyFile();
  Run name = Ward("explain " + p + " --connect api.github.com:443", kStdEnv);
  CHECK(name.out == "allow egress tcp to api.github.com port 443\n  " + p +
                        ":10:5: allow tcp to \"registry.npmjs.org\", \"*.github.com\" port "
                        "443\n  note: 'api.github.com' was not resolved: only domain rules were "
                        "consulted (give --resolve api.github.com=IP to add the address rules)\n");
  Run apex = Ward("explain " + p + " --connect github.com:443", kStdEnv);
  CHECK(apex.out.rfind("deny egress tcp to github.com port 443\n", 0) == 0);
  Run metadata = Ward(
      "explain " + p + " --connect api.github.com:443 --resolve api.github.com=169.254.169.254",
      kStdEnv);
  // With --resolve the answer goes on per enforcer (the next test case);
  // every one of them denies here.
  CHECK(metadata.out.rfind("deny egress tcp to api.github.com (169.254.169.254) port 443\n  " + p +
                               ":13:5: deny to 169.254.169.254\n  per enforcer:\n",
                           0) == 0);
  CHECK(metadata.out.find(": allow:") == std::string::npos);
  Run mapped = Ward("explain " + p + " --connect [::ffff:169.254.169.254]:80", kStdEnv);
  CHECK(mapped.out.rfind("deny egress tcp to ::ffff:169.254.169.254 port 80\n", 0) == 0);
}

TEST_CASE("explain --listen --from, --unix, --connect/icmp") {
  std::string p = PolicyFile();
  CHECK(Ward("explain " + p + " --listen 8080 --from 10.1.2.3", kStdEnv).out ==
        "allow ingress tcp from 10.1.2.3 port 8080\n  " + p +
            ":15:5: allow ingress tcp from 10.1.0.0/16 port 8080\n");
  CHECK(Ward("explain " + p + " --listen 8080/udp --from 10.1.2.3", kStdEnv)
            .out.rfind("deny ingress udp", 0) == 0);
  CHECK(Ward("explain " + p + " --unix /run/app.sock", kStdEnv).out ==
        "allow connect unix /run/app.sock\n  " + p + ":16:5: allow unix \"/run/app.sock\"\n");
  CHECK(
      Ward("explain " + p + " --connect 127.0.0.1/icmp", kStdEnv).out ==
      "deny egress icmp to 127.0.0.1\n  no rule matched: denied by default\n  nearest rule: " + p +
          ":11:5: allow to loopback port 53 (does not match: matches the host, not the "
          "protocol: it allows tcp 53, udp 53)\n");
}

TEST_CASE("explain --netlink: route as the policy grants it, the other protocols never") {
  const std::string granted = WriteTemp("nl.ward", R"(policy nl {
  network {
    allow netlink route
  }
}
)");
  CHECK(Ward("explain " + granted + " --netlink route", kStdEnv).out ==
        "allow netlink route\n  " + granted +
            ":3:5: allow netlink route\n  note: the workload reads this host's interfaces, "
            "addresses and routes (NETLINK_ROUTE, SIOCGIF* ioctls)\n");
  const std::string p = PolicyFile();  // no netlink rule
  Run none = Ward("explain " + p + " --netlink route --fail-on deny", kStdEnv);
  CHECK(none.status == 1);
  CHECK(none.out ==
        "deny netlink route\n  no rule matched: denied by default\n  note: getifaddrs and "
        "if_nameindex fail; getaddrinfo still resolves\n");
  CHECK(Ward("explain " + granted + " --netlink sock_diag", kStdEnv).out ==
        "deny netlink sock_diag\n  no rule matched: denied by default\n  note: no rule grants "
        "it: ward run refuses every netlink protocol but route\n");
  Run unknown = Ward("explain " + granted + " --netlink nosuch", kStdEnv);
  CHECK(unknown.status == 2);
  CHECK(unknown.err ==
        "ward explain: unknown netlink protocol 'nosuch' (route, sock_diag, generic, ...)\n");
}

TEST_CASE("explain --path: most specific wins; ~ needs --home") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --path /home/u/.ssh/id --access read --home /home/u", kStdEnv);
  CHECK(r.out == "deny read /home/u/.ssh/id\n  " + p +
                     ":7:5: deny read home_secrets\n  note: most specific pattern: ~/.ssh\n");
  Run no_home = Ward("explain " + p + " --path /workspace/a --access write", kStdEnv);
  CHECK(no_home.status == 2);
  CHECK(no_home.err == "ward explain: the policy has rules under ~: give --home DIR\n");
}

TEST_CASE("explain --path: '..' is refused, '.', '//' and a trailing '/' are normalised") {
  // Issue 19 item 7: "/workspace/../etc/shadow" answered allow although the
  // kernel (after following a /workspace symlink) may reach another file.
  std::string p = WriteTemp("dots.ward", R"(policy p {
  filesystem {
    allow read "/workspace"
    allow read "/etc"
    deny read "/etc/shadow"
  }
}
)");
  Run dots = Ward("explain " + p + " --path /workspace/../etc/shadow --access read", kStdEnv);
  CHECK(dots.status == 2);
  CHECK(dots.out.empty());
  CHECK(dots.err ==
        "ward explain: invalid path \"/workspace/../etc/shadow\": '..' components are not "
        "allowed\n  = hint: the kernel resolves '..' after following symlinks, which explain "
        "cannot see: give the path without '..' (realpath(1) on the host the policy runs on)\n");
  CHECK(
      Ward("explain " + p + " --path /workspace/.. --access read --format json", kStdEnv).status ==
      2);
  CHECK(Ward("explain " + p + " --path workspace/a --access read", kStdEnv).status == 2);
  // Positive controls: the same files without '..' are decided, and the
  // answer names the path decided.
  Run shadow = Ward("explain " + p + " --path /etc/shadow --access read", kStdEnv);
  CHECK(shadow.status == 0);
  CHECK(shadow.out == "deny read /etc/shadow\n  " + p +
                          ":5:5: deny read \"/etc/shadow\"\n  note: most specific pattern: "
                          "/etc/shadow\n");
  Run messy = Ward("explain " + p + " --path //workspace/./src//a.c/ --access read", kStdEnv);
  CHECK(messy.status == 0);
  CHECK(messy.out == "allow read /workspace/src/a.c\n  " + p +
                         ":3:5: allow read \"/workspace\"\n  note: decided for /workspace/src/a.c "
                         "(given as //workspace/./src//a.c/)\n  note: most specific pattern: "
                         "/workspace\n");
  Run json = Ward("explain " + p + " --path /etc/./shadow/ --access read --format json", kStdEnv);
  CHECK(json.status == 0);
  CHECK(json.out.find("\"query\": \"read /etc/shadow\",\n  \"path\": \"/etc/shadow\",") !=
        std::string::npos);
  CHECK(json.out.find("\"decision\": \"deny\"") != std::string::npos);
  CHECK(Ward("explain " + p + " --path / --access read", kStdEnv).out ==
        "deny read /\n  no rule matched: denied by default\n");
}

namespace {

const char* kNamesPolicy = R"(policy p {
  network {
    allow tcp to "registry.npmjs.org" port 443
    allow tcp to "*.github.com" port 443
    allow tcp to 10.20.0.0/16 port 5432
    deny to 169.254.169.254
  }
}
)";

}  // namespace

TEST_CASE(
    "explain --connect IP --resolve: what each enforcer decides for a granted name's address") {
  // Issue 19 item 10: the address rules deny 104.16.0.1, but the address
  // enforcers put registry.npmjs.org's answers in their sets and allow it.
  std::string p = WriteTemp("names.ward", kNamesPolicy);
  Run r = Ward("explain " + p + " --connect 104.16.0.1:443 --resolve registry.npmjs.org=104.16.0.1",
               kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out ==
        "deny egress tcp to 104.16.0.1 port 443\n"
        "  no rule matched: denied by default\n"
        "  note: the address rules deny it, but a granted name resolves here: enforcers decide "
        "otherwise (below)\n"
        "  per enforcer:\n"
        "    nftables, ebpf, firecracker (addresses from DNS answers): allow: registry.npmjs.org "
        "resolves here and its grant allows tcp 443: the address is in the domain sets, for any "
        "connection to it\n"
        "    cilium (toFQDNs, after the pod looked the name up): allow: registry.npmjs.org was "
        "looked up and resolved here: its grant allows tcp 443\n"
        "    landlock (TCP ports only): port granted under ward run, deny alone: tcp 443 is "
        "allowed to some destinations only: ward run grants the port and its eBPF layer (above) "
        "decides the address; a Landlock ruleset alone denies it\n"
        "    kubernetes (NetworkPolicy: addresses only): deny: no address rule allows it (domain "
        "grants are left out)\n"
        "    name-aware (seatbelt's filtering proxy, TLS SNI): deny: for a connection naming no "
        "granted host (by address); allow for one that names registry.npmjs.org\n");
  Run json = Ward("explain " + p +
                      " --connect 104.16.0.1:443 --resolve registry.npmjs.org=104.16.0.1 "
                      "--format json",
                  kStdEnv);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["decision"] == "deny");
  REQUIRE(j["enforcers"].size() == 5);
  CHECK(j["enforcers"][0]["enforcers"] ==
        "nftables, ebpf, firecracker (addresses from DNS answers)");
  CHECK(j["enforcers"][0]["decision"] == "allow");
  CHECK(j["enforcers"][1]["decision"] == "allow");
  CHECK(j["enforcers"][3]["decision"] == "deny");
  CHECK(j["enforcers"][4]["decision"] == "deny");

  // Positive controls: without --resolve, or with a name resolving
  // elsewhere, the answer is the address rules' alone, as before.
  const std::string plain =
      "deny egress tcp to 104.16.0.1 port 443\n  no rule matched: denied "
      "by default\n  nearest rule: " +
      p +
      ":3:5: allow tcp to \"registry.npmjs.org\" port 443 (does not match: matches the port, "
      "not the host)\n";
  CHECK(Ward("explain " + p + " --connect 104.16.0.1:443", kStdEnv).out == plain);
  CHECK(Ward("explain " + p + " --connect 104.16.0.1:443 --resolve registry.npmjs.org=104.16.0.2",
             kStdEnv)
            .out == plain);
}

TEST_CASE("explain --connect NAME --resolve: a wildcard grant, and a deny that overrides a grant") {
  std::string p = WriteTemp("names.ward", kNamesPolicy);
  // *.github.com: allowed by the name, but nftables and ebpf cannot resolve
  // a wildcard ahead of time.
  Run wild =
      Ward("explain " + p + " --connect api.github.com:443 --resolve api.github.com=140.82.1.1",
           kStdEnv);
  CHECK(wild.out.rfind("allow egress tcp to api.github.com (140.82.1.1) port 443\n  " + p +
                           ":4:5: allow tcp to \"*.github.com\" port 443\n  note: enforcers that "
                           "see only addresses decide otherwise for this name (below)\n",
                       0) == 0);
  CHECK(wild.out.find("    nftables, ebpf, firecracker (addresses from DNS answers): deny: no "
                      "address rule allows it; api.github.com is granted only through a "
                      "wildcard, which cannot be resolved ahead of time\n") != std::string::npos);
  CHECK(wild.out.find("    cilium (toFQDNs, after the pod looked the name up): allow: "
                      "api.github.com was looked up") != std::string::npos);
  CHECK(wild.out.find("    name-aware (seatbelt's filtering proxy, TLS SNI): allow: for a "
                      "connection that names api.github.com\n") != std::string::npos);
  // The metadata address: the deny overrides the name's grant everywhere;
  // no enforcer decides otherwise, so no note says so.
  Run meta = Ward("explain " + p +
                      " --connect 169.254.169.254:443 --resolve registry.npmjs.org=169.254.169.254",
                  kStdEnv);
  CHECK(meta.out.rfind("deny egress tcp to 169.254.169.254 port 443\n  " + p +
                           ":6:5: deny to 169.254.169.254\n  per enforcer:\n",
                       0) == 0);
  CHECK(meta.out.find(": allow:") == std::string::npos);
  CHECK(meta.out.find("registry.npmjs.org resolves here, but a deny covering the address "
                      "overrides its grant (the denied sets)") != std::string::npos);
  // A deny by domain: the address-based targets refuse the policy.
  std::string d = WriteTemp("dom-deny.ward", R"(policy p {
  network {
    allow tcp to any port 443
    deny tcp to "evil.example" port 443
  }
}
)");
  Run refused = Ward(
      "explain " + d + " --connect 198.51.100.7:443 --resolve evil.example=198.51.100.7", kStdEnv);
  CHECK(refused.out.rfind("allow egress tcp to 198.51.100.7 port 443\n", 0) == 0);
  CHECK(refused.out.find("    nftables, ebpf, firecracker (addresses from DNS answers): refused: a "
                         "deny by domain cannot be enforced by address") != std::string::npos);
  CHECK(refused.out.find("    name-aware (seatbelt's filtering proxy, TLS SNI): allow: for a "
                         "connection naming no granted host (by address); deny for one that "
                         "names evil.example\n") != std::string::npos);
}

TEST_CASE("explain: usage errors exit 2") {
  std::string p = PolicyFile();
  CHECK(Ward("explain " + p, kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --connect host", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --connect 1.2.3.4:0", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --listen 80", kStdEnv).status == 2);
}

TEST_CASE("explain --format json") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.1.5:5432 --format json", kStdEnv);
  CHECK(r.out ==
        "{\n  \"version\": 1,\n  \"decision\": \"allow\",\n  \"query\": \"egress tcp to "
        "10.20.1.5 port 5432\",\n  \"by_default\": false,\n  \"rules\": [\n    {\n      "
        "\"location\": \"" +
            p +
            ":12:5\",\n      \"text\": \"allow tcp to 10.20.0.0/16 ports 5432, "
            "8000-8100\"\n    }\n  ],\n  \"notes\": []\n}\n");
}

TEST_CASE("ir: deterministic JSON, several policies need --policy") {
  std::string p = PolicyFile();
  Run a = Ward("ir " + p, kStdEnv);
  Run b = Ward("ir " + p, kStdEnv);
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("\"version\": 1") != std::string::npos);
  CHECK(a.out.find("\"cidrs\": [\n            \"10.20.0.0/18\",") != std::string::npos);
  std::string two = WriteTemp("two.ward", "policy a {}\npolicy b {}\n");
  Run r = Ward("ir " + two, kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward: " + two +
                     ": the file holds several policies (a, b): choose one with "
                     "--policy NAME\n");
  CHECK(Ward("ir " + two + " --policy b", kStdEnv).status == 0);
}

namespace {

const char* kSyscallPolicy = R"(policy sys {
  syscalls {
    arch x86_64, aarch64
    default errno EPERM
    allow read, write, clone
    errno EACCES clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    kill socket if arg0 == AF_PACKET
    allow socket
  }
}
)";

}  // namespace

TEST_CASE("explain --syscall: the action, the deciding rule, and the argument region") {
  std::string p = WriteTemp("sys.ward", kSyscallPolicy);
  Run allow = Ward("explain " + p + " --syscall clone --arg 0=0x11", kStdEnv);
  CHECK(allow.status == 0);
  CHECK(allow.out == "allow syscall clone(arg0=0x11) on x86_64\n  " + p +
                         ":5:5: allow read, write, clone\n  note: argument region: arg0 & "
                         "0x10000000 == 0x0\n");
  Run errno_ = Ward("explain " + p + " --syscall clone --arg 0=0x10000011 --fail-on deny", kStdEnv);
  CHECK(errno_.status == 1);
  CHECK(errno_.out == "errno EACCES syscall clone(arg0=0x10000011) on x86_64\n  " + p +
                          ":6:5: errno EACCES clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER\n"
                          "  note: argument region: arg0 & 0x10000000 == 0x10000000\n");
  // An int parameter is read on its low 32 bits: AF_PACKET with bit 32 set
  // is still AF_PACKET.
  Run kill = Ward("explain " + p + " --syscall socket --arg 0=0x100000011", kStdEnv);
  CHECK(kill.out.rfind("kill syscall socket(arg0=0x100000011) on x86_64\n  " + p +
                           ":7:5: kill socket if arg0 == AF_PACKET\n",
                       0) == 0);
}

TEST_CASE("explain --syscall: the default, another arch, an arch the policy does not name") {
  std::string p = WriteTemp("sys.ward", kSyscallPolicy);
  Run def = Ward("explain " + p + " --syscall mount", kStdEnv);
  CHECK(def.out == "errno EPERM syscall mount() on x86_64\n  no rule matched: the default, " + p +
                       ":4:5: default errno EPERM\n");
  Run arm = Ward("explain " + p + " --syscall read --arch aarch64", kStdEnv);
  CHECK(arm.out.rfind("allow syscall read() on aarch64\n", 0) == 0);
  Run foreign = Ward("explain " + p + " --syscall read --arch x86", kStdEnv);
  CHECK(foreign.out ==
        "kill syscall read() on x86\n  no rule matched\n  note: the policy does not name this "
        "architecture: every call is killed\n");
  Run json = Ward("explain " + p + " --syscall mount --format json", kStdEnv);
  CHECK(json.out.find("\"errno\": 1,\n  \"errno_name\": \"EPERM\"") != std::string::npos);
  CHECK(json.out.find("\"by_default\": true,\n  \"default_rule\": \"" + p + ":4:5\"") !=
        std::string::npos);
}

TEST_CASE("explain --syscall: usage errors exit 2") {
  std::string p = WriteTemp("sys.ward", kSyscallPolicy);
  CHECK(Ward("explain " + p + " --syscall nosuch", kStdEnv).err ==
        "ward explain: unknown syscall 'nosuch'\n");
  CHECK(Ward("explain " + p + " --syscall open --arch aarch64", kStdEnv).err ==
        "ward explain: syscall 'open' does not exist on aarch64\n");
  CHECK(Ward("explain " + p + " --syscall read --arg 6=1", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --syscall read --arg 0=1 --arg 0=2", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --syscall read --arg 0=zz", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --syscall read --arch mips", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --path /x --access read --arch x86", kStdEnv).status == 2);
  // Negative values are two's complement in 64 bits, as a register holds them.
  Run neg = Ward("explain " + p + " --syscall read --arg 0=-1", kStdEnv);
  CHECK(neg.out.rfind("allow syscall read(arg0=0xffffffffffffffff) on x86_64\n", 0) == 0);
}

TEST_CASE("check and ir: a syscall conflict found while lowering is W1043, naming both rules") {
  std::string p = WriteTemp("conflict.ward", R"(policy c {
  syscalls {
    errno EPERM mkdir if arg1 == 0
    errno EACCES mkdir if arg1 < 8
  }
}
)");
  Run r = Ward("ir " + p, kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err.find(p + ":4:5: error[W1043]: overlapping rules give 'mkdir' two errno values: "
                       "EPERM and EACCES") != std::string::npos);
  CHECK(r.err.find(p + ":3:5") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("ir: the syscall section") {
  std::string p = WriteTemp("sys.ward", kSyscallPolicy);
  Run r = Ward("ir " + p, kStdEnv);
  CHECK(r.status == 0);
  CHECK(
      r.out.find("\"syscalls\": {\n    \"arches\": [\n      \"x86_64\",\n      \"aarch64\"\n"
                 "    ],\n    \"default\": {\n      \"action\": \"errno\",\n      \"errno\": 1,") !=
      std::string::npos);
  CHECK(r.out.find("\"mask\": \"0x10000000\"") != std::string::npos);
}
