// The front end on every construct of the language (language.md): each input
// checks without a single diagnostic, and the checked AST holds the exact
// values (normalised paths, address bytes, port ranges, errno numbers,
// condition values, limits in bytes, milli-CPUs and milliseconds).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "language/ast.h"
#include "language/literals.h"
#include "tests/language/frontend_fixture.h"

namespace Catch {
template <>
struct StringMaker<ward::IpPrefix> {
  static std::string convert(const ward::IpPrefix& p) {
    return ward::FormatPrefix(p) + "/" + std::to_string(p.length);
  }
};
}  // namespace Catch

namespace ward {
namespace {

using test::CheckSource;
using test::FrontendResult;
using Extra = std::map<std::string, std::string>;
using Strings = std::vector<std::string>;

// Runs the front end and requires that it reports nothing at all.
std::unique_ptr<FrontendResult> Clean(const std::string& source, const Extra& extra = {}) {
  auto r = CheckSource(source, extra);
  INFO(r->text);
  REQUIRE(r->codes() == "");
  return r;
}

const ast::File& MainFile(const FrontendResult& r) {
  return *r.program.file(r.program.roots.at(0));
}

std::string TextOf(const FrontendResult& r, Span span) { return std::string(r.sources.Text(span)); }

Strings Texts(const std::vector<ast::Atom>& atoms) {
  Strings out;
  for (const ast::Atom& a : atoms) out.push_back(a.text);
  return out;
}

IpPrefix V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t length) {
  IpPrefix p;
  p.bytes = {a, b, c, d};
  p.length = length;
  return p;
}

IpPrefix V6(std::array<uint8_t, 16> bytes, uint8_t length) {
  IpPrefix p;
  p.v6 = true;
  p.bytes = bytes;
  p.length = length;
  return p;
}

// The ports of a rule as "lo-hi" strings, e.g. {"443-443", "8000-8100"}.
Strings Ports(const ast::NetRule& rule) {
  Strings out;
  for (const PortRange& p : rule.ports)
    out.push_back(std::to_string(p.lo) + "-" + std::to_string(p.hi));
  return out;
}

// ---- file structure -------------------------------------------------------

TEST_CASE("header: `ward 1` is recorded, and is optional", "[parser]") {
  auto r = Clean("ward 1   // the language version\n\npolicy p {}\n");
  REQUIRE(MainFile(*r).version.has_value());
  CHECK(MainFile(*r).version->text == "1");
  CHECK(TextOf(*r, MainFile(*r).version->span) == "1");

  auto bare = Clean("policy p {}\n");
  CHECK_FALSE(MainFile(*bare).version.has_value());
  CHECK(bare->policy().name.text == "p");
}

TEST_CASE("import: relative paths resolve against the importing file's folder", "[parser]") {
  const std::string source = R"(import "./lib/base.ward"

policy app extends base {}
)";
  auto r = Clean(source, {{"lib/base.ward", R"(import "./common.ward"
abstract policy base extends common {}
)"},
                          {"lib/common.ward", "abstract policy common {}\n"}});
  const ast::File& main = MainFile(*r);
  REQUIRE(main.imports.size() == 1u);
  const ast::Import& imp = main.imports[0];
  CHECK(imp.path == "./lib/base.ward");
  CHECK(TextOf(*r, imp.path_span) == "\"./lib/base.ward\"");
  REQUIRE(imp.resolved != kNoFile);
  CHECK(r->sources.file(imp.resolved).real_path == "lib/base.ward");

  const ast::File& base = *r->program.file(imp.resolved);
  REQUIRE(base.imports.size() == 1u);
  REQUIRE(base.imports[0].resolved != kNoFile);
  CHECK(r->sources.file(base.imports[0].resolved).real_path == "lib/common.ward");

  // The imported policy is usable in extends: the base resolves to it.
  const ast::Policy& app = r->policy();
  REQUIRE(app.extends.size() == 1u);
  CHECK(app.extends[0].text == "base");
  REQUIRE(app.bases.size() == 1u);
  CHECK(app.bases[0] == std::pair<size_t, size_t>{imp.resolved, 0});
  CHECK(base.policies[0].is_abstract);
  CHECK(base.policies[0].bases ==
        std::vector<std::pair<size_t, size_t>>{{base.imports[0].resolved, 0}});
}

TEST_CASE("import: std/ resolves in the standard library", "[parser]") {
  auto r = Clean("import \"std/linux.ward\"\n\npolicy app extends linux-base {}\n");
  const ast::Import& imp = MainFile(*r).imports.at(0);
  REQUIRE(imp.resolved != kNoFile);
  const std::string std_file = std::string(WARD_SOURCE_DIR) + "/policies/std/linux.ward";
  // Shown as written, so output does not depend on where std/ is installed.
  CHECK(r->sources.file(imp.resolved).display_path == "std/linux.ward");
  CHECK(r->sources.file(imp.resolved).real_path == std::filesystem::canonical(std_file).string());
  CHECK(r->program.file(imp.resolved)->is_std);
  CHECK(r->program.std_dir == std::string(WARD_SOURCE_DIR) + "/policies/std");
  CHECK(r->policy().bases == std::vector<std::pair<size_t, size_t>>{{imp.resolved, 0}});
}

TEST_CASE("import: the same file imported twice is loaded once", "[parser]") {
  // Three spellings of one path, and a second route through another file.
  const std::string source = R"(import "./base.ward"
import "base.ward"
import "./sub/../base.ward"
import "./other.ward"

policy app extends base, other {}
)";
  const std::string via = "import \"./base.ward\"\nabstract policy other extends base {}\n";
  auto r = Clean(source, {{"base.ward", "abstract policy base {}\n"}, {"other.ward", via}});
  const ast::File& main = MainFile(*r);
  REQUIRE(main.imports.size() == 4u);
  const FileId base = main.imports[0].resolved;
  REQUIRE(base != kNoFile);
  CHECK(main.imports[1].resolved == base);
  CHECK(main.imports[2].resolved == base);
  const ast::File& other = *r->program.file(main.imports[3].resolved);
  CHECK(other.imports.at(0).resolved == base);
  // std/syscalls.ward, test.ward, base.ward and other.ward: nothing twice.
  CHECK(r->sources.size() == 4u);
  CHECK(r->program.file(base)->policies.size() == 1u);
}

// ---- let ----------------------------------------------------------------

TEST_CASE("let: strings, lists, and `let x = a, b` as a list", "[parser]") {
  auto r = Clean(R"(let one  = "/srv"
let many = ["/a", "/b"]
let pair = "/c", "/d"

policy p {
  filesystem {
    allow read one
    allow read many
    allow read pair
  }
}
)");
  const ast::File& f = MainFile(*r);
  REQUIRE(f.lets.size() == 3u);
  CHECK(f.lets[0].name.text == "one");
  REQUIRE(f.lets[0].values.size() == 1u);
  CHECK(f.lets[0].values[0].kind == ast::ValueKind::kString);
  CHECK(f.lets[0].values[0].text == "/srv");
  REQUIRE(f.lets[1].values.size() == 1u);
  CHECK(f.lets[1].values[0].kind == ast::ValueKind::kList);
  CHECK(f.lets[1].values[0].items.size() == 2u);
  REQUIRE(f.lets[2].values.size() == 2u);
  CHECK(f.lets[2].values[1].text == "/d");

  const auto& rules = r->policy().filesystem->rules;
  REQUIRE(rules.size() == 3u);
  CHECK(Texts(rules[0].paths) == Strings{"/srv"});
  CHECK(Texts(rules[1].paths) == Strings{"/a", "/b"});
  CHECK(Texts(rules[2].paths) == Strings{"/c", "/d"});
  // A value taken from a let points at its use.
  CHECK(TextOf(*r, rules[1].paths[1].span) == "many");
}

TEST_CASE("let: ${name} interpolates a string let", "[parser]") {
  // The escaped `\${root}` is a literal `{` in a path: W1046 says so, and
  // nothing else is reported.
  auto r = CheckSource(R"(let root = "/srv"
let data = "${root}/data"

policy p {
  filesystem {
    allow read "${data}/in", "${root}", "/x${root}y"
    allow read "/literal/\${root}"
  }
}
)");
  INFO(r->text);
  REQUIRE(r->codes() == "W1046");
  const ast::Value& data = MainFile(*r).lets[1].values.at(0);
  REQUIRE(data.pieces.size() == 2u);
  CHECK(data.pieces[0].is_ref);
  CHECK(data.pieces[0].text == "root");
  CHECK(TextOf(*r, data.pieces[0].span) == "${root}");
  CHECK_FALSE(data.pieces[1].is_ref);
  CHECK(data.pieces[1].text == "/data");

  const auto& rules = r->policy().filesystem->rules;
  CHECK(Texts(rules.at(0).paths) == Strings{"/srv/data/in", "/srv", "/x/srvy"});
  // `\$` is a literal dollar sign: no interpolation.
  CHECK(Texts(rules.at(1).paths) == Strings{"/literal/${root}"});
}

TEST_CASE("let: a list let inside a list is flattened", "[parser]") {
  auto r = Clean(R"(let base  = ["/a", "/b"]
let more  = [base, "/c", [base]]
let hosts = ["example.com", "example.org"]

policy p {
  filesystem {
    allow read [more, "/d"]
  }
  network {
    allow tcp to [hosts, "example.net"] port 443
  }
}
)");
  const ast::Policy& p = r->policy();
  CHECK(Texts(p.filesystem->rules.at(0).paths) == Strings{"/a", "/b", "/c", "/a", "/b", "/d"});
  const auto& peers = p.network->rules.at(0).peers;
  REQUIRE(peers.size() == 3u);
  CHECK(peers[0].domain == "example.com");
  CHECK(peers[1].domain == "example.org");
  CHECK(peers[2].domain == "example.net");
}

// ---- groups and policies ------------------------------------------------

TEST_CASE("group: members, nested groups, and use in a rule", "[parser]") {
  auto r = Clean(R"(group @tools = [read, write, @basic-io]
group @more  = [@tools, openat, inotify_init1]

policy p {
  syscalls {
    allow @more, @system-service, close
  }
}
)");
  const ast::File& f = MainFile(*r);
  REQUIRE(f.groups.size() == 2u);
  CHECK(f.groups[0].name.text == "@tools");
  REQUIRE(f.groups[0].members.size() == 3u);
  CHECK(f.groups[0].members[0].name == "read");
  CHECK_FALSE(f.groups[0].members[0].is_group);
  CHECK(f.groups[0].members[2].name == "@basic-io");
  CHECK(f.groups[0].members[2].is_group);
  CHECK(f.groups[1].members[0].name == "@tools");
  CHECK(f.groups[1].members[0].is_group);

  const auto& targets = r->policy().syscalls->rules.at(0).targets;
  REQUIRE(targets.size() == 3u);
  CHECK(targets[0].name == "@more");
  CHECK(targets[0].is_group);
  CHECK(targets[1].name == "@system-service");
  CHECK(targets[1].is_group);
  CHECK(targets[2].name == "close");
  CHECK_FALSE(targets[2].is_group);
}

TEST_CASE("policy: abstract, extends A, B with resolved bases, and diamonds", "[parser]") {
  auto r = Clean(R"(abstract policy root {}
abstract policy left extends root {}
abstract policy right extends root {}
policy bottom extends left, right {}
)");
  const ast::File& f = MainFile(*r);
  const size_t file = f.id;
  REQUIRE(f.policies.size() == 4u);
  CHECK(f.policies[0].is_abstract);
  CHECK(f.policies[0].bases.empty());
  CHECK(f.policies[1].bases == std::vector<std::pair<size_t, size_t>>{{file, 0}});
  CHECK(f.policies[2].bases == std::vector<std::pair<size_t, size_t>>{{file, 0}});
  const ast::Policy& bottom = f.policies[3];
  CHECK_FALSE(bottom.is_abstract);
  CHECK(bottom.name.text == "bottom");
  REQUIRE(bottom.extends.size() == 2u);
  CHECK(bottom.extends[0].text == "left");
  CHECK(bottom.extends[1].text == "right");
  CHECK(bottom.bases == std::vector<std::pair<size_t, size_t>>{{file, 1}, {file, 2}});
  CHECK(TextOf(*r, bottom.span) == "policy bottom extends left, right {}");
}

TEST_CASE("policy: keywords double as names", "[parser]") {
  auto r = Clean(R"(abstract policy network {}
policy filesystem extends network {
  syscalls {
    allow read, write, kill
  }
}
)");
  CHECK(r->policy(1).name.text == "filesystem");
  CHECK(r->policy(1).bases.size() == 1u);
  const auto& targets = r->policy(1).syscalls->rules.at(0).targets;
  REQUIRE(targets.size() == 3u);
  CHECK(targets[2].name == "kill");
}

// ---- filesystem ---------------------------------------------------------

TEST_CASE("filesystem: every right, several paths per rule", "[parser]") {
  auto r = Clean(R"(policy p {
  filesystem {
    allow read "/usr", "/lib", "/etc/ssl"
    allow write "/out"
    allow exec "/usr/bin"
    allow read write exec "/work"
    deny read write "/work/secret"
    deny exec "/tmp"
  }
}
)");
  const auto& rules = r->policy().filesystem->rules;
  REQUIRE(rules.size() == 6u);
  CHECK(rules[0].allow);
  CHECK(rules[0].rights == ast::kRead);
  CHECK(Texts(rules[0].paths) == Strings{"/usr", "/lib", "/etc/ssl"});
  CHECK(rules[1].rights == ast::kWrite);
  CHECK(rules[2].rights == ast::kExec);
  CHECK(rules[3].rights == (ast::kRead | ast::kWrite | ast::kExec));
  CHECK_FALSE(rules[4].allow);
  CHECK(rules[4].rights == (ast::kRead | ast::kWrite));
  CHECK(Texts(rules[4].paths) == Strings{"/work/secret"});
  CHECK_FALSE(rules[5].allow);
  CHECK(rules[5].rights == ast::kExec);
  CHECK(TextOf(*r, rules[4].span) == "deny read write \"/work/secret\"");
  CHECK(TextOf(*r, rules[0].paths[2].span) == "\"/etc/ssl\"");
}

TEST_CASE("filesystem: // and trailing / are normalised; ~ and globs are kept", "[parser]") {
  auto r = Clean(R"(policy p {
  filesystem {
    allow read "//usr//lib/", "/", "/etc/ssl/", "///"
    allow read "~", "~/", "~/.cache/", "~//.config//app"
    allow read "/home/*/.ssh", "/srv/**/cache", "/**", "/var/log/*.log", "~/**/*.py"
  }
}
)");
  const auto& rules = r->policy().filesystem->rules;
  REQUIRE(rules.size() == 3u);
  CHECK(Texts(rules[0].paths) == Strings{"/usr/lib", "/", "/etc/ssl", "/"});
  CHECK(Texts(rules[1].paths) == Strings{"~", "~", "~/.cache", "~/.config/app"});
  CHECK(Texts(rules[2].paths) ==
        Strings{"/home/*/.ssh", "/srv/**/cache", "/**", "/var/log/*.log", "~/**/*.py"});
}

// ---- network ------------------------------------------------------------

TEST_CASE("network: egress `to`, ingress `from`, and each protocol", "[parser]") {
  auto r = Clean(R"(policy p {
  network {
    allow tcp to 10.0.0.1 port 443
    allow egress udp to 10.0.0.53 port 53
    allow icmp to 10.0.0.0/8
    allow to 10.0.0.2
    allow ingress tcp from 10.1.0.0/16 port 8080
    deny ingress from any
  }
}
)");
  const auto& rules = r->policy().network->rules;
  REQUIRE(rules.size() == 6u);

  CHECK(rules[0].allow);
  CHECK_FALSE(rules[0].is_unix);
  CHECK(rules[0].direction == ast::Direction::kEgress);
  CHECK_FALSE(rules[0].direction_span.valid());  // implicit
  CHECK(rules[0].protocol == ast::Protocol::kTcp);
  CHECK(rules[0].peer_keyword == ast::Direction::kEgress);

  CHECK(rules[1].direction == ast::Direction::kEgress);
  CHECK(TextOf(*r, rules[1].direction_span) == "egress");
  CHECK(rules[1].protocol == ast::Protocol::kUdp);
  CHECK(Ports(rules[1]) == Strings{"53-53"});

  CHECK(rules[2].protocol == ast::Protocol::kIcmp);
  CHECK(rules[2].ports.empty());  // every port (ICMP has none)

  CHECK(rules[3].protocol == ast::Protocol::kAll);  // omitted: tcp, udp and icmp
  CHECK_FALSE(rules[3].protocol_span.valid());
  CHECK(rules[3].ports.empty());

  CHECK(rules[4].direction == ast::Direction::kIngress);
  CHECK(rules[4].peer_keyword == ast::Direction::kIngress);
  CHECK(TextOf(*r, rules[4].peer_keyword_span) == "from");
  REQUIRE(rules[4].peers.size() == 1u);
  CHECK(rules[4].peers[0].kind == ast::PeerKind::kAddress);
  CHECK(rules[4].peers[0].prefix == V4(10, 1, 0, 0, 16));
  CHECK(Ports(rules[4]) == Strings{"8080-8080"});

  CHECK_FALSE(rules[5].allow);
  CHECK(rules[5].direction == ast::Direction::kIngress);
  CHECK(rules[5].protocol == ast::Protocol::kAll);
  REQUIRE(rules[5].peers.size() == 1u);
  CHECK(rules[5].peers[0].kind == ast::PeerKind::kAny);
}

TEST_CASE("network: port and ports, single, lists and ranges", "[parser]") {
  auto r = Clean(R"(policy p {
  network {
    allow tcp to any port 443
    allow tcp to any port 443, 22
    allow tcp to any ports 5432, 6379, 8000-8100
    allow udp to any port [53, 5353]
    allow to any ports 1-65535
    allow tcp to any
  }
}
)");
  const auto& rules = r->policy().network->rules;
  REQUIRE(rules.size() == 6u);
  CHECK(Ports(rules[0]) == Strings{"443-443"});
  CHECK(TextOf(*r, rules[0].ports_keyword_span) == "port");
  CHECK(Ports(rules[1]) == Strings{"443-443", "22-22"});
  CHECK(Ports(rules[2]) == Strings{"5432-5432", "6379-6379", "8000-8100"});
  CHECK(TextOf(*r, rules[2].ports_keyword_span) == "ports");
  CHECK(TextOf(*r, rules[2].ports[2].span) == "8000-8100");
  CHECK(Ports(rules[3]) == Strings{"53-53", "5353-5353"});
  CHECK(Ports(rules[4]) == Strings{"1-65535"});
  CHECK(rules[5].ports.empty());  // omitted: every port
}

TEST_CASE("network: loopback, any, domains and *.domain", "[parser]") {
  auto r = Clean(R"(policy p {
  network {
    allow tcp to loopback port 8080
    allow tcp to any port 443
    allow tcp to "github.com", "*.github.com", "GitHub.COM.", "*.Example.org" port 443
    allow tcp to "10.9.8.7", "fd00::1" port 443
  }
}
)");
  const auto& rules = r->policy().network->rules;
  REQUIRE(rules.size() == 4u);
  REQUIRE(rules[0].peers.size() == 1u);
  CHECK(rules[0].peers[0].kind == ast::PeerKind::kLoopback);
  REQUIRE(rules[1].peers.size() == 1u);
  CHECK(rules[1].peers[0].kind == ast::PeerKind::kAny);

  const auto& d = rules[2].peers;
  REQUIRE(d.size() == 4u);
  CHECK(d[0].kind == ast::PeerKind::kDomain);
  CHECK(d[0].domain == "github.com");
  CHECK(d[1].kind == ast::PeerKind::kWildcardDomain);
  CHECK(d[1].domain == "github.com");  // without the `*.`
  CHECK(TextOf(*r, d[1].span) == "\"*.github.com\"");
  // Names are lower-cased and a trailing dot is dropped.
  CHECK(d[2].kind == ast::PeerKind::kDomain);
  CHECK(d[2].domain == "github.com");
  CHECK(d[3].kind == ast::PeerKind::kWildcardDomain);
  CHECK(d[3].domain == "example.org");

  // An address written as a string is the address.
  const auto& a = rules[3].peers;
  REQUIRE(a.size() == 2u);
  CHECK(a[0].kind == ast::PeerKind::kAddress);
  CHECK(a[0].prefix == V4(10, 9, 8, 7, 32));
  CHECK(a[1].kind == ast::PeerKind::kAddress);
  CHECK(a[1].prefix == V6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128));
}

TEST_CASE("network: IPv4 and IPv6 addresses and CIDRs", "[parser]") {
  auto r = Clean(R"(policy p {
  network {
    allow tcp to 10.0.0.53, 169.254.169.254, 0.0.0.0/0, 10.20.0.0/16, 192.168.1.128/25 port 443
    allow tcp to ::1, fd00::/8, 2001:db8::8:800:200c:417a, ::ffff:10.0.0.1, ::/0 port 443
  }
}
)");
  const auto& v4 = r->policy().network->rules.at(0).peers;
  REQUIRE(v4.size() == 5u);
  for (const ast::Peer& p : v4) {
    CHECK(p.kind == ast::PeerKind::kAddress);
    CHECK_FALSE(p.prefix.v6);
  }
  CHECK(v4[0].prefix == V4(10, 0, 0, 53, 32));
  CHECK(v4[1].prefix == V4(169, 254, 169, 254, 32));
  CHECK(v4[2].prefix == V4(0, 0, 0, 0, 0));
  CHECK(v4[3].prefix == V4(10, 20, 0, 0, 16));
  CHECK(v4[4].prefix == V4(192, 168, 1, 128, 25));
  CHECK(TextOf(*r, v4[3].span) == "10.20.0.0/16");

  const auto& v6 = r->policy().network->rules.at(1).peers;
  REQUIRE(v6.size() == 5u);
  for (const ast::Peer& p : v6) {
    CHECK(p.kind == ast::PeerKind::kAddress);
    CHECK(p.prefix.v6);
  }
  CHECK(v6[0].prefix == V6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128));
  CHECK(v6[1].prefix == V6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 8));
  CHECK(v6[2].prefix ==
        V6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0x08, 0x08, 0x00, 0x20, 0x0c, 0x41, 0x7a}, 128));
  CHECK(v6[3].prefix == V6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}, 128));
  CHECK(v6[4].prefix == V6({}, 0));
}

TEST_CASE("network: unix sockets by path and by abstract name", "[parser]") {
  auto r = Clean(R"(policy p {
  network {
    allow unix "/run/app.sock", "@dbus-session"
    deny unix "//var/run//docker.sock"
  }
}
)");
  const auto& rules = r->policy().network->rules;
  REQUIRE(rules.size() == 2u);
  CHECK(rules[0].is_unix);
  CHECK(rules[0].allow);
  REQUIRE(rules[0].sockets.size() == 2u);
  CHECK_FALSE(rules[0].sockets[0].abstract);
  CHECK(rules[0].sockets[0].name == "/run/app.sock");
  CHECK(rules[0].sockets[1].abstract);
  CHECK(rules[0].sockets[1].name == "dbus-session");  // without the `@`
  CHECK(TextOf(*r, rules[0].sockets[1].span) == "\"@dbus-session\"");
  CHECK(rules[1].is_unix);
  CHECK_FALSE(rules[1].allow);
  REQUIRE(rules[1].sockets.size() == 1u);
  CHECK(rules[1].sockets[0].name == "/var/run/docker.sock");
}

TEST_CASE("network: netlink protocols", "[parser]") {
  auto r = Clean(R"(let nl = [route]
policy p {
  network {
    allow netlink route
    deny netlink nl
  }
}
)");
  const auto& rules = r->policy().network->rules;
  REQUIRE(rules.size() == 2u);
  CHECK(rules[0].is_netlink);
  CHECK_FALSE(rules[0].is_unix);
  CHECK(rules[0].allow);
  REQUIRE(rules[0].netlink.size() == 1u);
  CHECK(rules[0].netlink[0].text == "route");
  CHECK(TextOf(*r, rules[0].netlink[0].span) == "route");
  CHECK(rules[1].is_netlink);
  CHECK_FALSE(rules[1].allow);
  REQUIRE(rules[1].netlink.size() == 1u);
  CHECK(rules[1].netlink[0].text == "route");
  // `netlink` is a keyword that still names things (a policy, a let).
  CHECK(Clean("let netlink = 1\npolicy netlink { network { allow netlink route } }")
            ->policy()
            .name.text == "netlink");
}

// ---- syscalls -----------------------------------------------------------

TEST_CASE("syscalls: arch, and default with each action", "[parser]") {
  struct Case {
    std::string action;
    ast::ActionKind kind;
    int errno_value;
  };
  const Case cases[] = {
      {"allow", ast::ActionKind::kAllow, 0},
      {"errno EPERM", ast::ActionKind::kErrno, 1},
      {"errno 13", ast::ActionKind::kErrno, 13},
      {"kill", ast::ActionKind::kKill, 0},
      {"kill-thread", ast::ActionKind::kKillThread, 0},
      {"trap", ast::ActionKind::kTrap, 0},
      {"log", ast::ActionKind::kLog, 0},
      {"notify", ast::ActionKind::kNotify, 0},
  };
  for (const Case& c : cases) {
    INFO("default " << c.action);
    auto r = Clean("policy p {\n  syscalls {\n    arch x86_64, aarch64\n    default " + c.action +
                   "\n  }\n}\n");
    const ast::SyscallsSection& s = *r->policy().syscalls;
    REQUIRE(s.arches.size() == 2u);
    CHECK(s.arches[0].text == "x86_64");
    CHECK(s.arches[1].text == "aarch64");
    REQUIRE(s.default_action.has_value());
    CHECK(s.default_action->kind == c.kind);
    CHECK(s.default_action->errno_value == c.errno_value);
    CHECK(TextOf(*r, s.default_action->span) == "default " + c.action);
    CHECK(s.rules.empty());
  }

  auto bare = Clean("policy p {\n  syscalls {}\n}\n");
  CHECK(bare->policy().syscalls->arches.empty());  // the default, x86_64
  CHECK_FALSE(bare->policy().syscalls->default_action.has_value());
}

TEST_CASE("syscalls: rules with each action; errno by name or number", "[parser]") {
  auto r = Clean(R"(policy p {
  syscalls {
    allow read, write
    errno EPERM mount
    errno 13 chmod
    errno EACCES fchmod
    kill ptrace, bpf
    kill-thread tkill
    trap uname
    log execve
    notify openat
  }
}
)");
  const auto& rules = r->policy().syscalls->rules;
  REQUIRE(rules.size() == 9u);
  CHECK(rules[0].action.kind == ast::ActionKind::kAllow);
  REQUIRE(rules[0].targets.size() == 2u);
  CHECK(rules[0].targets[1].name == "write");
  CHECK(rules[0].conditions.empty());
  CHECK(rules[1].action.kind == ast::ActionKind::kErrno);
  CHECK(rules[1].action.errno_text == "EPERM");
  CHECK(rules[1].action.errno_value == 1);
  CHECK(TextOf(*r, rules[1].action.errno_span) == "EPERM");
  CHECK(rules[2].action.kind == ast::ActionKind::kErrno);
  CHECK(rules[2].action.errno_value == 13);
  CHECK(rules[3].action.errno_value == 13);
  CHECK(rules[4].action.kind == ast::ActionKind::kKill);
  CHECK(rules[4].targets.size() == 2u);
  CHECK(rules[5].action.kind == ast::ActionKind::kKillThread);
  CHECK(rules[5].targets.at(0).name == "tkill");
  CHECK(rules[6].action.kind == ast::ActionKind::kTrap);
  CHECK(rules[7].action.kind == ast::ActionKind::kLog);
  CHECK(rules[8].action.kind == ast::ActionKind::kNotify);
  CHECK(TextOf(*r, rules[8].span) == "notify openat");
}

TEST_CASE("syscalls: conditions with every operator, `in`, `not in` and `and`", "[parser]") {
  auto r = Clean(R"(policy p {
  syscalls {
    allow socket if arg0 == AF_INET
    allow socket if arg0 != AF_INET6
    allow socket if arg1 < 3
    allow socket if arg1 <= 3
    allow socket if arg2 > 0
    allow socket if arg2 >= 17
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    allow socket if arg0 in [AF_UNIX, AF_INET, AF_INET6]
    errno EAFNOSUPPORT socket if arg0 not in [AF_PACKET, AF_NETLINK,]
    allow socket if arg0 == AF_INET and arg1 == SOCK_STREAM and arg2 != IPPROTO_UDP
  }
}
)");
  const auto& rules = r->policy().syscalls->rules;
  REQUIRE(rules.size() == 10u);
  auto only = [&](size_t i) -> const ast::Condition& {
    REQUIRE(rules[i].conditions.size() == 1u);
    return rules[i].conditions[0];
  };
  const std::pair<ast::CondOp, uint64_t> simple[] = {
      {ast::CondOp::kEq, 2}, {ast::CondOp::kNe, 10}, {ast::CondOp::kLt, 3},
      {ast::CondOp::kLe, 3}, {ast::CondOp::kGt, 0},  {ast::CondOp::kGe, 17},
  };
  for (size_t i = 0; i < 6; ++i) {
    INFO("rule " << i);
    const ast::Condition& c = only(i);
    CHECK(c.op == simple[i].first);
    REQUIRE(c.values.size() == 1u);
    CHECK(c.values[0].value == simple[i].second);
  }
  CHECK(only(0).arg == 0);
  CHECK(only(0).arg_name.text == "arg0");
  CHECK(only(2).arg == 1);
  CHECK(only(4).arg == 2);
  CHECK(TextOf(*r, only(0).span) == "arg0 == AF_INET");

  const ast::Condition& mask = only(6);
  CHECK(mask.op == ast::CondOp::kMaskedEq);
  CHECK(mask.mask.value == 0x10000000);
  CHECK(mask.values.at(0).value == 0x10000000);
  CHECK(TextOf(*r, mask.mask.span) == "CLONE_NEWUSER");

  const ast::Condition& in = only(7);
  CHECK(in.op == ast::CondOp::kIn);
  REQUIRE(in.values.size() == 3u);
  CHECK(in.values[0].value == 1);
  CHECK(in.values[1].value == 2);
  CHECK(in.values[2].value == 10);

  const ast::Condition& not_in = only(8);
  CHECK(not_in.op == ast::CondOp::kNotIn);
  REQUIRE(not_in.values.size() == 2u);
  CHECK(not_in.values[0].value == 17);
  CHECK(not_in.values[1].value == 16);
  CHECK(rules[8].action.errno_value == 97);  // EAFNOSUPPORT

  const auto& all = rules[9].conditions;
  REQUIRE(all.size() == 3u);
  CHECK(all[0].arg == 0);
  CHECK(all[0].values.at(0).value == 2);
  CHECK(all[1].arg == 1);
  CHECK(all[1].values.at(0).value == 1);
  CHECK(all[2].arg == 2);
  CHECK(all[2].op == ast::CondOp::kNe);
  CHECK(all[2].values.at(0).value == 17);
}

TEST_CASE("syscalls: or-ed constants, hex, and negative numbers on a signed int", "[parser]") {
  auto r = Clean(R"(policy p {
  syscalls {
    allow mprotect if arg2 == PROT_READ | PROT_WRITE
    allow socket if arg1 == SOCK_STREAM | SOCK_CLOEXEC | 0x800
    allow personality if arg0 == 0xffffffff
    allow personality if arg0 == 0X10
    allow kill if arg0 == -1
    allow setpriority if arg2 >= -20
  }
}
)");
  const auto& rules = r->policy().syscalls->rules;
  REQUIRE(rules.size() == 6u);
  const ast::Expr& ored = rules[0].conditions.at(0).values.at(0);
  REQUIRE(ored.terms.size() == 2u);
  CHECK(ored.terms[0].text == "PROT_READ");
  CHECK(ored.terms[1].text == "PROT_WRITE");
  CHECK(ored.value == 3);
  CHECK(TextOf(*r, ored.span) == "PROT_READ | PROT_WRITE");
  CHECK(rules[1].conditions.at(0).values.at(0).value == (1 | 0x80000 | 0x800));
  CHECK(rules[2].conditions.at(0).values.at(0).value == 0xffffffff);
  CHECK(rules[3].conditions.at(0).values.at(0).value == 0x10);
  // Negative numbers are kept in two's complement.
  CHECK(rules[4].conditions.at(0).values.at(0).value == 0xffffffffffffffffull);
  CHECK(rules[5].conditions.at(0).values.at(0).value == static_cast<uint64_t>(int64_t{-20}));
}

// ---- process, limits, targets, description, labels ----------------------

TEST_CASE("process: no_new_privileges, capabilities, user, env", "[parser]") {
  auto r = Clean(R"(policy p {
  process {
    no_new_privileges
    capabilities drop all
    user 1000:1000
    env allow ["PATH", "HOME", "LC_*"]
  }
}
policy q {
  process {
    capabilities keep [CAP_NET_BIND_SERVICE, CAP_CHOWN, CAP_NET_BIND_SERVICE]
    user 0:65534
    env allow "TERM"
    env allow ["LANG"]
  }
}
)");
  const ast::ProcessSection& p = *r->policy(0).process;
  REQUIRE(p.no_new_privileges.has_value());
  CHECK(TextOf(*r, *p.no_new_privileges) == "no_new_privileges");
  REQUIRE(p.capabilities.size() == 1u);
  CHECK(p.capabilities[0].drop);
  CHECK(p.capabilities[0].all);
  CHECK(p.capabilities[0].names.empty());
  REQUIRE(p.user.has_value());
  CHECK(p.user->uid == 1000);
  CHECK(p.user->gid == 1000);
  REQUIRE(p.env.size() == 1u);
  CHECK(Texts(p.env[0].names) == Strings{"PATH", "HOME", "LC_*"});

  const ast::ProcessSection& q = *r->policy(1).process;
  CHECK_FALSE(q.no_new_privileges.has_value());
  REQUIRE(q.capabilities.size() == 1u);
  CHECK_FALSE(q.capabilities[0].drop);
  CHECK_FALSE(q.capabilities[0].all);
  REQUIRE(q.capabilities[0].names.size() == 2u);  // a repeat counts once
  CHECK(q.capabilities[0].names[0].text == "CAP_NET_BIND_SERVICE");
  CHECK(q.capabilities[0].names[1].text == "CAP_CHOWN");
  CHECK(q.user->uid == 0);
  CHECK(q.user->gid == 65534);
  REQUIRE(q.env.size() == 2u);
  CHECK(Texts(q.env[0].names) == Strings{"TERM"});
  CHECK(Texts(q.env[1].names) == Strings{"LANG"});
}

TEST_CASE("limits: values in milli-CPUs, bytes, counts and milliseconds", "[parser]") {
  auto r = Clean(R"(policy p {
  limits {
    cpus 2
    memory 4GiB
    pids 512
    open_files 4096
    disk 10GiB
    cpu_time 30s
    timeout 2h
  }
}
policy q {
  limits {
    cpus 0.5
    memory 4G
    disk 512KiB
    cpu_time 1500ms
    timeout 5m
  }
}
)");
  const auto& p = r->policy(0).limits->limits;
  REQUIRE(p.size() == 7u);
  const std::pair<ast::LimitKind, uint64_t> expected[] = {
      {ast::LimitKind::kCpus, 2000},
      {ast::LimitKind::kMemory, 4ull << 30},
      {ast::LimitKind::kPids, 512},
      {ast::LimitKind::kOpenFiles, 4096},
      {ast::LimitKind::kDisk, 10ull << 30},
      {ast::LimitKind::kCpuTime, 30000},
      {ast::LimitKind::kTimeout, 2 * 3600 * 1000},
  };
  for (size_t i = 0; i < p.size(); ++i) {
    INFO(p[i].key.text);
    CHECK(p[i].kind == expected[i].first);
    CHECK(p[i].value == expected[i].second);
  }
  CHECK(TextOf(*r, p[1].raw.span) == "4GiB");

  const auto& q = r->policy(1).limits->limits;
  REQUIRE(q.size() == 5u);
  CHECK(q[0].value == 500);
  CHECK(q[1].value == 4000000000ull);  // `G` is 10^9, as in Kubernetes
  CHECK(q[2].value == 512 * 1024);
  CHECK(q[3].value == 1500);
  CHECK(q[4].value == 5 * 60 * 1000);
}

TEST_CASE("target: firecracker settings and flags", "[parser]") {
  auto r = Clean(R"(policy p {
  target firecracker {
    kernel "/var/lib/ward/vmlinux"
    rootfs "/x" read_only
    network_rate 100Mbit
    vcpus 2
  }
}
)");
  REQUIRE(r->policy().targets.size() == 1u);
  const ast::TargetSection& t = r->policy().targets[0];
  CHECK(t.name.text == "firecracker");
  const auto& e = t.entries;
  REQUIRE(e.size() == 4u);
  CHECK(e[0].key.text == "kernel");
  CHECK(e[0].value.kind == ast::ValueKind::kString);
  CHECK(e[0].value.text == "/var/lib/ward/vmlinux");
  CHECK(e[0].flags.empty());
  CHECK(e[1].key.text == "rootfs");
  CHECK(e[1].value.text == "/x");
  REQUIRE(e[1].flags.size() == 1u);
  CHECK(e[1].flags[0].text == "read_only");
  CHECK(TextOf(*r, e[1].span) == "rootfs \"/x\" read_only");
  CHECK(e[2].key.text == "network_rate");
  CHECK(e[2].value.kind == ast::ValueKind::kWord);
  CHECK(e[2].value.text == "100Mbit");
  CHECK(e[3].key.text == "vcpus");
  CHECK(e[3].value.text == "2");
}

TEST_CASE("target: kubernetes namespace and pod_selector", "[parser]") {
  auto r = Clean(R"(policy p {
  target kubernetes {
    namespace "agents"
    pod_selector { app = "x", tier = "web" }
  }
}
)");
  const auto& e = r->policy().targets.at(0).entries;
  REQUIRE(e.size() == 2u);
  CHECK(e[0].key.text == "namespace");
  CHECK(e[0].value.text == "agents");
  CHECK(e[1].key.text == "pod_selector");
  CHECK(e[1].labels == std::map<std::string, std::string>{{"app", "x"}, {"tier", "web"}});
}

TEST_CASE("description and labels, with string escapes", "[parser]") {
  auto r = Clean(R"(policy p {
  description "Runs \"tests\"\tin C:\\ci\n"
  labels { team = "platform", tier = "untrusted" }
  labels { owner = "a@example.com" }
}
)");
  const ast::Policy& p = r->policy();
  REQUIRE(p.description.has_value());
  CHECK(p.description->first == "Runs \"tests\"\tin C:\\ci\n");
  REQUIRE(p.labels.size() == 3u);
  CHECK(p.labels[0].key.text == "team");
  CHECK(p.labels[0].value == "platform");
  CHECK(TextOf(*r, p.labels[0].value_span) == "\"platform\"");
  CHECK(p.labels[1].key.text == "tier");
  CHECK(p.labels[1].value == "untrusted");
  CHECK(p.labels[2].key.text == "owner");
  CHECK(p.labels[2].value == "a@example.com");
}

// ---- lexical ------------------------------------------------------------

TEST_CASE("comments: //, # and /* */, also right after a value", "[parser]") {
  auto r = Clean(R"(ward 1 # the version
// a line comment
/* a block comment
   over two lines, with "quotes" and { braces */
policy p { /* inline */
  network {
    allow tcp to 10.0.0.1// no space before the comment
      port 443 # hash comment
  }
  filesystem { allow read "/a"/* between */, "/b" }  // trailing
}
# the end
)");
  const ast::NetRule& rule = r->policy().network->rules.at(0);
  REQUIRE(rule.peers.size() == 1u);
  CHECK(rule.peers[0].prefix == V4(10, 0, 0, 1, 32));
  CHECK(Ports(rule) == Strings{"443-443"});
  CHECK(Texts(r->policy().filesystem->rules.at(0).paths) == Strings{"/a", "/b"});
}

TEST_CASE("lists continue over lines after a comma", "[parser]") {
  auto r = Clean(R"(let dirs = [
  "/a",
  "/b",
]
group @g = [
  read,
  write,
]

policy p {
  filesystem {
    allow read "/c",
               "/d",
               dirs
  }
  network {
    allow tcp to "example.com",
                 "example.org"
              port 80,
                   443
  }
  syscalls {
    kill ptrace, bpf,
         kexec_load
  }
}
)");
  const ast::Policy& p = r->policy();
  CHECK(Texts(p.filesystem->rules.at(0).paths) == Strings{"/c", "/d", "/a", "/b"});
  CHECK(p.network->rules.at(0).peers.size() == 2u);
  CHECK(Ports(p.network->rules.at(0)) == Strings{"80-80", "443-443"});
  REQUIRE(p.syscalls->rules.size() == 1u);
  CHECK(p.syscalls->rules[0].targets.size() == 3u);
  CHECK(MainFile(*r).groups.at(0).members.size() == 2u);
}

// ---- the example of language.md -----------------------------------------

// Verbatim from language.md § A complete example.
const std::string kExample = ward::test::ReadTestFile("language/testdata/language_example.ward");

TEST_CASE("the complete example of language.md checks clean", "[parser]") {
  auto r = Clean(kExample, {{"registries.ward",
                             "// Mirrors shared by the agent policies.\n"
                             "abstract policy registry-mirrors {\n"
                             "  network { allow tcp to \"mirror.example.com\" port 443 }\n"
                             "}\n"}});
  const ast::File& f = MainFile(*r);
  CHECK(f.version->text == "1");
  REQUIRE(f.imports.size() == 2u);
  REQUIRE(f.imports[0].resolved != kNoFile);
  CHECK(r->program.file(f.imports[0].resolved)->is_std);
  CHECK(r->sources.file(f.imports[1].resolved).real_path == "registries.ward");

  const ast::Policy& p = r->policy();
  CHECK(p.name.text == "coding-agent");
  const ast::Policy& base = r->program.file(p.bases.at(0).first)->policies.at(p.bases[0].second);
  CHECK(base.name.text == "linux-base");
  CHECK(p.description->first == "Coding agent that edits one repository and installs packages");
  CHECK(p.labels.size() == 2u);

  const auto& fs = p.filesystem->rules;
  REQUIRE(fs.size() == 5u);
  CHECK(Texts(fs[1].paths) == Strings{"/workspace"});
  CHECK(fs[2].rights == ast::kExec);
  CHECK_FALSE(fs[3].allow);
  CHECK(Texts(fs[3].paths) == Strings{"~/.ssh", "~/.aws", "~/.config/gcloud", "~/.netrc"});

  const auto& net = p.network->rules;
  REQUIRE(net.size() == 6u);
  REQUIRE(net[0].peers.size() == 3u);
  CHECK(net[0].peers[2].domain == "files.pythonhosted.org");
  CHECK(net[1].peers.at(0).kind == ast::PeerKind::kWildcardDomain);
  CHECK(Ports(net[1]) == Strings{"443-443", "22-22"});
  CHECK(net[2].peers.at(0).prefix == V4(10, 0, 0, 53, 32));
  CHECK_FALSE(net[3].allow);
  CHECK(net[3].protocol == ast::Protocol::kAll);
  CHECK(net[3].peers.at(0).prefix == V4(169, 254, 169, 254, 32));
  CHECK(Ports(net[4]) == Strings{"5432-5432", "6379-6379", "8000-8100"});
  CHECK(net[5].direction == ast::Direction::kIngress);

  const ast::SyscallsSection& sys = *p.syscalls;
  CHECK(sys.arches.size() == 2u);
  CHECK(sys.default_action->errno_value == 1);
  REQUIRE(sys.rules.size() == 5u);
  CHECK(sys.rules[1].conditions.at(0).mask.value == 0x10000000);
  CHECK(sys.rules[2].action.errno_value == 38);  // ENOSYS
  CHECK(sys.rules[4].targets.size() == 8u);

  CHECK(p.process->user->uid == 1000);
  CHECK(p.limits->limits.at(1).value == 4ull << 30);
  REQUIRE(p.targets.size() == 2u);
  CHECK(p.targets[0].entries.size() == 3u);
  CHECK(p.targets[1].entries.at(1).labels.at("app") == "coding-agent");
}

}  // namespace
}  // namespace ward
