#include "importers/docker_seccomp/docker_profile.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>

namespace ward::importers {
namespace {

using nlohmann::json;

// Docker refuses nothing for size, but a profile past this is not one.
constexpr size_t kMaxProfileBytes = 16 << 20;

// One JSON value with every object member kept, in document order:
// encoding/json decodes the members one after another, so of two equal
// keys the last decides, and nlohmann's own objects (maps) keep only one.
struct Node {
  enum Kind { kScalar, kObject, kArray } kind = kScalar;
  json scalar;                    // kScalar: null, boolean, number or string
  std::vector<std::string> keys;  // kObject: keys[i] is the key of items[i]
  std::vector<Node> items;

  bool Null() const { return kind == kScalar && scalar.is_null(); }
  const char* TypeName() const {
    return kind == kObject ? "object" : kind == kArray ? "array" : scalar.type_name();
  }
};

// Builds the Node tree through nlohmann's SAX interface.
class TreeBuilder : public nlohmann::json_sax<json> {
 public:
  explicit TreeBuilder(Node* root) { stack_.push_back(root); }

  bool null() override { return Scalar(json()); }
  bool boolean(bool v) override { return Scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return Scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Scalar(json(v)); }
  bool string(string_t& v) override { return Scalar(json(v)); }
  bool binary(binary_t&) override { return false; }  // not in JSON text
  bool start_object(std::size_t) override { return Open(Node::kObject); }
  bool key(string_t& k) override {
    Node* object = stack_.back();
    object->keys.push_back(k);
    object->items.emplace_back();
    pending_ = &object->items.back();
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Node::kArray); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's messages start "[json.exception.parse_error.101] parse error at ...".
    error_ = e.what();
    if (size_t at = error_.find("] "); at != std::string::npos) error_ = error_.substr(at + 2);
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  // Where the next value goes: the member just keyed, a new array item, or
  // the root.
  Node* Slot() {
    if (pending_) {
      Node* n = pending_;
      pending_ = nullptr;
      return n;
    }
    Node* top = stack_.back();
    if (top->kind == Node::kArray && started_) {
      top->items.emplace_back();
      return &top->items.back();
    }
    started_ = true;
    return top;
  }
  bool Scalar(json v) {
    Slot()->scalar = std::move(v);
    return true;
  }
  bool Open(Node::Kind kind) {
    Node* n = Slot();
    n->kind = kind;
    stack_.push_back(n);
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Node*> stack_;
  Node* pending_ = nullptr;
  bool started_ = false;
  std::string error_;
};

// A key as Go's encoding/json folds it to match a field: ASCII case
// ignored, and the two non-ASCII letters that fold to ASCII ones (U+212A
// KELVIN SIGN to k, U+017F LATIN SMALL LETTER LONG S to s) read as those.
std::string Fold(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(key[i]);
    if (c == 0xe2 && key.substr(i, 3) == "\xe2\x84\xaa") {
      out += 'k';
      i += 2;
    } else if (c == 0xc5 && key.substr(i, 2) == "\xc5\xbf") {
      out += 's';
      i += 1;
    } else {
      out += c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : static_cast<char>(c);
    }
  }
  return out;
}

using Field = std::pair<const char*, std::function<void(const Node&, const std::string&)>>;

// Walks the tree the way Go's encoding/json fills Docker's structs:
// members in document order, each into the field its key folds to (a
// later duplicate decodes again, into what the earlier one left: a scalar
// is replaced, an array's items are decoded into the items already there,
// a struct keeps the fields the later object does not name); null leaves
// a string or number as it was and empties a slice or pointer. Type errors
// and unknown keys are recorded at their JSON pointers.
class Decoder {
 public:
  explicit Decoder(std::vector<ImportDiagnostic>* diagnostics) : diagnostics_(diagnostics) {}

  bool ok() const { return errors_ == 0; }

  void Profile(const Node& j, DockerProfile* out) {
    Fields(
        j, "",
        {
            {"defaultAction",
             [&](const Node& v, const std::string& p) { String(v, p, &out->default_action); }},
            {"defaultErrnoRet",
             [&](const Node& v, const std::string& p) { Unsigned(v, p, &out->default_errno_ret); }},
            {"architectures",
             [&](const Node& v, const std::string& p) { Strings(v, p, &out->architectures); }},
            {"archMap",
             [&](const Node& v, const std::string& p) {
               Array(v, p, &out->arch_map,
                     [&](const auto& e, const auto& q, DockerArchMap* m) { ArchMap(e, q, m); });
             }},
            {"syscalls",
             [&](const Node& v, const std::string& p) {
               Array(v, p, &out->syscalls,
                     [&](const auto& e, const auto& q, DockerSyscall* s) { Syscall(e, q, s); });
             }},
            {"listenerPath",
             [&](const Node& v, const std::string& p) { String(v, p, &out->listener_path); }},
            {"listenerMetadata",
             [&](const Node& v, const std::string& p) { String(v, p, &metadata_); }},
            {"flags", [&](const Node& v, const std::string& p) { Strings(v, p, &out->flags); }},
        });
    // moby folds the deprecated `name` into `names` after decoding.
    for (DockerSyscall& s : out->syscalls) {
      if (s.name.empty()) continue;
      if (!s.names.empty()) {
        Error(s.where, "'name' and 'names' are both given; Docker refuses the profile");
      }
      s.names = {s.name};
    }
  }

  void Error(const std::string& where, std::string message) {
    ++errors_;
    diagnostics_->push_back({Severity::kError, where, std::move(message)});
  }

 private:
  bool Object(const Node& j, const std::string& path) {
    if (j.kind == Node::kObject) return true;
    Error(path, std::string("expected an object, found ") + j.TypeName());
    return false;
  }

  void Fields(const Node& object, const std::string& path, std::initializer_list<Field> fields) {
    if (!Object(object, path)) return;
    for (size_t i = 0; i < object.keys.size(); ++i) {
      const std::string& key = object.keys[i];
      const Node& value = object.items[i];
      const std::string folded = Fold(key);
      const Field* field = nullptr;
      for (const Field& f : fields) {
        if (Fold(f.first) == folded) field = &f;
      }
      const std::string where = path + "/" + JsonPointerToken(key);
      if (!field) {
        diagnostics_->push_back(
            {Severity::kWarning, where, "unknown key '" + key + "' is ignored, as Docker does"});
        continue;
      }
      field->second(value, where);
    }
  }

  void String(const Node& j, const std::string& path, std::string* out) {
    if (j.Null()) return;
    if (j.kind != Node::kScalar || !j.scalar.is_string()) {
      Error(path, std::string("expected a string, found ") + j.TypeName());
      return;
    }
    *out = j.scalar.get_ref<const std::string&>();
  }

  // `*uint`: null empties it.
  void Unsigned(const Node& j, const std::string& path, std::optional<uint64_t>* out) {
    if (j.Null()) {
      out->reset();
      return;
    }
    uint64_t v = out->value_or(0);
    Unsigned(j, path, &v);
    *out = v;
  }

  void Unsigned(const Node& j, const std::string& path, uint64_t* out) {
    if (j.Null()) return;
    if (j.kind != Node::kScalar || !j.scalar.is_number_unsigned()) {
      Error(path,
            std::string("expected a non-negative integer, found ") +
                (j.kind == Node::kScalar && j.scalar.is_number() ? "a negative or fractional number"
                                                                 : j.TypeName()));
      return;
    }
    *out = j.scalar.get<uint64_t>();
  }

  // A slice: null empties it; an array is decoded into the items already
  // there, then cut to its length.
  template <typename T, typename Fn>
  void Array(const Node& j, const std::string& path, std::vector<T>* out, Fn each) {
    if (j.Null()) {
      out->clear();
      return;
    }
    if (j.kind != Node::kArray) {
      Error(path, std::string("expected an array, found ") + j.TypeName());
      return;
    }
    out->resize(j.items.size());
    for (size_t i = 0; i < j.items.size(); ++i) {
      each(j.items[i], path + "/" + std::to_string(i), &(*out)[i]);
    }
  }

  void Strings(const Node& j, const std::string& path, std::vector<std::string>* out) {
    Array(j, path, out,
          [&](const Node& e, const std::string& p, std::string* s) { String(e, p, s); });
  }

  void ArchMap(const Node& j, const std::string& path, DockerArchMap* m) {
    Fields(
        j, path,
        {
            {"architecture", [&](const Node& v, const std::string& p) { String(v, p, &m->arch); }},
            {"subArchitectures",
             [&](const Node& v, const std::string& p) { Strings(v, p, &m->sub_arches); }},
        });
  }

  // `*Filter`: null empties it; an object fills it.
  void Filter(const Node& j, const std::string& path, DockerFilter* f) {
    if (j.Null()) {
      *f = {};
      return;
    }
    Fields(j, path,
           {
               {"caps", [&](const Node& v, const std::string& p) { Strings(v, p, &f->caps); }},
               {"arches", [&](const Node& v, const std::string& p) { Strings(v, p, &f->arches); }},
               {"minKernel",
                [&](const Node& v, const std::string& p) { MinKernel(v, p, &f->min_kernel); }},
           });
  }

  // moby's KernelVersion.UnmarshalJSON (a pointer: null empties it, "" leaves
  // it as it was, or {0, 0} when new).
  void MinKernel(const Node& j, const std::string& path,
                 std::optional<std::array<uint64_t, 2>>* out) {
    if (j.Null()) {
      out->reset();
      return;
    }
    if (j.kind != Node::kScalar || !j.scalar.is_string()) {
      Error(path, std::string("invalid kernel version: expected a string \"<kernel>.<major>\", "
                              "found ") +
                      j.TypeName());
      return;
    }
    const std::string& v = j.scalar.get_ref<const std::string&>();
    if (v.empty()) {
      if (!*out) *out = std::array<uint64_t, 2>{0, 0};
      return;
    }
    std::string why;
    auto parsed = ParseMinKernel(v, &why);
    if (!parsed) {
      Error(path, "invalid kernel version '" + v + "', expected \"<kernel>.<major>\": " + why +
                      "; Docker refuses the profile");
      return;
    }
    *out = parsed;
  }

  void Arg(const Node& j, const std::string& path, DockerArg* a) {
    a->where = path;
    Fields(j, path,
           {
               {"index", [&](const Node& v, const std::string& p) { Unsigned(v, p, &a->index); }},
               {"value", [&](const Node& v, const std::string& p) { Unsigned(v, p, &a->value); }},
               {"valueTwo",
                [&](const Node& v, const std::string& p) { Unsigned(v, p, &a->value_two); }},
               {"op", [&](const Node& v, const std::string& p) { String(v, p, &a->op); }},
           });
  }

  void Syscall(const Node& j, const std::string& path, DockerSyscall* s) {
    s->where = path;
    Fields(
        j, path,
        {
            {"names", [&](const Node& v, const std::string& p) { Strings(v, p, &s->names); }},
            {"name", [&](const Node& v, const std::string& p) { String(v, p, &s->name); }},
            {"action", [&](const Node& v, const std::string& p) { String(v, p, &s->action); }},
            {"errnoRet",
             [&](const Node& v, const std::string& p) { Unsigned(v, p, &s->errno_ret); }},
            {"args",
             [&](const Node& v, const std::string& p) {
               Array(v, p, &s->args,
                     [&](const auto& e, const auto& q, DockerArg* a) { Arg(e, q, a); });
             }},
            {"comment", [&](const Node& v, const std::string& p) { String(v, p, &s->comment); }},
            {"includes", [&](const Node& v, const std::string& p) { Filter(v, p, &s->includes); }},
            {"excludes", [&](const Node& v, const std::string& p) { Filter(v, p, &s->excludes); }},
        });
  }

  std::vector<ImportDiagnostic>* diagnostics_;
  std::string metadata_;
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
  // nlohmann skips a byte order mark; Go refuses it ("invalid character").
  if (text.substr(0, 3) == "\xef\xbb\xbf") {
    decoder.Error("",
                  "not valid JSON: the text starts with a byte order mark, which Docker "
                  "refuses");
    return false;
  }
  Node root;
  TreeBuilder builder(&root);
  if (!json::sax_parse(text.begin(), text.end(), &builder)) {
    decoder.Error("", "not valid JSON: " + builder.error());
    return false;
  }
  decoder.Profile(root, out);
  return decoder.ok();
}

}  // namespace ward::importers
