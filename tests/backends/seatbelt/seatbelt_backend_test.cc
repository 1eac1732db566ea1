// The seatbelt backend: goldens for the policies in policies/, what it
// refuses and what it leaves out, the startup list's limits, determinism,
// and the differential tests: random policies (Ward source), the emitted
// profile read by the SBPL reader (sbpl_reader.h, validated by its own
// table), its answers compared with the IR's Decide on many file and
// network queries. WARD_SEED=N replays a run; the seed is printed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "compiler/fs_names.h"
#include "compiler/ip.h"
#include "language/literals.h"
#include "tests/backends/seatbelt/sbpl_reader.h"
#include "tests/backends/seatbelt/seatbelt_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using sbpl::Profile;
using sbpl::Query;

const char* kHome = "/Users/agent";

const char* Operation(ir::FsRight right) {
  switch (right) {
    case ir::FsRight::kRead:
      return "file-read-data";
    case ir::FsRight::kWrite:
      return "file-write-data";
    case ir::FsRight::kExec:
      return "process-exec";
  }
  return "";
}

bool FileAllowed(const Profile& p, ir::FsRight right, const std::string& path) {
  Query q;
  q.operation = Operation(right);
  q.path = path;
  return p.Allows(q);
}

bool NetAllowed(const Profile& p, ir::Direction dir, ir::Protocol proto, const std::string& addr,
                uint16_t port) {
  Query q;
  q.operation = dir == ir::Direction::kEgress ? "network-outbound" : "network-inbound";
  q.protocol = ir::ProtocolName(proto);
  q.address = addr;
  q.port = port;
  return p.Allows(q);
}

bool OpAllowed(const Profile& p, const std::string& operation, const std::string& path) {
  Query q;
  q.operation = operation;
  q.path = path;
  return p.Allows(q);
}

// rename(2) as SBPL checks it (README.md, "Renames and links").
bool RenameAllowed(const Profile& p, const std::string& from, const std::string& to) {
  return OpAllowed(p, "file-write-unlink", from) && OpAllowed(p, "file-write-create", to);
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

uint32_t Seed() {
  std::random_device rd;
  return std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
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

// ---- renames and links --------------------------------------------------

TEST_CASE("seatbelt: what a deny protects, and the directories above it, keep their names") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/.git/hooks"
    deny read "/w/secret"
  } })");
  REQUIRE(c->result.ok);
  // Deleting /w/secret is a write the policy grants; SBPL cannot tell it
  // from a rename, so it goes, and is said. The hooks could not be deleted
  // anyway.
  CHECK(c->Diagnostics() ==
        "test.ward:4:5: warning[B3002]: SBPL checks a delete as it checks a rename: what these "
        "deny rules protect cannot be deleted, though the policy lets it be written: /w/secret\n"
        " 4 |     deny read \"/w/secret\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~~~~\n");
  Profile p(c->result.artifacts[0].bytes);
  // The protected paths and their ancestors cannot be renamed (or removed)...
  for (const char* path : {"/w/.git/hooks", "/w/.git/hooks/pre-commit", "/w/.git", "/w",
                           "/w/secret", "/w/secret/key"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
    CHECK_FALSE(RenameAllowed(p, path, "/w/elsewhere"));
  }
  // ...what they protect stays protected...
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/.git/hooks/pre-commit"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/w/secret"));
  // ...and the rest of the writable tree renames as before.
  for (const char* path : {"/w/src", "/w/src/main.c", "/w/.git/objects", "/w/.git/HEAD",
                           "/w/secretary", "/w/.github"}) {
    INFO(path);
    CHECK(RenameAllowed(p, path, "/w/elsewhere"));
  }
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/src/main.c"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/w/.git/hooks/pre-commit"));
  CHECK(OpAllowed(p, "file-write-create", "/w/.git/new"));
}

TEST_CASE("seatbelt: hard links are never granted; new names are") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/.git/hooks"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  // link(2) is checked as file-link; whichever of its two paths macOS
  // checks, neither is granted.
  for (const char* path : {"/w/.git/hooks/pre-commit", "/w/a", "/w/src/new-name"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-link", path));
  }
  // The positive control: a new name in the writable tree (open O_CREAT,
  // mkdir, the target of a rename) is still allowed.
  CHECK(OpAllowed(p, "file-write-create", "/w/src/new-name"));
  CHECK(OpAllowed(p, "file-write-data", "/w/a"));
  // No filesystem section at all: still no link.
  auto empty = Seatbelt("policy p {}");
  REQUIRE(empty->result.ok);
  CHECK_FALSE(OpAllowed(Profile(empty->result.artifacts[0].bytes), "file-link", "/x"));
}

TEST_CASE("seatbelt: grants under a deny that allow what it denies rename freely") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/ro"
    allow write "/w/ro/out"
    deny read write "/w/ro/out/keep"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  CHECK(RenameAllowed(p, "/w/ro/out/a.o", "/w/ro/out/b.o"));
  CHECK(RenameAllowed(p, "/w/ro/out/dir", "/w/x"));
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/ro/out/a.o"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro/x", "/w/x"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/ro/x"));
  // A deny under the grant, and the grant as its ancestor, keep their names.
  CHECK_FALSE(RenameAllowed(p, "/w/ro/out/keep", "/w/x"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro/out", "/w/x"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro", "/w/x"));
}

TEST_CASE("seatbelt: what may be written but not read stays where reading is not granted") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow write "/out"
    allow read "/out/pub"
  } })");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics() ==
        "test.ward:3:5: warning[B3002]: seatbelt keeps what these grants let be written but not "
        "read from being renamed (or deleted), or a rename could carry it to where reading is "
        "granted: /out\n"
        " 3 |     allow write \"/out\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~\n");
  Profile p(c->result.artifacts[0].bytes);
  CHECK_FALSE(RenameAllowed(p, "/out/log", "/w/log"));
  CHECK_FALSE(OpAllowed(p, "file-write-unlink", "/out"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/out/log"));
  // Positive controls: written as before; what may be read renames.
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/out/log"));
  CHECK(OpAllowed(p, "file-write-create", "/out/new"));
  CHECK(RenameAllowed(p, "/out/pub/a", "/w/a"));
  CHECK(RenameAllowed(p, "/w/a", "/out/a"));
  // No readable writable place: nothing to carry it to, nothing guarded.
  auto alone = Seatbelt(R"(policy p { filesystem {
    allow read "/usr"
    allow write "/out"
  } })");
  REQUIRE(alone->result.ok);
  CHECK(alone->Diagnostics().empty());
  CHECK(OpAllowed(Profile(alone->result.artifacts[0].bytes), "file-write-unlink", "/out/log"));
}

TEST_CASE("seatbelt: renames of globbed, `~` and /private paths") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w", "~", "/tmp"
    deny read "/w/*/secret", "~/.ssh"
    deny write "/w/.git/hooks", "/tmp/keep"
    deny write "/w/*/.git/hooks"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  // The matches, the literal directories above them, the directories a `*`
  // or a literal after a glob matches.
  for (const char* path : {"/w/a/secret", "/w/a", "/w", "/w/x/.git/hooks/h", "/w/x/.git", "/w/.git",
                           "/Users/agent/.ssh/id_ed25519", "/Users/agent", "/tmp/keep",
                           "/private/tmp/keep", "/tmp", "/private/tmp"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
  }
  // A `*` match moved deeper would leave `/w/*/secret`.
  CHECK_FALSE(RenameAllowed(p, "/w/a", "/w/b/a"));
  for (const char* path : {"/w/a/b", "/w/x/y", "/w/a/secretary", "/w/a/.gitx", "/Users/agent/src",
                           "/Users/agent/.sshx", "/tmp/other", "/private/tmp/other"}) {
    INFO(path);
    CHECK(OpAllowed(p, "file-write-unlink", path));
  }
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/a/b"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/x/.git/hooks/h"));
}

TEST_CASE("seatbelt: a `**` whose directories could be renamed out of it") {
  // /w/x/y/.git/hooks renamed to /tmp/y/.git/hooks would be writable: the
  // directories `**` matches cannot all be guarded, so this is an error...
  const char* source = R"(policy p { filesystem {
    allow read write "/w", "/tmp"
    deny write "/w/**/.git/hooks"
  } })";
  auto c = Seatbelt(source);
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics() ==
        "test.ward:3:5: error[B3002]: seatbelt cannot keep the directories that `**` matches in "
        "`/w/**/.git/hooks` from being renamed: one renamed where another grant decides would "
        "lose the deny for what it holds\n"
        " 3 |     deny write \"/w/**/.git/hooks\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "  = hint: pass --partial to deny renaming and deleting anything under /w instead, or "
        "name the directories without `**`\n");
  // ...and with --partial, towards deny: nothing under /w renames.
  auto partial = Seatbelt(source, kHome, {}, true);
  REQUIRE(partial->result.ok);
  CHECK(partial->Diagnostics().find(
            "warning[B3002]: seatbelt cannot keep the directories that `**` matches in "
            "`/w/**/.git/hooks` from being renamed; towards deny, nothing under /w can be renamed "
            "or deleted") != std::string::npos);
  Profile p(partial->result.artifacts[0].bytes);
  for (const char* path : {"/w/x/y", "/w/x/y/.git", "/w/x/y/.git/hooks/h", "/w/src/main.c"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
  }
  CHECK(OpAllowed(p, "file-write-unlink", "/tmp/x"));
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/src/main.c"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/x/y/.git/hooks/h"));

  // Every grant of the denied right inside /w and less specific: a renamed
  // directory stays matched and denied, no error (a grant of another right
  // elsewhere does not matter), and those directories rename freely. A
  // leading `**` has the whole tree as its root.
  auto inside = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow read "/srv"
    deny write "/w/**/.git/hooks", "/**/.git/config"
  } })");
  REQUIRE(inside->result.ok);
  CHECK(inside->Diagnostics().empty());
  Profile q(inside->result.artifacts[0].bytes);
  CHECK(RenameAllowed(q, "/w/x/y", "/w/z"));
  CHECK_FALSE(OpAllowed(q, "file-write-unlink", "/w/x/y/.git"));
  CHECK_FALSE(OpAllowed(q, "file-write-unlink", "/w/x/y/.git/config"));
  // A more specific grant inside /w can decide a renamed directory.
  auto specific = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow write "/w/a/b/c/d"
    deny write "/w/**/.git/hooks"
  } })");
  CHECK_FALSE(specific->result.ok);
  CHECK(specific->Diagnostics().find("error[B3002]: seatbelt cannot keep the directories") !=
        std::string::npos);
}

// ---- property: renames and links -------------------------------------------

// A file tree changed the way macOS would change it under a profile, each
// step decided by the profile as the SBPL reader reads it. macOS has no
// rename operation in SBPL: rename(2) is checked as file-write-unlink of the
// old name and file-write-create of the new one; link(2) as file-link (of
// the existing file or of the new name: this model lets a link through when
// either is granted) and file-write-create of the new name. The claim: an
// object at a path where a deny rule of the IR takes a right away, or where
// no rule grants reading, never stands at a name where the profile grants
// that right. (Renaming onto an existing name is not modelled: it needs
// the new name's unlink as well, so it is never easier.)
struct TreeModel {
  struct Object {
    bool dir = false;
    std::vector<ir::FsRight> forbidden;
  };
  std::vector<Object> objects;
  std::map<std::string, size_t> names;  // path -> object

  bool Exists(const std::string& path) const { return names.count(path) != 0; }
  bool IsDir(const std::string& path) const {
    auto it = names.find(path);
    return it != names.end() && objects[it->second].dir;
  }
  static std::string Parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  // Renames `from` and everything under it to `to`.
  void Rename(const std::string& from, const std::string& to) {
    std::vector<std::pair<std::string, size_t>> moved;
    for (auto it = names.lower_bound(from); it != names.end();) {
      if (it->first != from && it->first.rfind(from + "/", 0) != 0) break;
      moved.push_back({to + it->first.substr(from.size()), it->second});
      it = names.erase(it);
    }
    for (auto& [path, id] : moved) names[path] = id;
  }
};

TEST_CASE("seatbelt property: no rename or link carries a denied object to a granted name") {
  const uint32_t seed = Seed();
  std::mt19937 rng(seed);
  std::cout << "seatbelt rename property: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const char* kComponents[] = {"a", "b", "c", "a", "b", "*", "**"};
  static const char* kNames[] = {"a", "b", "c", "d", "x"};
  static const char* kRights[] = {"read", "write", "exec", "read write", "read exec"};
  static const char* kSecondRoots[] = {"/t", "/tmp", "~"};
  const std::optional<std::string> home = kHome;
  const int policies = std::getenv("WARD_PROPERTY_POLICIES")
                           ? std::atoi(std::getenv("WARD_PROPERTY_POLICIES"))
                           : Rounds(200);
  size_t steps = 0, allowed_steps = 0, protected_objects = 0, partial_policies = 0,
         mutant_bypasses = 0;
  for (int round = 0; round < policies; ++round) {
    // Roots as the policy spells them and as paths: /w, and now and then a
    // second writable tree, plain, under /private, or the home.
    std::vector<std::pair<std::string, std::string>> roots = {{"/w", "/w"}};
    std::string rules =
        std::string("    allow read write") + (pick(3) == 0 ? " exec" : "") + " \"/w\"\n";
    if (pick(2) == 0) {
      const std::string second = kSecondRoots[pick(3)];
      roots.push_back({second, second == "~" ? kHome : second});
      static const char* kSecondRights[] = {"read write", "read write exec", "write"};
      rules += std::string("    allow ") + kSecondRights[pick(3)] + " \"" + second + "\"\n";
    }
    auto pattern = [&]() {
      std::string text = roots[pick(static_cast<int>(roots.size()))].first;
      std::string prev;
      for (int k = 1 + pick(3); k > 0; --k) {
        std::string comp = kComponents[pick(7)];
        if (comp == "**" && prev == "**") comp = "a";
        text += "/" + comp;
        prev = comp;
      }
      return text;
    };
    for (int i = 1 + pick(3); i > 0; --i) {
      rules += std::string("    deny ") + kRights[pick(5)] + " \"" + pattern() + "\"\n";
    }
    for (int i = pick(3); i > 0; --i) {
      rules += std::string("    allow ") + kRights[pick(5)] + " \"" + pattern() + "\"\n";
    }
    const std::string source = "policy p {\n  filesystem {\n" + rules + "  }\n}\n";
    INFO(source);
    auto c = Seatbelt(source);
    if (!c->result.ok) {
      // The one refusal: a `**` whose directories could leave it. Then
      // towards deny, which must hold everywhere.
      INFO(c->Diagnostics());
      REQUIRE(c->Diagnostics().find("error[B3002]: seatbelt cannot keep the directories that "
                                    "`**` matches") != std::string::npos);
      c = Seatbelt(source, kHome, {}, true);
      REQUIRE(c->result.ok);
      ++partial_policies;
    }
    const std::string& text = c->result.artifacts[0].bytes;
    INFO(text);
    // The profile without its rename guard: the same walk must find a way
    // through it now and then, or the walk proves nothing.
    std::string unguarded = text;
    const size_t from = unguarded.find("(deny file-write-unlink");
    if (from != std::string::npos) unguarded.erase(from, unguarded.find("(deny file-link)") - from);
    const Profile guarded_profile(text), unguarded_profile(unguarded);

    for (const Profile* profile : {&guarded_profile, &unguarded_profile}) {
      const bool guarded = profile == &guarded_profile;
      std::map<std::pair<std::string, std::string>, bool> memo;
      auto allows = [&](const std::string& op, const std::string& path) {
        auto key = std::make_pair(op, path);
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        return memo[key] = OpAllowed(*profile, op, path);
      };
      auto right_op = [](ir::FsRight r) { return std::string(Operation(r)); };
      // Every path of depth 0 to 3 under the roots, of the names a, b, c;
      // the deepest are files.
      TreeModel tree;
      auto add = [&](const std::string& path, bool dir, bool original) {
        TreeModel::Object o;
        o.dir = dir;
        if (original) {
          for (ir::FsRight right : ir::kFsRights) {
            const ir::FsDecision d = c->ir.filesystem.Decide(path, right, home);
            // A right a deny rule takes; or reading, which no rule grants
            // (other rights, a copy would give as well as a rename).
            if (!d.allow && (!d.pattern.empty() || right == ir::FsRight::kRead)) {
              o.forbidden.push_back(right);
            }
          }
        }
        tree.objects.push_back(o);
        tree.names[path] = tree.objects.size() - 1;
      };
      std::vector<std::string> level;
      for (const auto& root : roots) level.push_back(root.second);
      for (int depth = 0; depth <= 3; ++depth) {
        std::vector<std::string> next;
        for (const std::string& path : level) {
          add(path, depth < 3, true);
          for (const char* n : {"a", "b", "c"}) next.push_back(path + "/" + n);
        }
        level = depth < 3 ? next : std::vector<std::string>{};
      }
      if (guarded) {
        for (const auto& o : tree.objects) protected_objects += !o.forbidden.empty();
      }
      auto random_name = [&](bool dirs_only) {
        std::vector<const std::string*> all;
        for (const auto& [path, id] : tree.names) {
          if (!dirs_only || tree.objects[id].dir) all.push_back(&path);
        }
        return *all[pick(static_cast<int>(all.size()))];
      };
      bool bypass = false;
      for (int step = 0; step < 40 && !bypass; ++step) {
        const int kind = pick(10);
        const std::string to = random_name(true) + "/" + kNames[pick(5)];
        if (tree.Exists(to)) continue;
        bool ok = false;
        if (kind < 5) {  // rename(from, to)
          const std::string from = random_name(false);
          if (from == to || to.rfind(from + "/", 0) == 0) continue;
          ok = allows("file-write-unlink", from) && allows("file-write-create", to);
          if (ok) tree.Rename(from, to);
        } else if (kind < 7) {  // link(from, to)
          std::string from = random_name(false);
          if (tree.IsDir(from)) continue;
          ok = (allows("file-link", from) || allows("file-link", to)) &&
               allows("file-write-create", to);
          if (ok) tree.names[to] = tree.names[from];
        } else {  // mkdir(to) or open(to, O_CREAT): a new object of the workload's
          ok = allows("file-write-create", to);
          if (ok) add(to, kind < 9, false);
        }
        if (guarded) {
          ++steps;
          allowed_steps += ok;
        }
        if (!ok) continue;
        for (const auto& [path, id] : tree.names) {
          for (ir::FsRight right : tree.objects[id].forbidden) {
            if (!allows(right_op(right), path)) continue;
            bypass = true;
            if (guarded) {
              FAIL_CHECK("step " << step << ": an object whose first name the IR denies "
                                 << ir::FsRightName(right) << " now stands at " << path
                                 << ", where the profile grants it");
            }
          }
        }
      }
      if (!guarded) mutant_bypasses += bypass;
    }
  }
  std::cout << "  " << policies << " policies, " << steps << " steps (" << allowed_steps
            << " allowed), " << protected_objects << " protected objects, " << partial_policies
            << " policies refused for `**` and walked with --partial, " << mutant_bypasses
            << " policies whose profile without the rename guard lets a denied object through\n";
  CHECK(allowed_steps > steps / 10);  // the walk moves
  CHECK(mutant_bypasses > 0);         // and finds what the guard stops
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
