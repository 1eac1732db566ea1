#include "compiler/policy.h"

#include <set>
#include <tuple>

#include "compiler/extends.h"

namespace ward::ir {

Policy Lower(const Program& program, const ast::Policy& policy, DiagnosticSink& sink) {
  std::vector<const ast::Policy*> sources = ExtendsOrder(program, policy);
  std::vector<const ast::FilesystemSection*> fs;
  std::vector<const ast::NetworkSection*> net;
  for (const ast::Policy* p : sources) {
    if (p->filesystem) fs.push_back(&*p->filesystem);
    if (p->network) net.push_back(&*p->network);
  }
  Policy ir;
  ir.name = policy.name.text;
  ir.metadata = LowerMetadata(sources);
  ir.filesystem = LowerFilesystem(fs);
  ir.network = LowerNetwork(net);
  std::vector<Conflict> conflicts;
  ir.syscalls = LowerSyscalls(program, sources, &conflicts);
  for (const Conflict& c : conflicts) {
    sink.Error(Code::kSyscallConflict, c.b, c.message,
               "make the rules agree, or narrow one so that they no longer overlap");
    if (c.a.file != c.b.file || c.a.begin != c.b.begin) sink.AddRelated(c.a, "the other rule");
  }
  ir.process = LowerProcess(sources);
  ir.limits = LowerLimits(sources);
  ir.targets = LowerTargets(sources);
  return ir;
}

void CheckLowering(const Program& program, DiagnosticSink& sink) {
  std::set<std::tuple<Code, FileId, uint32_t, std::string>> seen;
  for (FileId id : program.roots) {
    const ast::File* f = program.file(id);
    if (!f) continue;
    for (const ast::Policy& p : f->policies) {
      DiagnosticSink own;
      Lower(program, p, own);
      for (const Diagnostic& d : own.diagnostics()) {
        if (seen.emplace(d.code, d.span.file, d.span.begin, d.message).second) sink.Report(d);
      }
    }
  }
}

std::vector<const ast::Policy*> SelectPolicies(const Program& program,
                                               const std::optional<std::string>& name,
                                               std::string* error) {
  std::vector<const ast::Policy*> all;
  for (FileId id : program.roots) {
    const ast::File* f = program.file(id);
    if (!f) continue;
    for (const ast::Policy& p : f->policies) {
      if (!p.is_abstract) all.push_back(&p);
    }
  }
  if (name) {
    for (const ast::Policy* p : all) {
      if (p->name.text == *name) return {p};
    }
    *error = "no policy named '" + *name + "'";
    std::string names;
    for (const ast::Policy* p : all) names += (names.empty() ? "" : ", ") + p->name.text;
    if (!names.empty()) *error += " (the file has " + names + ")";
    return {};
  }
  if (all.size() > 1) {
    std::string names;
    for (const ast::Policy* p : all) names += (names.empty() ? "" : ", ") + p->name.text;
    *error = "the file holds several policies (" + names + "): choose one with --policy NAME";
    return {};
  }
  if (all.empty()) *error = "the file holds no policy that can be compiled (only abstract ones)";
  return all;
}

}  // namespace ward::ir
