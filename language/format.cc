#include "language/format.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "WardLexer.h"
#include "WardParser.h"
#include "antlr4-runtime.h"
#include "language/parser.h"

namespace ward {
namespace {

using grammar::WardLexer;
using grammar::WardParser;

constexpr int kContinuation = 4;  // extra indent of a wrapped line
constexpr int kBlockIndent = 2;   // indent of a block's items

struct Comment {
  std::string text;  // trailing whitespace of every line removed
  int line = 0;      // first and last source line
  int end_line = 0;
  int column = 0;        // of the first character, in characters
  bool is_line = false;  // `//` or `#` (runs to the end of its line)
};

// A default-channel token with the comments that belong to it.
struct Tok {
  size_t type = 0;
  std::string text;
  int line = 0;
  int end_line = 0;
  bool hidden = true;
  bool drop = false;                   // an optional comma left out of the canonical form
  std::vector<Comment> leading;        // on lines of their own before it
  std::vector<Comment> inline_before;  // first on the token's line, before it
  std::vector<Comment> trailing;       // after it, on its line
  bool has_comments() const {
    return !leading.empty() || !inline_before.empty() || !trailing.empty();
  }
};

// One unbreakable unit of a statement: a token with its attached comments,
// or a comma the formatter adds.
struct Piece {
  std::string text;
  std::string trail;  // trailing comments that end in a line comment
  std::vector<Comment> leading;
  bool space_before = true;
  bool breakable_after = false;  // a line may break after a ','
  int first_line = 0;
  int last_line = 0;
};

// An output line: `code` at `indent`, then `trail` (a trailing comment).
struct Line {
  int indent = -1;  // -1: a blank line
  std::string code;
  std::string trail;
};

int Width(const std::string& s) {
  int w = 0;
  for (char c : s) w += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return w;
}

std::string RightTrim(std::string s) {
  size_t keep = s.find_last_not_of(" \t\r\f\v");
  s.erase(keep == std::string::npos ? 0 : keep + 1);
  return s;
}

// Trailing whitespace removed from every line of a comment.
std::string CleanComment(const std::string& text) {
  std::string out, line;
  for (char c : text) {
    if (c == '\n') {
      out += RightTrim(line) + "\n";
      line.clear();
    } else {
      line += c;
    }
  }
  return out + RightTrim(line);
}

// A multi-line block comment moved from `from` to `to` columns: its later
// lines move by as much (only whitespace is removed when moving left).
std::string Reindent(const std::string& text, int from, int to) {
  if (from == to || text.find('\n') == std::string::npos) return text;
  std::string out;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out += text.substr(start, nl + 1 - start);
    start = nl + 1;
    std::string rest = text.substr(start, text.find('\n', start) - start);
    if (to > from) {
      if (!rest.empty()) out += std::string(to - from, ' ');
    } else {
      size_t remove = 0;
      while (remove < rest.size() && static_cast<int>(remove) < from - to &&
             (rest[remove] == ' ' || rest[remove] == '\t')) {
        ++remove;
      }
      start += remove;
    }
  }
  return out + text.substr(start);
}

std::string Join(const std::vector<Comment>& comments) {
  std::string out;
  for (const Comment& c : comments) out += (out.empty() ? "" : " ") + c.text;
  return out;
}

// The lexer's tokens, every channel, EOF last.
class Lexed {
 public:
  explicit Lexed(const std::string& text)
      : input_(text), lexer_(&input_), tokens_(&lexer_), parser_(&tokens_) {
    lexer_.removeErrorListeners();
    parser_.removeErrorListeners();
    tokens_.fill();
  }
  std::vector<antlr4::Token*> tokens() { return tokens_.getTokens(); }
  // The file is known to parse; SLL first, full LL only if SLL fails.
  WardParser::File_Context* Parse() {
    parser_.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::SLL);
    parser_.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    try {
      return parser_.file_();
    } catch (const antlr4::ParseCancellationException&) {
      tokens_.seek(0);
      parser_.reset();
      parser_.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
          antlr4::atn::PredictionMode::LL);
      parser_.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
      return parser_.file_();
    }
  }

 private:
  antlr4::ANTLRInputStream input_;
  WardLexer lexer_;
  antlr4::CommonTokenStream tokens_;
  WardParser parser_;
};

class Formatter {
 public:
  explicit Formatter(Lexed& lexed) { Attach(lexed.tokens()); }

  std::string Run(WardParser::File_Context* file) {
    MarkDroppedCommas(file);
    if (auto* h = file->header()) Statement(h, 0);
    for (auto* item : file->topItem()) {
      if (auto* p = item->policyDecl()) {
        Policy(p);
      } else {
        Statement(item, 0);
      }
    }
    EmitComments(toks_.back().leading, 0, true);
    return Render();
  }

 private:
  // Gives each comment to a token: trailing the token before it on the same
  // line, or leading the next one.
  void Attach(const std::vector<antlr4::Token*>& stream) {
    toks_.resize(stream.size());
    size_t prev = SIZE_MAX;
    int prev_end = 0;
    std::vector<Comment> pending;
    for (antlr4::Token* t : stream) {
      std::string text = t->getType() == antlr4::Token::EOF ? "" : t->getText();
      int line = static_cast<int>(t->getLine());
      int end_line = line + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) {
        Comment c{CleanComment(text), line, end_line, static_cast<int>(t->getCharPositionInLine()),
                  t->getType() == WardLexer::LINE_COMMENT};
        if (prev != SIZE_MAX && pending.empty() && line == prev_end) {
          toks_[prev].trailing.push_back(std::move(c));
          prev_end = end_line;
        } else {
          pending.push_back(std::move(c));
        }
        continue;
      }
      Tok& k = toks_[t->getTokenIndex()];
      k.type = t->getType();
      k.text = std::move(text);
      k.line = line;
      k.end_line = end_line;
      k.hidden = false;
      size_t split = pending.size();
      if (k.type != antlr4::Token::EOF) {
        while (split > 0 && !pending[split - 1].is_line && pending[split - 1].end_line == line) {
          --split;
        }
      }
      k.leading.assign(pending.begin(), pending.begin() + split);
      k.inline_before.assign(pending.begin() + split, pending.end());
      pending.clear();
      prev = t->getTokenIndex();
      prev_end = end_line;
    }
  }

  static size_t Index(antlr4::tree::TerminalNode* n) { return n->getSymbol()->getTokenIndex(); }

  // Trailing commas in lists and the commas between label pairs are optional;
  // the canonical form leaves them out unless a comment is attached.
  void MarkDroppedCommas(antlr4::tree::ParseTree* node) {
    const auto& kids = node->children;
    for (size_t i = 0; i < kids.size(); ++i) {
      auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(kids[i]);
      if (!term) {
        MarkDroppedCommas(kids[i]);
        continue;
      }
      if (term->getSymbol()->getType() != WardParser::COMMA) continue;
      auto* next =
          i + 1 < kids.size() ? dynamic_cast<antlr4::tree::TerminalNode*>(kids[i + 1]) : nullptr;
      bool trailing = next && next->getSymbol()->getType() == WardParser::RBRACKET;
      bool label = dynamic_cast<WardParser::LabelPairContext*>(node) != nullptr;
      Tok& t = toks_[Index(term)];
      if ((trailing || label) && !t.has_comments()) t.drop = true;
    }
  }

  Piece MakePiece(size_t i) const {
    const Tok& t = toks_[i];
    Piece p;
    p.leading = t.leading;
    p.text = Join(t.inline_before);
    p.text += (p.text.empty() ? "" : " ") + t.text;
    if (!t.trailing.empty() && t.trailing.back().is_line) {
      p.trail = Join(t.trailing);
    } else if (!t.trailing.empty()) {
      p.text += " " + Join(t.trailing);
    }
    p.breakable_after = t.type == WardParser::COMMA;
    p.first_line = t.inline_before.empty() ? t.line : t.inline_before.front().line;
    p.last_line = t.trailing.empty() ? t.end_line : t.trailing.back().end_line;
    return p;
  }

  static Piece Synthetic(std::string text, int line) {
    Piece p;
    p.text = std::move(text);
    p.first_line = p.last_line = line;
    return p;
  }

  static bool SpaceBetween(size_t prev, size_t cur) {
    if (cur == WardParser::COMMA || cur == WardParser::RBRACKET) return false;
    if (prev == WardParser::LBRACKET) return false;
    return !(prev == WardParser::LBRACE && cur == WardParser::RBRACE);
  }

  // Appends the kept default tokens of [first, last] to `ps`.
  void AddTokens(std::vector<Piece>& ps, size_t first, size_t last) {
    for (size_t i = first; i <= last && i < toks_.size(); ++i) {
      const Tok& t = toks_[i];
      if (t.hidden || t.drop || t.type == antlr4::Token::EOF) continue;
      Piece p = MakePiece(i);
      bool after_comment = !ps.empty() && ps.back().text.size() >= 2 &&
                           ps.back().text.compare(ps.back().text.size() - 2, 2, "*/") == 0;
      p.space_before =
          ps.empty() || SpaceBetween(last_type_, t.type) ||
          (after_comment && t.type != WardParser::COMMA && t.type != WardParser::RBRACKET);
      last_type_ = t.type;
      ps.push_back(std::move(p));
    }
  }
  void AddTokens(std::vector<Piece>& ps, antlr4::ParserRuleContext* ctx) {
    AddTokens(ps, ctx->getStart()->getTokenIndex(), ctx->getStop()->getTokenIndex());
  }

  void Statement(antlr4::ParserRuleContext* ctx, int indent) {
    std::vector<Piece> ps;
    AddTokens(ps, ctx);
    EmitStatement(ps, indent, indent, true);
  }

  // A blank line before an element starting at source line `line` if the
  // source had one (at most one; never first in a block).
  void Blank(int line) {
    if (!block_start_ && line > last_line_ + 1) out_.push_back(Line{});
  }

  // Comments on lines of their own; comments that shared a source line stay
  // on one line.
  void EmitComments(const std::vector<Comment>& cs, int indent, bool blanks) {
    int prev_end = -1;
    for (const Comment& c : cs) {
      if (c.line == prev_end && !out_.empty()) {
        out_.back().code += " " + c.text;
      } else {
        if (blanks) Blank(c.line);
        out_.push_back(Line{indent, Reindent(c.text, c.column, indent), ""});
      }
      prev_end = c.end_line;
      last_line_ = c.end_line;
      block_start_ = false;
    }
  }

  // The width of the pieces from `k` up to the next place a line may break.
  static int AtomWidth(const std::vector<Piece>& ps, size_t k) {
    int w = Width(ps[k].text);
    for (size_t j = k + 1; j < ps.size(); ++j) {
      const Piece& before = ps[j - 1];
      if (before.breakable_after || !before.trail.empty() || !ps[j].leading.empty()) break;
      w += (ps[j].space_before ? 1 : 0) + Width(ps[j].text);
    }
    return w;
  }

  // One statement, filled: pieces join on a line while they fit in
  // kFormatWidth; a line breaks only after a ',' (or where a comment forces
  // it), and continues kContinuation further in.
  void EmitStatement(const std::vector<Piece>& ps, int indent, int comment_indent, bool blank) {
    if (ps.empty()) return;
    EmitComments(ps[0].leading, comment_indent, true);
    if (blank) Blank(ps[0].first_line);
    int cont = indent + kContinuation;
    Line cur{indent, "", ""};
    int col = indent;
    auto append = [&](const std::string& text, bool space) {
      if (space && !cur.code.empty()) {
        cur.code += " ";
        ++col;
      }
      cur.code += text;
      size_t nl = text.rfind('\n');
      col = nl == std::string::npos ? col + Width(text) : Width(text.substr(nl + 1));
    };
    auto new_line = [&] {
      out_.push_back(std::move(cur));
      cur = Line{cont, "", ""};
      col = cont;
    };
    for (size_t k = 0; k < ps.size(); ++k) {
      const Piece& p = ps[k];
      if (k > 0) {
        const Piece& prev = ps[k - 1];
        if (!prev.trail.empty() || !p.leading.empty()) {
          new_line();
          EmitComments(p.leading, cont, false);
        } else if (prev.breakable_after &&
                   col + (p.space_before ? 1 : 0) + AtomWidth(ps, k) > kFormatWidth) {
          new_line();
        }
      }
      append(p.text, p.space_before);
      if (!p.trail.empty()) cur.trail = p.trail;
    }
    out_.push_back(std::move(cur));
    last_line_ = std::max(last_line_, ps.back().last_line);
    block_start_ = false;
  }

  // `header {`, the items (each emitted by `body` at the inner indent),
  // `}`; `{}` when there is nothing inside, comments included.
  template <typename Body>
  void Block(std::vector<Piece> header, size_t lbrace, size_t rbrace, int indent, bool empty,
             Body body) {
    const Tok& close = toks_[rbrace];
    if (empty && toks_[lbrace].trailing.empty() && close.leading.empty() &&
        close.inline_before.empty()) {
      Piece p = MakePiece(rbrace);
      p.space_before = false;
      header.push_back(std::move(p));
      EmitStatement(header, indent, indent, true);
      return;
    }
    EmitStatement(header, indent, indent, true);
    block_start_ = true;
    body(indent + kBlockIndent);
    Close(rbrace, indent);
  }

  void Close(size_t rbrace, int indent) {
    std::vector<Piece> ps{MakePiece(rbrace)};
    EmitComments(ps[0].leading, indent + kBlockIndent, true);
    ps[0].leading.clear();
    last_type_ = WardParser::RBRACE;
    EmitStatement(ps, indent, indent, false);
  }

  void Policy(WardParser::PolicyDeclContext* p) {
    std::vector<Piece> header;
    size_t lbrace = Index(p->LBRACE());
    AddTokens(header, p->getStart()->getTokenIndex(), lbrace);
    auto sections = p->section();
    Block(std::move(header), lbrace, Index(p->RBRACE()), 0, sections.empty(), [&](int in) {
      for (auto* s : sections) Section(s, in);
    });
  }

  template <typename Item>
  void ItemsBlock(antlr4::ParserRuleContext* s, const std::vector<Item*>& items, int indent) {
    auto* lbrace = s->getToken(WardParser::LBRACE, 0);
    auto* rbrace = s->getToken(WardParser::RBRACE, 0);
    std::vector<Piece> header;
    AddTokens(header, s->getStart()->getTokenIndex(), Index(lbrace));
    Block(std::move(header), Index(lbrace), Index(rbrace), indent, items.empty(), [&](int in) {
      for (auto* item : items) Statement(item, in);
    });
  }

  void Section(WardParser::SectionContext* s, int indent) {
    if (auto* c = dynamic_cast<WardParser::FilesystemSectionContext*>(s)) {
      ItemsBlock(c, c->fsRule(), indent);
    } else if (auto* c = dynamic_cast<WardParser::NetworkSectionContext*>(s)) {
      ItemsBlock(c, c->netRule(), indent);
    } else if (auto* c = dynamic_cast<WardParser::SyscallsSectionContext*>(s)) {
      ItemsBlock(c, c->sysItem(), indent);
    } else if (auto* c = dynamic_cast<WardParser::ProcessSectionContext*>(s)) {
      ItemsBlock(c, c->procItem(), indent);
    } else if (auto* c = dynamic_cast<WardParser::LimitsSectionContext*>(s)) {
      ItemsBlock(c, c->limitItem(), indent);
    } else if (auto* c = dynamic_cast<WardParser::LabelsSectionContext*>(s)) {
      std::vector<Piece> ps;
      AddTokens(ps, c->getStart()->getTokenIndex(), c->getStart()->getTokenIndex());
      ps =
          LabelBlock(std::move(ps), Index(c->LBRACE()), c->labelPair(), Index(c->RBRACE()), indent);
      EmitStatement(ps, indent, indent, true);
    } else if (auto* c = dynamic_cast<WardParser::TargetSectionContext*>(s)) {
      Target(c, indent);
    } else {
      Statement(s, indent);  // description
    }
  }

  // `{ k = "v", ... }` on the statement's line when it has no comments and
  // fits; otherwise one pair per line. Returns the pieces the statement
  // continues with (the `}` and anything after it), to be emitted by the
  // caller; `ps` are the statement's pieces before the `{`.
  std::vector<Piece> LabelBlock(std::vector<Piece> ps, size_t lbrace,
                                const std::vector<WardParser::LabelPairContext*>& pairs,
                                size_t rbrace, int indent) {
    bool comments = !toks_[lbrace].trailing.empty() || !toks_[rbrace].leading.empty() ||
                    !toks_[rbrace].inline_before.empty();
    for (size_t i = lbrace + 1; i < rbrace; ++i) comments |= toks_[i].has_comments();
    if (!comments) {
      std::vector<Piece> line = ps;
      AddTokens(line, lbrace, lbrace);
      for (size_t i = 0; i < pairs.size(); ++i) {
        if (i > 0) {
          line.push_back(Synthetic(",", toks_[lbrace].line));
          line.back().space_before = false;
          last_type_ = WardParser::COMMA;
        }
        AddTokens(line, pairs[i]);
      }
      AddTokens(line, rbrace, rbrace);
      int width = indent;
      for (size_t i = 0; i < line.size(); ++i) {
        width += (i > 0 && line[i].space_before ? 1 : 0) + Width(line[i].text);
      }
      if (width <= kFormatWidth) return line;
    }
    AddTokens(ps, lbrace, lbrace);
    EmitStatement(ps, indent, indent, true);
    block_start_ = true;
    for (auto* pair : pairs) Statement(pair, indent + kBlockIndent);
    std::vector<Piece> rest{MakePiece(rbrace)};
    EmitComments(rest[0].leading, indent + kBlockIndent, true);
    rest[0].leading.clear();
    last_type_ = WardParser::RBRACE;
    rest[0].first_line = last_line_;  // no blank line before `}`
    return rest;
  }

  // Target blocks are a flat token sequence whose entries only the checker
  // can split, so the author's lines are kept: targetTokens that start on
  // the line where the previous one ended form one entry.
  void Target(WardParser::TargetSectionContext* c, int indent) {
    std::vector<Piece> header;
    AddTokens(header, c->getStart()->getTokenIndex(), Index(c->LBRACE()));
    auto tokens = c->targetToken();
    Block(std::move(header), Index(c->LBRACE()), Index(c->RBRACE()), indent, tokens.empty(),
          [&](int in) {
            std::vector<Piece> entry;
            int prev_end = -1;
            auto flush = [&] {
              EmitStatement(entry, in, in, true);
              entry.clear();
            };
            for (auto* t : tokens) {
              const Tok& first = toks_[t->getStart()->getTokenIndex()];
              if (!entry.empty() && first.line > prev_end) flush();
              prev_end = toks_[t->getStop()->getTokenIndex()].end_line;
              if (auto* open = t->getToken(WardParser::LBRACE, 0)) {
                entry = LabelBlock(std::move(entry), Index(open), t->labelPair(),
                                   Index(t->getToken(WardParser::RBRACE, 0)), in);
              } else {
                AddTokens(entry, t);
              }
            }
            if (!entry.empty()) flush();
          });
  }

  // Trailing comments of consecutive lines at one indent line up one space
  // past the longest code among them.
  void AlignTrailing() {
    for (size_t i = 0; i < out_.size();) {
      auto alignable = [&](size_t k) {
        const Line& l = out_[k];
        return l.indent >= 0 && !l.trail.empty() && l.trail.find('\n') == std::string::npos &&
               l.code.find('\n') == std::string::npos && l.indent == out_[i].indent;
      };
      if (!alignable(i)) {
        ++i;
        continue;
      }
      size_t j = i;
      int column = 0;
      while (j < out_.size() && alignable(j)) column = std::max(column, Width(out_[j++].code) + 1);
      for (size_t k = i; k < j; ++k) {
        out_[k].code += std::string(column - Width(out_[k].code), ' ');
      }
      i = j;
    }
  }

  std::string Render() {
    AlignTrailing();
    std::string text;
    bool blank_pending = false;
    for (const Line& l : out_) {
      if (l.indent < 0) {
        blank_pending = !text.empty();
        continue;
      }
      if (blank_pending) text += "\n";
      blank_pending = false;
      std::string code = l.code;
      if (!l.trail.empty()) code += (code.empty() || code.back() == ' ' ? "" : " ") + l.trail;
      text += RightTrim(std::string(l.indent, ' ') + code) + "\n";
    }
    return text;
  }

  std::vector<Tok> toks_;
  std::vector<Line> out_;
  size_t last_type_ = 0;
  int last_line_ = 0;
  bool block_start_ = true;
};

// What must survive formatting: the tokens (commas aside; only optional ones
// are ever dropped or added, and the result must parse) and the comments,
// each line trimmed (block comments are re-indented).
std::vector<std::string> Essence(const std::string& text) {
  Lexed lexed(text);
  std::vector<std::string> out;
  for (antlr4::Token* t : lexed.tokens()) {
    if (t->getType() == WardLexer::COMMA || t->getType() == antlr4::Token::EOF) continue;
    std::string s = std::to_string(t->getType()) + ":";
    if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
      s += t->getText();
    } else {
      std::string part;
      for (char c : t->getText() + "\n") {
        if (c != '\n') {
          part += c;
          continue;
        }
        size_t b = part.find_first_not_of(" \t");
        s += RightTrim(b == std::string::npos ? "" : part.substr(b)) + "\n";
        part.clear();
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::optional<std::string> FormatFile(const SourceManager& sources, FileId id,
                                      DiagnosticSink& sink) {
  // A misspelt keyword is reported and parsed on from: still not a file to
  // format.
  size_t errors = sink.error_count();
  if (!ParseFile(sources, id, sink) || sink.error_count() > errors) return std::nullopt;
  const std::string& text = sources.file(id).text;
  std::string formatted;
  try {
    Lexed lexed(text);
    WardParser::File_Context* tree = lexed.Parse();
    formatted = Formatter(lexed).Run(tree);
  } catch (const std::exception& e) {
    sink.Error(Code::kSyntaxError, {id, 0, 0}, std::string("formatter failure: ") + e.what());
    return std::nullopt;
  }
  SourceManager again;
  DiagnosticSink quiet;
  FileId copy = again.Add(sources.file(id).display_path, "", formatted);
  if (Essence(formatted) != Essence(text) || !ParseFile(again, copy, quiet)) {
    sink.Error(Code::kSyntaxError, {id, 0, 0},
               "formatter failure: the formatted text would differ in more than layout",
               "the file is left unchanged; please report this as a bug");
    return std::nullopt;
  }
  return formatted;
}

}  // namespace ward
