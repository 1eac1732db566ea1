// ward diff, syscalls section: named cases with their exact lines, and the
// property test. Random pairs of policies are generated as source text
// (through the whole front end); for random calls (architecture, syscall,
// arguments) whose action differs between OLD's and NEW's IR (Decide), some
// line must name the call with that change, and every line must be
// witnessed: its example is such a call, and it names it. Every call a
// syscall line names must have changed exactly as it says. Which line names
// a call (compiler/diff.h): an arch line for an architecture only one
// policy compiles for; else the default line when both policies leave the
// call to their default (no region, or a region no rule reaches); else a
// syscall line whose architectures, name and condition hold.
#include <string.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <iostream>
#include <random>
#include <set>

#include "tests/compiler/diff_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {

// ---- named cases: syscalls ------------------------------------------------

TEST_CASE("diff: a conditional errno added under an allow gives its condition") {
  // (clone3 named, so that filtering clone's flags does not close it.)
  Loaded b = Load("policy p { syscalls { allow clone \n errno ENOSYS clone3 } }");
  Loaded a = Load(R"(policy p { syscalls {
    allow clone
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno ENOSYS clone3
  } })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(
      Lines(d) ==
      Strings{"~ syscall x86_64 clone if arg0 & 0x10000000 == 0x10000000: allow -> errno EPERM"});
  const ir::Change& c = d.changes[0];
  CHECK(c.section == ir::DiffSection::kSyscalls);
  CHECK(c.kind == ir::ChangeKind::kNarrowed);
  CHECK(c.example == "x86_64 clone(arg0=0x10000000)");
  CHECK(Where(b, c.old_rules) == Strings{"test.ward:1:23"});
  CHECK(Where(a, c.new_rules) == Strings{"test.ward:3:5"});
  // Backwards: a widening, with the same rules on the other sides.
  ir::DiffResult back = ir::Diff(a.ir, b.ir);
  REQUIRE(
      Lines(back) ==
      Strings{"~ syscall x86_64 clone if arg0 & 0x10000000 == 0x10000000: errno EPERM -> allow"});
  CHECK(back.changes[0].kind == ir::ChangeKind::kWidened);
  CHECK(Where(a, back.changes[0].old_rules) == Strings{"test.ward:3:5"});
  CHECK(Where(b, back.changes[0].new_rules) == Strings{"test.ward:1:23"});
}

TEST_CASE("diff: syscall kinds follow restrictiveness; another errno is a change") {
  ir::DiffResult d = ir::Diff(Load(R"(policy p { syscalls {
    allow ptrace
    kill bpf
    errno EPERM open
    log read
  } })")
                                  .ir,
                              Load(R"(policy p { syscalls {
    kill ptrace
    trap bpf
    errno EACCES open
    log read
  } })")
                                  .ir);
  CHECK(Lines(d) == Strings{"~ syscall x86_64 bpf: kill -> trap",
                            "~ syscall x86_64 open: errno EPERM -> errno EACCES",
                            "~ syscall x86_64 ptrace: allow -> kill"});
  std::vector<ir::ChangeKind> kinds;
  for (const ir::Change& c : d.changes) kinds.push_back(c.kind);
  using K = ir::ChangeKind;
  CHECK(kinds == std::vector<K>{K::kWidened, K::kChanged, K::kNarrowed});
  CHECK(d.changes[2].example == "x86_64 ptrace()");
}

TEST_CASE("diff: a changed default is one line; listed syscalls only where rules decide") {
  Loaded b = Load(R"(policy p { syscalls {
    default kill
    allow read
    allow kill if arg1 == 0
  } })");
  Loaded a = Load(R"(policy p { syscalls {
    default errno EPERM
    allow read
    allow kill if arg1 == 0
  } })");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(Lines(d) == Strings{"~ syscalls default: kill -> errno EPERM"});
  CHECK(d.changes[0].kind == ir::ChangeKind::kWidened);
  CHECK(Where(b, d.changes[0].old_rules) == Strings{"test.ward:2:5"});
  CHECK(Where(a, d.changes[0].new_rules) == Strings{"test.ward:2:5"});
  CHECK(d.changes[0].example == "x86_64 _sysctl()");  // the first syscall neither lists
  // A rule that now decides where the default did.
  // io_uring is closed with errno ENOSYS under a default that lets calls
  // run, and with the default otherwise: it changes too.
  CHECK(Lines(R"(policy p { syscalls { default allow } })", R"(policy p { syscalls {
    default errno EPERM
    allow kill if arg1 == 0
  } })") == Strings{"~ syscalls default: allow -> errno EPERM",
                    "~ syscall x86_64 io_uring_enter,io_uring_register,io_uring_setup: errno "
                    "ENOSYS -> errno EPERM"});
  CHECK(Lines(R"(policy p { syscalls { default kill } })", R"(policy p { syscalls {
    default errno EPERM
    log kill if arg1 == 0
  } })") == Strings{"~ syscalls default: kill -> errno EPERM",
                    "~ syscall x86_64 kill if arg1 == 0: kill -> log"});
}

TEST_CASE("diff: architectures added and removed") {
  CHECK(Lines("policy p { syscalls { allow read } }",
              "policy p { syscalls { arch x86_64, aarch64 \n allow read } }") ==
        Strings{"+ arch aarch64"});
  Loaded b = Load("policy p { syscalls { arch x86_64, x86 \n allow read } }");
  Loaded a = Load("policy p { syscalls { arch x86_64 \n allow read } }");
  ir::DiffResult d = ir::Diff(b.ir, a.ir);
  REQUIRE(Lines(d) == Strings{"- arch x86"});
  CHECK(d.changes[0].kind == ir::ChangeKind::kNarrowed);
  CHECK(d.changes[0].example == "x86 read()");
  // An architecture where every call is killed anyway changes nothing.
  CHECK(Lines("policy p { syscalls { default kill } }",
              "policy p { syscalls { arch x86_64, aarch64 \n default kill } }")
            .empty());
  // The same line on several architectures is one line.
  CHECK(Lines("policy p { syscalls { arch x86_64, aarch64 \n allow ptrace } }",
              "policy p { syscalls { arch x86_64, aarch64 \n kill ptrace } }") ==
        Strings{"~ syscall x86_64,aarch64 ptrace: allow -> kill"});
}

TEST_CASE("diff: syscall conditions as lists, exclusions and alternatives") {
  // Values of one argument as a list.
  CHECK(Lines("policy p { syscalls { default errno EPERM } }", R"(policy p { syscalls {
    default errno EPERM
    allow socket if arg0 in [AF_UNIX, AF_INET, AF_INET6]
  } })") == Strings{"~ syscall x86_64 socket if arg0 in [1, 2, 10]: errno EPERM -> allow"});
  // The complement of a list as `not in`.
  CHECK(Lines("policy p { syscalls { allow socket } }", R"(policy p { syscalls {
    allow socket
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
  } })") == Strings{"~ syscall x86_64 socket if arg0 not in [1, 2, 10]: allow -> errno "
                    "EAFNOSUPPORT"});
  // A conditional allow replaced by an unconditional errno: where it held,
  // and everywhere else (`!=`).
  CHECK(Lines("policy p { syscalls { allow kill if arg1 == 0 } }",
              "policy p { syscalls { errno EPERM kill } }") ==
        Strings{"~ syscall x86_64 kill if arg1 == 0: allow -> errno EPERM",
                "~ syscall x86_64 kill if arg1 != 0: kill -> errno EPERM"});
  // Two conditions on different arguments: two overlapping lines, not one
  // per region.
  CHECK(Lines(R"(policy p { syscalls {
    default allow
    kill kill if arg0 == 1
    kill kill if arg1 == 9
  } })",
              "policy p { syscalls { default allow } }") ==
        Strings{"~ syscall x86_64 kill if arg0 == 1: kill -> allow",
                "~ syscall x86_64 kill if arg1 == 9: kill -> allow"});
  // A bound moved by one.
  CHECK(Lines("policy p { syscalls { default allow \n kill read if arg0 < 10 } }",
              "policy p { syscalls { default allow \n kill read if arg0 < 11 } }") ==
        Strings{"~ syscall x86_64 read if arg0 == 10: allow -> kill"});
}

// ---- property test --------------------------------------------------------

namespace {

using Args = std::array<uint64_t, 6>;
using Kind = ir::SysAction::Kind;

std::string ActionText(const ir::SysAction& a) {
  if (a.kind != Kind::kErrno) return std::string(ir::KindName(a.kind));
  const char* name = strerrorname_np(a.errno_value);
  return "errno " + (name ? std::string(name) : std::to_string(a.errno_value));
}

// The bits of a parameter the kernel compares (the language's facts).
uint64_t Width(Arch arch, const std::string& name, int arg) {
  std::optional<std::vector<std::string>> signature = SyscallSignature(name);
  if (!signature || static_cast<size_t>(arg) >= signature->size()) return ~uint64_t{0};
  ParamType t = ClassifyParam((*signature)[arg], arch);
  if (t.kind != ParamKind::kScalar || t.bits <= 0 || t.bits >= 64) return ~uint64_t{0};
  return (uint64_t{1} << t.bits) - 1;
}

// -- the lines, parsed --

struct SysLine {
  enum class Type { kArch, kDefault, kSyscall };
  Type type = Type::kSyscall;
  bool gained = false;       // kArch
  std::vector<Arch> arches;  // kArch: one; kSyscall: those the line names
  Strings names;
  std::string condition;  // "" for every call
  std::string before, after;
  std::string line, example;
};

Arch ArchNamed(const std::string& name) {
  std::optional<Arch> a = ParseArch(name);
  INFO(name);
  REQUIRE(a);
  return *a;
}

// "X -> Y" into before and after.
void ParseChange(const std::string& text, SysLine* l) {
  size_t arrow = text.find(" -> ");
  REQUIRE(arrow != std::string::npos);
  l->before = text.substr(0, arrow);
  l->after = text.substr(arrow + 4);
}

SysLine ParseSysLine(const ir::Change& c) {
  INFO(c.line);
  SysLine l;
  l.line = c.line;
  l.example = c.example;
  if (c.line.rfind("+ arch ", 0) == 0 || c.line.rfind("- arch ", 0) == 0) {
    l.type = SysLine::Type::kArch;
    l.gained = c.line[0] == '+';
    l.arches = {ArchNamed(c.line.substr(7))};
    CHECK(c.kind == (l.gained ? ir::ChangeKind::kWidened : ir::ChangeKind::kNarrowed));
    return l;
  }
  if (c.line.rfind("~ syscalls default: ", 0) == 0) {
    l.type = SysLine::Type::kDefault;
    ParseChange(c.line.substr(20), &l);
    return l;
  }
  REQUIRE(c.line.rfind("~ syscall ", 0) == 0);
  std::string rest = c.line.substr(10);
  size_t space = rest.find(' ');
  REQUIRE(space != std::string::npos);
  for (const std::string& a : Split(rest.substr(0, space), ',')) l.arches.push_back(ArchNamed(a));
  rest = rest.substr(space + 1);
  size_t colon = rest.find(": ");
  REQUIRE(colon != std::string::npos);
  std::string head = rest.substr(0, colon);
  size_t cond = head.find(" if ");
  l.names = Split(head.substr(0, cond), ',');
  if (cond != std::string::npos) l.condition = head.substr(cond + 4);
  ParseChange(rest.substr(colon + 2), &l);
  return l;
}

// -- conditions --

uint64_t ParseNumber(const std::string& s) {
  INFO(s);
  REQUIRE(!s.empty());
  return std::stoull(s, nullptr, 0);
}

// Splits at the ` and `s outside parentheses.
std::vector<std::string> Conjuncts(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && s.compare(i, 5, " and ") == 0) {
      out.push_back(s.substr(from, i - from));
      from = i + 5;
    }
  }
  out.push_back(s.substr(from));
  return out;
}

bool Holds(const std::string& condition, Arch arch, const std::string& name, const Args& args);

// The parameter (its bits within the width) against a bound as the kernel
// compares them: signed for a signed parameter. -1, 0 or 1.
int Compare(Arch arch, const std::string& name, int arg, uint64_t x, const std::string& bound) {
  const uint64_t width = Width(arch, name, arg);
  const bool is_signed = ClassifyParam((*SyscallSignature(name))[arg], arch).is_signed;
  uint64_t y = bound[0] == '-' ? static_cast<uint64_t>(std::stoll(bound)) : ParseNumber(bound);
  y &= width;
  if (is_signed) {
    const uint64_t sign = (width >> 1) + 1;
    x ^= sign;
    y ^= sign;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

bool AtomHolds(const std::string& atom, Arch arch, const std::string& name, const Args& args) {
  INFO(atom);
  if (atom.rfind("not (", 0) == 0) {
    REQUIRE(atom.back() == ')');
    return !Holds(atom.substr(5, atom.size() - 6), arch, name, args);
  }
  REQUIRE(atom.rfind("arg", 0) == 0);
  const int i = atom[3] - '0';
  REQUIRE((i >= 0 && i < 6));
  std::string rest = atom.substr(4);
  uint64_t mask = Width(arch, name, i);
  if (rest.rfind(" & ", 0) == 0) {
    size_t end = rest.find(' ', 3);
    mask = ParseNumber(rest.substr(3, end - 3));
    rest = rest.substr(end);
  }
  const uint64_t x = args[i] & mask;
  if (rest.rfind(" == ", 0) == 0) return x == ParseNumber(rest.substr(4));
  if (rest.rfind(" != ", 0) == 0) return x != ParseNumber(rest.substr(4));
  if (rest.rfind(" < ", 0) == 0) return Compare(arch, name, i, x, rest.substr(3)) < 0;
  if (rest.rfind(" >= ", 0) == 0) return Compare(arch, name, i, x, rest.substr(4)) >= 0;
  const bool negated = rest.rfind(" not in [", 0) == 0;
  REQUIRE((negated || rest.rfind(" in [", 0) == 0));
  REQUIRE(rest.back() == ']');
  const size_t open = rest.find('[');
  bool in = false;
  for (const std::string& v : Split(rest.substr(open + 1, rest.size() - open - 2), ',')) {
    in |= x == ParseNumber(v[0] == ' ' ? v.substr(1) : v);
  }
  return in != negated;
}

bool Holds(const std::string& condition, Arch arch, const std::string& name, const Args& args) {
  if (condition.empty()) return true;
  for (const std::string& atom : Conjuncts(condition)) {
    if (!AtomHolds(atom, arch, name, args)) return false;
  }
  return true;
}

struct Call {
  Arch arch = Arch::kX86_64;
  std::string name;
  Args args{};
};

// "x86_64 clone(arg0=0x10000000, arg2=5)".
Call ParseCall(const std::string& text) {
  INFO(text);
  Call c;
  size_t space = text.find(' '), open = text.find('(');
  REQUIRE(space != std::string::npos);
  REQUIRE(open != std::string::npos);
  REQUIRE(text.back() == ')');
  c.arch = ArchNamed(text.substr(0, space));
  c.name = text.substr(space + 1, open - space - 1);
  for (std::string a : Split(text.substr(open + 1, text.size() - open - 2), ',')) {
    if (a[0] == ' ') a = a.substr(1);
    REQUIRE(a.rfind("arg", 0) == 0);
    REQUIRE(a[4] == '=');
    c.args[a[3] - '0'] = ParseNumber(a.substr(5));
  }
  return c;
}

// -- what names a call --

bool Compiles(const ir::SyscallRules& r, Arch arch) {
  return std::find(r.arches.begin(), r.arches.end(), arch) != r.arches.end();
}

// No rule reaches the call: the default decides it.
bool LeftToDefault(const ir::SyscallRules& r, const Call& c) {
  const ir::Region* region = r.Find(c.arch, c.name, c.args);
  return !region || (region->rules.empty() && region->action == r.default_action);
}

bool Names(const SysLine& l, const ir::SyscallRules& before, const ir::SyscallRules& after,
           const Call& c) {
  const bool was = Compiles(before, c.arch), is = Compiles(after, c.arch);
  switch (l.type) {
    case SysLine::Type::kArch:
      return l.arches[0] == c.arch && was != is && is == l.gained;
    case SysLine::Type::kDefault:
      return was && is && LeftToDefault(before, c) && LeftToDefault(after, c);
    case SysLine::Type::kSyscall:
      return was && is && !(LeftToDefault(before, c) && LeftToDefault(after, c)) &&
             std::count(l.arches.begin(), l.arches.end(), c.arch) &&
             std::count(l.names.begin(), l.names.end(), c.name) &&
             Holds(l.condition, c.arch, c.name, c.args);
  }
  return false;
}

// The line gives the call's change: its kind, and for default and syscall
// lines its actions.
bool Says(const SysLine& l, const ir::SysAction& was, const ir::SysAction& is) {
  if (l.type == SysLine::Type::kArch) return true;
  return l.before == ActionText(was) && l.after == ActionText(is);
}

// -- generators --

// The scalar parameters of the generator's syscalls.
const std::map<std::string, std::vector<int>> kScalarArgs = {
    {"socket", {0, 1, 2}}, {"clone", {0, 1, 4}}, {"personality", {0}}, {"prctl", {0, 1, 2}},
    {"kill", {0, 1}},      {"ioctl", {0, 1, 2}}, {"read", {0, 2}}};

class SysGenerator {
 public:
  explicit SysGenerator(std::mt19937& rng) : rng_(rng) {}

  int Coin(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  template <size_t N>
  const char* Pick(const char* const (&a)[N]) {
    return a[Coin(static_cast<int>(N))];
  }

  std::string Head() {
    static constexpr const char* kArches[] = {"x86_64, aarch64", "aarch64", "x86_64, x86", "x86"};
    static constexpr const char* kDefaults[] = {"allow", "errno EPERM", "kill",
                                                "log",   "trap",        "errno EACCES"};
    std::string head;
    if (Coin(4) == 0) head += "    arch " + std::string(Pick(kArches)) + "\n";
    if (Coin(2) == 0) head += "    default " + std::string(Pick(kDefaults)) + "\n";
    return head;
  }

  std::string Rule() {
    static constexpr const char* kActions[] = {"allow",       "allow", "allow",       "errno EPERM",
                                               "errno EPERM", "kill",  "kill-thread", "trap",
                                               "log",         "notify"};
    std::string r = Pick(kActions);
    if (Coin(5) < 2) {
      static constexpr const char* kTargets[] = {
          "socket", "clone", "personality", "prctl", "kill",      "ioctl",      "read",
          "getpid", "write", "@ga",         "@gb",   "@basic-io", "@network-io"};
      r += " " + std::string(Pick(kTargets));
      for (int n = Coin(3); n > 0; --n) r += ", " + std::string(Pick(kTargets));
      return r;
    }
    auto it = std::next(kScalarArgs.begin(), Coin(static_cast<int>(kScalarArgs.size())));
    r += " " + it->first + " if ";
    for (int n = Coin(4) == 0 ? 2 : 1; n > 0; --n) {
      r += Condition(it->second[Coin(static_cast<int>(it->second.size()))]);
      if (n > 1) r += " and ";
    }
    return r;
  }

 private:
  std::string Condition(int arg) {
    static constexpr const char* kValues[] = {
        "0",    "1",          "2",          "3",          "10",       "17",
        "0xff", "0x7fffffff", "0x80000000", "0xffffffff", "AF_INET6", "CLONE_NEWUSER"};
    static constexpr const char* kOps[] = {" == ", " != ", " < ", " <= ", " > ", " >= "};
    const std::string a = "arg" + std::to_string(arg);
    switch (Coin(4)) {
      case 0:
      case 1:
        return a + Pick(kOps) + Pick(kValues);
      case 2: {
        static constexpr uint64_t kMasks[] = {0xff, 0xf0, 1, 0x80000000, 0x10000000, 0x10000011};
        const uint64_t mask = kMasks[Coin(6)];
        const uint64_t value = Coin(3) == 0 ? mask : mask & rng_();
        char text[64];
        std::snprintf(text, sizeof text, " & 0x%llx == 0x%llx",
                      static_cast<unsigned long long>(mask),
                      static_cast<unsigned long long>(value));
        return a + text;
      }
      default: {
        std::string list = Pick(kValues);
        for (int n = Coin(3); n > 0; --n) list += ", " + std::string(Pick(kValues));
        return a + (Coin(2) ? " in [" : " not in [") + list + "]";
      }
    }
  }

  std::mt19937& rng_;
};

std::string SysPolicyText(const std::string& head, const std::vector<std::string>& rules) {
  std::string text = "group @ga = [read, ioctl]\ngroup @gb = [@ga, kill, personality]\n";
  text += "policy p {\n  syscalls {\n" + head;
  for (const std::string& r : rules) text += "    " + r + "\n";
  return text + "  }\n}\n";
}

// Argument values worth trying: edges, and the policies' constants with
// their neighbours and high bits set.
std::vector<uint64_t> InterestingValues(const Loaded& a, const Loaded& b) {
  std::set<uint64_t> v = {0,           1, 2, 0x7fffffff, 0x80000000, 0xffffffff, uint64_t{1} << 32,
                          ~uint64_t{0}};
  auto add = [&](uint64_t x) {
    for (uint64_t y : {x, x + 1, x - 1, x | uint64_t{1} << 32, x ^ 0x80000000}) v.insert(y);
  };
  for (const Loaded* l : {&a, &b}) {
    for (const ast::Policy* p : l->sources) {
      if (!p->syscalls) continue;
      for (const ast::SysRule& r : p->syscalls->rules) {
        for (const ast::Condition& c : r.conditions) {
          for (const ast::Expr& e : c.values) add(e.value);
          if (c.op == ast::CondOp::kMaskedEq) add(c.mask.value & ~c.values[0].value);
        }
      }
    }
  }
  return std::vector<uint64_t>(v.begin(), v.end());
}

// A pair of loaded policies that the checker and the lowering accept.
std::pair<Loaded, Loaded> RandomPair(SysGenerator& gen, std::string* texts) {
  for (;;) {
    const std::string head = gen.Head();
    std::vector<std::string> rules;
    for (int n = gen.Coin(7); n > 0; --n) rules.push_back(gen.Rule());
    std::vector<std::string> changed;
    for (const std::string& r : rules) {
      if (gen.Coin(4) != 0) changed.push_back(r);
    }
    for (int n = gen.Coin(4); n > 0; --n) changed.push_back(gen.Rule());
    const std::string new_head = gen.Coin(3) == 0 ? gen.Head() : head;
    const std::string before = SysPolicyText(head, rules);
    const std::string after = SysPolicyText(new_head, changed);
    std::optional<Loaded> b = TryLoad(before), a = TryLoad(after);
    if (!b || !a) continue;  // a conflict: try another pair
    *texts = "OLD:\n" + before + "NEW:\n" + after;
    return {std::move(*b), std::move(*a)};
  }
}

}  // namespace

TEST_CASE("property: every changed call is named by a syscall line, every line is witnessed") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::mt19937 rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  SysGenerator gen(rng);
  static const std::vector<std::string> kNames = {"socket", "clone", "personality", "prctl",
                                                  "kill",   "ioctl", "read",        "getpid",
                                                  "write",  "mmap"};
  static constexpr Arch kArches[] = {Arch::kX86_64, Arch::kX86, Arch::kAarch64};
  long queries = 0, differing = 0, lines = 0;
  for (int round = 0, rounds = Rounds(300); round < rounds; ++round) {
    std::string texts;
    auto [before, after] = RandomPair(gen, &texts);
    const ir::SyscallRules& b = before.ir.syscalls;
    const ir::SyscallRules& a = after.ir.syscalls;
    ir::DiffResult d = ir::Diff(before.ir, after.ir);
    std::string shown;
    for (const ir::Change& c : d.changes) shown += c.line + "   e.g. " + c.example + "\n";
    INFO(texts << "diff:\n" << shown);
    if (b == a) CHECK(d.changes.empty());
    std::vector<SysLine> parsed;
    for (const ir::Change& c : d.changes) {
      REQUIRE(c.section == ir::DiffSection::kSyscalls);
      parsed.push_back(ParseSysLine(c));
    }
    lines += static_cast<long>(parsed.size());
    // Every line is witnessed by its example.
    for (const SysLine& l : parsed) {
      INFO(l.line << "   e.g. " << l.example);
      Call c = ParseCall(l.example);
      const ir::SysAction was = b.Decide(c.arch, c.name, c.args),
                          is = a.Decide(c.arch, c.name, c.args);
      CHECK_FALSE(was == is);
      CHECK(Names(l, b, a, c));
      CHECK(Says(l, was, is));
    }
    // Every changed call is named, and every line naming a call gives its
    // change.
    const std::vector<uint64_t> values = InterestingValues(before, after);
    for (int k = 0; k < 300; ++k) {
      Call c{kArches[rng() % 3], kNames[rng() % kNames.size()], {}};
      for (uint64_t& x : c.args) x = rng() % 8 == 0 ? rng() : values[rng() % values.size()];
      const ir::SysAction was = b.Decide(c.arch, c.name, c.args),
                          is = a.Decide(c.arch, c.name, c.args);
      ++queries;
      bool named = false;
      for (const SysLine& l : parsed) {
        if (!Names(l, b, a, c)) continue;
        named = true;
        INFO(ArchName(c.arch) << " " << c.name << " " << std::hex << c.args[0] << " " << c.args[1]
                              << " " << c.args[2] << std::dec << " under " << l.line);
        if (l.type != SysLine::Type::kArch) CHECK_FALSE(was == is);
        CHECK(Says(l, was, is));
      }
      if (was == is) continue;
      ++differing;
      INFO(ArchName(c.arch) << " " << c.name << " " << std::hex << c.args[0] << " " << c.args[1]
                            << " " << c.args[2] << std::dec << ": " << ActionText(was) << " -> "
                            << ActionText(is));
      CHECK(named);
    }
  }
  std::cout << "diff syscalls property: " << queries << " queries, " << differing << " differing, "
            << lines << " lines (seed " << seed << ")\n";
}

}  // namespace ward::test
