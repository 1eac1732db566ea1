#include "importers/spo_seccomp/spo_seccomp.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "importers/yaml_documents.h"
#include "language/literals.h"

namespace ward::importers {
namespace {

using nlohmann::json;

constexpr size_t kMaxBytes = 16 << 20;
constexpr std::string_view kGroup = "security-profiles-operator.x-k8s.io/";

// 1-based; 0 for a node with no place (yaml-cpp's null mark is -1).
size_t Line(const YAML::Mark& m) { return m.line < 0 ? 0 : static_cast<size_t>(m.line) + 1; }
size_t Column(const YAML::Mark& m) { return m.column < 0 ? 0 : static_cast<size_t>(m.column) + 1; }

// The fields of the SeccompProfile schema (api/seccompprofile/v1beta1 and
// v1): the API server prunes any other, so they are dropped here too.
const std::vector<std::string> kSpecKeys = {"baseProfileName", "disabled",     "defaultAction",
                                            "architectures",   "listenerPath", "listenerMetadata",
                                            "syscalls",        "flags"};
const std::vector<std::string> kSyscallKeys = {"names", "action", "errnoRet", "args"};
const std::vector<std::string> kArgKeys = {"index", "value", "valueTwo", "op"};

class Converter {
 public:
  Converter(std::string prefix, std::vector<ImportDiagnostic>* diagnostics)
      : prefix_(std::move(prefix)), diagnostics_(diagnostics) {}

  // A YAML scalar as JSON, the YAML 1.2 core schema: a plain scalar that is
  // an integer, true/false or null is one; a quoted one is a string.
  json Scalar(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() == "?") {
      static const std::regex kInt("[-+]?[0-9]+");
      static const std::regex kHex("0x[0-9a-fA-F]+");
      if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (std::regex_match(s, kInt) || std::regex_match(s, kHex)) {
        errno = 0;
        const bool neg = s[0] == '-';
        const char* digits = s.c_str() + (s[0] == '-' || s[0] == '+');
        char* end = nullptr;
        const unsigned long long v = std::strtoull(digits, &end, 0);
        if (errno == 0 && *end == 0) {
          if (!neg) return static_cast<uint64_t>(v);
          if (v <= (1ULL << 63)) return static_cast<int64_t>(0 - v);
        }
        return json(static_cast<double>(std::strtod(s.c_str(), nullptr)));
      }
    }
    return s;
  }

  json Value(const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const YAML::Node& e : n) out.push_back(Value(e));
        return out;
      }
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& kv : n) out[kv.first.Scalar()] = Value(kv.second);
        return out;
      }
      case YAML::NodeType::Scalar:
        return Scalar(n);
      default:
        return nullptr;
    }
  }

  // Only `keys` of the map, in order; the others dropped with a warning.
  json Known(
      const YAML::Node& n, const std::string& where, const std::vector<std::string>& keys,
      const std::function<json(const std::string&, const YAML::Node&, const std::string&)>& value) {
    if (!n.IsMap()) return Value(n);  // the JSON decoder says what is wrong
    json out = json::object();
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      const std::string path = where + "/" + key;
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        Warn(kv.first.Mark(), path,
             "'" + key + "' is not a field of SeccompProfile; the API server drops it");
        continue;
      }
      if (out.contains(key)) {
        Error(kv.first.Mark(), path, "'" + key + "' is given twice");
        continue;
      }
      out[key] = value(key, kv.second, path);
    }
    return out;
  }

  json Spec(const YAML::Node& spec) {
    return Known(spec, prefix_ + "/spec", kSpecKeys,
                 [&](const std::string& key, const YAML::Node& v, const std::string& path) {
                   if (key != "syscalls" || !v.IsSequence()) return Value(v);
                   json list = json::array();
                   for (size_t i = 0; i < v.size(); ++i)
                     list.push_back(Syscall(v[i], path + "/" + std::to_string(i)));
                   return list;
                 });
  }

  void Error(const YAML::Mark& m, const std::string& where, std::string message) {
    diagnostics_->push_back({Severity::kError, where, std::move(message), Line(m), Column(m)});
  }
  void Warn(const YAML::Mark& m, const std::string& where, std::string message) {
    diagnostics_->push_back({Severity::kWarning, where, std::move(message), Line(m), Column(m)});
  }

 private:
  json Syscall(const YAML::Node& s, const std::string& where) {
    json out = Known(s, where, kSyscallKeys,
                     [&](const std::string& key, const YAML::Node& v, const std::string& path) {
                       if (key != "args" || !v.IsSequence()) return Value(v);
                       json list = json::array();
                       for (size_t i = 0; i < v.size(); ++i) {
                         list.push_back(Known(v[i], path + "/" + std::to_string(i), kArgKeys,
                                              [&](const std::string&, const YAML::Node& a,
                                                  const std::string&) { return Value(a); }));
                       }
                       return list;
                     });
    // errnoRet is an int32 with omitempty: 0 is not written, and runc then
    // uses EPERM.
    if (out.is_object() && out.contains("errnoRet") && out["errnoRet"] == 0) out.erase("errnoRet");
    return out;
  }

  std::string prefix_;
  std::vector<ImportDiagnostic>* diagnostics_;
};

// The YAML node a JSON pointer into the spec names (for a line:column).
YAML::Node Resolve(YAML::Node n, std::string_view pointer) {
  while (!pointer.empty() && pointer[0] == '/') {
    pointer.remove_prefix(1);
    const size_t slash = pointer.find('/');
    const std::string part(pointer.substr(0, slash));
    pointer = slash == std::string_view::npos ? std::string_view() : pointer.substr(slash);
    YAML::Node next;
    if (n.IsMap()) {
      next = n[part];
    } else if (n.IsSequence() && !part.empty() &&
               part.find_first_not_of("0123456789") == std::string::npos && part.size() < 9) {
      const size_t i = std::stoul(part);
      if (i < n.size()) next = n[i];
    }
    if (!next.IsDefined()) break;
    n = next;
  }
  return n;
}

std::string PolicyName(const std::string& k8s) {
  std::string out;
  for (char c : k8s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  if (!std::isalpha(static_cast<unsigned char>(out[0]))) out = "p-" + out;
  return out;
}

bool IsSeccompProfile(const YAML::Node& doc) {
  if (!doc.IsMap()) return false;
  const YAML::Node kind = doc["kind"];
  const YAML::Node api = doc["apiVersion"];
  return kind.IsDefined() && api.IsDefined() && kind.IsScalar() &&
         kind.Scalar() == "SeccompProfile" && api.IsScalar() &&
         std::string_view(api.Scalar()).substr(0, kGroup.size()) == kGroup;
}

std::vector<YAML::Node> LoadAll(std::string_view text, std::string* error, YAML::Mark* mark) {
  try {
    return LoadYamlDocuments(std::string(text));
  } catch (const YAML::Exception& e) {
    *error = e.msg;
    *mark = e.mark;
    return {};
  }
}

}  // namespace

bool LooksLikeSpoSeccomp(std::string_view text) {
  std::string error;
  YAML::Mark mark;
  try {
    for (const YAML::Node& doc : LoadAll(text, &error, &mark)) {
      if (IsSeccompProfile(doc)) return true;
    }
  } catch (const YAML::Exception&) {
  }
  return false;
}

namespace {
ImportResult Import(std::string_view text, const DockerImportOptions& options);
}  // namespace

ImportResult ImportSpoSeccomp(std::string_view text, const DockerImportOptions& options) {
  try {
    return Import(text, options);
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on a node used as what it is not; what the walk
    // above checks first should leave nothing for here.
    ImportResult r;
    r.diagnostics.push_back(
        {Severity::kError, "", "cannot read the YAML: " + e.msg, Line(e.mark), Column(e.mark)});
    return r;
  }
}

namespace {

ImportResult Import(std::string_view text, const DockerImportOptions& options) {
  ImportResult result;
  auto& diags = result.diagnostics;
  if (text.size() > kMaxBytes) {
    diags.push_back({Severity::kError, "", "the file is larger than 16 MiB"});
    return result;
  }
  std::string error;
  YAML::Mark mark;
  const std::vector<YAML::Node> docs = LoadAll(text, &error, &mark);
  if (!error.empty()) {
    diags.push_back({Severity::kError, "", "not valid YAML: " + error, Line(mark), Column(mark)});
    return result;
  }
  size_t profiles = 0;
  for (const YAML::Node& doc : docs) profiles += IsSeccompProfile(doc);
  bool failed = false;
  std::string texts;
  size_t index = 0;
  std::set<std::string> names;
  for (size_t d = 0; d < docs.size(); ++d) {
    const YAML::Node& doc = docs[d];
    if (doc.IsNull()) continue;  // an empty document between two `---`
    // With several documents, pointers start with the document's index.
    const std::string prefix = docs.size() > 1 ? "/" + std::to_string(d) : "";
    if (!IsSeccompProfile(doc)) {
      diags.push_back({Severity::kWarning, prefix,
                       "not a SeccompProfile of " + std::string(kGroup) + "*: skipped",
                       Line(doc.Mark()), Column(doc.Mark())});
      continue;
    }
    Converter convert(prefix, &diags);
    const YAML::Node name = doc["metadata"] ? doc["metadata"]["name"] : YAML::Node();
    if (!name.IsScalar() || name.Scalar().empty()) {
      convert.Error(doc.Mark(), prefix + "/metadata/name",
                    "the SeccompProfile has no metadata.name");
      failed = true;
      continue;
    }
    // A Kubernetes name may hold dots; a Ward name may not.
    const std::string policy = PolicyName(name.Scalar());
    if (policy != name.Scalar()) {
      convert.Warn(name.Mark(), prefix + "/metadata/name",
                   "the policy for '" + name.Scalar() + "' is named '" + policy + "'");
    }
    if (!names.insert(policy).second) {
      convert.Error(name.Mark(), prefix + "/metadata/name",
                    "a second SeccompProfile whose policy is named '" + policy + "'");
      failed = true;
      continue;
    }
    const YAML::Node spec = doc["spec"];
    if (!spec.IsMap()) {
      convert.Error(doc.Mark(), prefix + "/spec", "the SeccompProfile has no spec");
      failed = true;
      continue;
    }
    const size_t before = diags.size();
    json j = convert.Spec(spec);
    for (size_t i = before; i < diags.size(); ++i) failed |= diags[i].severity == Severity::kError;
    if (j.contains("baseProfileName") && j["baseProfileName"] != "" &&
        !j["baseProfileName"].is_null()) {
      const YAML::Node b = spec["baseProfileName"];
      convert.Error(b.Mark(), prefix + "/spec/baseProfileName",
                    "baseProfileName names another profile in the cluster, whose rules the "
                    "operator merges into this one; the file does not hold them, so this "
                    "profile cannot be imported faithfully (import the base's spec merged in, "
                    "or drop baseProfileName)");
      failed = true;
      continue;
    }
    if (j.contains("disabled") && j["disabled"] == true) {
      convert.Error(spec["disabled"].Mark(), prefix + "/spec/disabled",
                    "the profile is disabled: the operator does not install it on any node");
      failed = true;
      continue;
    }
    j.erase("baseProfileName");
    j.erase("disabled");
    DockerImportOptions o = options;
    o.name = policy;
    o.from = "spo-seccomp";
    if (profiles > 1) o.source += " (document " + std::to_string(d + 1) + ")";
    ImportResult r = ImportDockerSeccomp(j.dump(), o);
    for (ImportDiagnostic& x : r.diagnostics) {
      const YAML::Node at = Resolve(spec, x.where);
      x.line = Line(at.Mark());
      x.column = Column(at.Mark());
      x.where = prefix + "/spec" + x.where;
      diags.push_back(std::move(x));
    }
    if (!r.ok) {
      failed = true;
      continue;
    }
    // Lines of this document's text are after those already written.
    const size_t offset =
        static_cast<size_t>(std::count(texts.begin(), texts.end(), '\n')) + (texts.empty() ? 0 : 1);
    for (RuleOrigin& origin : r.origins) {
      origin.first_line += offset;
      origin.last_line += offset;
      origin.where = prefix + "/spec" + origin.where;
      result.origins.push_back(std::move(origin));
    }
    texts += (texts.empty() ? "" : "\n") + r.text;
    ++index;
  }
  if (!failed && index == 0) {
    diags.push_back({Severity::kError, "", "no SeccompProfile document in the file"});
    failed = true;
  }
  result.ok = !failed;
  if (result.ok) result.text = std::move(texts);
  return result;
}

}  // namespace

}  // namespace ward::importers
