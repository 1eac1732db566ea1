// trust:: (backends/signing.h): keys as the openssl CLI writes them, key
// ids, signatures over the statements, and the small codecs.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "backends/signing.h"

namespace ward::test {
namespace {

std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  return out;
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ward-signing-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST_CASE("keys made by the openssl CLI load, and their id is the SPKI's SHA-256") {
  TempDir dir;
  const std::string key = dir.path + "/k.pem", pub = dir.path + "/k.pub";
  Shell("openssl genpkey -algorithm ed25519 -out " + key + " 2>/dev/null");
  Shell("openssl pkey -in " + key + " -pubout -out " + pub);
  const std::string id =
      Shell("openssl pkey -pubin -in " + pub + " -outform DER | sha256sum").substr(0, 16);
  std::string error;
  auto priv = trust::PrivateKey::Load(key, &error);
  REQUIRE(priv);
  auto pubkey = trust::PublicKey::Load(pub, &error);
  REQUIRE(pubkey);
  CHECK(priv->id() == id);
  CHECK(pubkey->id() == id);
  std::ifstream in(pub);
  std::stringstream s;
  s << in.rdbuf();
  CHECK(pubkey->Pem() == s.str());

  const std::string sig = priv->Sign("hello");
  REQUIRE(sig.size() == 64);
  CHECK(pubkey->Verify("hello", sig));
  CHECK_FALSE(pubkey->Verify("hellp", sig));
  std::string bad = sig;
  bad[3] ^= 1;
  CHECK_FALSE(pubkey->Verify("hello", bad));
  CHECK_FALSE(pubkey->Verify("hello", ""));

  // The openssl CLI verifies our signature (raw Ed25519, no digest).
  std::ofstream(dir.path + "/msg", std::ios::binary) << "hello";
  std::ofstream(dir.path + "/sig", std::ios::binary) << sig;
  CHECK(Shell("openssl pkeyutl -verify -pubin -inkey " + pub + " -rawin -in " + dir.path +
              "/msg -sigfile " + dir.path + "/sig") == "Signature Verified Successfully\n");
}

TEST_CASE("a private key is not a public key, and other algorithms are refused") {
  TempDir dir;
  Shell("openssl genpkey -algorithm ed25519 -out " + dir.path + "/k.pem 2>/dev/null");
  Shell("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + dir.path +
        "/ec.pem 2>/dev/null");
  Shell("openssl pkey -in " + dir.path + "/ec.pem -pubout -out " + dir.path + "/ec.pub");
  std::string error;
  CHECK_FALSE(trust::PublicKey::Load(dir.path + "/k.pem", &error));
  CHECK(error.find("not a PEM public key") != std::string::npos);
  CHECK_FALSE(trust::PublicKey::Load(dir.path + "/ec.pub", &error));
  CHECK(error.find("not an Ed25519 key") != std::string::npos);
  CHECK_FALSE(trust::PrivateKey::Load(dir.path + "/ec.pem", &error));
  CHECK_FALSE(trust::PrivateKey::Load(dir.path + "/missing", &error));
  CHECK(error.find("missing: cannot read") != std::string::npos);
}

TEST_CASE("generated keys are written 0600, never over an existing path") {
  TempDir dir;
  std::string error;
  auto key = trust::PrivateKey::Generate(&error);
  REQUIRE(key);
  const std::string path = dir.path + "/host.key";
  REQUIRE(key->Write(path, &error));
  CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  auto again = trust::PrivateKey::Load(path, &error);
  REQUIRE(again);
  CHECK(again->id() == key->id());
  CHECK_FALSE(key->Write(path, &error));
  CHECK_FALSE(key->Write("/dev/null", &error));
}

TEST_CASE("every field of a statement is covered by its signature") {
  std::string error;
  auto key = trust::PrivateKey::Generate(&error);
  REQUIRE(key);
  trust::Statement s;
  s.policy = "web";
  s.scope = {"cgroup", "/ward/a"};
  s.sha256 = std::string(64, 'a');
  s.sequence = 7;
  s.not_after_ms = 1700000000000;
  s.key_id = key->id();
  const std::string sig = key->Sign(trust::SigningBytes(s));
  CHECK(key->public_key().Verify(trust::SigningBytes(s), sig));
  auto changed = [&](auto edit) {
    trust::Statement t = s;
    edit(t);
    return key->public_key().Verify(trust::SigningBytes(t), sig);
  };
  CHECK_FALSE(changed([](trust::Statement& t) { t.policy = "wec"; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.scope.kind = "uid"; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.scope.value = "/ward/b"; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.sha256[0] = 'b'; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.sequence = 8; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.not_after_ms += 1; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.key_id = "0000000000000000"; }));
  CHECK_FALSE(changed([](trust::Statement& t) { t.kind = trust::Statement::kRemove; }));
  // Field boundaries are part of the bytes: moving a character across them changes them.
  trust::Statement a = s, b = s;
  a.policy = "ab";
  a.scope.kind = "c";
  b.policy = "a";
  b.scope.kind = "bc";
  CHECK(trust::SigningBytes(a) != trust::SigningBytes(b));
  CHECK(trust::CheckpointBytes(1, "h", "k") != trust::CheckpointBytes(11, "h", "k"));
}

TEST_CASE("durations, hex and base64") {
  CHECK(trust::ParseDuration("7d") == int64_t{7} * 24 * 3600 * 1000);
  CHECK(trust::ParseDuration("1d12h") == int64_t{36} * 3600 * 1000);
  CHECK(trust::ParseDuration("90s") == 90000);
  CHECK(trust::ParseDuration("1500ms") == 1500);
  CHECK(trust::ParseDuration("30m") == 1800000);
  for (const char* bad : {"", "7", "d", "0s", "-1s", "1x", "1.5h", "99999999999999999d", "1s "}) {
    CHECK_FALSE(trust::ParseDuration(bad));
  }
  CHECK(trust::Hex("\x01\xab") == "01ab");
  CHECK(trust::Unhex("01AB") == std::string("\x01\xab"));
  CHECK_FALSE(trust::Unhex("0"));
  CHECK_FALSE(trust::Unhex("zz"));
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    CHECK(trust::Unbase64(trust::Base64(s)) == s);
  }
  CHECK(trust::Base64("abcd") == "YWJjZA==");
  CHECK_FALSE(trust::Unbase64("YWJjZA="));
  CHECK_FALSE(trust::Unbase64("YWJjZA!="));
  CHECK_FALSE(trust::Unbase64("YWJjZB=="));  // not canonical
}

}  // namespace
}  // namespace ward::test
