// Checks of the syscalls section: architectures, actions and errno values,
// syscall names per architecture, and conditions against the kernel's
// declared parameter types.
#include <algorithm>
#include <set>

#include "language/checker.h"
#include "language/constants.h"
#include "language/literals.h"

namespace ward {

void Checker::CheckSyscalls(ast::SyscallsSection& section, const std::vector<Arch>& arches) {
  std::map<std::string, Span> seen;
  for (const ast::Name& a : section.arches) {
    if (!ParseArch(a.text)) {
      std::string names;
      for (Arch k : AllArches()) names += (names.empty() ? "" : ", ") + std::string(ArchName(k));
      sink_.Error(Code::kUnknownArch, a.span, "unknown architecture '" + a.text + "'",
                  a.text == "x32" ? "the x32 ABI is always killed; it cannot be allowed"
                                  : "the architectures are " + names);
    } else if (auto [first, inserted] = seen.emplace(a.text, a.span); !inserted) {
      sink_.Error(Code::kDuplicateEntry, a.span, "architecture '" + a.text + "' is listed twice");
      sink_.AddRelated(first->second, "first listed here");
    }
  }
  if (section.default_action) CheckAction(*section.default_action);
  for (ast::SysRule& rule : section.rules) {
    CheckAction(rule.action);
    for (const ast::SysTarget& t : rule.targets) CheckTarget(t, arches);
    for (ast::Condition& c : rule.conditions) CheckCondition(c, rule, arches);
  }
  NotePartialArches(section);
}

void Checker::CheckAction(ast::SysAction& action) {
  if (action.kind != ast::ActionKind::kErrno) return;
  std::string err;
  if (auto n = ParseInteger(action.errno_text, &err)) {
    if (*n < 1 || *n > 4095) {
      sink_.Error(Code::kValueOutOfRange, action.errno_span,
                  "errno " + action.errno_text + " is out of range 1-4095");
      return;
    }
    action.errno_value = static_cast<int>(*n);
    return;
  }
  if (auto e = LookupErrno(action.errno_text)) {
    action.errno_value = *e;
    return;
  }
  std::string close = sink_.full() ? "" : ClosestMatch(action.errno_text, ErrnoNames());
  sink_.Error(
      Code::kUnknownErrno, action.errno_span, "unknown errno '" + action.errno_text + "'",
      close.empty() ? "write a name such as EPERM, or a number" : "did you mean '" + close + "'?");
}

// `arches` empty: only check that the name exists somewhere. A name missing
// on every one of `arches` is W1011; on some only, it waits in
// partial_arch_ for the policy's note.
void Checker::CheckTarget(const ast::SysTarget& t, const std::vector<Arch>& arches) {
  if (t.is_group) {
    if (!groups_.count(t.name) && !incomplete_) {
      // The search is linear in the groups: only for a shown diagnostic.
      std::vector<std::string> names;
      if (!sink_.full()) {
        for (const auto& [n, where] : groups_) names.push_back(n);
      }
      sink_.Error(Code::kUnknownGroup, t.span, "unknown group '" + t.name + "'",
                  DidYouMean(ClosestMatches(t.name, names)));
    }
    return;
  }
  if (!SyscallExistsAnywhere(t.name)) {
    std::vector<std::string> close;
    if (!sink_.full()) {
      close = ClosestMatches(t.name, AllSyscallNames());
      // The *at form is the one every architecture has (aarch64 has no
      // open, stat or mkdir): name it beside its older sibling.
      for (size_t i = 0, n = close.size(); i < n; ++i) {
        std::string at = close[i] + "at";
        if (SyscallExistsAnywhere(at) && std::find(close.begin(), close.end(), at) == close.end()) {
          close.push_back(at);
        }
      }
    }
    sink_.Error(
        Code::kUnknownSyscall, t.span, "unknown syscall '" + t.name + "'",
        close.empty() ? "no architecture's kernel syscall table lists it" : DidYouMean(close));
    return;
  }
  std::string missing;
  size_t lacking = 0;
  for (Arch a : arches) {
    if (!SyscallNumber(a, t.name)) {
      missing += (missing.empty() ? "" : ", ") + std::string(ArchName(a));
      ++lacking;
    }
  }
  if (lacking == 0) return;
  if (lacking < arches.size()) {
    // Normal in a profile for several architectures (x86's _llseek, arm's
    // set_tls): one note per policy lists them (CheckSyscalls).
    partial_arch_.emplace(t.name, missing);
    return;
  }
  sink_.Warning(Code::kSyscallNotOnArch, t.span,
                "syscall '" + t.name + "' does not exist on " + missing,
                "the rule has no effect there");
}

void Checker::NotePartialArches(const ast::SyscallsSection& section) {
  if (partial_arch_.empty()) return;
  // Names grouped by the architectures they lack, each list in name order.
  std::map<std::string, std::string> by_missing;
  for (const auto& [name, missing] : partial_arch_) {
    std::string& names = by_missing[missing];
    names += (names.empty() ? "" : ", ") + name;
  }
  std::string lists;
  for (const auto& [missing, names] : by_missing) {
    lists += (lists.empty() ? "" : "; ") + std::string("not on ") + missing + ": " + names;
  }
  const size_t n = partial_arch_.size();
  sink_.Note(
      Code::kSyscallNotOnArch, section.span,
      std::to_string(n) + (n == 1 ? " syscall named here exists" : " syscalls named here exist") +
          " on some of the policy's architectures only; " +
          (n == 1 ? "its rule applies where it exists" : "their rules apply where they exist"),
      lists);
  partial_arch_.clear();
}

void Checker::CheckCondition(ast::Condition& cond, const ast::SysRule& rule,
                             const std::vector<Arch>& arches) {
  const std::string& a = cond.arg_name.text;
  if (a.size() != 4 || a.compare(0, 3, "arg") != 0 || a[3] < '0' || a[3] > '5') {
    sink_.Error(Code::kNoSuchArgument, cond.arg_name.span,
                "expected an argument arg0 to arg5, found '" + a + "'");
    return;
  }
  cond.arg = a[3] - '0';
  // Each value must be a valid constant or integer on every architecture.
  bool values_ok = true;
  for (Arch arch : arches) {
    if (cond.op == ast::CondOp::kMaskedEq) values_ok &= EvaluateExpr(cond.mask, arch);
    for (ast::Expr& e : cond.values) values_ok &= EvaluateExpr(e, arch);
    if (!values_ok) return;
  }
  if (cond.op == ast::CondOp::kMaskedEq && (cond.values[0].value & ~cond.mask.value) != 0) {
    sink_.Error(Code::kMaskNeverHolds, cond.span,
                "the value has bits outside the mask, so this condition never holds",
                "the value must be a subset of the mask");
  }
  for (const ast::SysTarget& t : rule.targets) {
    if (t.is_group) {
      sink_.Error(Code::kTypeMismatch, t.span,
                  "conditions apply to syscalls named directly, not to groups",
                  "write the conditional rule for each syscall");
      continue;
    }
    if (!SyscallExistsAnywhere(t.name)) continue;  // already reported
    auto sig = SyscallSignature(t.name);
    if (!sig) {
      sink_.Error(Code::kUnknownSignature, cond.arg_name.span,
                  "the parameters of '" + t.name +
                      "' are not known, so its arguments cannot "
                      "be filtered",
                  "language/facts/syscall_signatures.inc lists the known signatures");
      continue;
    }
    if (static_cast<size_t>(cond.arg) >= sig->size()) {
      sink_.Error(Code::kNoSuchArgument, cond.arg_name.span,
                  "'" + t.name + "' has " + std::to_string(sig->size()) + " parameter" +
                      (sig->size() == 1 ? "" : "s") + "; " + a + " does not exist");
      continue;
    }
    for (Arch arch : arches) {
      ParamType type = ClassifyParam((*sig)[cond.arg], arch);
      std::string at = "'" + t.name + "' " + a + " (" + type.c_type + ")";
      if (ParamOrderDiffers(t.name, cond.arg, arch)) {
        sink_.Error(Code::kArgOrderDiffers, cond.arg_name.span,
                    "'" + t.name + "' " + a + " is another parameter on " +
                        std::string(ArchName(arch)) + " than on x86_64 (the kernel orders " +
                        t.name + "'s parameters differently there)",
                    "filter this argument in a policy whose `arch` lists only architectures "
                    "with x86_64's order");
        break;
      }
      if (type.kind == ParamKind::kPointer) {
        sink_.Error(Code::kPointerArgument, cond.arg_name.span,
                    at + " is a pointer and cannot be filtered",
                    "the kernel reads what it points to after the filter has run");
        break;
      }
      if (type.kind == ParamKind::kUnknown) {
        sink_.Error(Code::kUnknownSignature, cond.arg_name.span,
                    at + " has a type Ward does not know how the kernel reads");
        break;
      }
      if (ArchBits(arch) == 32) {
        bool split = false;
        for (int k = 0; k <= cond.arg; ++k) {
          ParamType pk = ClassifyParam((*sig)[k], arch);
          split |= pk.kind == ParamKind::kScalar && pk.bits == 64;
        }
        if (split) {
          sink_.Error(Code::kSplitArgument, cond.arg_name.span,
                      at + ": on " + std::string(ArchName(arch)) +
                          " a 64-bit parameter up to this one takes two registers",
                      "filter this argument on 64-bit architectures only");
          break;
        }
      }
      if (type.bits == 64 && type.is_signed) continue;
      // A narrower or unsigned parameter: every value must fit its width, and
      // negative numbers only a signed one.
      const int64_t lo = type.is_signed ? -(int64_t{1} << (type.bits - 1)) : 0;
      const uint64_t hi = type.bits == 64 ? UINT64_MAX : (uint64_t{1} << type.bits) - 1;
      auto fits = [&](const ast::Expr& e) {
        int64_t as_signed = static_cast<int64_t>(e.value);
        bool negative = !e.terms.empty() && e.terms[0].text.rfind('-', 0) == 0;
        return negative ? as_signed >= lo : e.value <= hi;
      };
      bool ok = true;
      for (const ast::Expr& e : cond.values) {
        if (!fits(e)) {
          sink_.Error(Code::kValueOutOfRange, e.span,
                      "value does not fit " + at + ", a " + std::to_string(type.bits) + "-bit " +
                          (type.is_signed ? "signed" : "unsigned") + " parameter");
          ok = false;
        }
      }
      if (cond.op == ast::CondOp::kMaskedEq && !fits(cond.mask)) {
        sink_.Error(
            Code::kValueOutOfRange, cond.mask.span,
            "mask does not fit " + at + ", a " + std::to_string(type.bits) + "-bit parameter");
        ok = false;
      }
      if (!ok) break;
    }
  }
}

bool Checker::EvaluateExpr(ast::Expr& expr, Arch arch) {
  uint64_t value = 0;
  for (const ast::Name& term : expr.terms) {
    std::string err;
    if (auto n = ParseInteger(term.text, &err)) {
      if (*n < 0 && expr.terms.size() > 1) {
        sink_.Error(Code::kInvalidLiteral, term.span, "negative numbers cannot be or-ed");
        return false;
      }
      value |= static_cast<uint64_t>(*n);
      continue;
    }
    if (auto c = LookupConstant(term.text, arch)) {
      value |= *c;
      continue;
    }
    if (auto e = LookupErrno(term.text)) {
      value |= static_cast<uint64_t>(*e);
      continue;
    }
    if (auto cap = LookupCapability(term.text)) {
      value |= static_cast<uint64_t>(*cap);
      continue;
    }
    if (IsIdentifier(term.text)) {
      std::string close =
          sink_.full() ? "" : DidYouMean(ClosestMatches(term.text, ConstantNames()));
      sink_.Error(Code::kUnknownConstant, term.span,
                  "unknown constant '" + term.text + "' on " + std::string(ArchName(arch)),
                  close.empty() ? "write the value as a number" : close);
    } else {
      sink_.Error(Code::kTypeMismatch, term.span,
                  "expected an integer or a constant, found " +
                      std::string(DescribeKind(Classify(term.text))) + " '" + term.text + "'");
    }
    return false;
  }
  expr.value = value;
  return true;
}

}  // namespace ward
