// `ward diff`: the entry point, the order of the sections, and the helpers
// the sections share. Each section is its own file: diff_network.cc (with
// diff_network_rules.cc for provenance), diff_filesystem.cc,
// diff_syscalls.cc, and diff_fields.cc for process, limits, targets and
// metadata.
#include "compiler/diff.h"

#include <algorithm>
#include <tuple>

#include "compiler/diff_internal.h"

namespace ward::ir {
namespace diff_internal {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string PathText(const std::string& p) {
  bool plain = std::none_of(p.begin(), p.end(), [](char c) {
    return c == ' ' || c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  return plain ? p : Quote(p);
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

void SortSpans(std::vector<Span>* spans) {
  auto key = [](const Span& s) { return std::tuple(s.file, s.begin, s.end); };
  std::sort(spans->begin(), spans->end(),
            [&](const Span& a, const Span& b) { return key(a) < key(b); });
  spans->erase(std::unique(spans->begin(), spans->end(),
                           [&](const Span& a, const Span& b) { return key(a) == key(b); }),
               spans->end());
}

Change MakeChange(DiffSection section, ChangeKind kind, std::string line) {
  Change c;
  c.section = section;
  c.kind = kind;
  c.line = std::move(line);
  return c;
}

}  // namespace diff_internal

const char* SectionName(DiffSection section) {
  switch (section) {
    case DiffSection::kNetwork:
      return "network";
    case DiffSection::kFilesystem:
      return "filesystem";
    case DiffSection::kSyscalls:
      return "syscalls";
    case DiffSection::kProcess:
      return "process";
    case DiffSection::kLimits:
      return "limits";
    case DiffSection::kTargets:
      return "targets";
    case DiffSection::kMetadata:
      return "metadata";
  }
  return "network";
}

const char* KindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kWidened:
      return "widened";
    case ChangeKind::kNarrowed:
      return "narrowed";
    case ChangeKind::kChanged:
      return "changed";
  }
  return "changed";
}

DiffResult Diff(const Policy& old_policy, const Policy& new_policy, const DiffOptions& options) {
  namespace d = diff_internal;
  DiffResult result;
  std::vector<Change>* out = &result.changes;
  d::DiffNetwork(old_policy.network, new_policy.network, out);
  d::DiffFilesystem(old_policy.filesystem, new_policy.filesystem, options.home, out);
  d::DiffSyscalls(old_policy.syscalls, new_policy.syscalls, out);
  d::DiffProcess(old_policy.process, new_policy.process, out);
  d::DiffLimits(old_policy.limits, new_policy.limits, out);
  d::DiffTargets(old_policy.targets, new_policy.targets, out);
  d::DiffMetadata(old_policy.metadata, new_policy.metadata, out);
  return result;
}

}  // namespace ward::ir
