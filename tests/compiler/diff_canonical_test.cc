// Canonical forms: a policy rewritten in an equivalent way (rule order, lists
// split, redundant rules, CIDRs written as halves, rules moved into a base)
// lowers to an equal IR, and the diff between the two is empty both ways;
// section by section.
#include <catch2/catch.hpp>

#include "tests/compiler/diff_fixture.h"

namespace ward::test {
namespace {

void Equivalent(const std::string& a, const std::string& b) {
  Loaded x = Load(a), y = Load(b);
  INFO(a << "\n---\n" << b);
  CHECK(x.ir == y.ir);
  CHECK(Lines(ir::Diff(x.ir, y.ir)).empty());
  CHECK(Lines(ir::Diff(y.ir, x.ir)).empty());
}

}  // namespace

TEST_CASE("canonical: network") {
  // Rule order.
  Equivalent(R"(policy p { network {
    allow tcp to 10.0.0.0/8 port 22
    deny to 10.1.0.0/16
    allow udp to "*.example.com" port 53
  } })",
             R"(policy p { network {
    allow udp to "*.example.com" port 53
    deny to 10.1.0.0/16
    allow tcp to 10.0.0.0/8 port 22
  } })");
  // Lists split; ports and protocols written apart.
  Equivalent(R"(policy p { network {
    allow tcp to 10.0.0.1, "a.example.com", fd00::1 ports 22, 443
    allow to 192.168.0.1
    allow unix "/run/a.sock", "@b"
  } })",
             R"(policy p { network {
    allow tcp to 10.0.0.1 port 443
    allow tcp to 10.0.0.1 port 22
    allow tcp to "a.example.com" ports 22, 443
    allow tcp to fd00::1 port 22
    allow tcp to fd00::1 port 443
    allow tcp to 192.168.0.1
    allow udp to 192.168.0.1
    allow icmp to 192.168.0.1
    allow unix "@b"
    allow unix "/run/a.sock"
  } })");
  Equivalent("policy p { network { allow tcp to 10.0.0.1 ports 22, 23, 24 } }",
             "policy p { network { allow tcp to 10.0.0.1 ports 22-24 } }");
  // Redundant rules: inside another, repeated, a deny of what nothing allows.
  Equivalent(R"(policy p { network {
    allow tcp to 10.0.0.0/8 port 22
    allow tcp to 10.1.0.0/16 port 22
    allow tcp to 10.0.0.0/8 port 22
    deny udp to 10.0.0.0/8
  } })",
             "policy p { network { allow tcp to 10.0.0.0/8 port 22 } }");
  // CIDRs as halves, a /14 as four /16s, IPv6 halves.
  Equivalent(R"(policy p { network {
    allow udp to 10.0.0.0/8 port 53
    allow tcp to 10.4.0.0/14 port 22
    allow tcp to fd00::/8 port 443
  } })",
             R"(policy p { network {
    allow udp to 10.128.0.0/9, 10.0.0.0/9 port 53
    allow tcp to 10.4.0.0/16, 10.5.0.0/16, 10.6.0.0/16, 10.7.0.0/16 port 22
    allow tcp to fd80::/9 port 443
    allow tcp to fd00::/9 port 443
  } })");
  // Domains as written and normalised.
  Equivalent(R"(policy p { network { allow tcp to "EXAMPLE.com." port 443 } })",
             R"(policy p { network { allow tcp to "example.com" port 443 } })");
  // Rules moved into a base.
  Equivalent(R"(policy p { network {
    deny to 169.254.169.254
    allow tcp to any port 443
    allow unix "/run/a.sock"
  } })",
             R"(
abstract policy base { network {
  deny to 169.254.169.254
  allow unix "/run/a.sock"
} }
policy p extends base { network { allow tcp to any port 443 } })");
}

TEST_CASE("canonical: filesystem") {
  Equivalent(R"(policy p { filesystem {
    allow read write "/data"
    deny write "/data/frozen"
    allow exec "/usr/bin"
  } })",
             R"(policy p { filesystem {
    allow exec "/usr/bin"
    deny write "/data/frozen"
    allow write "/data"
    allow read "/data"
  } })");
  // Paths as written and normalised; a repeated rule.
  Equivalent(R"(policy p { filesystem {
    allow read "/data/"
    allow read "//data"
    deny read "/data/x/"
  } })",
             R"(policy p { filesystem {
    allow read "/data"
    deny read "/data/x"
  } })");
  // Redundant rules: inside another with the same verdict.
  Equivalent(R"(policy p { filesystem {
    allow read "/data"
    deny write "/data"
  } })",
             R"(policy p { filesystem {
    allow read "/data"
    allow read "/data/x"
    deny write "/data"
    deny write "/data/x/y"
  } })");
  // Rules moved into a base.
  Equivalent(R"(policy p { filesystem {
    allow read "/usr"
    deny read "~/.ssh"
    allow read write "~"
  } })",
             R"(
abstract policy base { filesystem {
  allow read "/usr"
  deny read "~/.ssh"
} }
policy p extends base { filesystem { allow read write "~" } })");
}

TEST_CASE("canonical: syscalls") {
  Equivalent(R"(group @io = [read, write]
policy p { syscalls {
    default errno EPERM
    allow @io, clone
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    kill ptrace, bpf
  } })",
             R"(group @io = [read, write]
policy p { syscalls {
    kill bpf
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    allow clone
    kill ptrace
    allow @io
    default errno EPERM
  } })");
  // Lists split, a list as comparisons, equivalent bounds.
  Equivalent(
      "policy p { syscalls { allow socket if arg0 in [1, 2, 10] } }",
      "policy p { syscalls { allow socket if arg0 == 10 \n allow socket if arg0 in [2, 1] } }");
  Equivalent("policy p { syscalls { default allow \n kill socket if arg0 not in [1, 2] } }",
             "policy p { syscalls { default allow \n kill socket if arg0 != 1 and arg0 != 2 } }");
  Equivalent("policy p { syscalls { default allow \n kill read if arg0 < 10 } }",
             "policy p { syscalls { default allow \n kill read if arg0 <= 9 } }");
  // Redundant rules: inside another, repeated, equal to the default.
  Equivalent("policy p { syscalls { default errno EPERM \n allow clone } }",
             R"(policy p { syscalls {
    default errno EPERM
    allow clone if arg0 == 5
    allow clone
    allow clone
    errno EPERM write
  } })");
  // Architectures in another order.
  Equivalent("policy p { syscalls { arch x86_64, aarch64 \n allow read } }",
             "policy p { syscalls { arch aarch64, x86_64 \n allow read } }");
  // Rules moved into bases; the default of the later base.
  Equivalent(R"(policy p { syscalls {
    default errno EPERM
    allow @system-service
    kill io_uring_setup
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
  } })",
             R"(
abstract policy b1 { syscalls { default kill
  allow @system-service } }
abstract policy b2 { syscalls { default errno EPERM
  errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6] } }
policy p extends b1, b2 { syscalls { kill io_uring_setup } })");
}

TEST_CASE("canonical: process, limits, targets, description and labels") {
  Equivalent(R"(policy p {
  description "d"
  labels { team = "x", tier = "1" }
  process {
    no_new_privileges
    capabilities keep [CAP_CHOWN, CAP_NET_BIND_SERVICE]
    env allow ["PATH", "HOME"]
    user 1000:1000
  }
  limits {
    memory 4GiB
    timeout 2m
    pids 512
  }
  target kubernetes { namespace "agents" }
})",
             R"(policy p {
  target kubernetes { namespace "agents" }
  limits {
    pids 512
    timeout 120s
    memory 4096MiB
  }
  process {
    user 1000:1000
    env allow ["HOME", "PATH"]
    capabilities keep [CAP_NET_BIND_SERVICE, CAP_CHOWN]
    no_new_privileges
  }
  labels { tier = "1", team = "x" }
  description "d"
})");
  // Moved into a base.
  Equivalent(R"(policy p {
  description "d"
  labels { team = "x" }
  process { capabilities keep [CAP_CHOWN] }
  limits { memory 4GiB }
  target kubernetes { namespace "agents" }
})",
             R"(
abstract policy base {
  labels { team = "x" }
  process { capabilities keep [CAP_CHOWN] }
  limits { memory 4GiB }
}
policy p extends base {
  description "d"
  target kubernetes { namespace "agents" }
})");
}

}  // namespace ward::test
