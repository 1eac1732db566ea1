#include "language/check.h"

#include "language/checker.h"
#include "language/constants.h"
#include "language/literals.h"

namespace ward {

void Checker::Run() {
  incomplete_ = program_.std_syscalls == kNoFile;
  for (const auto& f : program_.files) {
    if (!f) {
      incomplete_ = true;
      continue;
    }
    for (const ast::Import& imp : f->imports) incomplete_ |= imp.resolved == kNoFile;
  }
  CollectNames();
  for (auto& f : program_.files) {
    if (f) CheckVersion(*f);
  }
  for (auto& f : program_.files) {
    if (f) ResolveExtends(*f);
  }
  CheckExtendsCycles();
  CheckGroups();
  for (auto& f : program_.files) {
    if (!f) continue;
    EvaluateLets(*f);
    for (ast::Policy& p : f->policies) CheckPolicy(*f, p);
  }
}

void Checker::CheckVersion(const ast::File& file) {
  if (file.version && file.version->text != "1") {
    sink_.Error(Code::kUnsupportedVersion, file.version->span,
                "unsupported language version '" + file.version->text + "'",
                "this compiler reads `ward 1`");
  }
}

// Policy and group names are global: `--policy NAME` and group references
// must mean one thing whichever file they are read from.
void Checker::CollectNames() {
  for (auto& f : program_.files) {
    if (!f) continue;
    for (size_t i = 0; i < f->policies.size(); ++i) {
      const ast::Name& name = f->policies[i].name;
      if (!IsIdentifier(name.text)) {
        sink_.Error(Code::kInvalidName, name.span, "invalid policy name '" + name.text + "'",
                    "names are letters, digits, '-' and '_', starting with a letter");
      }
      auto [it, inserted] = policies_.emplace(name.text, PolicyRef{f->id, i});
      if (!inserted) {
        const ast::Policy& first = program_.files[it->second.file]->policies[it->second.index];
        sink_.Error(Code::kDuplicateName, name.span, "policy '" + name.text + "' is defined twice",
                    "rename one of them");
        sink_.AddRelated(first.name.span, "first defined here");
      }
    }
    CollectGroups(*f);
  }
}

void Checker::CollectGroups(ast::File& file) {
  for (size_t i = 0; i < file.groups.size(); ++i) {
    const ast::Name& name = file.groups[i].name;
    auto [it, inserted] = groups_.emplace(name.text, std::make_pair(file.id, i));
    if (inserted) continue;
    const ast::File& other = *program_.files[it->second.first];
    const ast::Name& first = other.groups[it->second.second].name;
    if (other.is_std && !file.is_std) {
      sink_.Error(Code::kReservedGroupName, name.span,
                  "group '" + name.text + "' is a standard group and cannot be redefined",
                  "choose another name");
    } else {
      sink_.Error(Code::kDuplicateName, name.span, "group '" + name.text + "' is defined twice",
                  "rename one of them");
    }
    sink_.AddRelated(first.span, "first defined here");
  }
}

// A file sees its own policies and those of the files it imports directly.
bool Checker::Visible(FileId from, FileId target) const {
  if (from == target) return true;
  const ast::File* f = program_.file(from);
  if (!f) return false;
  for (const ast::Import& imp : f->imports) {
    if (imp.resolved == target) return true;
  }
  return false;
}

void Checker::ResolveExtends(ast::File& file) {
  for (ast::Policy& p : file.policies) {
    std::map<std::string, Span> seen;
    for (const ast::Name& base : p.extends) {
      auto [first, inserted] = seen.emplace(base.text, base.span);
      if (!inserted) {
        sink_.Error(Code::kDuplicateEntry, base.span,
                    "'" + base.text + "' is listed twice in extends");
        sink_.AddRelated(first->second, "first listed here");
        continue;
      }
      auto it = policies_.find(base.text);
      if (it == policies_.end() && incomplete_) continue;
      if (it == policies_.end()) {
        // The search is linear in the policies: only for a shown diagnostic.
        std::string close;
        if (!sink_.full()) {
          std::vector<std::string> names;
          for (const auto& [name, ref] : policies_) {
            if (name != p.name.text) names.push_back(name);
          }
          close = ClosestMatch(base.text, names);
        }
        sink_.Error(
            Code::kUnknownPolicy, base.span, "unknown policy '" + base.text + "'",
            close.empty() ? "import the file that defines it" : "did you mean '" + close + "'?");
        continue;
      }
      if (!Visible(file.id, it->second.file)) {
        const ast::Policy& def = program_.files[it->second.file]->policies[it->second.index];
        sink_.Error(Code::kUnknownPolicy, base.span,
                    "policy '" + base.text + "' is not imported by this file",
                    "import \"" + sources_.file(it->second.file).display_path + "\"");
        sink_.AddRelated(def.name.span, "defined here");
        continue;
      }
      p.bases.emplace_back(it->second.file, it->second.index);
    }
  }
}

void Checker::CheckExtendsCycles() {
  // Depth-first search with colours; a grey node reached again closes a
  // cycle. The stack is explicit: a chain of extends can be as long as a
  // 16 MiB file allows, far deeper than the call stack.
  using Ref = std::pair<size_t, size_t>;
  auto policy = [&](Ref r) -> ast::Policy& { return program_.files[r.first]->policies[r.second]; };
  // The `extends` name through which `p` reaches its base `k`.
  auto via = [&](const ast::Policy& p, size_t k) -> const ast::Name* {
    const ast::Name* found = nullptr;
    for (const ast::Name& n : p.extends) {
      if (n.text == policy(p.bases[k]).name.text) found = &n;
    }
    return found;
  };
  struct Frame {
    Ref ref;
    size_t next = 0;  // the next base to visit; the one being visited is next - 1
  };
  std::map<Ref, int> colour;
  std::vector<Frame> stack;
  auto visit = [&](Ref start) {
    colour[start] = 1;
    stack.push_back({start});
    while (!stack.empty()) {
      Frame& top = stack.back();
      ast::Policy& p = policy(top.ref);
      if (top.next == p.bases.size()) {
        colour[top.ref] = 2;
        stack.pop_back();
        continue;
      }
      size_t k = top.next;
      Ref next = p.bases[k];
      int c = colour[next];
      if (c == 1) {
        const ast::Policy& target = policy(next);
        const ast::Name* name = via(p, k);
        sink_.Error(Code::kExtendsCycle, name ? name->span : p.name.span,
                    &target == &p ? "policy '" + p.name.text + "' extends itself"
                                  : "policy '" + p.name.text + "' extends itself through '" +
                                        target.name.text + "'",
                    "remove one of the extends");
        // The extends along the stack, back to the target (the sink keeps
        // the first kMaxRelated).
        size_t added = 0;
        for (size_t j = stack.size() - 1; j-- > 0 && added < DiagnosticSink::kMaxRelated;) {
          const ast::Policy& from = policy(stack[j].ref);
          if (const ast::Name* n = via(from, stack[j].next - 1)) {
            sink_.AddRelated(n->span, "extended here");
            ++added;
          }
          if (&from == &target) break;
        }
        p.bases.erase(p.bases.begin() + k);  // break the cycle for later stages
        continue;
      }
      ++top.next;
      if (c == 0) {
        colour[next] = 1;
        stack.push_back({next});  // invalidates `top`
      }
    }
  };
  for (size_t f = 0; f < program_.files.size(); ++f) {
    if (!program_.files[f]) continue;
    for (size_t i = 0; i < program_.files[f]->policies.size(); ++i) {
      if (colour[{f, i}] == 0) visit({f, i});
    }
  }
}

void Checker::CheckGroups() {
  // As CheckExtendsCycles: colours, and an explicit stack of (group, next member).
  std::map<std::string, int> colour;
  std::vector<std::pair<const std::string*, size_t>> stack;
  auto visit = [&](const std::string& start) {
    colour[start] = 1;
    stack.push_back({&start, 0});
    while (!stack.empty()) {
      auto [name, k] = stack.back();
      auto [fid, idx] = groups_.at(*name);
      ast::Group& g = program_.files[fid]->groups[idx];
      if (k == g.members.size()) {
        colour[*name] = 2;
        stack.pop_back();
        continue;
      }
      ++stack.back().second;
      const ast::SysTarget& m = g.members[k];
      if (!m.is_group) {
        // The standard groups list names of every architecture; a user's
        // unknown name is most likely a typo.
        if (!program_.files[fid]->is_std) CheckTarget(m, {});
        continue;
      }
      auto it = groups_.find(m.name);
      if (it == groups_.end() && incomplete_) continue;
      if (it == groups_.end()) {
        sink_.Error(Code::kUnknownGroup, m.span, "unknown group '" + m.name + "'");
        continue;
      }
      if (colour[m.name] == 1) {
        sink_.Error(Code::kGroupCycle, m.span,
                    "group '" + g.name.text + "' includes itself through '" + m.name + "'");
        sink_.AddRelated(program_.files[it->second.first]->groups[it->second.second].name.span,
                         "defined here");
        continue;
      }
      if (colour[m.name] == 0) {
        colour[m.name] = 1;
        stack.push_back({&it->first, 0});
      }
    }
  };
  for (const auto& [name, where] : groups_) {
    if (colour[name] == 0) visit(name);
  }
}

void Checker::EvaluateLets(ast::File& file) {
  lets_.clear();
  broken_lets_.clear();
  static const std::set<std::string> kReserved = {"any", "loopback", "all"};
  for (const ast::Let& let : file.lets) {
    if (!IsIdentifier(let.name.text)) {
      sink_.Error(Code::kInvalidName, let.name.span, "invalid name '" + let.name.text + "'",
                  "names are letters, digits, '-' and '_', starting with a letter");
      continue;
    }
    if (kReserved.count(let.name.text)) {
      sink_.Error(Code::kShadowedName, let.name.span,
                  "let '" + let.name.text + "' would shadow the keyword '" + let.name.text + "'",
                  "choose another name");
      continue;
    }
    auto existing = lets_.find(let.name.text);
    if (existing != lets_.end()) {
      sink_.Error(Code::kShadowedName, let.name.span,
                  "let '" + let.name.text + "' shadows an earlier let of the same name",
                  "lets are defined once per file; rename one");
      sink_.AddRelated(existing->second.second, "first defined here");
      continue;
    }
    // A let sees only the lets above it, so lets cannot form cycles.
    std::vector<ast::Atom> atoms = Expand(let.values);
    if (dropped_) broken_lets_.insert(let.name.text);
    lets_[let.name.text] = {std::move(atoms), let.name.span};
  }
}

std::vector<ast::Atom> Checker::Expand(const std::vector<ast::Value>& values) {
  std::vector<ast::Atom> out;
  dropped_ = false;
  for (const ast::Value& v : values) ExpandOne(v, out);
  return out;
}

void Checker::ExpandOne(const ast::Value& v, std::vector<ast::Atom>& out) {
  switch (v.kind) {
    case ast::ValueKind::kList:
      for (const ast::Value& item : v.items) ExpandOne(item, out);
      return;
    case ast::ValueKind::kWord: {
      auto it = lets_.find(v.text);
      if (it != lets_.end()) {
        dropped_ |= broken_lets_.count(v.text) > 0;
        // Every use copies the let's values, and lets of lets multiply: a few
        // lines could ask for billions. Copying stops at a budget per run.
        size_t before = let_copies_;
        let_copies_ += it->second.first.size();
        if (let_copies_ > kMaxLetCopies) {
          if (before <= kMaxLetCopies) {
            sink_.Error(Code::kValueOutOfRange, v.span,
                        "using '" + v.text + "' here takes let substitution past " +
                            std::to_string(kMaxLetCopies) + " values",
                        "lets built from lets multiply their values; list them once");
          }
          dropped_ = true;
          return;
        }
        for (ast::Atom a : it->second.first) {
          a.span = v.span;  // point at the use; explain can follow the let
          out.push_back(std::move(a));
        }
        return;
      }
      out.push_back({v.kind, v.text, v.span});
      return;
    }
    case ast::ValueKind::kString: {
      std::string text;
      if (Interpolate(v, &text)) {
        out.push_back({v.kind, std::move(text), v.span});
      } else {
        dropped_ = true;
      }
      return;
    }
    case ast::ValueKind::kAny:
    case ast::ValueKind::kLoopback:
      out.push_back({v.kind, v.text, v.span});
      return;
  }
}

bool Checker::Interpolate(const ast::Value& v, std::string* out) {
  if (v.pieces.empty()) {
    *out = v.text;
    return true;
  }
  bool ok = true;
  for (const ast::StringPiece& piece : v.pieces) {
    if (!piece.is_ref) {
      *out += piece.text;
      continue;
    }
    if (!IsIdentifier(piece.text)) {
      ok = false;  // the parser reported it (W1031)
      continue;
    }
    auto it = lets_.find(piece.text);
    if (it == lets_.end()) {
      sink_.Error(Code::kUndefinedName, piece.span, "undefined name '" + piece.text + "'",
                  "define it with `let " + piece.text + " = \"...\"` above this line");
      ok = false;
      continue;
    }
    const auto& atoms = it->second.first;
    if (atoms.size() != 1 || atoms[0].kind != ast::ValueKind::kString) {
      sink_.Error(Code::kBadInterpolation, piece.span,
                  "'" + piece.text + "' is not a single string and cannot be interpolated",
                  "use the list as a value of its own");
      sink_.AddRelated(it->second.second, "defined here");
      ok = false;
      continue;
    }
    *out += atoms[0].text;
  }
  return ok;
}

std::string Checker::DescribeAtom(const ast::Atom& a) const {
  switch (a.kind) {
    case ast::ValueKind::kString:
      return "a string \"" + a.text + "\"";
    case ast::ValueKind::kAny:
      return "'any'";
    case ast::ValueKind::kLoopback:
      return "'loopback'";
    case ast::ValueKind::kList:
      return "a list";
    case ast::ValueKind::kWord:
      return std::string(DescribeKind(Classify(a.text))) + " '" + a.text + "'";
  }
  return "a value";
}

// The architectures a policy's syscall rules are compiled for: the last
// explicit `arch` along the extends order (bases first), else x86_64.
std::vector<Arch> Checker::EffectiveArches(const ast::Policy& policy) {
  std::vector<Arch> arches = {kDefaultArch};
  if (const ast::Policy* source = ArchSource(policy)) {
    arches.clear();
    for (const ast::Name& n : source->syscalls->arches) {
      if (auto a = ParseArch(n.text)) arches.push_back(*a);
    }
  }
  return arches;
}

// The policy whose `arch` applies: the last one with an explicit `arch` in
// extends order (a post-order walk of the bases, each once), or null.
// Memoised along chains of single bases, where the answer is the base's: a
// long chain would otherwise be walked again for every policy in it.
const ast::Policy* Checker::ArchSource(const ast::Policy& policy) {
  auto explicit_arch = [](const ast::Policy& p) {
    return p.syscalls && !p.syscalls->arches.empty();
  };
  auto base = [&](std::pair<size_t, size_t> r) -> const ast::Policy& {
    return program_.files[r.first]->policies[r.second];
  };
  std::vector<const ast::Policy*> chain;  // policies that take their base's answer
  const ast::Policy* p = &policy;
  const ast::Policy* answer = nullptr;
  while (true) {
    if (auto it = arch_source_.find(p); it != arch_source_.end()) {
      answer = it->second;
      break;
    }
    chain.push_back(p);
    if (explicit_arch(*p)) {
      answer = p;
      break;
    }
    if (p->bases.size() != 1) break;
    p = &base(p->bases[0]);
  }
  if (p->bases.size() > 1 && !explicit_arch(*p) && !arch_source_.count(p)) {
    // Several bases: walk them all, iteratively (extends can be deep).
    std::set<const ast::Policy*> seen = {p};
    std::vector<std::pair<const ast::Policy*, size_t>> stack = {{p, 0}};
    while (!stack.empty()) {
      auto& [q, k] = stack.back();
      if (k == q->bases.size()) {
        if (explicit_arch(*q)) answer = q;
        stack.pop_back();
        continue;
      }
      const ast::Policy* b = &base(q->bases[k++]);
      if (seen.insert(b).second) stack.push_back({b, 0});  // invalidates q, k
    }
  }
  for (const ast::Policy* c : chain) arch_source_[c] = answer;
  return answer;
}

void Checker::CheckPolicy(ast::File&, ast::Policy& policy) {
  if (policy.filesystem) CheckFilesystem(*policy.filesystem);
  if (policy.network) CheckNetwork(*policy.network);
  if (policy.syscalls) CheckSyscalls(*policy.syscalls, EffectiveArches(policy));
  if (policy.process) CheckProcess(*policy.process);
  if (policy.limits) CheckLimits(*policy.limits);
  CheckLabels(policy);
  CheckTargets(policy);
}

void CheckProgram(Program& program, const SourceManager& sources, DiagnosticSink& sink) {
  Checker(program, sources, sink).Run();
}

Program RunFrontend(const std::vector<std::string>& paths, const FrontendOptions& options,
                    SourceManager& sources, DiagnosticSink& sink) {
  Program program = LoadProgram(paths, options, sources, sink);
  CheckProgram(program, sources, sink);
  sink.SortByLocation();
  return program;
}

}  // namespace ward
