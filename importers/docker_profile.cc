#include "importers/docker_profile.h"

#include <map>
#include <nlohmann/json.hpp>

namespace ward::importers {
namespace {

using nlohmann::json;

// Docker refuses nothing for size, but a profile past this is not one.
constexpr size_t kMaxProfileBytes = 16 << 20;

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string Escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Walks the decoded JSON the way Go's encoding/json fills Docker's structs,
// recording type errors and unknown keys at their JSON pointers.
class Decoder {
 public:
  explicit Decoder(std::vector<ImportDiagnostic>* diagnostics) : diagnostics_(diagnostics) {}

  bool ok() const { return errors_ == 0; }

  void Profile(const json& j, DockerProfile* out) {
    if (!Object(j, "")) return;
    Fields fields(this, j, "",
                  {"defaultAction", "defaultErrnoRet", "architectures", "archMap", "syscalls",
                   "listenerPath", "listenerMetadata", "flags"});
    String(fields.Get("defaultAction"), fields.Path("defaultAction"), &out->default_action);
    Unsigned(fields.Get("defaultErrnoRet"), fields.Path("defaultErrnoRet"),
             &out->default_errno_ret);
    Strings(fields.Get("architectures"), fields.Path("architectures"), &out->architectures);
    Array(fields.Get("archMap"), fields.Path("archMap"),
          [&](const json& e, const std::string& p) { out->arch_map.push_back(ArchMap(e, p)); });
    Array(fields.Get("syscalls"), fields.Path("syscalls"),
          [&](const json& e, const std::string& p) { out->syscalls.push_back(Syscall(e, p)); });
    String(fields.Get("listenerPath"), fields.Path("listenerPath"), &out->listener_path);
    std::string metadata;
    String(fields.Get("listenerMetadata"), fields.Path("listenerMetadata"), &metadata);
    Strings(fields.Get("flags"), fields.Path("flags"), &out->flags);
  }

  void Error(const std::string& where, std::string message) {
    ++errors_;
    diagnostics_->push_back({Severity::kError, where, std::move(message)});
  }

 private:
  // The members of one object, matched to Go struct fields: an exact key
  // first, else one equal but for ASCII case.
  class Fields {
   public:
    Fields(Decoder* d, const json& object, std::string path,
           std::initializer_list<const char*> known)
        : object_(object), path_(std::move(path)), known_(known) {
      for (const auto& [key, value] : object.items()) {
        bool matched = false;
        for (const char* k : known_) matched |= EqualFold(key, k);
        if (!matched) {
          d->diagnostics_->push_back({Severity::kWarning, path_ + "/" + Escape(key),
                                      "unknown key '" + key + "' is ignored, as Docker does"});
        }
      }
    }

    const json* Get(const char* name) {
      if (auto it = object_.find(name); it != object_.end()) {
        keys_[name] = name;
        return &*it;
      }
      for (const auto& [key, value] : object_.items()) {
        if (EqualFold(key, name)) {
          keys_[name] = key;
          return &value;
        }
      }
      return nullptr;
    }

    std::string Path(const char* name) const {
      auto it = keys_.find(name);
      return path_ + "/" + Escape(it == keys_.end() ? name : it->second);
    }

   private:
    const json& object_;
    std::string path_;
    std::vector<const char*> known_;
    std::map<std::string, std::string> keys_;
  };

  bool Object(const json& j, const std::string& path) {
    if (j.is_object()) return true;
    Error(path, std::string("expected an object, found ") + j.type_name());
    return false;
  }

  static bool Absent(const json* j) { return j == nullptr || j->is_null(); }

  void String(const json* j, const std::string& path, std::string* out) {
    if (Absent(j)) return;
    if (!j->is_string()) {
      Error(path, std::string("expected a string, found ") + j->type_name());
      return;
    }
    *out = j->get_ref<const std::string&>();
  }

  void Unsigned(const json* j, const std::string& path, std::optional<uint64_t>* out) {
    if (Absent(j)) return;
    if (!j->is_number_unsigned()) {
      Error(path, std::string("expected a non-negative integer, found ") +
                      (j->is_number() ? "a negative or fractional number" : j->type_name()));
      return;
    }
    *out = j->get<uint64_t>();
  }

  void Unsigned(const json* j, const std::string& path, uint64_t* out) {
    std::optional<uint64_t> v;
    Unsigned(j, path, &v);
    if (v) *out = *v;
  }

  template <typename Fn>
  void Array(const json* j, const std::string& path, Fn each) {
    if (Absent(j)) return;
    if (!j->is_array()) {
      Error(path, std::string("expected an array, found ") + j->type_name());
      return;
    }
    for (size_t i = 0; i < j->size(); ++i) each((*j)[i], path + "/" + std::to_string(i));
  }

  void Strings(const json* j, const std::string& path, std::vector<std::string>* out) {
    Array(j, path, [&](const json& e, const std::string& p) {
      std::string s;
      String(&e, p, &s);
      out->push_back(std::move(s));
    });
  }

  DockerArchMap ArchMap(const json& j, const std::string& path) {
    DockerArchMap m;
    if (!Object(j, path)) return m;
    Fields fields(this, j, path, {"architecture", "subArchitectures"});
    String(fields.Get("architecture"), fields.Path("architecture"), &m.arch);
    Strings(fields.Get("subArchitectures"), fields.Path("subArchitectures"), &m.sub_arches);
    return m;
  }

  DockerFilter Filter(const json* j, const std::string& path) {
    DockerFilter f;
    if (Absent(j) || !Object(*j, path)) return f;
    Fields fields(this, *j, path, {"caps", "arches", "minKernel"});
    Strings(fields.Get("caps"), fields.Path("caps"), &f.caps);
    Strings(fields.Get("arches"), fields.Path("arches"), &f.arches);
    const json* k = fields.Get("minKernel");
    if (!Absent(k)) {
      if (!k->is_string()) {
        Error(fields.Path("minKernel"), std::string("invalid kernel version: expected a "
                                                    "string \"<kernel>.<major>\", found ") +
                                            k->type_name());
      } else {
        std::string why;
        const std::string& v = k->get_ref<const std::string&>();
        f.min_kernel = ParseMinKernel(v, &why);
        if (!f.min_kernel) {
          Error(fields.Path("minKernel"), "invalid kernel version '" + v +
                                              "', expected \"<kernel>.<major>\": " + why +
                                              "; Docker refuses the profile");
        }
      }
    }
    return f;
  }

  DockerArg Arg(const json& j, const std::string& path) {
    DockerArg a;
    a.where = path;
    if (!Object(j, path)) return a;
    Fields fields(this, j, path, {"index", "value", "valueTwo", "op"});
    Unsigned(fields.Get("index"), fields.Path("index"), &a.index);
    Unsigned(fields.Get("value"), fields.Path("value"), &a.value);
    Unsigned(fields.Get("valueTwo"), fields.Path("valueTwo"), &a.value_two);
    String(fields.Get("op"), fields.Path("op"), &a.op);
    return a;
  }

  DockerSyscall Syscall(const json& j, const std::string& path) {
    DockerSyscall s;
    s.where = path;
    if (!Object(j, path)) return s;
    Fields fields(
        this, j, path,
        {"names", "name", "action", "errnoRet", "args", "comment", "includes", "excludes"});
    Strings(fields.Get("names"), fields.Path("names"), &s.names);
    std::string name;
    String(fields.Get("name"), fields.Path("name"), &name);
    if (!name.empty()) {
      if (!s.names.empty()) {
        Error(path, "'name' and 'names' are both given; Docker refuses the profile");
      }
      s.names.push_back(name);
    }
    String(fields.Get("action"), fields.Path("action"), &s.action);
    Unsigned(fields.Get("errnoRet"), fields.Path("errnoRet"), &s.errno_ret);
    Array(fields.Get("args"), fields.Path("args"),
          [&](const json& e, const std::string& p) { s.args.push_back(Arg(e, p)); });
    String(fields.Get("comment"), fields.Path("comment"), &s.comment);
    s.includes = Filter(fields.Get("includes"), fields.Path("includes"));
    s.excludes = Filter(fields.Get("excludes"), fields.Path("excludes"));
    return s;
  }

  std::vector<ImportDiagnostic>* diagnostics_;
  int errors_ = 0;
};

// strconv.ParseUint(s, 10, 8): ASCII digits only, no sign, 0-255.
std::optional<uint64_t> ParseUint8(std::string_view s, std::string* why) {
  if (s.empty()) {
    *why = "an empty number";
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      *why = "'" + std::string(s) + "' is not a decimal number";
      return std::nullopt;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > 255) {
      *why = "'" + std::string(s) + "' is out of range 0-255";
      return std::nullopt;
    }
  }
  return v;
}

}  // namespace

std::optional<std::array<uint64_t, 2>> ParseMinKernel(std::string_view text, std::string* why) {
  if (text.empty()) return std::array<uint64_t, 2>{0, 0};
  // strings.SplitN(ver, ".", 3) must give exactly two parts.
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || text.find('.', dot + 1) != std::string_view::npos) {
    *why = "not two numbers separated by one dot";
    return std::nullopt;
  }
  auto kernel = ParseUint8(text.substr(0, dot), why);
  if (!kernel) return std::nullopt;
  auto major = ParseUint8(text.substr(dot + 1), why);
  if (!major) return std::nullopt;
  if (*kernel == 0 && *major == 0) {
    *why = "version cannot be 0.0";
    return std::nullopt;
  }
  return std::array<uint64_t, 2>{*kernel, *major};
}

bool ParseDockerProfile(std::string_view text, DockerProfile* out,
                        std::vector<ImportDiagnostic>* diagnostics) {
  Decoder decoder(diagnostics);
  if (text.size() > kMaxProfileBytes) {
    decoder.Error("", "the profile is larger than 16 MiB");
    return false;
  }
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // nlohmann's messages start "[json.exception.parse_error.101] parse error at ...".
    std::string what = e.what();
    if (size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    decoder.Error("", "not valid JSON: " + what);
    return false;
  }
  decoder.Profile(j, out);
  return decoder.ok();
}

}  // namespace ward::importers
