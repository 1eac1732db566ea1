#include "importers/ward_writer.h"

#include <algorithm>
#include <cstring>

#include "language/constants.h"
#include "language/utf8.h"

namespace ward::importers {
namespace {

constexpr size_t kWidth = 96;

std::string ErrnoText(int value) {
  // glibc's name for the number, when the checker reads it back as the same.
  if (const char* name = strerrorname_np(value)) {
    if (LookupErrno(name) == value) return name;
  }
  return std::to_string(value);
}

// `prefix` followed by the names, continued on new lines after a comma.
void AppendList(std::string* out, const std::string& prefix, const std::vector<std::string>& names,
                const std::string& suffix) {
  const std::string indent(prefix.size(), ' ');
  std::string line = prefix;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string item = names[i] + (i + 1 < names.size() ? "," : "");
    if (line.size() > prefix.size() && line.size() + 1 + item.size() > kWidth) {
      *out += line + "\n";
      line = indent;
    } else if (line.size() > prefix.size()) {
      line += " ";
    }
    line += item;
  }
  *out += line + suffix + "\n";
}

// `text` as `//` lines of at most kWidth columns, wrapped at spaces; the
// continuation lines indented by two.
void AppendComment(std::string* out, std::string_view text) {
  std::string_view prefix = "// ";
  while (prefix.size() + text.size() > kWidth) {
    size_t cut = text.rfind(' ', kWidth - prefix.size());
    if (cut == std::string_view::npos || cut == 0) break;
    *out += std::string(prefix) + std::string(text.substr(0, cut)) + "\n";
    text = text.substr(cut + 1);
    prefix = "//   ";
  }
  *out += std::string(prefix) + std::string(text) + "\n";
}

size_t Lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

void WritePolicy(std::string* out, const WardPolicy& p, std::vector<RuleOrigin>* origins) {
  *out += "policy " + p.name + " {\n    syscalls {\n";
  if (!p.arches.empty()) AppendList(out, "        arch ", p.arches, "");
  *out += "        default " + ActionText(p.default_action) + "\n";
  for (const WardRule& r : p.rules) {
    for (const std::string& c : r.comments) *out += "        // " + CommentText(c) + "\n";
    std::string conditions;
    for (const std::string& c : r.conditions) {
      conditions += (conditions.empty() ? " if " : " and ") + c;
    }
    const size_t first = Lines(*out) + 1;
    AppendList(out, "        " + ActionText(r.action) + " ", r.names, conditions);
    if (origins && !r.origin.empty()) origins->push_back({first, Lines(*out), r.origin});
  }
  *out += "    }\n";
  if (p.keeps_capabilities) {
    *out += "    process {\n        no_new_privileges\n";
    if (p.capabilities.empty()) {
      *out += "        capabilities drop all\n";
    } else {
      std::vector<std::string> caps = p.capabilities;
      caps.front() = "[" + caps.front();
      caps.back() += "]";
      AppendList(out, "        capabilities keep ", caps, "");
    }
    *out += "    }\n";
  }
  *out += "}\n";
}

}  // namespace

std::string ActionText(const WardAction& action) {
  switch (action.kind) {
    case WardActionKind::kAllow:
      return "allow";
    case WardActionKind::kLog:
      return "log";
    case WardActionKind::kNotify:
      return "notify";
    case WardActionKind::kErrno:
      return "errno " + ErrnoText(action.errno_value);
    case WardActionKind::kTrap:
      return "trap";
    case WardActionKind::kKillThread:
      return "kill-thread";
    case WardActionKind::kKill:
      return "kill";
  }
  return "kill";
}

std::string CommentText(std::string_view text) {
  std::string out(text);
  while (true) {
    size_t bad = FindInvalidUtf8(out);
    if (bad == std::string::npos) break;
    out[bad] = ' ';
  }
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

std::string WriteWard(const std::vector<std::string>& header,
                      const std::vector<WardPolicy>& policies, std::vector<RuleOrigin>* origins) {
  std::string out;
  for (const std::string& h : header) AppendComment(&out, CommentText(h));
  for (const WardPolicy& p : policies) {
    out += "\n";
    WritePolicy(&out, p, origins);
  }
  return out;
}

}  // namespace ward::importers
