#include "importers/kafel/kafel.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "importers/docker_seccomp/docker_conditions.h"
#include "importers/kafel/region.h"
#include "language/syscall_facts.h"

namespace ward::importers {
namespace {

using kafel::Box;
using kafel::Cube;
using kafel::Region;

// ---- kafel's x86_64 table (tables/amd64.tsv, kafel's amd64_syscalls.c) ----

struct KafelEntry {
  const char* name;
  uint32_t nr;
  std::array<const char*, 6> args;  // "" where the table names none
  std::array<uint8_t, 6> sizes;     // bytes: 4 or 8; 0 where none
};

constexpr KafelEntry kAmd64[] = {
#include "importers/kafel/tables/amd64.inc"
};

const KafelEntry* FindEntry(std::string_view name) {
  static const std::map<std::string_view, const KafelEntry*> kByName = [] {
    std::map<std::string_view, const KafelEntry*> m;
    for (const KafelEntry& e : kAmd64) m.emplace(e.name, &e);
    return m;
  }();
  auto it = kByName.find(name);
  return it == kByName.end() ? nullptr : it->second;
}

// Ward's (the kernel's) x86_64 name for a number.
const std::string* WardName(uint32_t nr) {
  static const std::map<uint32_t, std::string> kNames = [] {
    std::map<uint32_t, std::string> m;
    for (const std::string& name : AllSyscallNames()) {
      if (auto n = SyscallNumber(Arch::kX86_64, name)) m.emplace(static_cast<uint32_t>(*n), name);
    }
    return m;
  }();
  auto it = kNames.find(nr);
  return it == kNames.end() ? nullptr : &it->second;
}

// ---- tokens ------------------------------------------------------------

struct Place {
  size_t file = 0;  // index into the importer's files; 0 is the input
  size_t line = 1, col = 1;
};

// The first error: kafel stops at it, and so does the importer.
struct Failure {
  Place at;
  std::string message;
};

enum class T {
  kEnd,
  kIdent,
  kNumber,
  kSyscall,
  kAllow,
  kLog,
  kUserNotif,
  kErrno,
  kKillProcess,
  kKill,
  kDeny,
  kTrap,
  kTrace,
  kUse,
  kPolicy,
  kDefault,
  kOn,
  kDefine,
  kEq,
  kNe,
  kLe,
  kLt,
  kGe,
  kGt,
  kOrOr,
  kAndAnd,
  kBar,
  kAmp,
  kLBracket,
  kRBracket,
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kComma,
  kBang,
  kHash,
};

struct Token {
  T kind = T::kEnd;
  std::string text;
  uint64_t number = 0;
  Place at;
};

// kafel's lexer (src/lexer.l): its keywords, its number forms and their
// quirks (a `-` only before a decimal, which wraps modulo 2^64; `09` read
// as octal up to the first bad digit), its comments (`**/` does not close
// one), and `#include` spliced in where it stands, at most 16 deep.
constexpr std::pair<const char*, T> kKeywords[] = {
    {"SYSCALL", T::kSyscall},
    {"ALLOW", T::kAllow},
    {"LOG", T::kLog},
    {"USER_NOTIF", T::kUserNotif},
    {"ERRNO", T::kErrno},
    {"KILL_PROCESS", T::kKillProcess},
    {"KILL_THREAD", T::kKill},
    {"KILL", T::kKill},
    {"DENY", T::kDeny},
    {"TRAP", T::kTrap},
    {"TRACE", T::kTrace},
    {"USE", T::kUse},
    {"POLICY", T::kPolicy},
    {"DEFAULT", T::kDefault},
    {"ON", T::kOn},
    {"define", T::kDefine},
};

constexpr int kMaxIncludeDepth = 16;
constexpr size_t kMaxFileBytes = size_t{16} << 20;

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string CharText(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  char buf[8];
  snprintf(buf, sizeof buf, "\\x%02x", u);
  return buf;
}

// strtoull's reading of `digits` in `base`: up to the first digit not of
// the base; nullopt on overflow (ERANGE).
std::optional<uint64_t> ReadUnsigned(std::string_view digits, int base) {
  uint64_t v = 0;
  for (char c : digits) {
    int d = IsDigit(c)               ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : 99;
    if (d >= base) break;
    if (v > (~uint64_t{0} - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
      return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

class Lexer {
 public:
  Lexer(std::vector<std::string>* files, const std::vector<std::string>& include_dirs,
        std::vector<Token>* out)
      : files_(files), include_dirs_(include_dirs), out_(out) {}

  // Lexes `text`, file `file` (its folder `dir`), at include depth `depth`.
  void Lex(std::string_view text, size_t file, const std::string& dir, int depth) {
    size_t i = 0;
    Place at{file, 1, 1};
    auto advance = [&](size_t n) {
      for (size_t k = 0; k < n && i < text.size(); ++k, ++i) {
        if (text[i] == '\n') {
          ++at.line;
          at.col = 1;
        } else {
          ++at.col;
        }
      }
    };
    auto fail = [&](const std::string& message) { throw Failure{at, message}; };
    while (i < text.size()) {
      const char c = text[i];
      const std::string_view rest = text.substr(i);
      if (c == ' ' || c == '\t' || c == '\n') {
        advance(1);
        continue;
      }
      if (rest.substr(0, 2) == "//") {
        while (i < text.size() && text[i] != '\n') advance(1);
        continue;
      }
      if (rest.substr(0, 2) == "/*") {
        const Place start = at;
        advance(2);
        bool closed = false;
        while (i < text.size()) {
          if (text[i] != '*') {
            advance(1);
            continue;
          }
          if (i + 1 >= text.size()) fail("unexpected char `*'");
          if (text[i + 1] == '/') {
            advance(2);
            closed = true;
            break;
          }
          advance(2);  // "*"[^/]: a second '*' is eaten with the first
        }
        // An included file's open comment is closed by its end.
        if (!closed && depth == 0) throw Failure{start, "unterminated comment"};
        continue;
      }
      if (rest.substr(0, 8) == "#include") {
        advance(8);
        Include(text, &i, &at, dir, depth, advance);
        continue;
      }
      if (IsDigit(c) ||
          (c == '-' && i + 1 < text.size() && text[i + 1] >= '1' && text[i + 1] <= '9')) {
        Number(rest, at);
        advance(out_->back().text.size());
        continue;
      }
      if (IsAlpha(c)) {
        size_t n = 1;
        while (n < rest.size() && (IsAlpha(rest[n]) || IsDigit(rest[n]) || rest[n] == '_')) ++n;
        Token t{T::kIdent, std::string(rest.substr(0, n)), 0, at};
        for (const auto& [word, kind] : kKeywords) {
          if (t.text == word) t.kind = kind;
        }
        out_->push_back(std::move(t));
        advance(n);
        continue;
      }
      static constexpr std::pair<const char*, T> kPunct[] = {
          {"==", T::kEq},    {"!=", T::kNe},     {"<=", T::kLe},      {">=", T::kGe},
          {"||", T::kOrOr},  {"&&", T::kAndAnd}, {"<", T::kLt},       {">", T::kGt},
          {"|", T::kBar},    {"&", T::kAmp},     {"[", T::kLBracket}, {"]", T::kRBracket},
          {"(", T::kLParen}, {")", T::kRParen},  {"{", T::kLBrace},   {"}", T::kRBrace},
          {",", T::kComma},  {"!", T::kBang},    {"#", T::kHash},
      };
      bool matched = false;
      for (const auto& [p, kind] : kPunct) {
        const size_t n = strlen(p);
        if (rest.substr(0, n) == p) {
          out_->push_back({kind, p, 0, at});
          advance(n);
          matched = true;
          break;
        }
      }
      if (!matched) fail("unexpected char `" + CharText(c) + "'");
    }
  }

 private:
  // The longest of kafel's number forms at the start of `rest` (which
  // starts with a digit, or '-' and a digit 1-9).
  void Number(std::string_view rest, Place at) {
    auto run = [&](size_t from, auto pred) {
      size_t n = from;
      while (n < rest.size() && pred(rest[n])) ++n;
      return n;
    };
    auto hex = [](char c) {
      return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    };
    auto bin = [](char c) { return c == '0' || c == '1'; };
    size_t len = 0;
    std::optional<uint64_t> value;
    if (rest[0] == '-' || rest[0] != '0') {
      const size_t start = rest[0] == '-' ? 1 : 0;
      len = run(start, IsDigit);
      value = ReadUnsigned(rest.substr(start, len - start), 10);
      if (value && start == 1) value = uint64_t{0} - *value;
    } else {
      const size_t hex_len = rest.size() > 1 && rest[1] == 'x' ? run(2, hex) : 0;
      const size_t bin_len = rest.size() > 1 && rest[1] == 'b' ? run(2, bin) : 0;
      const size_t oct_len = run(1, IsDigit);
      if (hex_len > 2 && hex_len >= oct_len) {
        len = hex_len;
        value = ReadUnsigned(rest.substr(2, len - 2), 16);
      } else if (bin_len > 2 && bin_len >= oct_len) {
        len = bin_len;
        value = ReadUnsigned(rest.substr(2, len - 2), 2);
      } else {
        len = oct_len;
        value = ReadUnsigned(rest.substr(0, len), 8);
      }
    }
    const std::string text(rest.substr(0, len));
    if (!value) throw Failure{at, "number `" + text + "' out of range"};
    out_->push_back({T::kNumber, text, *value, at});
  }

  template <typename Advance>
  void Include(std::string_view text, size_t* i, Place* at, const std::string& dir, int depth,
               Advance advance) {
    bool whitespace = false;
    while (true) {
      if (*i >= text.size()) throw Failure{*at, "unterminated include statement"};
      const char c = text[*i];
      if (c == ' ' || c == '\t') {
        whitespace = true;
        advance(1);
        continue;
      }
      if (c == '\n' || c == ';') {
        advance(1);
        return;
      }
      const size_t close = c == '"' ? text.find('"', *i + 1) : std::string_view::npos;
      if (close == std::string_view::npos || close == *i + 1) {
        throw Failure{*at, "unexpected char `" + CharText(c) + "'"};
      }
      if (!whitespace) throw Failure{*at, "unexpected filename"};
      whitespace = false;
      const std::string name(text.substr(*i + 1, close - *i - 1));
      const Place place = *at;
      advance(close + 1 - *i);
      if (depth >= kMaxIncludeDepth) {
        throw Failure{place,
                      "maximum include depth (" + std::to_string(kMaxIncludeDepth) + ") exceeded"};
      }
      std::string path, content;
      if (!Resolve(name, dir, &path, &content)) {
        throw Failure{place, "could not include file `" + name + "'"};
      }
      files_->push_back(path);
      const size_t slash = path.rfind('/');
      Lex(content, files_->size() - 1, slash == std::string::npos ? "." : path.substr(0, slash),
          depth + 1);
    }
  }

  // The first of dir/name, then each include dir's, that is a regular
  // file (a FIFO or a device would hang or never end).
  bool Resolve(const std::string& name, const std::string& dir, std::string* path,
               std::string* content) const {
    std::vector<std::string> roots = {dir};
    roots.insert(roots.end(), include_dirs_.begin(), include_dirs_.end());
    for (const std::string& root : roots) {
      const std::string candidate = root + "/" + name;
      struct stat st {};
      if (stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (static_cast<size_t>(st.st_size) > kMaxFileBytes) continue;
      std::ifstream in(candidate, std::ios::binary);
      if (!in) continue;
      std::stringstream s;
      s << in.rdbuf();
      *path = candidate;
      *content = s.str();
      return true;
    }
    return false;
  }

  std::vector<std::string>* files_;
  const std::vector<std::string>& include_dirs_;
  std::vector<Token>* out_;
};

// ---- the syntax tree ------------------------------------------------------

enum class Op { kNumber, kVar, kBitOr, kBitAnd, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kNot };

struct Expr {
  Op op = Op::kNumber;
  uint64_t number = 0;
  std::string var;
  Place at;
  std::unique_ptr<Expr> left, right;  // kNot: left only
  int depth = 0;
};

enum class ActionKind { kAllow, kLog, kKill, kKillProcess, kUserNotif, kErrno, kTrap, kTrace };

struct KafelAction {
  ActionKind kind = ActionKind::kKill;
  uint64_t value = 0;
  Place at;
};

struct Filter {
  Place at;
  std::string name;  // empty: custom (`SYSCALL[n]`, or a constant's name)
  uint32_t custom_nr = 0;
  std::optional<std::vector<std::string>> declared;  // `name(a, b)`
  bool for_x86_64 = true;                            // no ON guard, or one naming x86_64
  std::unique_ptr<Expr> condition;                   // null: unconditional
};

struct Statement {
  Place at;
  std::string use;  // USE x; else an action block
  KafelAction action;
  std::vector<Filter> filters;
};

struct Policy {
  std::string name;
  Place at;
  std::vector<Statement> body;
};

constexpr int kMaxExpressionDepth = 200;  // kafel's MAX_EXPRESSION_DEPTH
constexpr int kMaxNesting = 1000;         // the importer's own: parentheses and '!'

// kafel's grammar (src/parser.y), with its constants resolved where they
// are used, as kafel's parser does.
class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  void Program() {
    if (Peek().kind == T::kEnd) Unexpected();
    while (Peek().kind != T::kEnd) ProgramStatement();
  }

  std::map<std::string, Policy> policies;
  std::vector<std::string> policy_order;
  Policy main{"@main", {}, {}};
  std::optional<KafelAction> default_action;

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool Accept(T kind) {
    if (Peek().kind != kind) return false;
    Next();
    return true;
  }
  [[noreturn]] void Unexpected() const {
    const Token& t = Peek();
    const std::string what = t.kind == T::kEnd      ? "end of file"
                             : t.kind == T::kIdent  ? "IDENTIFIER `" + t.text + "'"
                             : t.kind == T::kNumber ? "NUMBER `" + t.text + "'"
                                                    : "`" + t.text + "'";
    throw Failure{t.at, "syntax error, unexpected " + what};
  }
  const Token& Expect(T kind) {
    if (Peek().kind != kind) Unexpected();
    return Next();
  }

  void ProgramStatement() {
    const Token& t = Peek();
    switch (t.kind) {
      case T::kHash: {
        Next();
        Expect(T::kDefine);
        const Token& name = Expect(T::kIdent);
        const Token& value = Expect(T::kNumber);
        auto [it, fresh] = constants_.emplace(name.text, value.number);
        if (!fresh && it->second != value.number) {
          throw Failure{name.at, "Redefinition of constant `" + name.text +
                                     "' with different value (was: " + std::to_string(it->second) +
                                     " is: " + std::to_string(value.number) + ")"};
        }
        return;
      }
      case T::kPolicy: {
        Next();
        const Token& name = Expect(T::kIdent);
        Policy p{name.text, name.at, {}};
        Expect(T::kLBrace);
        if (!Accept(T::kRBrace)) {
          p.body = Statements();
          Expect(T::kRBrace);
        }
        if (policies.count(p.name)) {
          throw Failure{name.at, "Redefinition of policy `" + p.name + "'"};
        }
        policy_order.push_back(p.name);
        policies.emplace(p.name, std::move(p));
        return;
      }
      case T::kDefault: {
        Next();
        KafelAction a = Action();
        if (default_action) throw Failure{t.at, "Redefinition of default action"};
        default_action = a;
        return;
      }
      default: {
        std::vector<Statement> s = Statements();
        for (Statement& x : s) main.body.push_back(std::move(x));
      }
    }
  }

  std::vector<Statement> Statements() {
    std::vector<Statement> out;
    do {
      out.push_back(OneStatement());
    } while (Accept(T::kComma));
    return out;
  }

  Statement OneStatement() {
    Statement s;
    s.at = Peek().at;
    if (Accept(T::kUse)) {
      const Token& name = Expect(T::kIdent);
      if (!policies.count(name.text)) {
        throw Failure{name.at, "Undefined policy `" + name.text + "'"};
      }
      s.use = name.text;
      return s;
    }
    s.action = Action();
    Expect(T::kLBrace);
    if (Accept(T::kRBrace)) return s;
    do {
      s.filters.push_back(OneFilter());
    } while (Accept(T::kComma));
    Expect(T::kRBrace);
    return s;
  }

  KafelAction Action() {
    const Token& t = Peek();
    KafelAction a;
    a.at = t.at;
    auto valued = [&](ActionKind kind, const char* what) {
      Next();
      Expect(T::kLParen);
      const Token& n = Expect(T::kNumber);
      Expect(T::kRParen);
      if (n.number > 65535) {
        throw Failure{n.at, std::string(what) + " value " + std::to_string(n.number) +
                                " out of range (0-65535)"};
      }
      a.kind = kind;
      a.value = n.number;
      return a;
    };
    switch (t.kind) {
      case T::kAllow:
        a.kind = ActionKind::kAllow;
        break;
      case T::kLog:
        a.kind = ActionKind::kLog;
        break;
      case T::kKill:
      case T::kDeny:
        a.kind = ActionKind::kKill;
        break;
      case T::kKillProcess:
        a.kind = ActionKind::kKillProcess;
        break;
      case T::kUserNotif:
        a.kind = ActionKind::kUserNotif;
        break;
      case T::kErrno:
        return valued(ActionKind::kErrno, "Errno");
      case T::kTrace:
        return valued(ActionKind::kTrace, "Trace");
      case T::kTrap:
        return valued(ActionKind::kTrap, "Trap");
      default:
        Unexpected();
    }
    Next();
    return a;
  }

  Filter OneFilter() {
    Filter f;
    f.at = Peek().at;
    if (Accept(T::kSyscall)) {
      Expect(T::kLBracket);
      f.custom_nr = static_cast<uint32_t>(Expect(T::kNumber).number);
      Expect(T::kRBracket);
    } else {
      const Token& name = Expect(T::kIdent);
      if (auto c = constants_.find(name.text); c != constants_.end()) {
        f.custom_nr = static_cast<uint32_t>(c->second);
      } else {
        f.name = name.text;
      }
    }
    if (Accept(T::kLParen)) {
      f.declared.emplace();
      if (!Accept(T::kRParen)) {
        do {
          const Token& arg = Expect(T::kIdent);
          if (std::find(f.declared->begin(), f.declared->end(), arg.text) != f.declared->end()) {
            throw Failure{arg.at, "Redefinition of argument `" + arg.text + "'"};
          }
          if (f.declared->size() == 6) {
            throw Failure{arg.at, "Too many arguments defined for syscall"};
          }
          f.declared->push_back(arg.text);
        } while (Accept(T::kComma));
        Expect(T::kRParen);
      }
    }
    if (Accept(T::kOn)) {
      std::vector<const Token*> arches;
      if (Accept(T::kLBrace)) {
        do {
          arches.push_back(&Expect(T::kIdent));
        } while (Accept(T::kComma));
        Expect(T::kRBrace);
      } else {
        arches.push_back(&Expect(T::kIdent));
      }
      std::set<std::string> seen;
      f.for_x86_64 = false;
      for (const Token* a : arches) {
        const std::string arch = KafelArch(a->text);
        if (arch.empty()) throw Failure{a->at, "Unknown architecture `" + a->text + "'"};
        if (!seen.insert(arch).second) {
          throw Failure{a->at, "Duplicate architecture `" + a->text + "'"};
        }
        if (arch == "x86_64") f.for_x86_64 = true;
      }
    }
    if (Accept(T::kLBrace)) {
      if (!Accept(T::kRBrace)) {
        f.condition = BoolExpr();
        Expect(T::kRBrace);
      }
    }
    return f;
  }

  // kafel's architecture names (src/syscall.c), case-insensitive.
  static std::string KafelArch(std::string name) {
    for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    static const std::map<std::string, std::string> kNames = {
        {"arm", "arm"},      {"aarch64", "aarch64"}, {"arm64", "aarch64"},   {"x86_64", "x86_64"},
        {"amd64", "x86_64"}, {"x86", "x86"},         {"i386", "x86"},        {"mips", "mips"},
        {"mipso32", "mips"}, {"mips64", "mips64"},   {"riscv64", "riscv64"}, {"rv64", "riscv64"},
        {"m68k", "m68k"}};
    auto it = kNames.find(name);
    return it == kNames.end() ? "" : it->second;
  }

  std::unique_ptr<Expr> Node(Op op, Place at, std::unique_ptr<Expr> l, std::unique_ptr<Expr> r) {
    auto e = std::make_unique<Expr>();
    e->op = op;
    e->at = at;
    int child = l->depth;
    if (r) child = std::max(child, r->depth);
    if (child >= kMaxExpressionDepth) {
      throw Failure{at,
                    "Max expression depth (" + std::to_string(kMaxExpressionDepth) + ") exceeded"};
    }
    e->depth = child + 1;
    e->left = std::move(l);
    e->right = std::move(r);
    return e;
  }

  struct Nest {
    explicit Nest(Parser* p) : p_(p) {
      if (++p_->nesting_ > kMaxNesting) {
        throw Failure{p_->Peek().at,
                      "expression nested more than " + std::to_string(kMaxNesting) + " deep"};
      }
    }
    ~Nest() { --p_->nesting_; }
    Parser* p_;
  };

  // bool_expr: or (',' or)*, the comma an OR of the lowest precedence.
  std::unique_ptr<Expr> BoolExpr() {
    auto e = OrExpr();
    while (Peek().kind == T::kComma) {
      const Place at = Next().at;
      e = Node(Op::kOr, at, std::move(e), OrExpr());
    }
    return e;
  }
  std::unique_ptr<Expr> OrExpr() {
    auto e = AndExpr();
    while (Peek().kind == T::kOrOr) {
      const Place at = Next().at;
      e = Node(Op::kOr, at, std::move(e), AndExpr());
    }
    return e;
  }
  std::unique_ptr<Expr> AndExpr() {
    auto e = Primary();
    while (Peek().kind == T::kAndAnd) {
      const Place at = Next().at;
      e = Node(Op::kAnd, at, std::move(e), Primary());
    }
    return e;
  }
  static std::optional<Op> Comparison(T kind) {
    switch (kind) {
      case T::kEq:
        return Op::kEq;
      case T::kNe:
        return Op::kNe;
      case T::kLt:
        return Op::kLt;
      case T::kLe:
        return Op::kLe;
      case T::kGt:
        return Op::kGt;
      case T::kGe:
        return Op::kGe;
      default:
        return std::nullopt;
    }
  }
  std::unique_ptr<Expr> Primary() {
    Nest nest(this);
    const Place at = Peek().at;
    if (Accept(T::kBang)) return Node(Op::kNot, at, Primary(), nullptr);
    if (Peek().kind == T::kLParen) {
      // `(` opens either a condition or an operand: an operand when a
      // comparison follows what it encloses.
      const size_t start = pos_;
      try {
        auto lhs = BitOr();
        if (Comparison(Peek().kind)) return Compare(std::move(lhs));
      } catch (const Failure&) {
      }
      pos_ = start;
      Next();
      auto e = BoolExpr();
      Expect(T::kRParen);
      return e;
    }
    return Compare(BitOr());
  }
  std::unique_ptr<Expr> Compare(std::unique_ptr<Expr> lhs) {
    auto op = Comparison(Peek().kind);
    if (!op) Unexpected();
    const Place at = Next().at;
    return Node(*op, at, std::move(lhs), BitOr());
  }
  std::unique_ptr<Expr> BitOr() {
    auto e = BitAnd();
    while (Peek().kind == T::kBar) {
      const Place at = Next().at;
      e = Node(Op::kBitOr, at, std::move(e), BitAnd());
    }
    return e;
  }
  std::unique_ptr<Expr> BitAnd() {
    auto e = Operand();
    while (Peek().kind == T::kAmp) {
      const Place at = Next().at;
      e = Node(Op::kBitAnd, at, std::move(e), Operand());
    }
    return e;
  }
  std::unique_ptr<Expr> Operand() {
    Nest nest(this);
    const Token& t = Peek();
    auto e = std::make_unique<Expr>();
    e->at = t.at;
    if (t.kind == T::kNumber) {
      e->number = Next().number;
      return e;
    }
    if (t.kind == T::kIdent) {
      Next();
      if (auto c = constants_.find(t.text); c != constants_.end()) {
        e->number = c->second;
      } else {
        e->op = Op::kVar;
        e->var = t.text;
      }
      return e;
    }
    if (Accept(T::kLParen)) {
      auto inner = BitOr();
      Expect(T::kRParen);
      return inner;
    }
    Unexpected();
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
  std::map<std::string, uint64_t> constants_;
};

// ---- translation ------------------------------------------------------------

// One argument as the filter compares it: its index, kafel's size in
// bytes, and Ward's type for it.
struct ArgInfo {
  int index = 0;
  int size = 8;
};

// A bit function of one argument x: ((x & m) | c), m and c disjoint.
struct Bits {
  int arg = -1;  // -1: a constant
  uint64_t m = 0, c = 0;
  bool wide = false;  // kafel's is_64bit: an 8-byte argument or a constant above 32 bits
  std::string var;
};

WardAction ToWard(const KafelAction& a) {
  switch (a.kind) {
    case ActionKind::kAllow:
      return {WardActionKind::kAllow, 0};
    case ActionKind::kLog:
      return {WardActionKind::kLog, 0};
    case ActionKind::kUserNotif:
      return {WardActionKind::kNotify, 0};
    case ActionKind::kErrno:
      return {WardActionKind::kErrno, static_cast<int>(std::clamp<uint64_t>(a.value, 1, 4095))};
    case ActionKind::kTrace:
      return {WardActionKind::kErrno, 38};  // ENOSYS
    case ActionKind::kTrap:
      return {WardActionKind::kTrap, 0};
    case ActionKind::kKill:
      return {WardActionKind::kKillThread, 0};
    case ActionKind::kKillProcess:
      return {WardActionKind::kKill, 0};
  }
  return {};
}

std::string KafelActionText(const KafelAction& a) {
  switch (a.kind) {
    case ActionKind::kAllow:
      return "ALLOW";
    case ActionKind::kLog:
      return "LOG";
    case ActionKind::kUserNotif:
      return "USER_NOTIF";
    case ActionKind::kErrno:
      return "ERRNO(" + std::to_string(a.value) + ")";
    case ActionKind::kTrace:
      return "TRACE(" + std::to_string(a.value) + ")";
    case ActionKind::kTrap:
      return "TRAP(" + std::to_string(a.value) + ")";
    case ActionKind::kKill:
      return "KILL";
    case ActionKind::kKillProcess:
      return "KILL_PROCESS";
  }
  return "KILL";
}

class Translator {
 public:
  Translator(const ImportOptions& options, std::vector<ImportDiagnostic>* diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  bool Run(std::string_view text, std::string* out, std::vector<RuleOrigin>* origins) {
    files_.push_back(options_.path.empty() ? options_.source : options_.path);
    try {
      std::vector<Token> tokens;
      std::string dir = ".";
      if (const size_t slash = options_.path.rfind('/'); slash != std::string::npos) {
        dir = options_.path.substr(0, slash == 0 ? 1 : slash);
      }
      Lexer(&files_, options_.include_dirs, &tokens).Lex(text, 0, dir, 0);
      Place end{0, 1, 1};
      for (char c : text) {
        if (c == '\n') {
          ++end.line;
          end.col = 1;
        } else {
          ++end.col;
        }
      }
      tokens.push_back({T::kEnd, "", 0, end});
      Parser parser(tokens);
      parser.Program();
      // kafel checks every policy, used or not (kafel.c), then compiles
      // the top level.
      for (const std::string& name : parser.policy_order) Validate(parser.policies.at(name));
      Validate(parser.main);
      std::set<std::string> used;
      Flatten(parser.main, parser.policies, &used);
      for (const std::string& name : parser.policy_order) {
        if (!used.count(name)) {
          notes_.push_back("POLICY " + name +
                           " is never USEd from the top level: kafel compiles "
                           "only the top level, so it decides nothing");
        }
      }
      default_ = parser.default_action.value_or(KafelAction{ActionKind::kKill, 0, {}});
      if (parser.default_action) CheckAction(*parser.default_action);
      Translate();
    } catch (const Failure& f) {
      Report(Severity::kError, f.at, f.message);
      return false;
    }
    if (errors_ > 0) return false;
    *out = Write(origins);
    return true;
  }

 private:
  struct Entry {
    uint32_t nr = 0;
    const Filter* filter = nullptr;
    KafelAction action;
  };

  void Report(Severity s, Place at, std::string message) {
    // In a file the input includes: that file's place leads the message.
    ImportDiagnostic d{s, "", std::move(message), at.line, at.col};
    if (at.file != 0) {
      d.message = PlaceText(at) + ": " + d.message;
      d.line = d.column = 0;
    }
    for (const ImportDiagnostic& e : *diagnostics_) {
      if (e.line == d.line && e.column == d.column && e.message == d.message) return;
    }
    if (s == Severity::kError) ++errors_;
    diagnostics_->push_back(std::move(d));
  }
  void Warning(Place at, std::string message) {
    Report(Severity::kWarning, at, std::move(message));
  }

  std::string PlaceText(Place at) const {
    std::string out = at.file == 0 ? "" : files_[at.file] + ":";
    return out + std::to_string(at.line) + ":" + std::to_string(at.col);
  }

  // The arguments a filter's condition may name, by name.
  static std::map<std::string, ArgInfo> ArgsOf(const Filter& f, const KafelEntry* entry) {
    std::map<std::string, ArgInfo> out;
    if (f.declared) {
      for (size_t i = 0; i < f.declared->size(); ++i) {
        out.emplace((*f.declared)[i], ArgInfo{static_cast<int>(i), 8});
      }
    } else if (entry) {
      for (int i = 0; i < 6; ++i) {
        if (entry->args[i][0] != '\0') out.emplace(entry->args[i], ArgInfo{i, entry->sizes[i]});
      }
    }
    return out;
  }

  void Validate(const Policy& p) {
    for (const Statement& s : p.body) {
      for (const Filter& f : s.filters) {
        if (!f.for_x86_64) continue;
        const KafelEntry* entry = nullptr;
        if (!f.name.empty()) {
          entry = FindEntry(f.name);
          if (!entry) throw Failure{f.at, "Undefined identifier `" + f.name + "'"};
        }
        const auto args = ArgsOf(f, entry);
        if (f.condition) ValidateExpr(*f.condition, args);
      }
    }
  }

  void ValidateExpr(const Expr& e, const std::map<std::string, ArgInfo>& args) {
    if (e.op == Op::kVar && !args.count(e.var)) {
      throw Failure{e.at, "Undefined identifier `" + e.var + "'"};
    }
    if (e.left) ValidateExpr(*e.left, args);
    if (e.right) ValidateExpr(*e.right, args);
  }

  // The top level with each policy pasted in at its first USE (a later
  // USE of it could never match first).
  // USEs nested deeper than this are refused (kafel's own stack has no
  // bound; this one is the importer's, so a long chain cannot exhaust it).
  static constexpr int kMaxUseDepth = 1000;

  void Flatten(const Policy& p, const std::map<std::string, Policy>& policies,
               std::set<std::string>* used, int depth = 0) {
    for (const Statement& s : p.body) {
      if (!s.use.empty()) {
        if (!used->insert(s.use).second) continue;
        if (depth >= kMaxUseDepth) {
          throw Failure{s.at, "USE nested more than " + std::to_string(kMaxUseDepth) +
                                  " deep: too deep to import"};
        }
        Flatten(policies.at(s.use), policies, used, depth + 1);
        continue;
      }
      CheckAction(s.action);
      for (const Filter& f : s.filters) {
        if (!f.for_x86_64) {
          ++skipped_;
          continue;
        }
        const uint32_t nr = f.name.empty() ? f.custom_nr : FindEntry(f.name)->nr;
        entries_.push_back({nr, &f, s.action});
      }
    }
  }

  void CheckAction(const KafelAction& a) {
    if (!checked_actions_.insert({a.at.file, a.at.line, a.at.col}).second) return;
    switch (a.kind) {
      case ActionKind::kErrno:
        if (a.value == 0) {
          Report(Severity::kError, a.at,
                 "ERRNO(0) makes the call return 0 without running it; Ward cannot express that");
        } else if (a.value > 4095) {
          Warning(a.at, "ERRNO(" + std::to_string(a.value) +
                            ") reaches the caller as errno 4095 (the kernel caps it): imported "
                            "as errno 4095");
        }
        break;
      case ActionKind::kTrap:
        if (a.value != 0) {
          Warning(a.at, "TRAP(" + std::to_string(a.value) +
                            ")'s value (the SIGSYS si_errno) is not kept: Ward's trap sends 0");
        }
        break;
      case ActionKind::kTrace:
        Warning(a.at, "TRACE(" + std::to_string(a.value) +
                          ") is imported as errno ENOSYS, what the kernel answers when no "
                          "tracer is attached");
        break;
      default:
        break;
    }
  }

  // ---- conditions to regions ----

  struct Context {
    const Filter* filter;
    std::map<std::string, ArgInfo> args;
    std::string syscall;  // Ward's name
    std::vector<ParamType> params;
    bool has_signature = false;
  };

  Bits BitsOf(const Expr& e, const Context& ctx) {
    switch (e.op) {
      case Op::kNumber:
        return {-1, 0, e.number, e.number > 0xffffffffu, ""};
      case Op::kVar: {
        const ArgInfo& a = ctx.args.at(e.var);
        return {a.index, ~uint64_t{0}, 0, a.size == 8, e.var};
      }
      case Op::kBitOr:
      case Op::kBitAnd: {
        Bits a = BitsOf(*e.left, ctx), b = BitsOf(*e.right, ctx);
        if (a.arg >= 0 && b.arg >= 0 && a.arg != b.arg) TwoArguments(e, a, b);
        Bits out;
        out.arg = a.arg >= 0 ? a.arg : b.arg;
        out.var = a.arg >= 0 ? a.var : b.var;
        out.wide = a.wide || b.wide;
        if (e.op == Op::kBitOr) {
          out.c = a.c | b.c;
          out.m = (a.m | b.m) & ~out.c;
        } else {
          out.c = a.c & b.c;
          out.m = ((a.m & (b.m | b.c)) | (b.m & a.c)) & ~out.c;
        }
        if (out.m == 0) out.arg = -1;  // folded to a constant
        return out;
      }
      default:
        break;
    }
    throw Failure{e.at, "internal: not a bit expression"};
  }

  [[noreturn]] void TwoArguments(const Expr& e, const Bits& a, const Bits& b) {
    throw Failure{e.at, "this compares two arguments (" + a.var + " and " + b.var +
                            "): Ward compares an argument with constants only, so the rule "
                            "cannot be imported"};
  }

  // The x with f(x) OP v, f(x) = ((x & m) | c) & w, unsigned, as
  // disjoint cubes over the 64-bit register.
  static std::vector<Cube> Solve(Op op, uint64_t m, uint64_t c, uint64_t v, uint64_t w) {
    m &= w;
    c &= w;
    v &= w;
    auto eq = [&]() -> std::vector<Cube> {
      if ((c ^ v) & ~m & w) return {};
      return {{m, v & m}};
    };
    auto lt = [&]() {
      std::vector<Cube> out;
      uint64_t pm = 0, pv = 0;
      for (int j = 63; j >= 0; --j) {
        const uint64_t b = uint64_t{1} << j;
        if (!(w & b)) continue;
        const bool free = m & b, one = c & b;
        if (v & b) {
          if (free) {
            out.push_back({pm | b, pv});
            pm |= b;
            pv |= b;
          } else if (!one) {
            out.push_back({pm, pv});
            break;  // f's bit is 0 where v's is 1: every lower x is below
          }
        } else {
          if (free) {
            pm |= b;
          } else if (one) {
            break;  // f's bit is 1 where v's is 0: above v from here
          }
        }
      }
      return out;
    };
    auto complement = [](const std::vector<Cube>& cubes) {
      Region r;
      for (const Cube& k : cubes) {
        Box b;
        b.args[0] = k;
        r.push_back(b);
      }
      std::vector<Cube> out;
      for (const Box& b : kafel::Not(r)) out.push_back(b.args[0]);
      return out;
    };
    switch (op) {
      case Op::kEq:
        return eq();
      case Op::kNe:
        return complement(eq());
      case Op::kLt:
        return lt();
      case Op::kLe: {
        auto out = lt();
        for (const Cube& k : eq()) out.push_back(k);
        return out;
      }
      case Op::kGt: {
        auto le = lt();
        for (const Cube& k : eq()) le.push_back(k);
        return complement(le);
      }
      case Op::kGe:
        return complement(lt());
      default:
        return {};
    }
  }

  Region Atom(const Expr& e, Context* ctx) {
    Bits l = BitsOf(*e.left, *ctx), r = BitsOf(*e.right, *ctx);
    if (l.arg >= 0 && r.arg >= 0) TwoArguments(e, l, r);
    Op op = e.op;
    const uint64_t w = (l.wide || r.wide) ? ~uint64_t{0} : 0xffffffffu;
    if (l.arg < 0 && r.arg < 0) {
      const uint64_t a = l.c & w, b = r.c & w;
      bool holds = false;
      switch (op) {
        case Op::kEq:
          holds = a == b;
          break;
        case Op::kNe:
          holds = a != b;
          break;
        case Op::kLt:
          holds = a < b;
          break;
        case Op::kLe:
          holds = a <= b;
          break;
        case Op::kGt:
          holds = a > b;
          break;
        case Op::kGe:
          holds = a >= b;
          break;
        default:
          break;
      }
      return holds ? kafel::Universe() : Region{};
    }
    if (r.arg >= 0) {
      std::swap(l, r);
      if (op == Op::kLt)
        op = Op::kGt;
      else if (op == Op::kGt)
        op = Op::kLt;
      else if (op == Op::kLe)
        op = Op::kGe;
      else if (op == Op::kGe)
        op = Op::kLe;
    }
    std::vector<Cube> cubes = Solve(op, l.m, l.c, r.c, w);
    const int i = l.arg;
    Region region;
    auto as_region = [&](const std::vector<Cube>& ks) {
      Region out;
      for (const Cube& k : ks) {
        Box b;
        b.args[static_cast<size_t>(i)] = k;
        out.push_back(b);
      }
      return out;
    };
    region = as_region(cubes);
    // Folds to a constant: no condition on the argument at all.
    if (region.empty()) return region;
    if (kafel::Covers(region)) return kafel::Universe();
    const ParamType pt = static_cast<size_t>(i) < ctx->params.size() ? ctx->params[i] : ParamType{};
    const std::string what =
        "`" + l.var + "' (arg" + std::to_string(i) + " of " + ctx->syscall + ")";
    if (pt.kind == ParamKind::kPointer) {
      throw Failure{e.at, "a condition on " + what +
                              ", a pointer: the kernel reads what it points to after the check, "
                              "so Ward does not filter it (W1015)"};
    }
    if (pt.kind != ParamKind::kScalar) {
      throw Failure{e.at, "a condition on " + what +
                              ": Ward does not know that parameter's type "
                              "on x86_64, so it cannot compare it"};
    }
    if (pt.bits >= 64) return region;
    // Ward compares the parameter at its width, as the kernel reads it;
    // kafel compared more bits: decide as kafel does for the value
    // extended as the caller's ABI extends it.
    const uint64_t high = ~WidthMask(pt.bits), sign = uint64_t{1} << (pt.bits - 1);
    bool depends = false;
    std::vector<Cube> narrowed;
    for (Cube k : cubes) {
      const uint64_t hm = k.mask & high, hv = k.value & hm;
      if (hm != 0) {
        depends = true;
        const bool want_one = hv == hm;
        if (hv != 0 && !want_one) continue;
        if (want_one && !pt.is_signed) continue;
        if (pt.is_signed) {
          if ((k.mask & sign) && ((k.value & sign) != 0) != want_one) continue;
          k.mask |= sign;
          k.value = want_one ? (k.value | sign) : (k.value & ~sign);
        }
      }
      k.mask &= ~high;
      k.value &= ~high;
      narrowed.push_back(k);
    }
    if (depends) {
      Warning(e.at, "kafel compares " + std::string(l.wide ? "all 64 bits" : "more bits") + " of " +
                        what + " here, Ward only the " + std::to_string(pt.bits) +
                        " bits the kernel reads (" + pt.c_type +
                        "): calls are decided as kafel "
                        "decides them for the value " +
                        (pt.is_signed ? "sign" : "zero") + "-extended");
    }
    return as_region(narrowed);
  }

  Region Eval(const Expr& e, Context* ctx) {
    switch (e.op) {
      case Op::kAnd:
        return kafel::And(Eval(*e.left, ctx), Eval(*e.right, ctx));
      case Op::kOr:
        return kafel::Or(Eval(*e.left, ctx), Eval(*e.right, ctx));
      case Op::kNot:
        return kafel::Not(Eval(*e.left, ctx));
      case Op::kEq:
      case Op::kNe:
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe:
        return Atom(e, ctx);
      default:
        break;
    }
    throw Failure{e.at, "internal: not a condition"};
  }

  // ---- first match to Ward's precedence ----

  struct Emitted {
    WardAction action;
    std::vector<std::string> names;
    std::vector<std::string> conditions;
    std::string origin;
  };

  static bool Dominates(const WardAction& earlier, const WardAction& later) {
    return earlier == later || earlier.Rank() > later.Rank();
  }

  void Translate() {
    std::vector<uint32_t> order;
    std::map<uint32_t, std::vector<const Entry*>> by_nr;
    for (const Entry& e : entries_) {
      auto& list = by_nr[e.nr];
      if (list.empty()) order.push_back(e.nr);
      list.push_back(&e);
    }
    std::map<std::pair<int, int>, size_t> groups;  // unconditional rules, by action
    for (uint32_t nr : order) {
      const auto& list = by_nr[nr];
      const Filter& first = *list.front()->filter;
      const std::string* name = WardName(nr);
      if (!name) {
        Report(Severity::kError, first.at,
               "syscall number " + std::to_string(nr) +
                   " is not in x86_64's kernel table: Ward names syscalls by that table, so "
                   "the rule cannot be imported");
        continue;
      }
      if (!first.name.empty() && first.name != *name) renamed_.emplace(first.name, *name);
      Context ctx;
      ctx.syscall = *name;
      if (auto sig = SyscallSignature(*name)) {
        ctx.has_signature = true;
        for (const std::string& t : *sig) ctx.params.push_back(ClassifyParam(t, Arch::kX86_64));
      }
      std::vector<std::pair<Region, WardAction>> earlier;
      Region seen;  // every call an earlier rule matched
      try {
        for (const Entry* e : list) {
          ctx.filter = e->filter;
          const KafelEntry* entry = e->filter->name.empty() ? nullptr : FindEntry(e->filter->name);
          ctx.args = ArgsOf(*e->filter, entry);
          Region r = e->filter->condition ? Eval(*e->filter->condition, &ctx) : kafel::Universe();
          const WardAction a = ToWard(e->action);
          Region mine = kafel::Minus(r, seen);
          if (mine.empty()) continue;  // every call it matches, an earlier rule took
          // Ward lets the most restrictive overlapping rule win: take from
          // this rule what an earlier rule that Ward would let it outrank
          // decided.
          Region keep = r;
          for (const auto& [er, ea] : earlier) {
            if (!Dominates(ea, a)) keep = kafel::Minus(keep, er);
          }
          earlier.emplace_back(r, a);
          seen = kafel::Or(seen, r);
          const std::string origin = PlaceText(e->filter->at);
          if (keep.size() == 1 && keep.front().Universal()) {
            const auto key = std::make_pair(static_cast<int>(a.kind), a.errno_value);
            auto g = groups.find(key);
            if (g == groups.end()) {
              groups.emplace(key, rules_.size());
              rules_.push_back({a, {*name}, {}, origin});
            } else {
              rules_[g->second].names.push_back(*name);
            }
          } else {
            if (auto one = Compact(keep, ctx)) {
              rules_.push_back({a, {*name}, {*one}, origin});
            } else {
              for (const Box& b : keep) rules_.push_back({a, {*name}, Conditions(b, ctx), origin});
            }
          }
          if (kafel::Covers(seen)) break;
        }
      } catch (const kafel::TooComplex&) {
        Report(Severity::kError, first.at,
               "the rules for " + *name + " need more than " + std::to_string(kafel::kMaxBoxes) +
                   " argument regions: too complex to import");
      }
    }
  }

  // One condition for a region over one argument that is a few values
  // (`in [..]`) or all but a few (`!=`, `not in [..]`); nullopt otherwise.
  static std::optional<std::string> Compact(const Region& keep, const Context& ctx) {
    int arg = -1;
    for (const Box& b : keep) {
      for (size_t i = 0; i < 6; ++i) {
        if (b.args[i].mask == 0) continue;
        if (arg >= 0 && static_cast<size_t>(arg) != i) return std::nullopt;
        arg = static_cast<int>(i);
      }
    }
    if (arg < 0) return std::nullopt;
    const size_t i = static_cast<size_t>(arg);
    const int bits = i < ctx.params.size() && ctx.params[i].bits > 0 ? ctx.params[i].bits : 64;
    auto points = [&](const Region& r) -> std::optional<std::vector<uint64_t>> {
      std::vector<uint64_t> out;
      for (const Box& b : r) {
        if (b.args[i].mask != WidthMask(bits)) return std::nullopt;
        out.push_back(b.args[i].value);
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    auto list = [](const std::vector<uint64_t>& values) {
      std::string out;
      for (uint64_t v : values) out += (out.empty() ? "" : ", ") + Hex(v);
      return "[" + out + "]";
    };
    const std::string a = "arg" + std::to_string(arg);
    if (auto p = points(keep); p && p->size() > 1 && p->size() <= 16) {
      return a + " in " + list(*p);
    }
    const Region rest = kafel::Not(keep);
    if (auto p = points(rest); p && !p->empty() && p->size() <= 16) {
      return p->size() == 1 ? a + " != " + Hex(p->front()) : a + " not in " + list(*p);
    }
    return std::nullopt;
  }

  static std::vector<std::string> Conditions(const Box& b, const Context& ctx) {
    std::vector<std::string> out;
    for (size_t i = 0; i < 6; ++i) {
      const Cube& k = b.args[i];
      if (k.mask == 0) continue;
      const int bits = i < ctx.params.size() && ctx.params[i].bits > 0 ? ctx.params[i].bits : 64;
      const std::string a = "arg" + std::to_string(i);
      if (k.mask == WidthMask(bits)) {
        out.push_back(a + " == " + Hex(k.value));
      } else {
        out.push_back(a + " & " + Hex(k.mask) + " == " + Hex(k.value));
      }
    }
    return out;
  }

  std::string Write(std::vector<RuleOrigin>* origins) {
    std::vector<std::string> h = {
        "Imported from " + options_.source + " by `ward import --from kafel`, for x86_64.",
        "kafel decides a call by the first rule that matches it: each rule below holds only",
        "the calls no earlier kafel rule matched, so Ward's precedence decides them alike."};
    if (!renamed_.empty()) {
      std::string list;
      for (const auto& [from, to] : renamed_)
        list += (list.empty() ? "" : ", ") + from + " is " + to;
      notes_.push_back("kafel's names differ from the kernel's here: " + list);
    }
    if (skipped_ > 0) {
      notes_.push_back(std::to_string(skipped_) +
                       " rule(s) are guarded by ON for other architectures: not for x86_64");
    }
    const WardAction d = ToWard(default_);
    if (d.kind != WardActionKind::kKill && d.kind != WardActionKind::kKillThread) {
      notes_.push_back("kafel sends x32 calls (numbers from 0x40000000) to DEFAULT " +
                       KafelActionText(default_) + "; Ward kills them");
    }
    for (const ImportDiagnostic& w : *diagnostics_) {
      if (w.severity != Severity::kWarning) continue;
      h.push_back(
          "warning: " +
          (w.line > 0 ? std::to_string(w.line) + ":" + std::to_string(w.column) + ": " : "") +
          w.message);
    }
    for (const std::string& n : notes_) h.push_back("note: " + n);
    WardPolicy p;
    p.name = options_.name;
    p.arches = {"x86_64"};
    p.default_action = d;
    for (const Emitted& e : rules_) {
      WardRule r;
      r.action = e.action;
      r.names = e.names;
      r.conditions = e.conditions;
      r.origin = e.origin;
      p.rules.push_back(std::move(r));
    }
    return WriteWard(h, {p}, origins);
  }

  const ImportOptions& options_;
  std::vector<ImportDiagnostic>* diagnostics_;
  std::vector<std::string> files_;
  size_t errors_ = 0;
  std::vector<Entry> entries_;
  KafelAction default_;
  std::set<std::tuple<size_t, size_t, size_t>> checked_actions_;
  std::vector<Emitted> rules_;
  std::map<std::string, std::string> renamed_;
  std::vector<std::string> notes_;
  size_t skipped_ = 0;
};

}  // namespace

ImportResult ImportKafel(std::string_view text, const ImportOptions& options) {
  ImportResult result;
  result.ok = Translator(options, &result.diagnostics).Run(text, &result.text, &result.origins);
  return result;
}

}  // namespace ward::importers
