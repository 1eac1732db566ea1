// Shared by the files of `ward diff` (diff.cc and diff_*.cc); not part of
// the library's interface (compiler/diff.h is).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/bdd.h"
#include "compiler/diff.h"

namespace ward::ir::diff_internal {

// ---- text and provenance helpers (diff.cc) ------------------------------

std::string Quote(const std::string& s);  // "a \"b\"", with \n escaped
// A path as written; quoted only when a space or quote would make the line
// ambiguous.
std::string PathText(const std::string& p);
std::string Join(const std::vector<std::string>& parts, const char* sep);
// Sorts by (file, begin, end) and drops repeats.
void SortSpans(std::vector<Span>* spans);
Change MakeChange(DiffSection section, ChangeKind kind, std::string line);

// ---- the sections, each appending its lines in their order --------------

void DiffNetwork(const NetRules& before, const NetRules& after, std::vector<Change>* out);
void DiffFilesystem(const FileRules& before, const FileRules& after, const std::string& home,
                    std::vector<Change>* out);
void DiffSyscalls(const SyscallRules& before, const SyscallRules& after, std::vector<Change>* out);
void DiffProcess(const ProcessRules& before, const ProcessRules& after, std::vector<Change>* out);
void DiffLimits(const Limits& before, const Limits& after, std::vector<Change>* out);
void DiffTargets(const Targets& before, const Targets& after, std::vector<Change>* out);
void DiffMetadata(const Metadata& before, const Metadata& after, std::vector<Change>* out);

// ---- network: shared by diff_network.cc and diff_network_rules.cc -------

// A network line before it is rendered: an address line (ranges, no
// patterns), a name line (one pattern, no ranges) or a resolved-name line
// (both).
struct NetLine {
  bool gained = true;
  Direction dir = Direction::kEgress;
  Protocol proto = Protocol::kTcp;
  NetDecision what;                   // that protocol's ports
  std::vector<std::string> patterns;  // name classes
  std::vector<std::string> probes;    // a name of each class
  std::vector<Range<V4>> v4;
  std::vector<Range<V6>> v6;
};

// Every domain pattern that could match a normalised name (DomainMatches),
// as keys to look up: the name itself and the wildcards of its suffixes
// ("a.b.c": "a.b.c", "*.b.c", "*.c"). A lookup per key, rather than a scan of
// every pattern per name, keeps the diff linear in the number of patterns.
std::vector<std::string> PatternsMatching(const std::string& name);

// The source rules behind network lines (provenance), indexed once per
// policy.
class NetRuleIndex {
 public:
  explicit NetRuleIndex(const NetRules& net);
  ~NetRuleIndex();
  // The spans of the rules (allows, or denies) of the line's direction that
  // speak about its protocol and ports and cover some of its addresses or
  // match one of its names.
  std::vector<Span> Cite(const NetLine& line, bool allow) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- syscalls: shared by diff_syscalls.cc and diff_syscall_conditions.cc

// A number as lines write it: decimal below 65536, else hexadecimal.
std::string Number(uint64_t v);
std::string Hex(uint64_t v);  // "0x1f"

// One line's condition on a syscall's arguments.
struct CallCondition {
  std::string text;                   // "arg0 == 5 and arg2 != 0"; "" for every call
  Bdd::Node calls = Bdd::kOne;        // the calls it names, in the store given
  std::array<uint64_t, 6> witness{};  // one of them
  int first_arg = -1;                 // the first argument it tests; -1: none
};

// Marks over a store's nodes, reused from one walk to the next.
struct NodeMarks {
  std::vector<uint32_t> stamp;  // per node: the walk that marked it
  uint32_t generation = 0;
};

// Conditions whose union is exactly `calls`: a 0/1 function over the bits
// of a syscall's arguments on `arch`, variable arg * 64 + 63 - bit (arg0's
// most significant bit first, as the lowering numbers them). Each condition
// reads the parameters as the kernel does (syscall_facts.h); conditions may
// overlap. Deterministic: equal functions give equal conditions.
std::vector<CallCondition> DescribeCalls(Bdd& bdd, NodeMarks& marks, Bdd::Node calls, Arch arch,
                                         const std::string& name);
// Whether some call the tests hold for is in `calls`.
bool Meets(const Bdd& bdd, NodeMarks& marks, Bdd::Node calls, const std::vector<ArgTest>& tests);
// The smallest call of a non-empty set (0/1 function, variables as above),
// comparing arguments in order.
std::array<uint64_t, 6> FirstCall(const Bdd& bdd, Bdd::Node calls);

}  // namespace ward::ir::diff_internal
