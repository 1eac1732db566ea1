// `ward audit verify FILE [--key PUB]... [--head SEQ:HASH]... [--format
// text|json]`: checks a wardd audit log (enforcers/agent/README.md,
// "Audit"), record by record, in one pass over the mapped file: the line's
// layout, its own hash (so an edited record is the one named), seq from 1
// without a gap, `prev` against the record before, times that never go
// backwards, each checkpoint's size and head against the records before it
// and, with --key, its Ed25519 signature and key id, and that every head a
// client recorded is in the log with the same hash (truncation, and a
// rewrite that recomputed the whole chain, are caught).
//
// Only the fixed fields are read (audit_record.h); the rest of a record is
// covered by its hash. Without --key, checkpoints are checked for size and
// head but their signatures are not verified, which the output says; the
// log can still be intact (exit 0).
//
// Text: `FILE: intact, N records, C checkpoints verified, head SEQ:HASH`, or
// `FILE:LINE: record SEQ: what is wrong`. JSON: {"version": 1, "file",
// "intact", "records", "checkpoints", "signatures_verified", "head",
// "heads_checked", "error": null or {"line", "seq", "message"}}.
//
// Exit codes: 0 intact; 1 broken (the first broken record named); 2 usage,
// an unreadable file or key.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/signing.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "enforcers/agent/audit_record.h"

namespace ward::cli {
namespace {

struct AuditFlags {
  std::string file;
  std::vector<std::string> keys;
  std::vector<std::string> heads;
  OutputFlags output;
};

struct Head {
  uint64_t seq = 0;
  std::string hash;
  std::string text;
};

// What verification found: the records read intact before the first
// broken one (if any), and that one.
struct Verdict {
  uint64_t records = 0;
  uint64_t checkpoints = 0;
  std::string head = std::string("0:") + audit::kGenesis;
  size_t heads_checked = 0;
  bool broken = false;
  size_t line = 0;  // 0: about the log as a whole
  uint64_t seq = 0;
  std::string message;
};

std::optional<Head> ParseHead(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 20) return std::nullopt;
  Head h;
  for (size_t i = 0; i < colon; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    h.seq = h.seq * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  h.hash = text.substr(colon + 1);
  if (h.hash.size() != 64 || h.hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return std::nullopt;
  }
  h.text = text;
  return h;
}

// The file, mapped read-only (an empty file maps nothing).
class Mapped {
 public:
  ~Mapped() {
    if (data_) munmap(data_, size_);
  }
  bool Open(const std::string& path, std::string* error) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      *error = path + ": " + std::strerror(errno);
      if (fd >= 0) close(fd);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      close(fd);
      *error = path + ": not a regular file";
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        *error = path + ": " + std::strerror(errno);
        close(fd);
        return false;
      }
      data_ = p;
      madvise(p, size_, MADV_SEQUENTIAL);
    }
    close(fd);
    return true;
  }
  std::string_view text() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

class Verifier {
 public:
  Verifier(const std::vector<trust::PublicKey>& keys, const std::vector<Head>& heads)
      : keys_(keys) {
    for (const Head& h : heads) heads_.emplace(h.seq, h);
  }

  Verdict Run(std::string_view text) {
    size_t pos = 0;
    size_t line_no = 0;
    while (pos < text.size() && !v_.broken) {
      const size_t nl = text.find('\n', pos);
      const size_t end = nl == std::string_view::npos ? text.size() : nl;
      Line(++line_no, text.substr(pos, end - pos));
      pos = end + 1;
    }
    if (!v_.broken) MissingHeads();
    return v_;
  }

 private:
  void Fail(size_t line, uint64_t seq, std::string message) {
    v_.broken = true;
    v_.line = line;
    v_.seq = seq;
    v_.message = std::move(message);
  }

  void Line(size_t line_no, std::string_view line) {
    const uint64_t expected = v_.records + 1;
    audit::RecordView r;
    std::string why;
    switch (audit::ParseRecord(line, &r, &why)) {
      case audit::ParseResult::kOk:
        break;
      case audit::ParseResult::kTorn:
        return Fail(line_no, 0,
                    line.empty() ? "an empty line, not a record"
                                 : "a torn record: the line ends before its hash (a write cut "
                                   "short, by a crash?)");
      case audit::ParseResult::kMalformed:
        return Fail(line_no, 0, why);
    }
    if (hasher_.Hash(line) != r.hash) {
      return Fail(line_no, r.seq, "hash does not match its content");
    }
    if (r.seq != expected) {
      return Fail(line_no, r.seq,
                  "out of sequence: record " + std::to_string(expected) +
                      " expected here (a record deleted, repeated or moved)");
    }
    if (r.prev != prev_) {
      return Fail(line_no, r.seq,
                  "prev does not match the hash of " +
                      (expected == 1 ? std::string("the start (64 zeros)")
                                     : "record " + std::to_string(expected - 1)));
    }
    if (r.time < time_) {
      return Fail(line_no, r.seq,
                  "time goes backwards: " + std::string(r.time) + " after " + time_);
    }
    if (r.checkpoint && !Checkpoint(line_no, r)) return;
    auto [from, to] = heads_.equal_range(r.seq);
    for (auto it = from; it != to; ++it) {
      if (it->second.hash != r.hash) {
        return Fail(line_no, r.seq,
                    "hash differs from the head a client recorded, " + it->second.text +
                        ": the log was rewritten");
      }
      ++v_.heads_checked;
    }
    ++v_.records;
    prev_ = std::string(r.hash);
    time_ = std::string(r.time);
    v_.head = std::to_string(r.seq) + ":" + prev_;
  }

  bool Checkpoint(size_t line_no, const audit::RecordView& r) {
    if (r.size != r.seq - 1) {
      Fail(line_no, r.seq,
           "checkpoint of size " + std::to_string(r.size) + ", but " + std::to_string(r.seq - 1) +
               " records come before it");
      return false;
    }
    if (r.head != prev_) {
      Fail(line_no, r.seq,
           "checkpoint head does not match the hash of record " + std::to_string(r.size));
      return false;
    }
    if (!keys_.empty()) {
      const trust::PublicKey* key = nullptr;
      for (const trust::PublicKey& k : keys_) {
        if (k.id() == r.key_id) key = &k;
      }
      if (!key) {
        Fail(line_no, r.seq,
             "checkpoint signed by key " + std::string(r.key_id) + ", not by --key " + KeyIds());
        return false;
      }
      const std::optional<std::string> sig = trust::Unbase64(std::string(r.sig));
      if (!sig ||
          !key->Verify(trust::CheckpointBytes(r.size, std::string(r.head), std::string(r.key_id)),
                       *sig)) {
        Fail(line_no, r.seq, "checkpoint signature does not verify with key " + key->id());
        return false;
      }
    }
    ++v_.checkpoints;
    return true;
  }

  // Heads past the end: the log lost records a client saw.
  void MissingHeads() {
    for (const auto& [seq, h] : heads_) {
      if (seq <= v_.records) continue;
      Fail(0, seq,
           "missing: the log ends at record " + std::to_string(v_.records) +
               ", but a client recorded head " + h.text + " (truncated)");
      return;
    }
    if (heads_.count(0)) {
      for (auto [it, to] = heads_.equal_range(0); it != to; ++it) {
        if (it->second.hash != audit::kGenesis) {
          Fail(0, 0, "head " + it->second.text + " names record 0, which only the start is");
          return;
        }
        ++v_.heads_checked;
      }
    }
  }

  std::string KeyIds() const {
    std::string out;
    for (const trust::PublicKey& k : keys_) out += (out.empty() ? "" : ", ") + k.id();
    return out;
  }

  const std::vector<trust::PublicKey>& keys_;
  std::multimap<uint64_t, Head> heads_;
  audit::LineHasher hasher_;
  std::string prev_ = audit::kGenesis;
  std::string time_;
  Verdict v_;
};

void PrintText(const AuditFlags& flags, const Verdict& v) {
  if (v.broken) {
    std::cout << flags.file;
    if (v.line > 0) std::cout << ":" << v.line;
    std::cout << ": ";
    if (v.line == 0 || v.seq > 0) std::cout << "record " << v.seq << ": ";
    std::cout << v.message << "\n";
    return;
  }
  std::cout << flags.file << ": intact, " << v.records
            << (v.records == 1 ? " record, " : " records, ") << v.checkpoints
            << (v.checkpoints == 1 ? " checkpoint" : " checkpoints")
            << (flags.keys.empty() ? " (signatures not verified: no --key)" : " verified");
  if (!flags.heads.empty()) {
    std::cout << ", " << v.heads_checked << " recorded "
              << (v.heads_checked == 1 ? "head" : "heads") << " present";
  }
  std::cout << ", head " << v.head << "\n";
}

void PrintJson(const AuditFlags& flags, const Verdict& v) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["file"] = flags.file;
  j["intact"] = !v.broken;
  j["records"] = v.records;
  j["checkpoints"] = v.checkpoints;
  j["signatures_verified"] = !flags.keys.empty();
  j["head"] = v.head;
  j["heads_checked"] = v.heads_checked;
  if (v.broken) {
    j["error"] = {{"line", v.line}, {"seq", v.seq}, {"message", v.message}};
  } else {
    j["error"] = nullptr;
  }
  std::cout << j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) << "\n";
}

int RunVerify(const AuditFlags& flags) {
  std::vector<trust::PublicKey> keys;
  std::string error;
  for (const std::string& path : flags.keys) {
    std::optional<trust::PublicKey> k = trust::PublicKey::Load(path, &error);
    if (!k) {
      std::cerr << "ward audit verify: --key " << error << "\n";
      return kUsage;
    }
    keys.push_back(std::move(*k));
  }
  std::vector<Head> heads;
  for (const std::string& text : flags.heads) {
    std::optional<Head> h = ParseHead(text);
    if (!h) {
      std::cerr << "ward audit verify: --head '" << text
                << "' is not SEQ:HASH (a record number, a colon and 64 hex digits)\n";
      return kUsage;
    }
    heads.push_back(std::move(*h));
  }
  Mapped file;
  if (!file.Open(flags.file, &error)) {
    std::cerr << "ward audit verify: " << error << "\n";
    return kUsage;
  }
  const Verdict v = Verifier(keys, heads).Run(file.text());
  if (flags.output.format == "json") {
    PrintJson(flags, v);
  } else {
    PrintText(flags, v);
  }
  return v.broken ? kFound : kOk;
}

}  // namespace

void AddAuditCommand(CLI::App& app, int* exit_code) {
  CLI::App* audit = app.add_subcommand("audit", "Check a wardd audit log");
  audit->require_subcommand(1);
  auto flags = std::make_shared<AuditFlags>();
  CLI::App* verify = audit->add_subcommand(
      "verify", "Check a wardd audit log's chain, checkpoints and recorded heads");
  verify->add_option("file", flags->file, "the audit log (wardd's STATE/audit.log)")->required();
  verify->add_option("--key", flags->keys,
                     "the host's audit public key (STATE/audit.pub): checkpoint signatures are "
                     "verified with it; repeatable");
  verify->add_option("--head", flags->heads,
                     "SEQ:HASH, a head a client was given (ward push prints it): it must be in "
                     "the log; repeatable");
  verify->add_option("--format", flags->output.format, "output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  verify->callback([flags, exit_code] { *exit_code = RunVerify(*flags); });
}

}  // namespace ward::cli
