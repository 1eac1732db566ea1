// Target blocks: settings only one backend reads. The grammar keeps a block as
// a flat token list; the key table below splits it into entries:
// `key VALUE flag...`, where the flags are the words the key allows.
#include <set>

#include "language/checker.h"
#include "language/constants.h"
#include "language/literals.h"

namespace ward {
namespace {

enum class Setting { kString, kPath, kInteger, kRate, kPort, kBlock };

struct KeyInfo {
  const char* key;
  Setting type;
  std::set<std::string> flags;
};

struct TargetInfo {
  const char* name;
  std::vector<KeyInfo> keys;
};

// Every backend has an entry, so a block for a known backend with no
// settings yet still gets "unknown key" rather than "unknown target".
const std::vector<TargetInfo>& Targets() {
  static const std::vector<TargetInfo> targets = {
      {"seccomp", {}},
      {"oci", {}},
      {"process", {}},
      {"ebpf", {}},
      {"nftables", {{"interface", Setting::kString, {}}}},
      {"landlock", {}},
      {"kubernetes",
       {{"namespace", Setting::kString, {}},
        {"pod_selector", Setting::kBlock, {}},
        {"namespace_selector", Setting::kBlock, {}}}},
      {"cilium", {{"namespace", Setting::kString, {}}, {"endpoint_selector", Setting::kBlock, {}}}},
      {"seatbelt", {{"proxy_port", Setting::kPort, {}}}},
      {"firecracker",
       {{"kernel", Setting::kPath, {}},
        {"rootfs", Setting::kPath, {"read_only"}},
        {"boot_args", Setting::kString, {}},
        {"vcpus", Setting::kInteger, {}},
        {"network_rate", Setting::kRate, {}},
        {"tap", Setting::kString, {}}}},
  };
  return targets;
}

const char* Describe(Setting s) {
  switch (s) {
    case Setting::kString:
      return "a string";
    case Setting::kPath:
      return "an absolute path (a string)";
    case Setting::kInteger:
      return "a whole number";
    case Setting::kRate:
      return "a rate such as 100Mbit or 10MiB/s";
    case Setting::kPort:
      return "a port";
    case Setting::kBlock:
      return "a block { key = \"value\" }";
  }
  return "a value";
}

}  // namespace

void Checker::CheckTargets(ast::Policy& policy) {
  std::map<std::string, Span> seen;
  for (ast::TargetSection& t : policy.targets) {
    const TargetInfo* info = nullptr;
    std::vector<std::string> names;
    for (const TargetInfo& i : Targets()) {
      names.push_back(i.name);
      if (t.name.text == i.name) info = &i;
    }
    if (!info) {
      std::string close = DidYouMean(ClosestMatches(t.name.text, names));
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      sink_.Error(Code::kUnknownTarget, t.name.span, "unknown target '" + t.name.text + "'",
                  close.empty() ? "the targets are " + known : close);
      continue;
    }
    auto [it, inserted] = seen.emplace(t.name.text, t.span);
    if (!inserted) {
      sink_.Error(Code::kDuplicateSection, t.name.span,
                  "duplicate target " + t.name.text + " block in this policy");
      sink_.AddRelated(it->second, "first given here");
      continue;
    }
    std::map<std::string, Span> keys_seen;
    size_t i = 0;
    while (i < t.tokens.size()) {
      const ast::TargetToken& tok = t.tokens[i++];
      const KeyInfo* key = nullptr;
      std::vector<std::string> key_names;
      for (const KeyInfo& k : info->keys) {
        key_names.push_back(k.key);
        if (tok.kind == ast::TargetToken::kWord && tok.value.text == k.key) key = &k;
      }
      if (!key) {
        std::string known;
        for (const std::string& k : key_names) known += (known.empty() ? "" : ", ") + k;
        sink_.Error(Code::kUnknownTarget, tok.span,
                    tok.kind == ast::TargetToken::kWord
                        ? "unknown key '" + tok.value.text + "' in target " + t.name.text
                        : "expected a key in target " + t.name.text,
                    known.empty() ? "target " + t.name.text + " has no settings yet"
                                  : "the keys are " + known);
        break;  // the rest of the block cannot be split reliably
      }
      if (auto [first, inserted] = keys_seen.emplace(key->key, tok.span); !inserted) {
        sink_.Error(Code::kDuplicateEntry, tok.span,
                    "'" + std::string(key->key) + "' is given twice in target " + t.name.text);
        sink_.AddRelated(first->second, "first given here");
      }
      ast::TargetEntry entry;
      entry.key = {key->key, tok.span};
      entry.span = tok.span;
      if (i >= t.tokens.size()) {
        sink_.Error(Code::kTypeMismatch, tok.span,
                    "'" + std::string(key->key) + "' needs " + Describe(key->type));
        break;
      }
      const ast::TargetToken& val = t.tokens[i++];
      entry.span.end = val.span.end;
      bool ok = true;
      std::string error;
      if (key->type == Setting::kBlock) {
        ok = val.kind == ast::TargetToken::kBlock;
        for (const auto& [k, v] : val.block) entry.labels[k.text] = v.text;
      } else {
        std::vector<ast::Atom> atoms = Expand({val.value});
        ok = val.kind != ast::TargetToken::kBlock && atoms.size() == 1;
        if (ok) {
          entry.value = atoms[0];
          bool is_string = atoms[0].kind == ast::ValueKind::kString;
          switch (key->type) {
            case Setting::kString:
              ok = is_string;
              break;
            case Setting::kPath:
              ok = is_string && !atoms[0].text.empty() && atoms[0].text[0] == '/';
              break;
            case Setting::kInteger:
              ok = !is_string && ParseInteger(atoms[0].text, &error).value_or(-1) > 0;
              break;
            case Setting::kRate:
              ok = !is_string && ParseRate(atoms[0].text, &error).has_value();
              break;
            case Setting::kPort:
              ok = !is_string && ParsePortRange(atoms[0].text, &error) &&
                   atoms[0].text.find('-') == std::string::npos;
              break;
            case Setting::kBlock:
              break;
          }
        }
      }
      if (!ok) {
        sink_.Error(Code::kTypeMismatch, val.span,
                    "'" + std::string(key->key) + "' expects " + Describe(key->type));
      }
      while (i < t.tokens.size() && t.tokens[i].kind == ast::TargetToken::kWord &&
             key->flags.count(t.tokens[i].value.text)) {
        entry.flags.push_back({t.tokens[i].value.text, t.tokens[i].span});
        entry.span.end = t.tokens[i].span.end;
        ++i;
      }
      t.entries.push_back(std::move(entry));
    }
  }
}

}  // namespace ward
