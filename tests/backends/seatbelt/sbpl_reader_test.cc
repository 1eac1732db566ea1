// The SBPL reader (sbpl_reader.h) against a hand-written table of profiles
// and the answers the documented semantics give. The table is written from
// the SBPL documentation, never from what the seatbelt backend emits: it is
// what makes the reader a fair judge of the backend.
#include "tests/backends/seatbelt/sbpl_reader.h"

#include <catch2/catch.hpp>

namespace ward::test {
namespace {

using sbpl::Profile;
using sbpl::Query;

Query File(const std::string& op, const std::string& path) {
  Query q;
  q.operation = op;
  q.path = path;
  return q;
}

Query Net(const std::string& op, const std::string& proto, const std::string& addr, uint16_t port) {
  Query q;
  q.operation = op;
  q.protocol = proto;
  q.address = addr;
  q.port = port;
  return q;
}

Query Unix(const std::string& path) {
  Query q;
  q.operation = "network-outbound";
  q.path = path;
  q.unix_socket = true;
  return q;
}

Query Named(const std::string& op, const std::string& name) {
  Query q;
  q.operation = op;
  q.name = name;
  return q;
}

struct Row {
  const char* profile;
  Query query;
  bool allowed;
};

TEST_CASE("sbpl reader: the hand-written table") {
  const std::vector<Row> rows = {
      // The default decides when no rule matches.
      {"(version 1)(deny default)", File("file-read-data", "/etc/hosts"), false},
      {"(version 1)(allow default)", File("file-read-data", "/etc/hosts"), true},
      {"(version 1)(deny default)", Net("network-outbound", "tcp", "1.2.3.4", 443), false},
      // subpath: the path and everything under it, on a component boundary.
      {"(version 1)(deny default)(allow file-read* (subpath \"/usr\"))",
       File("file-read-data", "/usr"), true},
      {"(version 1)(deny default)(allow file-read* (subpath \"/usr\"))",
       File("file-read-data", "/usr/bin/env"), true},
      {"(version 1)(deny default)(allow file-read* (subpath \"/usr\"))",
       File("file-read-data", "/usrx"), false},
      {"(version 1)(deny default)(allow file-read* (subpath \"/usr\"))",
       File("file-read-data", "/"), false},
      {"(version 1)(deny default)(allow file-read* (subpath \"/\"))",
       File("file-read-data", "/anything/at/all"), true},
      // literal: the path only.
      {"(version 1)(deny default)(allow file-read* (literal \"/etc/hosts\"))",
       File("file-read-data", "/etc/hosts"), true},
      {"(version 1)(deny default)(allow file-read* (literal \"/etc/hosts\"))",
       File("file-read-data", "/etc/hosts/x"), false},
      {"(version 1)(deny default)(allow file-read* (path \"/etc\"))",
       File("file-read-data", "/etc"), true},
      // The last matching rule wins, whatever is more specific.
      {"(version 1)(deny default)(allow file-read* (subpath \"/a\"))(deny file-read* (subpath "
       "\"/a/b\"))",
       File("file-read-data", "/a/b/c"), false},
      {"(version 1)(deny default)(allow file-read* (subpath \"/a\"))(deny file-read* (subpath "
       "\"/a/b\"))",
       File("file-read-data", "/a/c"), true},
      {"(version 1)(deny default)(deny file-read* (subpath \"/a/b\"))(allow file-read* (subpath "
       "\"/a\"))",
       File("file-read-data", "/a/b/c"), true},
      {"(version 1)(deny default)(allow file-read* (subpath \"/\"))(deny file-read*)",
       File("file-read-data", "/x"), false},
      // Operations: a trailing * covers the operations it prefixes.
      {"(version 1)(deny default)(allow file-read* (subpath \"/x\"))",
       File("file-write-data", "/x/y"), false},
      {"(version 1)(deny default)(allow file* (subpath \"/x\"))", File("file-write-data", "/x/y"),
       true},
      {"(version 1)(deny default)(allow file-read-metadata (literal \"/\"))",
       File("file-read-data", "/"), false},
      {"(version 1)(deny default)(allow file-read-metadata (literal \"/\"))",
       File("file-read-metadata", "/"), true},
      {"(version 1)(deny default)(allow process-exec (subpath \"/bin\"))",
       File("process-exec", "/bin/sh"), true},
      {"(version 1)(deny default)(allow file-read* (subpath \"/bin\"))",
       File("process-exec", "/bin/sh"), false},
      // file-link (link(2)) is not one of file-write*; file* names it.
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))", File("file-link", "/w/a"),
       false},
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))",
       File("file-write-create", "/w/a"), true},
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))",
       File("file-write-unlink", "/w/a"), true},
      {"(version 1)(deny default)(allow file* (subpath \"/w\"))", File("file-link", "/w/a"), true},
      {"(version 1)(deny default)(allow file* (subpath \"/w\"))(deny file-link)",
       File("file-link", "/w/a"), false},
      {"(version 1)(deny default)(allow file* (subpath \"/w\"))(deny file-link)",
       File("file-write-create", "/w/a"), true},
      // A deny of one operation leaves the others of a wildcard grant.
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))(deny file-write-unlink "
       "(literal \"/w/a\"))",
       File("file-write-unlink", "/w/a"), false},
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))(deny file-write-unlink "
       "(literal \"/w/a\"))",
       File("file-write-unlink", "/w/a/b"), true},
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))(deny file-write-unlink "
       "(literal \"/w/a\"))",
       File("file-write-create", "/w/a"), true},
      {"(version 1)(deny default)(allow file-write* (subpath \"/w\"))(deny file-write-unlink "
       "(literal \"/w/a\"))",
       File("file-write-data", "/w/a"), true},
      // Regular expressions are searched; anchors are the profile's to write.
      {"(version 1)(deny default)(allow file-read* (regex #\"^/a/[^/]+/c(/.*)?$\"))",
       File("file-read-data", "/a/b/c"), true},
      {"(version 1)(deny default)(allow file-read* (regex #\"^/a/[^/]+/c(/.*)?$\"))",
       File("file-read-data", "/a/b/c/d"), true},
      {"(version 1)(deny default)(allow file-read* (regex #\"^/a/[^/]+/c(/.*)?$\"))",
       File("file-read-data", "/a/c"), false},
      {"(version 1)(deny default)(allow file-read* (regex #\"^/a/[^/]+/c(/.*)?$\"))",
       File("file-read-data", "/a/b/x/c"), false},
      {"(version 1)(deny default)(allow file-read* (regex #\"foo\"))",
       File("file-read-data", "/x/foo/y"), true},
      {"(version 1)(deny default)(allow file-read* (regex #\"^/x\\.y$\"))",
       File("file-read-data", "/xzy"), false},
      {"(version 1)(deny default)(allow file-read* (regex #\"^/x\\.y$\"))",
       File("file-read-data", "/x.y"), true},
      // Several filters in one rule: any of them; require-* combine.
      {"(version 1)(deny default)(allow file-read* (literal \"/a\") (literal \"/b\"))",
       File("file-read-data", "/b"), true},
      {"(version 1)(deny default)(allow file-read* (require-all (subpath \"/a\") (require-not "
       "(subpath \"/a/b\"))))",
       File("file-read-data", "/a/x"), true},
      {"(version 1)(deny default)(allow file-read* (require-all (subpath \"/a\") (require-not "
       "(subpath \"/a/b\"))))",
       File("file-read-data", "/a/b/x"), false},
      {"(version 1)(deny default)(allow file-read* (require-any (subpath \"/a\") (subpath "
       "\"/b\")))",
       File("file-read-data", "/b/x"), true},
      // Strings: \" and \\ escapes.
      {"(version 1)(deny default)(allow file-read* (literal \"/a\\\"b\"))",
       File("file-read-data", "/a\"b"), true},
      // Comments.
      {"(version 1) ; c\n(deny default)\n;; (allow default)\n", File("file-read-data", "/"), false},
      // Network: `*` or `localhost` with a port or `*`.
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:443\"))",
       Net("network-outbound", "tcp", "1.2.3.4", 443), true},
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:443\"))",
       Net("network-outbound", "udp", "1.2.3.4", 443), false},
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:443\"))",
       Net("network-outbound", "tcp", "2001:db8::1", 80), false},
      {"(version 1)(deny default)(allow network-outbound (remote ip \"localhost:53\"))",
       Net("network-outbound", "udp", "127.0.0.1", 53), true},
      {"(version 1)(deny default)(allow network-outbound (remote ip \"localhost:53\"))",
       Net("network-outbound", "tcp", "::1", 53), true},
      {"(version 1)(deny default)(allow network-outbound (remote ip \"localhost:53\"))",
       Net("network-outbound", "udp", "10.0.0.1", 53), false},
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:*\"))",
       Net("network-outbound", "tcp", "9.9.9.9", 12345), true},
      {"(version 1)(deny default)(allow network* (remote tcp \"*:22\"))",
       Net("network-outbound", "tcp", "9.9.9.9", 22), true},
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:22\"))(deny "
       "network-outbound (remote tcp \"localhost:22\"))",
       Net("network-outbound", "tcp", "127.0.0.1", 22), false},
      {"(version 1)(deny default)(allow network-inbound (local tcp \"*:8080\"))",
       Net("network-inbound", "tcp", "10.1.1.1", 8080), true},
      {"(version 1)(deny default)(allow network-inbound (local tcp \"*:8080\"))",
       Net("network-inbound", "tcp", "10.1.1.1", 8081), false},
      {"(version 1)(deny default)(allow network-inbound (local tcp \"*:8080\"))",
       Net("network-outbound", "tcp", "10.1.1.1", 8080), false},
      // Unix sockets by path.
      {"(version 1)(deny default)(allow network-outbound (remote unix-socket (path-literal "
       "\"/var/run/x.sock\")))",
       Unix("/var/run/x.sock"), true},
      {"(version 1)(deny default)(allow network-outbound (remote unix-socket (path-literal "
       "\"/var/run/x.sock\")))",
       Unix("/var/run/y.sock"), false},
      {"(version 1)(deny default)(allow network-outbound (remote unix-socket (path-literal "
       "\"/var/run/x.sock\")))",
       Net("network-outbound", "tcp", "1.2.3.4", 443), false},
      {"(version 1)(deny default)(allow network-outbound (remote tcp \"*:*\"))",
       Unix("/var/run/x.sock"), false},
      // Named services.
      {"(version 1)(deny default)(allow mach-lookup (global-name \"com.apple.logd\"))",
       Named("mach-lookup", "com.apple.logd"), true},
      {"(version 1)(deny default)(allow mach-lookup (global-name \"com.apple.logd\"))",
       Named("mach-lookup", "com.apple.lsd.mapdb"), false},
      {"(version 1)(deny default)(allow sysctl-read (sysctl-name-prefix \"hw.optional.\"))",
       Named("sysctl-read", "hw.optional.avx2_0"), true},
      {"(version 1)(deny default)(allow sysctl-read (sysctl-name \"hw.ncpu\"))",
       Named("sysctl-read", "kern.hostname"), false},
  };
  for (const Row& row : rows) {
    INFO(row.profile << "\nop " << row.query.operation << " path " << row.query.path << " addr "
                     << row.query.address << " port " << row.query.port << " name "
                     << row.query.name);
    Profile p(row.profile);
    CHECK(p.Allows(row.query) == row.allowed);
  }
}

TEST_CASE("sbpl reader: what it refuses") {
  CHECK_THROWS_AS(Profile("(deny default)"), sbpl::Error);
  CHECK_THROWS_AS(Profile("(version 1)"), sbpl::Error);
  CHECK_THROWS_AS(Profile("(version 1)(deny default)(allow file-read-everything)"), sbpl::Error);
  CHECK_THROWS_AS(Profile("(version 1)(deny default)(allow file-read* (subpath \"/a\")"),
                  sbpl::Error);
  CHECK_THROWS_AS(Profile("(version 1)(deny default)(allow (subpath \"/a\"))"), sbpl::Error);
  Profile unknown_filter("(version 1)(deny default)(allow file-read* (vnode-kind \"x\"))");
  CHECK_THROWS_AS(unknown_filter.Allows(File("file-read-data", "/a")), sbpl::Error);
  Profile bad_host(
      "(version 1)(deny default)(allow network-outbound (remote tcp \"10.0.0.1:80\"))");
  CHECK_THROWS_AS(bad_host.Allows(Net("network-outbound", "tcp", "10.0.0.1", 80)), sbpl::Error);
  Profile ok("(version 1)(deny default)");
  CHECK_THROWS_AS(ok.Allows(File("file-read*", "/a")), sbpl::Error);
}

}  // namespace
}  // namespace ward::test
