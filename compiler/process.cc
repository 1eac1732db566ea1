#include "compiler/process.h"

namespace ward::ir {

ProcessRules LowerProcess(const std::vector<const ast::Policy*>& sources) {
  ProcessRules p;
  bool any_section = false;
  bool any_nnp = false;
  for (const ast::Policy* source : sources) {
    if (!source->process) continue;
    const ast::ProcessSection& s = *source->process;
    any_section = true;
    any_nnp |= s.no_new_privileges.has_value();
    for (const ast::ProcessSection::Caps& caps : s.capabilities) {
      for (const ast::Name& n : caps.names) p.capabilities_kept.insert(n.text);
    }
    if (s.user) p.user = std::make_pair(s.user->uid, s.user->gid);
    for (const ast::ProcessSection::Env& env : s.env) {
      for (const ast::Atom& a : env.names) p.env_allowed.insert(a.text);
    }
  }
  p.no_new_privileges = !any_section || any_nnp;
  return p;
}

Limits LowerLimits(const std::vector<const ast::Policy*>& sources) {
  Limits limits;
  for (const ast::Policy* source : sources) {
    if (!source->limits) continue;
    for (const ast::Limit& l : source->limits->limits) {
      if (l.value == 0) continue;  // rejected by the checker
      limits[l.key.text] = {l.value, l.span};
    }
  }
  return limits;
}

Targets LowerTargets(const std::vector<const ast::Policy*>& sources) {
  Targets targets;
  for (const ast::Policy* source : sources) {
    for (const ast::TargetSection& t : source->targets) {
      auto& settings = targets[t.name.text];
      for (const ast::TargetEntry& e : t.entries) {
        TargetSetting s;
        s.value = e.value.text;
        s.labels = e.labels;
        for (const ast::Name& f : e.flags) s.flags.push_back(f.text);
        s.span = e.span;
        settings[e.key.text] = std::move(s);
      }
    }
  }
  return targets;
}

Metadata LowerMetadata(const std::vector<const ast::Policy*>& sources) {
  Metadata m;
  for (const ast::Policy* source : sources) {
    if (source->description) m.description = source->description->first;
    for (const ast::Label& l : source->labels) m.labels[l.key.text] = l.value;
  }
  return m;
}

}  // namespace ward::ir
