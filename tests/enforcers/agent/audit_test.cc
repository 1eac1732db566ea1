// wardd's audit log (enforcers/agent/audit.h, audit_record.h) on a private
// state folder, no kernel: the record's exact bytes and hash, the fixed
// fields read back without a JSON parse, checkpoints (by count, by time, at
// Close) and their signatures, the host key and audit.pub, and reopening:
// the chain continues, a torn last line is ended and chained over, an old
// log is moved aside, a changed last record is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backends/bundle.h"
#include "backends/signing.h"
#include "enforcers/agent/audit.h"
#include "enforcers/linux/files.h"

namespace ward::test {
namespace {

struct StateFolder {
  std::string path;
  int fd = -1;
  StateFolder() {
    char tmpl[] = "/tmp/ward-audit-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
    std::string error;
    fd = enforce::OpenStateDir(path, &error);
    INFO(error);
    REQUIRE(fd >= 0);
  }
  ~StateFolder() {
    close(fd);
    std::filesystem::remove_all(path);
  }
  std::string File(const std::string& name) const { return path + "/" + name; }
};

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(Read(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

agent::AuditConfig Config(const StateFolder& dir, uint64_t every = 1000,
                          std::chrono::milliseconds interval = std::chrono::minutes(5)) {
  agent::AuditConfig c;
  c.state_dir = dir.path;
  c.checkpoint_every = every;
  c.checkpoint_interval = interval;
  return c;
}

agent::AuditEntry Entry(const std::string& policy, uint64_t generation) {
  return {"uid:0", "apply", policy, std::string(64, 'a'), generation, "ok"};
}

audit::RecordView View(const std::string& line) {
  audit::RecordView v;
  std::string error;
  INFO(line);
  REQUIRE(audit::ParseRecord(line, &v, &error) == audit::ParseResult::kOk);
  return v;
}

TEST_CASE("a record's bytes, its canonical form and hash") {
  audit::Record r;
  r.seq = 1;
  r.time = "2026-12-02T06:00:00.000Z";
  r.prev = audit::kGenesis;
  r.who = "uid:0 \"caf\xc3\xa9\"";
  r.method = "apply";
  r.policy = "web";
  r.sha256 = std::string(64, 'b');
  r.generation = 3;
  r.result = "ok";
  std::string hash;
  const std::string line = audit::RecordLine(r, &hash);
  const std::string canonical =
      "{\"seq\":1,\"time\":\"2026-12-02T06:00:00.000Z\",\"prev\":\"" + std::string(64, '0') +
      "\",\"who\":\"uid:0 \\\"caf\\u00e9\\\"\",\"what\":{\"method\":\"apply\",\"policy\":\"web\","
      "\"sha256\":\"" +
      std::string(64, 'b') + "\",\"generation\":3},\"result\":\"ok\"}";
  CHECK(hash == backend::Sha256(canonical));
  CHECK(line == canonical.substr(0, canonical.size() - 1) + ",\"hash\":\"" + hash + "\"}");
  audit::LineHasher hasher;
  CHECK(hasher.Hash(line) == hash);

  const audit::RecordView v = View(line);
  CHECK(v.seq == 1);
  CHECK(v.time == r.time);
  CHECK(v.prev == audit::kGenesis);
  CHECK(v.hash == hash);
  CHECK_FALSE(v.checkpoint);

  // Cut short anywhere: torn; otherwise laid out wrong: malformed.
  std::string error;
  audit::RecordView ignored;
  CHECK(audit::ParseRecord(line.substr(0, line.size() - 1), &ignored, &error) ==
        audit::ParseResult::kTorn);
  CHECK(audit::ParseRecord(line.substr(0, 40), &ignored, &error) == audit::ParseResult::kTorn);
  CHECK(audit::ParseRecord("{\"se", &ignored, &error) == audit::ParseResult::kTorn);
  CHECK(error == "the line ends before its hash");
  CHECK(audit::ParseRecord("{\"time\":\"x\"}", &ignored, &error) == audit::ParseResult::kMalformed);
  CHECK(error == "not an audit record (no {\"seq\": first)");
  std::string bad_time = line;
  bad_time.replace(bad_time.find("06:00"), 1, "x");
  CHECK(audit::ParseRecord(bad_time, &ignored, &error) == audit::ParseResult::kMalformed);
  CHECK(error == "not laid out as a record (seq, time, prev, who)");

  r.method = "checkpoint";
  r.who = "wardd";
  r.seq = 2;
  r.size = 1;
  r.head = hash;
  r.key_id = "0123456789abcdef";
  r.sig = "c2lnbmF0dXJl";
  const std::string checkpoint = audit::RecordLine(r, &hash);
  CHECK(checkpoint.find(",\"who\":\"wardd\",\"what\":{\"method\":\"checkpoint\"},\"result\":\"ok\","
                        "\"checkpoint\":{\"size\":1,\"head\":\"" +
                        r.head + "\",\"key_id\":\"0123456789abcdef\",\"sig\":\"c2lnbmF0dXJl\"}," +
                        "\"hash\":\"" + hash + "\"}") != std::string::npos);
  const audit::RecordView c = View(checkpoint);
  CHECK(c.checkpoint);
  CHECK(c.size == 1);
  CHECK(c.head == r.head);
  CHECK(c.key_id == r.key_id);
  CHECK(c.sig == r.sig);
}

TEST_CASE("records chain, checkpoints are signed every N records and at Close") {
  StateFolder dir;
  std::vector<std::string> heads;
  {
    agent::AuditLog log;
    std::string error;
    REQUIRE(log.Open(dir.fd, Config(dir, 2), &error));
    CHECK(log.Head() == std::string("0:") + audit::kGenesis);
    for (int i = 1; i <= 3; ++i) {
      REQUIRE(log.Append(Entry("p" + std::to_string(i), i), &error));
      heads.push_back(log.Head());
    }
    log.Close();
  }
  const std::vector<std::string> lines = Lines(dir.File("audit.log"));
  REQUIRE(lines.size() == 5);  // p1 p2 checkpoint(2) p3 checkpoint(4)
  std::string error;
  const auto pub = trust::PublicKey::Load(dir.File("audit.pub"), &error);
  INFO(error);
  REQUIRE(pub);
  const auto key = trust::PrivateKey::Load(dir.File("audit.key"), &error);
  REQUIRE(key);
  CHECK(key->id() == pub->id());
  struct stat st;
  REQUIRE(stat(dir.File("audit.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  std::string prev = audit::kGenesis;
  audit::LineHasher hasher;
  for (size_t i = 0; i < lines.size(); ++i) {
    const audit::RecordView v = View(lines[i]);
    CHECK(v.seq == i + 1);
    CHECK(v.prev == prev);
    CHECK(hasher.Hash(lines[i]) == v.hash);
    CHECK(v.checkpoint == (i == 2 || i == 4));
    if (v.checkpoint) {
      CHECK(v.size == i);
      CHECK(v.head == prev);
      CHECK(v.key_id == pub->id());
      const auto sig = trust::Unbase64(std::string(v.sig));
      REQUIRE(sig);
      CHECK(pub->Verify(trust::CheckpointBytes(v.size, std::string(v.head), pub->id()), *sig));
      CHECK_FALSE(
          pub->Verify(trust::CheckpointBytes(v.size + 1, std::string(v.head), pub->id()), *sig));
    }
    prev = std::string(v.hash);
  }
  CHECK(heads[0] == "1:" + std::string(View(lines[0]).hash));
  CHECK(heads[1] == "3:" + std::string(View(lines[2]).hash));  // the checkpoint after p2
  CHECK(heads[2] == "4:" + std::string(View(lines[3]).hash));
  CHECK(lines[0].find("\"what\":{\"method\":\"apply\",\"policy\":\"p1\"") != std::string::npos);
}

TEST_CASE("a checkpoint comes checkpoint_interval after the first record none covers") {
  StateFolder dir;
  agent::AuditLog log;
  std::string error;
  REQUIRE(log.Open(dir.fd, Config(dir, 1000, std::chrono::milliseconds(100)), &error));
  REQUIRE(log.Append(Entry("p", 1), &error));
  for (int i = 0; i < 100 && Lines(dir.File("audit.log")).size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::string> lines = Lines(dir.File("audit.log"));
  REQUIRE(lines.size() == 2);
  CHECK(View(lines[1]).checkpoint);
  CHECK(View(lines[1]).size == 1);
  // Nothing new: no more checkpoints, none at Close either.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  log.Close();
  CHECK(Lines(dir.File("audit.log")).size() == 2);
}

TEST_CASE("reopened, the chain continues; a torn last line is ended and chained over") {
  StateFolder dir;
  std::string head;
  {
    agent::AuditLog log;
    std::string error;
    REQUIRE(log.Open(dir.fd, Config(dir), &error));
    REQUIRE(log.Append(Entry("a", 1), &error));
    head = log.Head();
    // No Close: as after a crash, no last checkpoint.
  }
  const std::string first = Lines(dir.File("audit.log"))[1];
  CHECK(View(first).checkpoint);  // the destructor closes it
  head = "2:" + std::string(View(first).hash);
  {
    std::ofstream(dir.File("audit.log"), std::ios::app) << "{\"seq\":3,\"time\":\"2026-";
    agent::AuditLog log;
    std::string error;
    REQUIRE(log.Open(dir.fd, Config(dir), &error));
    CHECK(log.Head() == head);
    REQUIRE(log.Append(Entry("b", 2), &error));
    log.Close();
  }
  const std::vector<std::string> lines = Lines(dir.File("audit.log"));
  REQUIRE(lines.size() == 5);
  CHECK(lines[2] == "{\"seq\":3,\"time\":\"2026-");
  const audit::RecordView b = View(lines[3]);
  CHECK(b.seq == 3);
  CHECK(b.prev == View(first).hash);
  CHECK(View(lines[4]).checkpoint);
  {
    // Reopened once more: the torn line is no longer last, nothing changes.
    agent::AuditLog log;
    std::string error;
    REQUIRE(log.Open(dir.fd, Config(dir), &error));
    CHECK(log.Head() == "4:" + std::string(View(lines[4]).hash));
  }
}

TEST_CASE("a log of the old format is moved aside; a changed last record is refused") {
  StateFolder dir;
  const std::string old =
      "{\"time\":\"2026-12-01T06:00:00.000Z\",\"who\":\"uid:0\",\"action\":"
      "\"apply\",\"prev\":\"" +
      std::string(64, '0') + "\"}\n";
  {
    std::string error;
    REQUIRE(enforce::WriteStateFile(dir.fd, "audit.log", old, &error));
    agent::AuditLog log;
    REQUIRE(log.Open(dir.fd, Config(dir), &error));
    CHECK(log.notice() == dir.File("audit.log") +
                              ": a log of the old format (before seq and checkpoints): moved "
                              "aside to audit.log.v0, a new log begins");
    CHECK(log.Head() == std::string("0:") + audit::kGenesis);
    REQUIRE(log.Append(Entry("a", 1), &error));
  }
  CHECK(Read(dir.File("audit.log.v0")) == old);
  CHECK(View(Lines(dir.File("audit.log"))[0]).seq == 1);

  // Moved aside only once: an old log again, with audit.log.v0 there, is refused.
  std::string error;
  REQUIRE(enforce::WriteStateFile(dir.fd, "audit.log.new", old, &error));
  REQUIRE(renameat(dir.fd, "audit.log", dir.fd, "audit.log.kept") == 0);
  REQUIRE(renameat(dir.fd, "audit.log.new", dir.fd, "audit.log") == 0);
  {
    agent::AuditLog log;
    CHECK_FALSE(log.Open(dir.fd, Config(dir), &error));
    CHECK(error == dir.File("audit.log") +
                       ": a log of the old format, and it cannot be moved aside to "
                       "audit.log.v0: File exists");
  }
  REQUIRE(renameat(dir.fd, "audit.log.kept", dir.fd, "audit.log") == 0);

  // The last record edited: fail closed.
  std::string text = Read(dir.File("audit.log"));
  const size_t id = text.rfind("\"key_id\":\"") + 10;
  text[id] = text[id] == '0' ? '1' : '0';
  REQUIRE(enforce::WriteStateFile(dir.fd, "audit.log", text, &error));
  {
    agent::AuditLog log;
    CHECK_FALSE(log.Open(dir.fd, Config(dir), &error));
    CHECK(error == dir.File("audit.log") +
                       ": its last record (seq 2) does not match its hash: the log was changed; "
                       "check it with `ward audit verify`, then move it aside");
  }
  REQUIRE(enforce::WriteStateFile(dir.fd, "audit.log", "not a log\n", &error));
  {
    agent::AuditLog log;
    CHECK_FALSE(log.Open(dir.fd, Config(dir), &error));
    CHECK(error == dir.File("audit.log") +
                       ": not an audit log (its first line does not start with {\"seq\":)");
  }
}

TEST_CASE("an audit key given by path: read by others is refused, its public half in audit.pub") {
  StateFolder dir;
  std::string error;
  auto key = trust::PrivateKey::Generate(&error);
  REQUIRE(key);
  const std::string path = dir.File("host.key");
  REQUIRE(key->Write(path, &error));
  agent::AuditConfig c = Config(dir);
  c.key_path = path;
  {
    agent::AuditLog log;
    REQUIRE(log.Open(dir.fd, c, &error));
    CHECK(log.key_id() == key->id());
  }
  CHECK(Read(dir.File("audit.pub")) == key->public_key().Pem());
  CHECK_FALSE(std::filesystem::exists(dir.File("audit.key")));
  REQUIRE(chmod(path.c_str(), 0644) == 0);
  agent::AuditLog log;
  CHECK_FALSE(log.Open(dir.fd, c, &error));
  CHECK(error == path + ": the audit key may be read by others (mode 0644): chmod 600 it");
}

}  // namespace
}  // namespace ward::test
