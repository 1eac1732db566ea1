// Literals with meaning: each parser's accepted forms, canonical values and
// exact error reasons.
#include <catch2/catch.hpp>

#include "language/literals.h"

using namespace ward;

namespace {
std::string Err(std::optional<IpPrefix> (*f)(std::string_view, std::string*), const char* s) {
  std::string e;
  CHECK_FALSE(f(s, &e).has_value());
  return e;
}
}  // namespace

TEST_CASE("IPv4 and IPv6 addresses and CIDRs") {
  std::string e;
  auto a = ParseIpOrCidr("10.0.0.53", &e);
  REQUIRE(a);
  CHECK_FALSE(a->v6);
  CHECK(a->length == 32);
  CHECK(a->bytes[0] == 10);
  CHECK(a->bytes[3] == 53);
  auto c = ParseIpOrCidr("fd00::/8", &e);
  REQUIRE(c);
  CHECK(c->v6);
  CHECK(c->length == 8);
  CHECK(c->bytes[0] == 0xfd);
  auto mapped = ParseIpOrCidr("::ffff:1.2.3.4", &e);
  REQUIRE(mapped);
  CHECK(mapped->bytes[10] == 0xff);
  CHECK(mapped->bytes[15] == 4);
  CHECK(FormatPrefix(*c) == "fd00::/8");
  CHECK(FormatPrefix(*a) == "10.0.0.53");
  CHECK(Err(ParseIpOrCidr, "10.0.0") == "not an IPv4 address");
  CHECK(Err(ParseIpOrCidr, "010.0.0.1") == "not an IPv4 address");  // no octal forms
  CHECK(Err(ParseIpOrCidr, "10.0.0.0/33") == "prefix length 33 is longer than 32");
  CHECK(Err(ParseIpOrCidr, "::1/129") == "prefix length 129 is longer than 128");
  CHECK(Err(ParseIpOrCidr, "10.0.0.0/") == "invalid prefix length ''");
  CHECK(Err(ParseIpOrCidr, "fd00:::1") == "not an IPv6 address");
}

TEST_CASE("host bits beyond the prefix are found and cleared") {
  std::string e;
  IpPrefix canonical;
  CHECK(HostBitsSet(*ParseIpOrCidr("10.1.2.3/8", &e), &canonical));
  CHECK(FormatPrefix(canonical) == "10.0.0.0/8");
  CHECK_FALSE(HostBitsSet(*ParseIpOrCidr("10.0.0.0/8", &e), &canonical));
  CHECK(HostBitsSet(*ParseIpOrCidr("fd00::1/64", &e), &canonical));
  CHECK(FormatPrefix(canonical) == "fd00::/64");
  CHECK_FALSE(HostBitsSet(*ParseIpOrCidr("0.0.0.0/0", &e), &canonical));
}

TEST_CASE("ports and ranges") {
  std::string e;
  auto p = ParsePortRange("443", &e);
  REQUIRE(p);
  CHECK((p->lo == 443 && p->hi == 443));
  auto r = ParsePortRange("8000-8100", &e);
  REQUIRE(r);
  CHECK((r->lo == 8000 && r->hi == 8100));
  CHECK_FALSE(ParsePortRange("0", &e));
  CHECK(e == "port out of range 1-65535");
  CHECK_FALSE(ParsePortRange("65536", &e));
  CHECK(e == "port out of range 1-65535");
  CHECK_FALSE(ParsePortRange("9000-8000", &e));
  CHECK(e == "empty port range (9000 > 8000)");
  CHECK_FALSE(ParsePortRange("http", &e));
  CHECK(e == "not a port or port range");
}

TEST_CASE("sizes: binary and decimal units, as Kubernetes reads them") {
  std::string e;
  CHECK(ParseSize("512KiB", &e) == 512u * 1024);
  CHECK(ParseSize("4GiB", &e) == 4ull << 30);
  CHECK(ParseSize("4G", &e) == 4000000000ull);
  CHECK(ParseSize("4GB", &e) == 4000000000ull);
  CHECK(ParseSize("10B", &e) == 10u);
  CHECK_FALSE(ParseSize("4", &e));
  CHECK(e == "unknown size unit ''");
  CHECK_FALSE(ParseSize("4gib", &e));
  CHECK(e == "unknown size unit 'gib'");
  CHECK_FALSE(ParseSize("99999999999TiB", &e));
  CHECK(e == "size too large");
}

TEST_CASE("durations, rates, integers and decimals") {
  std::string e;
  CHECK(ParseDuration("30s", &e) == 30000u);
  CHECK(ParseDuration("5m", &e) == 300000u);
  CHECK(ParseDuration("2h", &e) == 7200000u);
  CHECK(ParseDuration("250ms", &e) == 250u);
  CHECK(ParseRate("100Mbit", &e) == 100000000u);
  CHECK(ParseRate("10MiB/s", &e) == 10ull * 8 * 1024 * 1024);
  CHECK(ParseInteger("0x2a", &e) == 42);
  CHECK(ParseInteger("-1", &e) == -1);
  CHECK(static_cast<uint64_t>(*ParseInteger("0xffffffffffffffff", &e)) == UINT64_MAX);
  CHECK_FALSE(ParseInteger("0x1ffffffffffffffff", &e));
  CHECK_FALSE(ParseInteger("12abc", &e));
  CHECK(ParseMilliUnits("0.5", &e) == 500u);
  CHECK(ParseMilliUnits("2", &e) == 2000u);
  CHECK_FALSE(ParseMilliUnits("1.2345", &e));
}

TEST_CASE("classification names what a word looks like") {
  CHECK(Classify("443") == LiteralKind::kInteger);
  CHECK(Classify("8000-8100") == LiteralKind::kRange);
  CHECK(Classify("10.0.0.0/8") == LiteralKind::kCidr);
  CHECK(Classify("::1") == LiteralKind::kIpAddress);
  CHECK(Classify("4GiB") == LiteralKind::kSize);
  CHECK(Classify("30s") == LiteralKind::kDuration);
  CHECK(Classify("100Mbit") == LiteralKind::kRate);
  CHECK(Classify("workspace") == LiteralKind::kName);
  CHECK(Classify("1000:1000") == LiteralKind::kUidGid);
  CHECK(Classify("github.com") == LiteralKind::kOther);
}
