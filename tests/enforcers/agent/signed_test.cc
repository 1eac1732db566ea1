// [root] wardd with --bundle-key (enforcers/agent/signature_check.h,
// README.md "Signed bundles"): the real service with the nftables enforcer
// in a fresh network namespace and a private state folder, bundles and
// tombstones signed here with trust::PrivateKey. A signed bundle is
// applied; a stripped, unsigned, foreign-key, tampered, expired or
// replayed one, an unsigned Remove and a Remove for another scope are
// refused with their exact status, audited, published to Watch, and leave
// the state folder, the kernel's table and the generation as they were.
// The highest sequence survives restarts and removals.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/bundle.h"
#include "backends/nftables/nftables_backend.h"
#include "backends/signing.h"
#include "enforcers/agent/audit.h"
#include "enforcers/agent/service.h"
#include "enforcers/linux/nftables.h"
#include "tests/backends/compile_fixture.h"
#include "tests/backends/nftables/netns_fixture.h"
#include "tests/enforcers/agent/agent_fixture.h"

namespace ward::test {
namespace {

const bool kRoot = (RequireRoot("enforcers_agent_signed_test"), true);

constexpr const char* kPolicyA =
    "policy agenttest { network { allow tcp to 10.9.0.0/16 port 1111 } }";
constexpr const char* kPolicyB =
    "policy agenttest { network { allow tcp to 10.9.0.0/16 port 2222 } }";
// 2020-01-01T00:00:00.000Z: long past.
constexpr int64_t kPast = 1577836800000;

// A private folder (mkdtemp), removed at the end.
class TempDir {
 public:
  explicit TempDir(const char* what) {
    std::string tmpl = std::string("/tmp/ward-signed-test-") + what + "-XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  REQUIRE(out.good());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

trust::PrivateKey NewKey() {
  std::string error;
  std::optional<trust::PrivateKey> k = trust::PrivateKey::Generate(&error);
  INFO(error);
  REQUIRE(k);
  return *k;
}

int64_t InAWeek() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count() +
         7 * 24 * 3600 * 1000LL;
}

// The signature `ward push --sign-key` attaches, over `statement` (its
// key id filled in).
agent::v1::Signature SignStatement(const trust::PrivateKey& key, trust::Statement statement) {
  statement.key_id = key.id();
  agent::v1::Signature sig;
  sig.set_key_id(key.id());
  sig.set_sequence(statement.sequence);
  sig.set_not_after(statement.not_after_ms);
  sig.set_ed25519(key.Sign(trust::SigningBytes(statement)));
  return sig;
}

trust::Statement BundleStatement(const agent::v1::Bundle& b, uint64_t sequence, int64_t not_after) {
  trust::Statement s;
  s.kind = trust::Statement::kBundle;
  s.policy = b.policy();
  s.scope = {"uid", std::to_string(b.scope().uid())};
  s.sha256 = b.sha256();
  s.sequence = sequence;
  s.not_after_ms = not_after;
  return s;
}

agent::v1::Bundle Signed(agent::v1::Bundle b, const trust::PrivateKey& key, uint64_t sequence,
                         int64_t not_after = InAWeek()) {
  *b.mutable_signature() = SignStatement(key, BundleStatement(b, sequence, not_after));
  return b;
}

agent::v1::RemoveRequest Tombstone(const trust::PrivateKey& key, uint64_t sequence,
                                   uint32_t uid = kUid, int64_t not_after = InAWeek()) {
  agent::v1::RemoveRequest r;
  r.set_policy("agenttest");
  r.mutable_scope()->set_uid(uid);
  trust::Statement s;
  s.kind = trust::Statement::kRemove;
  s.policy = "agenttest";
  s.scope = {"uid", std::to_string(uid)};
  s.sequence = sequence;
  s.not_after_ms = not_after;
  *r.mutable_signature() = SignStatement(key, s);
  return r;
}

const agent::Caller kOperator{"uid:0", agent::Role::kOperator};

std::unique_ptr<agent::Agent> OpenAgent(const std::string& state, const std::string& key_file) {
  agent::AgentOptions options;
  options.state_dir = state;
  if (!key_file.empty()) options.bundle_keys = {key_file};
  std::string error;
  auto a = agent::Agent::Open(options, &error);
  INFO(error);
  REQUIRE(a != nullptr);
  return a;
}

agent::RpcStatus Apply(agent::Agent& a, const agent::v1::Bundle& b,
                       agent::v1::ApplyResponse* response) {
  agent::v1::ApplyRequest request;
  *request.mutable_bundle() = b;
  return a.Apply(kOperator, request, response);
}

// Everything a refusal must leave alone: the state folder's files (but
// the audit log, which records the refusal), the kernel's table for the
// policy, and the generation wardd reports.
struct World {
  std::map<std::string, std::string> files;
  std::string table;
  uint64_t generation = 0;
  bool operator==(const World&) const = default;
};

World Snapshot(agent::Agent& a, const std::string& state) {
  World w;
  for (const auto& f : std::filesystem::directory_iterator(state)) {
    const std::string name = f.path().filename();
    if (name.rfind("audit", 0) == 0) continue;
    w.files[name] = ReadFile(f.path());
  }
  std::string error;
  if (!enforce::RunNft("list table inet ward_agenttest", false, false, &w.table, &error)) {
    w.table = "none";
  }
  agent::v1::ListResponse list;
  REQUIRE(a.List(kOperator, {}, &list).ok());
  for (const auto& p : list.policies()) {
    if (p.policy() == "agenttest") w.generation = p.generation();
  }
  return w;
}

// The policy's state record, as wardd wrote it.
nlohmann::json Record(const std::string& state) {
  return nlohmann::json::parse(ReadFile(state + "/policy.agenttest"));
}

std::string LastAuditResult(const std::string& state) {
  std::istringstream in(ReadFile(state + "/" + agent::kAuditFile));
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  const nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
  return j.is_object() && j.contains("result") && j["result"].is_string()
             ? j["result"].get<std::string>()
             : "(no result in: " + last + ")";
}

void Drain(agent::Subscription& watch) {
  agent::v1::Event e;
  bool closed = false;
  while (watch.Next(&e, std::chrono::milliseconds(50), &closed)) {
  }
}

// A refusal as the issue asks: the exact status, audited, published, and
// nothing changed.
void ExpectRefused(agent::Agent& a, agent::Subscription& watch, const std::string& state,
                   const char* method, const agent::RpcStatus& s, int code,
                   const std::string& message, const World& before) {
  INFO(method << ": " << s.message);
  CHECK(s.code == code);
  CHECK(s.message == message);
  CHECK(LastAuditResult(state) == "refused: " + message);
  agent::v1::Event e;
  bool closed = false;
  REQUIRE(watch.Next(&e, std::chrono::seconds(2), &closed));
  REQUIRE(e.has_refused());
  CHECK(e.refused().method() == method);
  CHECK(e.refused().policy() == "agenttest");
  CHECK(e.refused().reason() == message);
  CHECK(e.refused().by() == "uid:0");
  CHECK(Snapshot(a, state) == before);
}

constexpr int kDenied = agent::RpcStatus::kPermissionDenied;
constexpr int kInvalid = agent::RpcStatus::kInvalidArgument;

TEST_CASE(
    "signed bundles: applied when signed; stripped, foreign, tampered, expired, replayed "
    "refused and nothing changed",
    "[root]") {
  TestNetns ns;
  TempDir state("state"), keys("keys");
  const trust::PrivateKey key = NewKey(), foreign = NewKey();
  const std::string pub = keys.path() + "/bundle.pub";
  WriteFile(pub, key.public_key().Pem());
  auto agent = OpenAgent(state.path(), pub);
  std::unique_ptr<agent::Subscription> watch = agent->Watch(kOperator);
  const agent::v1::Bundle a_bundle = MakeBundle(kPolicyA), b_bundle = MakeBundle(kPolicyB);

  agent::v1::ApplyResponse r;
  const agent::RpcStatus applied = Apply(*agent, Signed(a_bundle, key, 10), &r);
  INFO(applied.message);
  REQUIRE(applied.ok());
  CHECK(r.generation() == 1);
  CHECK(r.changed());
  CHECK(Record(state.path())["sequence"] == 10);
  Drain(*watch);
  const World before = Snapshot(*agent, state.path());
  REQUIRE(before.generation == 1);
  REQUIRE(before.table.find("1111") != std::string::npos);

  const std::string bad_signature =
      "bundle.signature: does not verify with key " + key.id() +
      " over this bundle's policy, scope, content, sequence and not_after";
  struct Case {
    const char* what;
    agent::v1::Bundle bundle;
    int code;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"unsigned", b_bundle, kDenied,
                   "bundle.signature: missing: this wardd takes only signed bundles"});
  {
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.clear_signature();
    cases.push_back({"stripped", b, kDenied,
                     "bundle.signature: missing: this wardd takes only signed bundles"});
  }
  {
    // The bundle in force, unsigned: no "unchanged" answer either.
    agent::v1::Bundle b = a_bundle;
    cases.push_back({"the bundle in force, stripped", b, kDenied,
                     "bundle.signature: missing: this wardd takes only signed bundles"});
  }
  {
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.mutable_signature()->clear_key_id();
    cases.push_back({"no key id", b, kDenied, "bundle.signature.key_id: missing"});
  }
  cases.push_back(
      {"a foreign key", Signed(b_bundle, foreign, 11), kDenied,
       "bundle.signature.key_id: '" + foreign.id() + "' is not a key this wardd holds"});
  {
    // Signed by another key that claims this one's id.
    agent::v1::Bundle b = Signed(b_bundle, foreign, 11);
    trust::Statement s = BundleStatement(b_bundle, 11, b.signature().not_after());
    s.key_id = key.id();
    b.mutable_signature()->set_key_id(key.id());
    b.mutable_signature()->set_ed25519(foreign.Sign(trust::SigningBytes(s)));
    cases.push_back({"a foreign key under this key's id", b, kDenied, bad_signature});
  }
  {
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.mutable_signature()->set_ed25519(b.signature().ed25519().substr(1));
    cases.push_back({"a short signature", b, kInvalid,
                     "bundle.signature.ed25519: 63 bytes, not the 64 of an Ed25519 signature"});
  }
  {
    // Another scope, its hash recomputed to match: the signature was not
    // over it.
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.mutable_scope()->set_uid(kUid + 1);
    cases.push_back({"signed for another scope", b, kDenied, bad_signature});
  }
  {
    agent::v1::Bundle b = b_bundle;
    trust::Statement s = BundleStatement(b_bundle, 11, InAWeek());
    s.policy = "otherpolicy";
    *b.mutable_signature() = SignStatement(key, s);
    cases.push_back({"signed for another policy", b, kDenied, bad_signature});
  }
  {
    // B's content under a signature over A's hash, with A's hash in the
    // sha256 field: the content hash is recomputed, never read.
    agent::v1::Bundle b = b_bundle;
    b.set_sha256(a_bundle.sha256());
    *b.mutable_signature() = SignStatement(key, BundleStatement(a_bundle, 11, InAWeek()));
    cases.push_back({"signed for another content", b, kDenied, bad_signature});
  }
  {
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.mutable_signature()->set_sequence(1000);
    cases.push_back({"a sequence changed after signing", b, kDenied, bad_signature});
  }
  {
    agent::v1::Bundle b = Signed(b_bundle, key, 11);
    b.mutable_signature()->set_not_after(b.signature().not_after() + 1);
    cases.push_back({"not_after changed after signing", b, kDenied, bad_signature});
  }
  cases.push_back({"expired", Signed(b_bundle, key, 11, kPast), kDenied,
                   "bundle.signature.not_after: expired at 2020-01-01T00:00:00.000Z"});
  cases.push_back({"a lower sequence", Signed(b_bundle, key, 9), kDenied,
                   "bundle.signature.sequence: 9 is not higher than 10, the highest this wardd "
                   "accepted for 'agenttest' (a replay or a rollback)"});
  cases.push_back({"the same sequence, another bundle", Signed(b_bundle, key, 10), kDenied,
                   "bundle.signature.sequence: 10 is not higher than 10, the highest this wardd "
                   "accepted for 'agenttest' (a replay or a rollback)"});
  cases.push_back({"the bundle in force with a lower sequence", Signed(a_bundle, key, 9), kDenied,
                   "bundle.signature.sequence: 9 is not higher than 10, the highest this wardd "
                   "accepted for 'agenttest' (a replay or a rollback)"});
  for (const Case& c : cases) {
    INFO(c.what);
    ExpectRefused(*agent, *watch, state.path(), "Apply", Apply(*agent, c.bundle, &r), c.code,
                  c.message, before);
  }

  // The bundle in force with its own sequence: the same statement, unchanged.
  REQUIRE(Apply(*agent, Signed(a_bundle, key, 10), &r).ok());
  CHECK_FALSE(r.changed());
  CHECK(r.generation() == 1);
  CHECK(Snapshot(*agent, state.path()) == before);
  CHECK(LastAuditResult(state.path()) == "unchanged");
  // Re-pushed with a higher sequence (ward push's default): unchanged, the
  // sequence recorded, and the lower one refused from then on.
  REQUIRE(Apply(*agent, Signed(a_bundle, key, 20), &r).ok());
  CHECK_FALSE(r.changed());
  CHECK(r.generation() == 1);
  CHECK(Record(state.path())["sequence"] == 20);
  const World after = Snapshot(*agent, state.path());
  CHECK(after.table == before.table);
  CHECK(after.generation == 1);
  Drain(*watch);
  ExpectRefused(*agent, *watch, state.path(), "Apply", Apply(*agent, Signed(b_bundle, key, 15), &r),
                kDenied,
                "bundle.signature.sequence: 15 is not higher than 20, the highest this wardd "
                "accepted for 'agenttest' (a replay or a rollback)",
                after);

  // A new bundle with a higher sequence is applied.
  REQUIRE(Apply(*agent, Signed(b_bundle, key, 21), &r).ok());
  CHECK(r.changed());
  CHECK(r.generation() == 2);
  CHECK(Record(state.path())["sequence"] == 21);
  CHECK(Snapshot(*agent, state.path()).table.find("2222") != std::string::npos);
  agent::v1::RemoveResponse removed;
  REQUIRE(agent->Remove(kOperator, Tombstone(key, 22), &removed).ok());
  CHECK(removed.removed());
}

TEST_CASE("signed tombstones; the highest sequence survives restarts and removals", "[root]") {
  TestNetns ns;
  TempDir state("state"), keys("keys");
  const trust::PrivateKey key = NewKey();
  const std::string pub = keys.path() + "/bundle.pub";
  WriteFile(pub, key.public_key().Pem());
  const agent::v1::Bundle a_bundle = MakeBundle(kPolicyA), b_bundle = MakeBundle(kPolicyB);
  agent::v1::ApplyResponse r;
  {
    auto agent = OpenAgent(state.path(), pub);
    REQUIRE(Apply(*agent, Signed(a_bundle, key, 100), &r).ok());
  }
  auto agent = OpenAgent(state.path(), pub);
  std::unique_ptr<agent::Subscription> watch = agent->Watch(kOperator);
  World before = Snapshot(*agent, state.path());
  REQUIRE(before.generation == 1);
  const std::string rollback =
      " is not higher than 100, the highest this wardd accepted for 'agenttest' (a replay or a "
      "rollback)";
  // After a restart, the sequence is still known.
  ExpectRefused(*agent, *watch, state.path(), "Apply", Apply(*agent, Signed(b_bundle, key, 50), &r),
                kDenied, "bundle.signature.sequence: 50" + rollback, before);
  ExpectRefused(*agent, *watch, state.path(), "Apply",
                Apply(*agent, Signed(b_bundle, key, 100), &r), kDenied,
                "bundle.signature.sequence: 100" + rollback, before);

  agent::v1::RemoveResponse removed;
  agent::v1::RemoveRequest unsigned_remove;
  unsigned_remove.set_policy("agenttest");
  ExpectRefused(*agent, *watch, state.path(), "Remove",
                agent->Remove(kOperator, unsigned_remove, &removed), kDenied,
                "remove.signature: missing: this wardd takes only signed removals", before);
  {
    agent::v1::RemoveRequest no_scope = Tombstone(key, 101);
    no_scope.clear_scope();
    ExpectRefused(*agent, *watch, state.path(), "Remove",
                  agent->Remove(kOperator, no_scope, &removed), kInvalid,
                  "remove.scope: missing: a signed removal names the policy's scope", before);
  }
  ExpectRefused(*agent, *watch, state.path(), "Remove",
                agent->Remove(kOperator, Tombstone(key, 101, kUid + 1), &removed), kDenied,
                "remove.scope: uid '4243' is not the scope of 'agenttest' in force (uid '4242')",
                before);
  const std::string bad_tombstone = "remove.signature: does not verify with key " + key.id() +
                                    " over this removal's policy, scope, sequence and not_after";
  {
    // Signed for another scope, sent with the one in force.
    agent::v1::RemoveRequest other = Tombstone(key, 101, kUid + 1);
    other.mutable_scope()->set_uid(kUid);
    ExpectRefused(*agent, *watch, state.path(), "Remove", agent->Remove(kOperator, other, &removed),
                  kDenied, bad_tombstone, before);
  }
  {
    // A bundle's signature is no tombstone (another domain in the bytes).
    agent::v1::RemoveRequest reused = Tombstone(key, 101);
    *reused.mutable_signature() = Signed(a_bundle, key, 101).signature();
    ExpectRefused(*agent, *watch, state.path(), "Remove",
                  agent->Remove(kOperator, reused, &removed), kDenied, bad_tombstone, before);
  }
  ExpectRefused(*agent, *watch, state.path(), "Remove",
                agent->Remove(kOperator, Tombstone(key, 101, kUid, kPast), &removed), kDenied,
                "remove.signature.not_after: expired at 2020-01-01T00:00:00.000Z", before);
  ExpectRefused(*agent, *watch, state.path(), "Remove",
                agent->Remove(kOperator, Tombstone(key, 100), &removed), kDenied,
                "remove.signature.sequence: 100" + rollback, before);

  // The signed tombstone: removed, its sequence kept in the record.
  REQUIRE(agent->Remove(kOperator, Tombstone(key, 101), &removed).ok());
  CHECK(removed.removed());
  CHECK(Snapshot(*agent, state.path()).table == "none");
  CHECK(Record(state.path())["removed"] == true);
  CHECK(Record(state.path())["sequence"] == 101);
  Drain(*watch);

  // Neither the bundle nor the tombstone can be replayed, before or after
  // a restart.
  const std::string after_removal =
      " is not higher than 101, the highest this wardd accepted for 'agenttest' (a replay or a "
      "rollback)";
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    before = Snapshot(*agent, state.path());
    CHECK(before.generation == 0);
    ExpectRefused(*agent, *watch, state.path(), "Apply",
                  Apply(*agent, Signed(a_bundle, key, 100), &r), kDenied,
                  "bundle.signature.sequence: 100" + after_removal, before);
    ExpectRefused(*agent, *watch, state.path(), "Apply",
                  Apply(*agent, Signed(a_bundle, key, 101), &r), kDenied,
                  "bundle.signature.sequence: 101" + after_removal, before);
    ExpectRefused(*agent, *watch, state.path(), "Remove",
                  agent->Remove(kOperator, Tombstone(key, 101), &removed), kDenied,
                  "remove.signature.sequence: 101" + after_removal, before);
    watch.reset();
    agent.reset();
    agent = OpenAgent(state.path(), pub);
    watch = agent->Watch(kOperator);
  }
  CHECK(Snapshot(*agent, state.path()).table == "none");
  REQUIRE(Apply(*agent, Signed(a_bundle, key, 102), &r).ok());
  CHECK(r.generation() == 2);  // generations go on across the removal
  CHECK(Record(state.path())["sequence"] == 102);
  REQUIRE(agent->Remove(kOperator, Tombstone(key, 103), &removed).ok());
}

TEST_CASE("without bundle keys, signatures are not checked, nor their sequences kept", "[root]") {
  TestNetns ns;
  TempDir state("state");
  const trust::PrivateKey key = NewKey();
  auto agent = OpenAgent(state.path(), "");
  agent::v1::ApplyResponse r;
  agent::v1::Bundle b = Signed(MakeBundle(kPolicyA), key, 50, kPast);
  b.mutable_signature()->set_ed25519("not a signature");
  REQUIRE(Apply(*agent, b, &r).ok());
  CHECK(r.generation() == 1);
  CHECK(Record(state.path())["sequence"] == 0);
  agent::v1::RemoveRequest remove;
  remove.set_policy("agenttest");
  agent::v1::RemoveResponse removed;
  REQUIRE(agent->Remove(kOperator, remove, &removed).ok());
  CHECK(removed.removed());
}

TEST_CASE("a bundle key that cannot be read, or is no Ed25519 public key, stops Open", "[root]") {
  TempDir keys("keys");
  const std::string state = keys.path() + "/state";  // never created
  const trust::PrivateKey key = NewKey();
  const std::string rsa = keys.path() + "/rsa.pub", priv = keys.path() + "/ed25519.key",
                    missing = keys.path() + "/missing.pub", good = keys.path() + "/good.pub";
  REQUIRE(std::system(("openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 2>/dev/null | "
                       "openssl pkey -pubout -out " +
                       rsa)
                          .c_str()) == 0);
  WriteFile(priv, key.Pem());
  WriteFile(good, key.public_key().Pem());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {rsa, "--bundle-key " + rsa +
                ": not an Ed25519 key (make one with `openssl genpkey -algorithm ed25519`)"},
      {priv, "--bundle-key " + priv +
                 ": not a PEM public key (SPKI, as `openssl pkey -pubout` writes it)"},
      {missing, "--bundle-key " + missing + ": cannot read: No such file or directory"},
  };
  for (const auto& [file, message] : cases) {
    agent::AgentOptions options;
    options.state_dir = state;
    options.bundle_keys = {good, file};
    std::string error;
    CHECK(agent::Agent::Open(options, &error) == nullptr);
    CHECK(error == message);
    // Refused before the state folder was touched.
    CHECK_FALSE(std::filesystem::exists(state));
  }
}

}  // namespace
}  // namespace ward::test
