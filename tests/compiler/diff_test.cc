// ward diff over two IRs, named cases: the exact lines, kinds and rules
// behind them for network, filesystem, process, limits, targets and
// metadata. Syscalls: diff_syscalls_test.cc; the property test for network
// and filesystem: diff_property_test.cc; canonical forms:
// diff_canonical_test.cc.
#include <catch2/catch.hpp>

#include "tests/compiler/diff_fixture.h"

namespace ward::test {

// ---- named cases: network -------------------------------------------------

TEST_CASE("diff: a deny shrinking from /24 to /25 gains exactly the freed half") {
  Loaded b = Load(R"(policy p { network {
  allow tcp to 10.1.99.0/24 ports 5432, 6379
  deny tcp to 10.1.99.0/24
} })");
  Loaded a = Load(R"(policy p { network {
  allow tcp to 10.1.99.0/24 ports 5432, 6379
  deny tcp to 10.1.99.0/25
} })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(Lines(d) == Strings{"+ egress tcp 10.1.99.128/25 ports 5432,6379"});
  const ir::Change& c = d.changes[0];
  CHECK(c.section == ir::DiffSection::kNetwork);
  CHECK(c.kind == ir::ChangeKind::kWidened);
  CHECK(Where(a, c.new_rules) == Strings{"test.ward:2:3"});  // the allow that now applies
  CHECK(Where(b, c.old_rules) == Strings{"test.ward:3:3"});  // the deny that was lifted
  // The other way round, the same line is a loss.
  ir::DiffResult back = ir::Diff(a.ir, b.ir);
  REQUIRE(Lines(back) == Strings{"- egress tcp 10.1.99.128/25 ports 5432,6379"});
  CHECK(back.changes[0].kind == ir::ChangeKind::kNarrowed);
  CHECK(Where(a, back.changes[0].old_rules) == Strings{"test.ward:2:3"});
  CHECK(Where(b, back.changes[0].new_rules) == Strings{"test.ward:3:3"});
}

TEST_CASE("diff: reordering, splitting, CIDR halves and redundant rules give no changes") {
  ir::DiffResult d = ir::Diff(Load(R"(policy p {
  network {
    allow tcp to 10.4.0.0/14 port 22
    allow udp to fd00::/8 port 53
    deny to 169.254.169.254
  }
  filesystem {
    allow read write "/data"
    deny read "/data/x"
  }
})")
                                  .ir,
                              Load(R"(policy p {
  filesystem {
    deny read "/data/x/"
    allow write "/data"
    allow read "//data"
  }
  network {
    deny to 169.254.169.254
    allow tcp to 10.7.0.0/16 port 22
    allow tcp to 10.5.0.0/16, 10.4.0.0/16 port 22
    allow udp to fd80::/9 port 53
    allow tcp to 10.6.0.0/16 port 22
    allow udp to fd00::/9 port 53
    allow tcp to 10.6.1.0/24 port 22
  }
})")
                                  .ir);
  CHECK(d.changes.empty());
}

TEST_CASE("diff: adjacent ranges with the same change share a line; each protocol its own") {
  CHECK(Lines("policy p { network { allow tcp to 10.0.0.0/8 port 1 } }", R"(policy p { network {
    allow tcp to 10.0.0.0/8 port 1
    allow tcp to 10.1.99.128/25, 10.1.100.0/24 port 443
    allow tcp to 10.1.102.0/24 port 443
    allow to 192.168.0.1
  } })") == Strings{"+ egress tcp 10.1.99.128/25,10.1.100.0/24 ports 443",
                    "+ egress tcp 10.1.102.0/24 ports 443", "+ egress tcp 192.168.0.1/32",
                    "+ egress udp 192.168.0.1/32", "+ egress icmp 192.168.0.1/32"});
}

TEST_CASE("diff: ingress, IPv6 and icmp losses") {
  CHECK(Lines(R"(policy p { network {
    allow ingress udp from fd00::/8 port 53
    allow icmp to 10.0.0.0/8
    allow tcp to 10.0.0.1 port 443
  } })",
              "policy p { network { allow tcp to 10.0.0.1 port 443 } }") ==
        Strings{"- egress icmp 10.0.0.0/8", "- ingress udp fd00::/8 ports 53"});
}

TEST_CASE("diff: domains by name; a deny added narrows, one that refused nothing is silent") {
  Loaded b = Load(R"(policy p { network {
    allow tcp to "*.github.com" port 443
    allow tcp to "pypi.org" port 443
  } })");
  Loaded a = Load(R"(policy p { network {
    allow tcp to "*.github.com" port 443, 22
    deny tcp to "gist.github.com"
    deny to "nothing.example"
  } })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(Lines(d) == Strings{"+ egress tcp \"*.github.com\" ports 22",
                              "- egress tcp \"gist.github.com\" ports 443",
                              "- egress tcp \"pypi.org\" ports 443"});
  CHECK(Where(a, d.changes[0].new_rules) == Strings{"test.ward:2:5"});
  CHECK(Where(b, d.changes[1].old_rules) == Strings{"test.ward:2:5"});
  CHECK(Where(a, d.changes[1].new_rules) == Strings{"test.ward:3:5"});
  CHECK(Where(b, d.changes[2].old_rules) == Strings{"test.ward:3:5"});
  // Removing a deny that refused nothing gains nothing.
  CHECK(Lines("policy p { network { deny to \"nothing.example\" } }",
              "policy p { network { allow tcp to 10.0.0.1 port 1 } }") ==
        Strings{"+ egress tcp 10.0.0.1/32 ports 1"});
}

TEST_CASE("diff: an address deny lifted under a domain grant shows for names resolving there") {
  Loaded b = Load(R"(policy p { network {
    allow tcp to "*.github.com" port 443
    deny to 10.0.0.0/8
  } })");
  Loaded a = Load(R"(policy p { network {
    allow tcp to "*.github.com" port 443
  } })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  // The IPv4 deny also held at its IPv4-compatible and NAT64 forms.
  REQUIRE(Lines(d) ==
          Strings{"+ egress tcp \"*.github.com\" at 10.0.0.0/8,::10.0.0.0/104,64:ff9b::a00:0/104 "
                  "ports 443"});
  CHECK(Where(a, d.changes[0].new_rules) == Strings{"test.ward:2:5"});
  CHECK(Where(b, d.changes[0].old_rules) == Strings{"test.ward:3:5"});
  // Classes with the same change over the same addresses share a line.
  CHECK(Lines(R"(policy p { network {
    allow tcp to "*.github.com", "github.com", "pypi.org" port 443
    allow tcp to "pypi.org" port 22
    deny tcp to 169.254.169.254
  } })",
              R"(policy p { network {
    allow tcp to "*.github.com", "github.com", "pypi.org" port 443
    allow tcp to "pypi.org" port 22
  } })") == Strings{"+ egress tcp \"*.github.com\",\"github.com\" at 169.254.169.254/32,"
                    "::169.254.169.254/128,64:ff9b::a9fe:a9fe/128 ports 443",
                    "+ egress tcp \"pypi.org\" at 169.254.169.254/32,::169.254.169.254/128,"
                    "64:ff9b::a9fe:a9fe/128 ports 22,443"});
}

TEST_CASE("diff: an IPv4 deny's NAT64 and IPv4-compatible forms join its line") {
  CHECK(Lines(R"(policy p { network {
    allow tcp to any port 443
    deny to 10.0.0.0/8
  } })",
              "policy p { network { allow tcp to any port 443 } }") ==
        Strings{"+ egress tcp 10.0.0.0/8,::10.0.0.0/104,64:ff9b::a00:0/104 ports 443"});
}

TEST_CASE("diff: unix socket grants by path and by name") {
  CHECK(Lines(R"(policy p { network { allow unix "@name", "/run/old.sock" } })",
              R"(policy p { network {
    allow unix "/run/app.sock", "/run/old.sock", "@other", "/run/docker.sock"
    deny unix "/run/docker.sock"
  } })") == Strings{"+ unix /run/app.sock", "- unix @name", "+ unix @other"});
}

TEST_CASE("diff: a netlink grant, added (widened) and taken back by a deny (narrowed)") {
  Loaded none = Load("policy p { network { allow tcp to 10.0.0.1 port 443 } }");
  Loaded granted = Load(R"(policy p { network {
    allow tcp to 10.0.0.1 port 443
    allow netlink route
  } })");
  Loaded denied = Load(R"(policy p { network {
    allow tcp to 10.0.0.1 port 443
    allow netlink route
    deny netlink route
  } })");
  ir::DiffResult up = ir::Diff(none.ir, granted.ir);
  REQUIRE(Lines(up) == Strings{"+ netlink route"});
  CHECK(up.changes[0].section == ir::DiffSection::kNetwork);
  CHECK(up.changes[0].kind == ir::ChangeKind::kWidened);
  CHECK(Where(granted, up.changes[0].new_rules) == Strings{"test.ward:3:5"});
  ir::DiffResult down = ir::Diff(granted.ir, denied.ir);
  REQUIRE(Lines(down) == Strings{"- netlink route"});
  CHECK(down.changes[0].kind == ir::ChangeKind::kNarrowed);
  CHECK(Where(granted, down.changes[0].old_rules) == Strings{"test.ward:3:5"});
  CHECK(Where(denied, down.changes[0].new_rules) == Strings{"test.ward:4:5"});
  // Denied is the same meaning as never granted.
  CHECK(ir::Diff(none.ir, denied.ir).changes.empty());
}

// ---- named cases: filesystem ----------------------------------------------

TEST_CASE("diff: a deny removed under an allow gives the path and right") {
  Loaded b = Load(R"(policy p { filesystem {
    allow read write "/data"
    deny write "/data/frozen"
  } })");
  Loaded a = Load(R"(policy p { filesystem {
    allow read write "/data"
  } })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(Lines(d) == Strings{"+ write /data/frozen"});
  CHECK(d.changes[0].section == ir::DiffSection::kFilesystem);
  CHECK(d.changes[0].example == "/data/frozen");
  CHECK(Where(a, d.changes[0].new_rules) == Strings{"test.ward:2:5"});
  CHECK(Where(b, d.changes[0].old_rules) == Strings{"test.ward:3:5"});
}

TEST_CASE("diff: paths under ~ are shown as written") {
  CHECK(Lines(R"(policy p { filesystem { allow read "~" } })", R"(policy p { filesystem {
    allow read "~"
    deny read "~/.ssh"
  } })") == Strings{"- read ~/.ssh"});
}

TEST_CASE("diff: a pattern in one policy only that cuts across the other's is reported once") {
  // NEW's `/*/d` is more specific than OLD's `/b`: /b/d gains read, /x/d
  // (already allowed by `/*`) does not change.
  CHECK(Lines(R"(policy p { filesystem {
    allow read "/*"
    deny read "/b"
  } })",
              R"(policy p { filesystem {
    allow read "/*"
    deny read "/b"
    allow read "/*/d"
  } })") == Strings{"+ read /*/d (e.g. /b/d)"});
  // A deny at /a under OLD's `/**/s` changes /a/s, not /a itself.
  CHECK(Lines(R"(policy p { filesystem { allow read "/**/s" } })", R"(policy p { filesystem {
    allow read "/**/s"
    deny read "/a"
  } })") == Strings{"- read /a (e.g. /a/s)"});
  // Globs inside a component: a name matching `*c` but neither `x*c` nor
  // the literal `c` stands for its own class.
  CHECK(Lines(R"(policy p { filesystem { allow read "/a/c" } })", R"(policy p { filesystem {
    allow read "/a/c", "/a/*c"
    deny read "/a/x*c"
  } })") == Strings{"+ read /a/*c (e.g. /a/yc)"});
  // A deeper deny in NEW only: exactly its own subtree.
  CHECK(Lines(R"(policy p { filesystem { allow read exec "/a" } })", R"(policy p { filesystem {
    allow read exec "/a"
    deny read "/a/b/c"
  } })") == Strings{"- read /a/b/c"});
}

// ---- named cases: process, limits, targets, metadata ----------------------

TEST_CASE("diff: process fields, capabilities and limits before -> after") {
  Loaded b = Load(R"(policy p {
  process {
    no_new_privileges
    capabilities keep [CAP_CHOWN]
    user 1000:1000
    env allow ["PATH"]
  }
  limits {
    cpus 2
    memory 4GiB
    pids 512
    timeout 30s
  }
})");
  Loaded a = Load(R"(policy p {
  process {
    capabilities keep [CAP_CHOWN, CAP_NET_BIND_SERVICE]
    user 0:0
    env allow ["PATH", "HOME"]
  }
  limits {
    cpus 0.5
    memory 8GiB
    open_files 4096
    timeout 2m
  }
})");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  CHECK(Lines(d) == Strings{"- no_new_privileges", "+ capability CAP_NET_BIND_SERVICE",
                            "~ user 1000:1000 -> 0:0", "+ env HOME", "~ limits cpus 2 -> 0.5",
                            "~ limits memory 4GiB -> 8GiB", "+ limits open_files 4096",
                            "- limits pids 512", "~ limits timeout 30s -> 2m"});
  std::vector<ir::ChangeKind> kinds;
  for (const ir::Change& c : d.changes) kinds.push_back(c.kind);
  using K = ir::ChangeKind;
  CHECK(kinds == std::vector<K>{K::kWidened, K::kWidened, K::kChanged, K::kWidened, K::kNarrowed,
                                K::kWidened, K::kNarrowed, K::kWidened, K::kWidened});
  REQUIRE(d.changes.size() == 9);
  CHECK(Where(b, d.changes[5].old_rules) == Strings{"test.ward:10:5"});
  CHECK(Where(a, d.changes[5].new_rules) == Strings{"test.ward:9:5"});
}

TEST_CASE("diff: sizes keep their unit; decimal units where they are exact") {
  CHECK(Lines("policy p { limits { memory 4G } }", "policy p { limits { memory 512MiB } }") ==
        Strings{"~ limits memory 4G -> 512MiB"});
}

TEST_CASE("diff: targets, description and labels change without widening") {
  ir::DiffResult d = ir::Diff(Load(R"(policy p {
  description "a"
  labels { team = "x", tier = "1" }
  target kubernetes { namespace "agents" }
})")
                                  .ir,
                              Load(R"(policy p {
  description "b"
  labels { team = "x", env = "prod" }
  target kubernetes { namespace "batch" }
})")
                                  .ir);
  CHECK(Lines(d) == Strings{"~ target kubernetes namespace agents -> batch",
                            "~ description \"a\" -> \"b\"", "+ label env \"prod\"",
                            "- label tier \"1\""});
  for (const ir::Change& c : d.changes) CHECK(c.kind == ir::ChangeKind::kChanged);
}

TEST_CASE("diff: sections come in a fixed order") {
  ir::DiffResult d = ir::Diff(Load("policy p { limits { pids 5 } }").ir, Load(R"(policy p {
  limits { pids 6 }
  filesystem { allow read "/x" }
  network { allow tcp to 10.0.0.1 port 1 }
  process { capabilities keep [CAP_CHOWN] }
  syscalls { allow read }
})")
                                                                             .ir);
  std::vector<std::string> sections;
  for (const ir::Change& c : d.changes) sections.push_back(ir::SectionName(c.section));
  CHECK(sections == Strings{"network", "filesystem", "syscalls", "process", "process", "limits"});
}

}  // namespace ward::test
