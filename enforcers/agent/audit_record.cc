#include "enforcers/agent/audit_record.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

namespace ward::audit {
namespace {

constexpr std::string_view kHashKey = ",\"hash\":\"";
constexpr std::string_view kWhatKey = ",\"what\":{\"method\":\"";
constexpr std::string_view kCheckpointWhat =
    "checkpoint\"},\"result\":\"ok\",\"checkpoint\":{\"size\":";

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "2026-12-02T06:00:00.000Z": digits where NowRfc3339 writes them.
bool IsTime(std::string_view t) {
  constexpr std::string_view kShape = "0000-00-00T00:00:00.000Z";
  if (t.size() != kShape.size()) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (kShape[i] == '0' ? !IsDigit(t[i]) : t[i] != kShape[i]) return false;
  }
  return true;
}

// A decimal number at `*pos` (no leading zero, fits 64 bits), moved past.
bool Number(std::string_view line, size_t* pos, uint64_t* out) {
  size_t p = *pos;
  uint64_t n = 0;
  while (p < line.size() && IsDigit(line[p])) {
    const uint64_t digit = static_cast<uint64_t>(line[p] - '0');
    if (n > (UINT64_MAX - digit) / 10) return false;
    n = n * 10 + digit;
    ++p;
  }
  if (p == *pos || (line[*pos] == '0' && p - *pos > 1)) return false;
  *pos = p;
  *out = n;
  return true;
}

bool Literal(std::string_view line, size_t* pos, std::string_view text) {
  if (line.substr(*pos, text.size()) != text) return false;
  *pos += text.size();
  return true;
}

// `n` characters at `*pos` that `valid` accepts, moved past.
template <typename Valid>
bool Field(std::string_view line, size_t* pos, size_t n, Valid valid, std::string_view* out) {
  if (line.size() - *pos < n || !valid(line.substr(*pos, n))) return false;
  *out = line.substr(*pos, n);
  *pos += n;
  return true;
}

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || IsDigit(c) || c == '+' || c == '/' ||
         c == '=';
}

// The checkpoint object, from just after `"size":` to its closing `}`,
// which must end where the hash begins (`end`).
bool ParseCheckpoint(std::string_view line, size_t pos, size_t end, RecordView* out) {
  if (!Number(line, &pos, &out->size) || !Literal(line, &pos, ",\"head\":\"") ||
      !Field(line, &pos, 64, IsHex, &out->head) || !Literal(line, &pos, "\",\"key_id\":\"") ||
      !Field(line, &pos, 16, IsHex, &out->key_id) || !Literal(line, &pos, "\",\"sig\":\"")) {
    return false;
  }
  const size_t start = pos;
  while (pos < end && IsBase64Char(line[pos])) ++pos;
  out->sig = line.substr(start, pos - start);
  return !out->sig.empty() && Literal(line, &pos, "\"}") && pos == end;
}

std::string HexOf(const unsigned char* digest, unsigned int len) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * len, '\0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

struct LineHasher::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  // Fetched once: EVP_sha256() would look the implementation up again on
  // every init.
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  ~Impl() {
    EVP_MD_free(md);
    EVP_MD_CTX_free(ctx);
  }
};

LineHasher::LineHasher() : impl_(std::make_unique<Impl>()) {}
LineHasher::~LineHasher() = default;

std::string LineHasher::Hash(std::string_view line) {
  if (line.size() <= kHashSuffixSize || !impl_->ctx || !impl_->md) return "";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr) != 1 ||
      EVP_DigestUpdate(impl_->ctx, line.data(), line.size() - kHashSuffixSize) != 1 ||
      EVP_DigestUpdate(impl_->ctx, "}", 1) != 1 ||
      EVP_DigestFinal_ex(impl_->ctx, digest, &len) != 1) {
    return "";
  }
  return HexOf(digest, len);
}

std::string RecordLine(const Record& r, std::string* hash) {
  nlohmann::ordered_json what = nlohmann::ordered_json::object();
  what["method"] = r.method;
  const bool checkpoint = r.method == "checkpoint";
  if (!checkpoint) {
    what["policy"] = r.policy;
    what["sha256"] = r.sha256;
    what["generation"] = r.generation;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["seq"] = r.seq;
  j["time"] = r.time;
  j["prev"] = r.prev;
  j["who"] = r.who;
  j["what"] = std::move(what);
  j["result"] = r.result;
  if (checkpoint) {
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    c["size"] = r.size;
    c["head"] = r.head;
    c["key_id"] = r.key_id;
    c["sig"] = r.sig;
    j["checkpoint"] = std::move(c);
  }
  // ASCII only, and invalid UTF-8 in a caller's identity or an error
  // message replaced, never thrown over.
  const std::string canonical = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string line = canonical.substr(0, canonical.size() - 1);
  line += kHashKey;
  line += std::string(64, '0');
  line += "\"}";
  LineHasher hasher;
  *hash = hasher.Hash(line);
  line.replace(line.size() - 66, 64, *hash);
  return line;
}

ParseResult ParseRecord(std::string_view line, RecordView* out, std::string* error) {
  *out = RecordView{};
  size_t pos = 0;
  if (!Literal(line, &pos, "{\"seq\":")) {
    // A line cut short before even its first key is torn too.
    const bool prefix = std::string_view("{\"seq\":").substr(0, line.size()) == line;
    *error = prefix ? "the line ends before its hash" : "not an audit record (no {\"seq\": first)";
    return prefix ? ParseResult::kTorn : ParseResult::kMalformed;
  }
  // The end first: a line without its hash was cut short.
  const size_t n = line.size();
  if (n < pos + kHashSuffixSize || line.substr(n - 2) != "\"}" ||
      line.substr(n - kHashSuffixSize, kHashKey.size()) != kHashKey ||
      !IsHex(line.substr(n - 66, 64))) {
    *error = "the line ends before its hash";
    return ParseResult::kTorn;
  }
  out->hash = line.substr(n - 66, 64);
  const size_t end = n - kHashSuffixSize;
  if (!Number(line, &pos, &out->seq) || !Literal(line, &pos, ",\"time\":\"") ||
      !Field(line, &pos, 24, IsTime, &out->time) || !Literal(line, &pos, "\",\"prev\":\"") ||
      !Field(line, &pos, 64, IsHex, &out->prev) || !Literal(line, &pos, "\",\"who\":\"")) {
    *error = "not laid out as a record (seq, time, prev, who)";
    return ParseResult::kMalformed;
  }
  // Strings are escaped (a quote inside one is \"), so the first `,"what"`
  // after who's opening quote is the key itself.
  const size_t what = line.find(kWhatKey, pos);
  if (what == std::string_view::npos || what >= end) {
    *error = "not laid out as a record (no what.method)";
    return ParseResult::kMalformed;
  }
  pos = what + kWhatKey.size();
  if (line.substr(pos, 11) == "checkpoint\"") {
    out->checkpoint = true;
    if (!Literal(line, &pos, kCheckpointWhat) || !ParseCheckpoint(line, pos, end, out)) {
      *error = "a checkpoint not laid out as one (size, head, key_id, sig)";
      return ParseResult::kMalformed;
    }
  }
  return ParseResult::kOk;
}

}  // namespace ward::audit
