#include "enforcers/run/run_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "compiler/ir_json.h"
#include "enforcers/linux/files.h"

namespace ward::enforce {
namespace {

inline constexpr int kFormat = 3;
inline constexpr off_t kMaxEntry = 64 << 20;
inline constexpr size_t kKeptEntries = 64;

// A whole file, or nullopt.
std::optional<std::string> Slurp(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[16384];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

// The IR's JSON form is canonical and leaves out the source rules and the
// provenance, which the enforcers still read: eBPF names the denying rule in
// its events and grants unix names by rule, ward run binds granted sockets
// read-only, and the warnings of the Landlock ruleset and of the resolver
// point at rules. The entry keeps them in this form of its own, so a run
// from the cache enforces and says exactly what a compiled run does.
using Json = nlohmann::json;

nlohmann::ordered_json SpanJson(const Span& span) { return {span.file, span.begin, span.end}; }

// A span into `sources` (or none): anything else makes the entry unusable.
std::optional<Span> ReadSpan(const Json& j, const SourceManager& sources) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned() ||
      !j[2].is_number_unsigned()) {
    return std::nullopt;
  }
  Span span{j[0].get<FileId>(), j[1].get<uint32_t>(), j[2].get<uint32_t>()};
  if (span.file == kNoFile) return span;
  if (span.file >= sources.size() || span.begin > span.end ||
      span.end > sources.file(span.file).text.size()) {
    return std::nullopt;
  }
  return span;
}

nlohmann::ordered_json Rules(const ir::Policy& policy) {
  using OJson = nlohmann::ordered_json;
  const ir::NetRules& net = policy.network;
  OJson out = {{"rules", OJson::array()}, {"unix_rules", OJson::array()}, {"fs", OJson::array()}};
  for (size_t r = 0; r < policy.filesystem.rules.size(); ++r) {
    for (const auto& [pattern, verdict] : policy.filesystem.rules[r]) {
      OJson spans = OJson::array();
      for (const Span& span : verdict.rules) spans.push_back(SpanJson(span));
      out["fs"].push_back({r, pattern, spans});
    }
  }
  for (const ir::FlatRule& f : net.rules) {
    out["rules"].push_back(
        {{"span", SpanJson(f.span)},
         {"ingress", f.direction == ir::Direction::kIngress},
         {"allow", f.allow},
         {"what", ir::DecisionToJson(f.what)},
         {"peer", static_cast<int>(f.peer.kind)},
         {"prefix",
          f.peer.kind == ast::PeerKind::kAddress ? FormatPrefix(f.peer.prefix) : std::string()},
         {"domain", f.peer.domain}});
  }
  for (const ir::UnixRule& u : net.unix_rules) {
    out["unix_rules"].push_back({{"span", SpanJson(u.span)},
                                 {"allow", u.allow},
                                 {"abstract", u.abstract},
                                 {"name", u.name}});
  }
  return out;
}

bool ReadRules(const Json& j, const SourceManager& sources, ir::Policy* policy) {
  ir::NetRules* net = &policy->network;
  if (!j.is_object() || !j.contains("rules") || !j["rules"].is_array() ||
      !j.contains("unix_rules") || !j["unix_rules"].is_array() || !j.contains("fs") ||
      !j["fs"].is_array()) {
    return false;
  }
  for (const Json& e : j["fs"]) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() || !e[1].is_string() ||
        !e[2].is_array() || e[0].get<uint64_t>() >= policy->filesystem.rules.size()) {
      return false;
    }
    auto& rules = policy->filesystem.rules[e[0].get<size_t>()];
    const auto it = rules.find(e[1].get<std::string>());
    if (it == rules.end()) return false;
    for (const Json& span : e[2]) {
      std::optional<Span> s = ReadSpan(span, sources);
      if (!s) return false;
      it->second.rules.push_back(*s);
    }
  }
  for (const Json& r : j["rules"]) {
    if (!r.is_object() || !r.value("peer", Json()).is_number_unsigned()) return false;
    std::optional<Span> span = ReadSpan(r.value("span", Json()), sources);
    if (!span) return false;
    ir::FlatRule f;
    f.span = *span;
    f.direction = r.value("ingress", false) ? ir::Direction::kIngress : ir::Direction::kEgress;
    f.allow = r.value("allow", false);
    std::string error;
    std::optional<ir::NetDecision> what = ir::DecisionFromJson(r.value("what", Json()), &error);
    const uint64_t kind = r["peer"].get<uint64_t>();
    if (!what || kind > static_cast<uint64_t>(ast::PeerKind::kWildcardDomain)) return false;
    f.what = *what;
    f.peer.kind = static_cast<ast::PeerKind>(kind);
    f.peer.domain = r.value("domain", "");
    if (f.peer.kind == ast::PeerKind::kAddress) {
      std::optional<IpPrefix> prefix = ParseIpOrCidr(r.value("prefix", ""), &error);
      if (!prefix) return false;
      f.peer.prefix = *prefix;
    }
    net->rules.push_back(std::move(f));
  }
  for (const Json& u : j["unix_rules"]) {
    if (!u.is_object()) return false;
    std::optional<Span> span = ReadSpan(u.value("span", Json()), sources);
    if (!span) return false;
    net->unix_rules.push_back(
        {u.value("allow", false), u.value("abstract", false), u.value("name", ""), *span, {}});
  }
  return true;
}

// Keeps the newest kKeptEntries entries (by the time they were written);
// a policy whose entry went is compiled on its next run and stored again.
void Prune(const std::string& dir) {
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> entries;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".cbor") entries.emplace_back(e.last_write_time(ec), e.path());
  }
  if (entries.size() <= kKeptEntries) return;
  std::sort(entries.rbegin(), entries.rend());
  for (size_t i = kKeptEntries; i < entries.size(); ++i)
    std::filesystem::remove(entries[i].second, ec);
}

}  // namespace

std::string RunCacheKey(const std::string& file, const std::optional<std::string>& policy,
                        const std::string& std_dir, const std::string& programs) {
  char* real = realpath(file.c_str(), nullptr);
  if (!real) return "";
  const char* env_std = std::getenv("WARD_STD");
  std::string key = std::string("ward run cache ") + std::to_string(kFormat) + "\n" + programs +
                    "\nfile " + real + "\npolicy " + (policy ? "=" + *policy : "-") + "\nstd " +
                    std_dir + "\nWARD_STD " + (env_std ? env_std : "") + "\n";
  free(real);
  return key;
}

std::string RunCacheEntry(const std::string& dir, const std::string& key) {
  if (key.empty()) return "";
  // The name only spreads entries; the entry holds its key, compared whole.
  char name[32];
  snprintf(name, sizeof name, "%016zx.cbor", std::hash<std::string>{}(key));
  return dir + "/" + name;
}

std::optional<CachedPolicy> ReadRunCache(const std::string& entry, const std::string& key) {
  if (entry.empty() || key.empty()) return std::nullopt;
  // Root's, and nobody else may write it: a planted entry would choose
  // the policy.
  const int fd = open(entry.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::string bytes;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 077) &&
      st.st_size > 0 && st.st_size < kMaxEntry) {
    bytes.resize(static_cast<size_t>(st.st_size));
    if (pread(fd, bytes.data(), bytes.size(), 0) != st.st_size) bytes.clear();
  }
  close(fd);
  if (bytes.empty()) return std::nullopt;
  const nlohmann::json j = nlohmann::json::from_cbor(bytes, /*strict=*/true,
                                                     /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", 0) != kFormat || j.value("key", "") != key ||
      !j.contains("policy_hash") || !j["policy_hash"].is_string() || !j.contains("sources") ||
      !j["sources"].is_array() || j["sources"].empty() || !j.contains("ir")) {
    return std::nullopt;
  }
  CachedPolicy cached;
  cached.policy_hash = j["policy_hash"].get<std::string>();
  for (const nlohmann::json& s : j["sources"]) {
    if (!s.is_object() || !s.contains("display") || !s.contains("real") || !s.contains("text") ||
        !s["display"].is_string() || !s["real"].is_string() || !s["text"].is_string()) {
      return std::nullopt;
    }
    // Every source as it was, byte for byte.
    const std::string real = s["real"].get<std::string>();
    std::optional<std::string> now = Slurp(real);
    if (!now || *now != s["text"].get_ref<const std::string&>()) return std::nullopt;
    cached.sources.Add(s["display"].get<std::string>(), real, std::move(*now));
  }
  if (!j.contains("filter") || !j["filter"].is_binary() || !j.contains("guard") ||
      !j["guard"].is_binary() || !j.contains("arches") || !j["arches"].is_array()) {
    return std::nullopt;
  }
  const auto& filter = j["filter"].get_binary();
  cached.filter.assign(filter.begin(), filter.end());
  const auto& guard = j["guard"].get_binary();
  cached.guard.assign(guard.begin(), guard.end());
  std::string error;
  std::optional<ir::Policy> policy = ir::FromJson(j["ir"], &error, /*syscalls=*/false);
  if (!policy) return std::nullopt;
  cached.ir = std::move(*policy);
  if (!ReadRules(j.value("rules", Json()), cached.sources, &cached.ir)) return std::nullopt;
  for (const nlohmann::json& a : j["arches"]) {
    std::optional<Arch> arch = a.is_string() ? ParseArch(a.get<std::string>()) : std::nullopt;
    if (!arch) return std::nullopt;
    cached.ir.syscalls.arches.push_back(*arch);
  }
  return cached;
}

void WriteRunCache(const std::string& entry, const std::string& key, const ir::LoadedPolicy& loaded,
                   const std::string& policy_hash, const std::string& filter,
                   const std::string& guard) {
  if (entry.empty() || key.empty() || filter.empty() || guard.empty() || geteuid() != 0) return;
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["key"] = key;
  j["policy_hash"] = policy_hash;
  j["sources"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < loaded.sources.size(); ++i) {
    const SourceFile& f = loaded.sources.file(static_cast<FileId>(i));
    j["sources"].push_back({{"display", f.display_path}, {"real", f.real_path}, {"text", f.text}});
  }
  nlohmann::ordered_json ir = ir::ToJson(loaded.ir, loaded.sources);
  ir.erase("syscalls");
  j["ir"] = std::move(ir);
  j["rules"] = Rules(loaded.ir);
  j["arches"] = nlohmann::ordered_json::array();
  for (Arch a : loaded.ir.syscalls.arches) j["arches"].push_back(std::string(ArchName(a)));
  j["filter"] = nlohmann::ordered_json::binary(std::vector<uint8_t>(filter.begin(), filter.end()));
  j["guard"] = nlohmann::ordered_json::binary(std::vector<uint8_t>(guard.begin(), guard.end()));
  const std::string dir = std::filesystem::path(entry).parent_path().string();
  const std::vector<uint8_t> bytes = nlohmann::ordered_json::to_cbor(j);
  std::string ignored;
  if (!enforce::WriteStateFile(dir, std::filesystem::path(entry).filename().string(),
                               {reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                               &ignored)) {
    return;
  }
  Prune(dir);
}

}  // namespace ward::enforce
