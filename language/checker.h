// Internal to the checker: the shared state of one CheckProgram run. The
// member functions are spread over check.cc (names, lets, extends, groups),
// check_sections.cc (filesystem, network, process, limits), check_syscalls.cc
// and check_targets.cc.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "language/ast.h"
#include "language/check.h"
#include "language/syscall_facts.h"

namespace ward {

struct PolicyRef {
  FileId file = kNoFile;
  size_t index = 0;
};

// The most values let substitution may copy in one run (W1018 beyond).
inline constexpr size_t kMaxLetCopies = size_t{1} << 20;

class Checker {
 public:
  Checker(Program& program, const SourceManager& sources, DiagnosticSink& sink)
      : program_(program), sources_(sources), sink_(sink) {}
  void Run();

 private:
  // check.cc
  void CollectNames();
  void CollectGroups(ast::File& file);
  void CheckVersion(const ast::File& file);
  void EvaluateLets(ast::File& file);
  bool Visible(FileId from, FileId target) const;
  void ResolveExtends(ast::File& file);
  void CheckExtendsCycles();
  void CheckGroups();
  std::vector<Arch> EffectiveArches(const ast::Policy& policy);
  const ast::Policy* ArchSource(const ast::Policy& policy);
  void CheckPolicy(ast::File& file, ast::Policy& policy);
  // Substitutes lets, interpolates strings and flattens lists.
  std::vector<ast::Atom> Expand(const std::vector<ast::Value>& values);
  void ExpandOne(const ast::Value& value, std::vector<ast::Atom>& out);
  bool Interpolate(const ast::Value& value, std::string* out);
  std::string DescribeAtom(const ast::Atom& atom) const;

  // check_sections.cc
  void ReportEmpty(Span span, const char* what);
  void CheckFilesystem(ast::FilesystemSection& section);
  bool NormalisePath(const ast::Atom& atom, std::string* out);
  void WarnLiteralGlob(const ast::Atom& atom);
  void CheckNetwork(ast::NetworkSection& section);
  void CheckUnixRule(ast::NetRule& rule);
  void CheckNetlinkRule(ast::NetRule& rule);
  void CheckPeers(ast::NetRule& rule);
  void CheckPorts(ast::NetRule& rule);
  bool CheckDomain(const ast::Atom& atom, ast::Peer* peer);
  void CheckProcess(ast::ProcessSection& section);
  void CheckLimits(ast::LimitsSection& section);
  void CheckLabels(ast::Policy& policy);

  // check_syscalls.cc
  void CheckSyscalls(ast::SyscallsSection& section, const std::vector<Arch>& arches);
  void CheckAction(ast::SysAction& action);
  void CheckTarget(const ast::SysTarget& target, const std::vector<Arch>& arches);
  void NotePartialArches(const ast::SyscallsSection& section);
  void CheckCondition(ast::Condition& cond, const ast::SysRule& rule,
                      const std::vector<Arch>& arches);
  bool EvaluateExpr(ast::Expr& expr, Arch arch);

  // check_targets.cc
  void CheckTargets(ast::Policy& policy);

  Program& program_;
  const SourceManager& sources_;
  DiagnosticSink& sink_;

  std::map<std::string, PolicyRef> policies_;
  std::map<std::string, std::pair<FileId, size_t>> groups_;  // name with '@'
  // Lets of the file being checked: name -> (atoms, definition span).
  std::map<std::string, std::pair<std::vector<ast::Atom>, Span>> lets_;
  // Lets whose value lost an item to a reported error.
  std::set<std::string> broken_lets_;
  // Set by Expand when an item was dropped after an error was reported, so
  // an "empty list" is not reported on top of it.
  bool dropped_ = false;
  // Some file did not load or parse: names it may define are not reported
  // as unknown, which would only cascade from the first error.
  bool incomplete_ = false;
  // Values copied by let substitution so far, bounded by kMaxLetCopies.
  size_t let_copies_ = 0;
  // Syscalls of the section being checked that exist on some of its
  // architectures only: name -> the architectures they lack.
  std::map<std::string, std::string> partial_arch_;
  // ArchSource's answers: policy -> the policy whose `arch` applies (or null).
  std::map<const ast::Policy*, const ast::Policy*> arch_source_;
};

}  // namespace ward
