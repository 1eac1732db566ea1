#include "importers/checked_import.h"

#include "compiler/policy.h"

namespace ward::importers {
namespace {

const RuleOrigin* OriginAt(const ImportResult& r, size_t line) {
  for (const RuleOrigin& o : r.origins) {
    if (line >= o.first_line && line <= o.last_line) return &o;
  }
  return nullptr;
}

// The lowering's "too many regions" error (the other W1043s, two errno
// values or two unconditional actions, the importer resolves itself).
bool TooManyRegions(const Diagnostic& d) {
  return d.code == Code::kSyscallConflict && d.message.find(" regions on ") != std::string::npos;
}

}  // namespace

void CheckImport(const std::string& std_dir, CheckedImport* checked) {
  ImportResult& r = checked->result;
  if (!r.ok) return;
  FrontendOptions options;
  options.std_dir = std_dir;
  options.memory_files["imported.ward"] = r.text;
  Program program = RunFrontend({"imported.ward"}, options, checked->sources, checked->sink);
  if (!checked->sink.has_errors()) ir::CheckLowering(program, checked->sink);
  if (!checked->sink.has_errors()) return;
  if (program.std_syscalls == kNoFile) {
    checked->no_std = true;
    r.ok = false;
    return;
  }
  // Every error must be one the input causes at a rule it has; otherwise
  // the importer wrote something wrong.
  std::vector<ImportDiagnostic> refusals;
  for (const Diagnostic& d : checked->sink.diagnostics()) {
    if (d.severity != Severity::kError) continue;
    const RuleOrigin* at = nullptr;
    if (TooManyRegions(d) && d.span.valid()) {
      at = OriginAt(r, checked->sources.LocationOf(d.span.file, d.span.begin).line);
    }
    if (!at) {
      checked->internal_error = true;
      r.ok = false;
      return;
    }
    std::string also;
    for (const Related& rel : d.related) {
      if (!rel.span.valid()) continue;
      const RuleOrigin* other =
          OriginAt(r, checked->sources.LocationOf(rel.span.file, rel.span.begin).line);
      if (other && other->where != at->where) also = " (with " + other->where + ")";
    }
    refusals.push_back({Severity::kError, at->where,
                        d.message.substr(0, d.message.find(';')) + also +
                            ": Ward's IR cannot hold them (a seccomp filter has at most 4096 "
                            "instructions), so this entry cannot be imported"});
  }
  r.ok = false;
  r.text.clear();
  for (ImportDiagnostic& d : refusals) r.diagnostics.push_back(std::move(d));
}

void ImportDockerSeccompChecked(std::string_view json, const DockerImportOptions& options,
                                const std::string& std_dir, CheckedImport* out) {
  out->result = ImportDockerSeccomp(json, options);
  CheckImport(std_dir, out);
}

}  // namespace ward::importers
