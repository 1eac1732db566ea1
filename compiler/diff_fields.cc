// `ward diff`, the sections compared field by field: process, limits,
// targets, description and labels (compiler/diff.h has the line formats).
#include <set>

#include "compiler/diff_internal.h"

namespace ward::ir::diff_internal {

// ---- process --------------------------------------------------------------

namespace {

void SetLines(DiffSection section, const std::string& what, const std::set<std::string>& before,
              const std::set<std::string>& after, std::vector<Change>* out) {
  std::set<std::string> all = before;
  all.insert(after.begin(), after.end());
  for (const std::string& name : all) {
    bool was = before.count(name) > 0, is = after.count(name) > 0;
    if (was == is) continue;
    std::string line = is ? "+ " : "- ";
    line += what;
    line += " ";
    line += name;
    out->push_back(
        MakeChange(section, is ? ChangeKind::kWidened : ChangeKind::kNarrowed, std::move(line)));
  }
}

std::string UserText(const std::pair<uint32_t, uint32_t>& u) {
  return std::to_string(u.first) + ":" + std::to_string(u.second);
}

}  // namespace

void DiffProcess(const ProcessRules& before, const ProcessRules& after, std::vector<Change>* out) {
  if (before.no_new_privileges != after.no_new_privileges) {
    // Losing no_new_privileges lets the workload gain privileges: a widening.
    bool is = after.no_new_privileges;
    out->push_back(MakeChange(DiffSection::kProcess,
                              is ? ChangeKind::kNarrowed : ChangeKind::kWidened,
                              std::string(is ? "+ " : "- ") + "no_new_privileges"));
  }
  SetLines(DiffSection::kProcess, "capability", before.capabilities_kept, after.capabilities_kept,
           out);
  if (before.user != after.user) {
    std::string line = !before.user ? "+ user " + UserText(*after.user)
                       : !after.user
                           ? "- user " + UserText(*before.user)
                           : "~ user " + UserText(*before.user) + " -> " + UserText(*after.user);
    out->push_back(MakeChange(DiffSection::kProcess, ChangeKind::kChanged, line));
  }
  SetLines(DiffSection::kProcess, "env", before.env_allowed, after.env_allowed, out);
}

// ---- limits ---------------------------------------------------------------

namespace {

// The largest unit that divides exactly, of those the language accepts.
std::string WithUnit(uint64_t v, const std::vector<std::pair<const char*, uint64_t>>& units,
                     const char* fallback) {
  for (const auto& [name, size] : units) {
    if (v >= size && v % size == 0) return std::to_string(v / size) + name;
  }
  return std::to_string(v) + fallback;
}

std::string SizeText(uint64_t v) {
  std::string binary = WithUnit(
      v, {{"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}}, "B");
  std::string decimal = WithUnit(v,
                                 {{"T", 1000ull * 1000 * 1000 * 1000},
                                  {"G", 1000ull * 1000 * 1000},
                                  {"M", 1000ull * 1000},
                                  {"K", 1000}},
                                 "B");
  return decimal.size() < binary.size() ? decimal : binary;
}

std::string MilliText(uint64_t v) {
  std::string s = std::to_string(v / 1000);
  if (v % 1000 == 0) return s;
  std::string frac = std::to_string(1000 + v % 1000).substr(1);
  while (frac.back() == '0') frac.pop_back();
  return s + "." + frac;
}

std::string LimitText(const std::string& key, uint64_t v) {
  if (key == "memory" || key == "disk") return SizeText(v);
  if (key == "cpus") return MilliText(v);
  if (key == "cpu_time" || key == "timeout") {
    return WithUnit(v, {{"d", 24 * 3600 * 1000}, {"h", 3600 * 1000}, {"m", 60 * 1000}, {"s", 1000}},
                    "ms");
  }
  return std::to_string(v);
}

}  // namespace

void DiffLimits(const Limits& before, const Limits& after, std::vector<Change>* out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  for (const std::string& k : keys) {
    auto b = before.find(k), a = after.find(k);
    bool was = b != before.end(), is = a != after.end();
    if (was && is && b->second.value == a->second.value) continue;
    Change c;
    if (!was) {
      // A new limit takes something away.
      c = MakeChange(DiffSection::kLimits, ChangeKind::kNarrowed,
                     "+ limits " + k + " " + LimitText(k, a->second.value));
    } else if (!is) {
      c = MakeChange(DiffSection::kLimits, ChangeKind::kWidened,
                     "- limits " + k + " " + LimitText(k, b->second.value));
    } else {
      c = MakeChange(
          DiffSection::kLimits,
          a->second.value > b->second.value ? ChangeKind::kWidened : ChangeKind::kNarrowed,
          "~ limits " + k + " " + LimitText(k, b->second.value) + " -> " +
              LimitText(k, a->second.value));
    }
    if (was) c.old_rules.push_back(b->second.span);
    if (is) c.new_rules.push_back(a->second.span);
    out->push_back(std::move(c));
  }
}

// ---- targets and metadata -------------------------------------------------

namespace {

std::string SettingText(const TargetSetting& s) {
  std::string out;
  if (!s.labels.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : s.labels) parts.push_back(k + " = " + Quote(v));
    out = "{" + Join(parts, ", ") + "}";
  } else {
    out = s.value;
  }
  for (const std::string& f : s.flags) out += " " + f;
  return out;
}

// Keyed values: `+ WHAT KEY VALUE`, `- WHAT KEY VALUE`, `~ WHAT KEY A -> B`.
template <typename V, typename Text, typename SpanOf>
void KeyedLines(DiffSection section, const std::string& what,
                const std::map<std::string, V>& before, const std::map<std::string, V>& after,
                Text text, SpanOf span_of, std::vector<Change>* out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  for (const std::string& k : keys) {
    auto b = before.find(k), a = after.find(k);
    bool was = b != before.end(), is = a != after.end();
    if (was && is && b->second == a->second) continue;
    std::string line = !was ? "+ " : !is ? "- " : "~ ";
    line += what;
    line += k;
    line += " ";
    line += text(was ? b->second : a->second);
    if (was && is) line += " -> " + text(a->second);
    Change c = MakeChange(section, ChangeKind::kChanged, std::move(line));
    if (was) span_of(b->second, &c.old_rules);
    if (is) span_of(a->second, &c.new_rules);
    out->push_back(std::move(c));
  }
}

}  // namespace

void DiffTargets(const Targets& before, const Targets& after, std::vector<Change>* out) {
  std::set<std::string> names;
  for (const auto& [n, s] : before) names.insert(n);
  for (const auto& [n, s] : after) names.insert(n);
  const std::map<std::string, TargetSetting> none;
  for (const std::string& n : names) {
    auto b = before.find(n), a = after.find(n);
    KeyedLines(
        DiffSection::kTargets, "target " + n + " ", b == before.end() ? none : b->second,
        a == after.end() ? none : a->second, SettingText,
        [](const TargetSetting& s, std::vector<Span>* spans) { spans->push_back(s.span); }, out);
  }
}

void DiffMetadata(const Metadata& before, const Metadata& after, std::vector<Change>* out) {
  if (before.description != after.description) {
    std::string line = before.description.empty()  ? "+ description " + Quote(after.description)
                       : after.description.empty() ? "- description " + Quote(before.description)
                                                   : "~ description " + Quote(before.description) +
                                                         " -> " + Quote(after.description);
    out->push_back(MakeChange(DiffSection::kMetadata, ChangeKind::kChanged, line));
  }
  KeyedLines(
      DiffSection::kMetadata, "label ", before.labels, after.labels,
      [](const std::string& v) { return Quote(v); }, [](const std::string&, std::vector<Span>*) {},
      out);
}

}  // namespace ward::ir::diff_internal
