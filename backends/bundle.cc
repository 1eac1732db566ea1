#include "backends/bundle.h"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "compiler/ir_json.h"

namespace ward::backend {
namespace {

namespace fs = std::filesystem;

bool SafeRelativePath(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

void Field(EVP_MD_CTX* ctx, const std::string& bytes) {
  unsigned char len[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  EVP_DigestUpdate(ctx, len, sizeof len);
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
}

std::string Hex(const unsigned char* digest, unsigned len) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace

std::string Sha256(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    return "";
  }
  return Hex(digest, len);
}

std::string BundleHash(const Bundle& bundle, const std::string& scope_kind,
                       const std::string& scope_value, const std::string& enforcer) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) return "";
  std::string out;
  if (EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1) {
    Field(ctx, "ward-bundle-v1");
    Field(ctx, bundle.policy);
    Field(ctx, bundle.ir_json);
    Field(ctx, bundle.manifest);
    Field(ctx, std::to_string(bundle.artifacts.size()));
    for (const BundleArtifact& a : bundle.artifacts) {
      Field(ctx, a.path);
      Field(ctx, a.target);
      Field(ctx, a.bytes);
    }
    Field(ctx, scope_kind);
    Field(ctx, scope_value);
    Field(ctx, enforcer);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, digest, &len) == 1) out = Hex(digest, len);
  }
  EVP_MD_CTX_free(ctx);
  return out;
}

bool CompileBundle(const ir::Policy& ir, const SourceManager& sources,
                   const std::vector<const Backend*>& chosen, bool profile, const Options& options,
                   DiagnosticSink& sink, Bundle* out) {
  std::vector<std::pair<const Backend*, Artifact>> artifacts;
  std::map<Section, std::vector<std::string>> coverage;
  std::map<std::string, std::vector<std::string>> carriers;  // field -> targets
  // Backends that enforce the same section say the same things about it
  // (B3003 from seccomp and oci): each message is reported once.
  std::set<std::tuple<Code, FileId, uint32_t, uint32_t, std::string>> said;
  Options together = options;
  together.targets.clear();
  for (const Backend* b : chosen) together.targets.push_back(std::string(b->name()));
  for (const Backend* b : chosen) {
    DiagnosticSink own;
    Result r = b->Compile(ir, together, own);
    for (const Diagnostic& d : own.diagnostics()) {
      if (said.emplace(d.code, d.span.file, d.span.begin, d.span.end, d.message).second) {
        sink.Report(d);
      }
    }
    if (!r.ok) {
      if (!own.has_errors()) {  // fail closed even if a backend forgot to say why
        sink.Error(Code::kCannotExpress, {}, "backend " + std::string(b->name()) + " failed");
      }
      continue;
    }
    for (Artifact& a : r.artifacts) artifacts.emplace_back(b, std::move(a));
    for (Section s : r.enforced) {
      if (!PolicyFields(ir, s).empty()) continue;  // decided by the fields, below
      coverage[s].push_back(std::string(b->name()));
    }
    for (const std::string& f : r.fields) carriers[f].push_back(std::string(b->name()));
  }
  // Process and limits, field by field: a section is enforced when each of
  // its fields is carried by some chosen target (coverage lists those
  // targets), partly when some are, not at all when none is.
  std::map<Section, bool> partly;
  for (Section s : kAllSections) {
    const std::vector<std::string> fields = PolicyFields(ir, s);
    if (fields.empty()) continue;
    std::vector<std::string> by;
    bool all = true;
    for (const std::string& f : fields) {
      auto it = carriers.find(f);
      if (it == carriers.end()) {
        all = false;
        continue;
      }
      for (const std::string& t : it->second) {
        if (std::find(by.begin(), by.end(), t) == by.end()) by.push_back(t);
      }
    }
    if (all) {
      // In the order the targets were chosen.
      for (const Backend* b : chosen) {
        if (std::find(by.begin(), by.end(), b->name()) != by.end()) {
          coverage[s].push_back(std::string(b->name()));
        }
      }
    } else if (!by.empty()) {
      partly[s] = true;
    }
  }
  std::string unenforced;
  for (Section s : kAllSections) {
    if (coverage.count(s)) continue;
    if (partly.count(s)) {
      for (const std::string& f : PolicyFields(ir, s)) {
        if (!carriers.count(f)) unenforced += (unenforced.empty() ? "" : ", ") + f;
      }
    } else {
      unenforced += (unenforced.empty() ? "" : ", ") + std::string(SectionName(s));
    }
  }
  if (!unenforced.empty()) {
    std::string message = "not enforced by the chosen targets: " + unenforced;
    if (profile && !options.partial) {
      sink.Error(Code::kUnenforcedSection, {}, message,
                 "a profile promises the whole policy: add targets, or pass --partial");
    } else {
      sink.Warning(Code::kUnenforcedSection, {}, message);
    }
  }
  std::set<std::string> paths;
  for (const auto& [b, a] : artifacts) {
    if (!SafeRelativePath(a.path) || a.path == "manifest.json" || !paths.insert(a.path).second) {
      sink.Error(Code::kCannotExpress, {},
                 "backend " + std::string(b->name()) + " produced a bad artifact path: " + a.path);
    }
  }
  if (sink.has_errors()) return false;

  Bundle bundle;
  bundle.policy = ir.name;
  bundle.ir_json = ir::ToJson(ir, sources).dump();
  nlohmann::ordered_json manifest;
  manifest["version"] = 1;
  manifest["policy"] = ir.name;
  manifest["ir_sha256"] = Sha256(bundle.ir_json);
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (const Backend* b : chosen) targets.push_back(std::string(b->name()));
  manifest["targets"] = targets;
  std::sort(artifacts.begin(), artifacts.end(),
            [](const auto& x, const auto& y) { return x.second.path < y.second.path; });
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (auto& [b, a] : artifacts) {
    list.push_back(
        {{"path", a.path}, {"target", std::string(b->name())}, {"sha256", Sha256(a.bytes)}});
    bundle.artifacts.push_back({a.path, std::string(b->name()), std::move(a.bytes)});
  }
  manifest["artifacts"] = list;
  nlohmann::ordered_json cov = nlohmann::ordered_json::object();
  for (Section s : kAllSections) {
    std::string name(SectionName(s));
    if (coverage.count(s)) {
      cov[name] = coverage[s];
    } else {
      cov[name] = partly.count(s) ? "partial" : "unenforced";
    }
  }
  manifest["coverage"] = cov;
  // Which target carries each process and limits field the policy gives.
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  for (Section s : {Section::kProcess, Section::kLimits}) {
    for (const std::string& f : PolicyFields(ir, s)) {
      auto it = carriers.find(f);
      if (it == carriers.end()) {
        fields[f] = "unenforced";
      } else {
        fields[f] = it->second;
      }
    }
  }
  manifest["fields"] = fields;
  bundle.manifest = manifest.dump(2) + "\n";
  *out = std::move(bundle);
  return true;
}

std::optional<Manifest> ReadManifest(const std::string& bytes, std::string* error) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not valid JSON";
    return std::nullopt;
  }
  auto str = [&](const nlohmann::json& o, const char* key, std::string* v) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string()) {
      *error = std::string("\"") + key + "\" missing or not a string";
      return false;
    }
    *v = it->get<std::string>();
    return true;
  };
  if (!j.contains("version") || j["version"] != 1) {
    *error = "\"version\" is not 1";
    return std::nullopt;
  }
  Manifest m;
  if (!str(j, "policy", &m.policy) || !str(j, "ir_sha256", &m.ir_sha256)) return std::nullopt;
  if (!j.contains("targets") || !j["targets"].is_array()) {
    *error = "\"targets\" missing or not a list";
    return std::nullopt;
  }
  for (const auto& t : j["targets"]) {
    if (!t.is_string()) {
      *error = "\"targets\" holds a non-string";
      return std::nullopt;
    }
    m.targets.push_back(t.get<std::string>());
  }
  if (!j.contains("artifacts") || !j["artifacts"].is_array()) {
    *error = "\"artifacts\" missing or not a list";
    return std::nullopt;
  }
  for (const auto& a : j["artifacts"]) {
    if (!a.is_object()) {
      *error = "\"artifacts\" holds a non-object";
      return std::nullopt;
    }
    ManifestEntry e;
    if (!str(a, "path", &e.path) || !str(a, "target", &e.target) || !str(a, "sha256", &e.sha256))
      return std::nullopt;
    m.artifacts.push_back(std::move(e));
  }
  if (j.contains("coverage")) {
    if (!j["coverage"].is_object()) {
      *error = "\"coverage\" is not an object";
      return std::nullopt;
    }
    for (const auto& [section, v] : j["coverage"].items()) {
      std::vector<std::string>& list = m.coverage[section];
      if (v.is_array()) {
        for (const auto& t : v) {
          if (t.is_string()) list.push_back(t.get<std::string>());
        }
      }
    }
  }
  return m;
}

bool CrossCheck(const Bundle& bundle, std::string* error) {
  std::string why;
  std::optional<Manifest> m = ReadManifest(bundle.manifest, &why);
  if (!m) {
    *error = "manifest: " + why;
    return false;
  }
  if (m->policy != bundle.policy) {
    *error = "manifest: policy '" + m->policy + "' is not the bundle's '" + bundle.policy + "'";
    return false;
  }
  if (m->ir_sha256 != Sha256(bundle.ir_json)) {
    *error = "manifest: ir_sha256 is not the SHA-256 of the IR";
    return false;
  }
  if (m->artifacts.size() != bundle.artifacts.size()) {
    *error = "manifest: lists " + std::to_string(m->artifacts.size()) +
             " artifacts, the bundle has " + std::to_string(bundle.artifacts.size());
    return false;
  }
  std::map<std::string, const ManifestEntry*> listed;
  for (const ManifestEntry& e : m->artifacts) listed[e.path] = &e;
  for (const BundleArtifact& a : bundle.artifacts) {
    auto it = listed.find(a.path);
    if (it == listed.end()) {
      *error = "artifact " + a.path + ": not in the manifest";
      return false;
    }
    if (it->second->target != a.target) {
      *error = "artifact " + a.path + ": target '" + a.target + "', the manifest says '" +
               it->second->target + "'";
      return false;
    }
    if (it->second->sha256 != Sha256(a.bytes)) {
      *error = "artifact " + a.path + ": its SHA-256 is not the manifest's";
      return false;
    }
  }
  return true;
}

}  // namespace ward::backend
