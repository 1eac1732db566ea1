#include "language/parser.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "WardLexer.h"
#include "WardParser.h"
#include "antlr4-runtime.h"
#include "language/ast_builder.h"
#include "language/constants.h"
#include "language/utf8.h"

namespace ward {
namespace {

using grammar::WardLexer;
using grammar::WardParser;

// Thrown by the listener after it recorded the first error, to stop ANTLR
// from recovering into a cascade. Never leaves this file.
struct StopParsing {};

// A misspelt keyword the parse can go on from: the token at `index` is
// re-typed as the one keyword it is closest to and the file parsed again, so
// every misspelt keyword is reported (in source order), not only the first.
struct Repair {
  size_t index = 0;
  size_t type = 0;
};

// At most this many misspelt keywords are repaired per file; each costs a
// parse.
constexpr int kMaxRepairs = 20;

// A readable name for a token type in "expected ..." hints.
std::string TokenName(const antlr4::dfa::Vocabulary& vocab, size_t type) {
  switch (type) {
    case WardParser::WORD:
      return "a name or value";
    case WardParser::STRING:
      return "a string";
    case WardParser::GROUPREF:
      return "a group (@name)";
    case antlr4::Token::EOF:
      return "end of file";
    default:
      return vocab.getDisplayName(type);
  }
}

std::string Hex(unsigned char c) {
  static const char* kDigits = "0123456789abcdef";
  return {kDigits[c >> 4], kDigits[c & 15]};
}

std::string Quote(std::string s) {
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return "'" + s + "'";
}

// The keyword a token type stands for ("filesystem"), or empty for tokens
// that are not keywords.
std::string KeywordText(const antlr4::dfa::Vocabulary& vocab, size_t type) {
  if (type == antlr4::Token::EOF || type >= WardParser::EQ) return "";
  std::string literal = vocab.getLiteralName(type);
  if (literal.size() < 3 || literal.front() != '\'') return "";
  return literal.substr(1, literal.size() - 2);
}

// How the user would write the block a '{' or '[' opens: the tokens before
// it on its line (`policy p {`, `filesystem {`).
std::string BlockText(antlr4::TokenStream* tokens, size_t index) {
  antlr4::Token* open = tokens->get(index);
  std::string text = open->getText();
  size_t line = open->getLine();
  for (size_t i = index; i-- > 0;) {
    antlr4::Token* t = tokens->get(i);
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    if (t->getLine() != line || t->getType() == WardParser::LBRACE ||
        t->getType() == WardParser::RBRACE || text.size() > 60) {
      break;
    }
    text = t->getText() + " " + text;
  }
  return text;
}

class FirstErrorListener : public antlr4::BaseErrorListener {
 public:
  FirstErrorListener(const SourceManager& sources, FileId file, const OffsetMap& offsets,
                     DiagnosticSink& sink)
      : sources_(sources), file_(file), offsets_(offsets), sink_(sink) {}

  // The repair the last syntax error allows, if any; cleared by the call.
  std::optional<Repair> TakeRepair() { return std::exchange(repair_, std::nullopt); }
  // A repaired token that is still wrong where it stands was reported
  // already: the parse stops there without a second diagnostic.
  void SetRepaired(size_t index) { repaired_ = index; }

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* token, size_t, size_t,
                   const std::string&, std::exception_ptr) override {
    if (auto* lexer = dynamic_cast<WardLexer*>(recognizer)) {
      LexerError(lexer);
    } else {
      ParserError(dynamic_cast<WardParser*>(recognizer), token);
    }
    throw StopParsing{};
  }

 private:
  void LexerError(WardLexer* lexer) {
    uint32_t at = offsets_.ByteOffset(lexer->tokenStartCharIndex);
    const std::string& text = sources_.file(file_).text;
    Span span{file_, at, at + 1};
    if (text.compare(at, 2, "/*") == 0) {
      sink_.Error(Code::kUnterminatedComment, {file_, at, at + 2}, "unterminated comment",
                  "close it with */");
    } else if (text[at] == '"') {
      sink_.Error(Code::kUnterminatedString, span, "unterminated string",
                  "strings end with \" on the same line");
    } else {
      unsigned char c = static_cast<unsigned char>(text[at]);
      size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      span.end = at + static_cast<uint32_t>(len);
      std::string shown = c < 0x20 || c == 0x7F ? "\\x" + Hex(c) : text.substr(at, len);
      sink_.Error(Code::kUnexpectedCharacter, span, "unexpected character '" + shown + "'",
                  c == '/' ? "paths and domain names are written as strings" : "");
    }
  }

  void ParserError(WardParser* parser, antlr4::Token* token) {
    if (token->getTokenIndex() == repaired_) return;
    Span span{file_, offsets_.ByteOffset(token->getStartIndex()), 0};
    std::string message;
    if (token->getType() == antlr4::Token::EOF) {
      span.end = span.begin;
      message = "unexpected end of file";
      if (parser && UnclosedAtEof(parser, span)) return;
    } else {
      span.end = offsets_.ByteOffset(token->getStopIndex() + 1);
      message = "unexpected " + Quote(token->getText());
    }
    std::string hint;
    if (parser) {
      antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
      std::vector<std::string> names;
      bool any_word = expected.contains(static_cast<size_t>(WardParser::WORD)) &&
                      expected.contains(static_cast<size_t>(WardParser::KILL));
      if (any_word) names.push_back("a name");
      for (size_t type : expected.toList()) {
        // A name slot admits every keyword: list it once.
        if (any_word && (type == WardParser::WORD || type < WardParser::EQ)) continue;
        names.push_back(TokenName(parser->getVocabulary(), type));
      }
      if (!names.empty() && names.size() <= 8) {
        hint = "expected ";
        for (size_t i = 0; i < names.size(); ++i) {
          hint += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
        }
      }
    }
    if (parser && MissingComma(parser, token)) hint = "put a ',' between the values of a list";
    if (parser && Misspelt(parser, token, &message, &hint)) {
      sink_.Error(Code::kSyntaxError, span, message, hint);
      return;
    }
    sink_.Error(Code::kSyntaxError, span, message, hint);
  }

  // A word where only keywords (or `}`) may stand, close to one of them
  // (`filesytem {`, `alow read`): says which, and offers the repair when
  // exactly one is closest.
  bool Misspelt(WardParser* parser, antlr4::Token* token, std::string* message, std::string* hint) {
    if (token->getType() != WardParser::WORD) return false;
    antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
    if (expected.contains(static_cast<size_t>(WardParser::WORD))) return false;
    std::vector<std::string> keywords;
    std::map<std::string, size_t> types;
    for (size_t type : expected.toList()) {
      std::string k = KeywordText(parser->getVocabulary(), type);
      if (k.empty()) continue;
      keywords.push_back(k);
      types.emplace(k, type);
    }
    std::vector<std::string> close = ClosestMatches(token->getText(), keywords);
    if (close.empty()) {
      // Where a rule's optional words end (`allow tpc to ...`), ANTLR
      // expects only what starts the next rule: offer every keyword.
      keywords.clear();
      for (size_t type = 1; type < WardParser::EQ; ++type) {
        std::string k = KeywordText(parser->getVocabulary(), type);
        if (k.empty()) continue;
        keywords.push_back(k);
        types.emplace(k, type);
      }
      close = ClosestMatches(token->getText(), keywords);
    }
    if (close.empty()) return false;
    bool in_policy =
        parser->getContext() && parser->getContext()->getRuleIndex() == WardParser::RulePolicyDecl;
    *message =
        std::string(in_policy ? "unknown section " : "unknown keyword ") + Quote(token->getText());
    *hint = DidYouMean(close);
    if (close.size() == 1) repair_ = Repair{token->getTokenIndex(), types.at(close[0])};
    return true;
  }

  // `unexpected end of file` with a '{' or '[' still open: names the
  // innermost one (and up to two around it, as notes) where it was opened.
  bool UnclosedAtEof(WardParser* parser, Span at) {
    antlr4::TokenStream* tokens = parser->getTokenStream();
    std::vector<size_t> open;
    for (size_t i = 0; i < tokens->size(); ++i) {
      size_t type = tokens->get(i)->getType();
      if (type == WardParser::LBRACE || type == WardParser::LBRACKET) {
        open.push_back(i);
      } else if ((type == WardParser::RBRACE || type == WardParser::RBRACKET) && !open.empty()) {
        open.pop_back();
      }
    }
    if (open.empty()) return false;
    auto span_of = [&](size_t index) {
      uint32_t b = offsets_.ByteOffset(tokens->get(index)->getStartIndex());
      return Span{file_, b, b + 1};
    };
    auto where = [&](size_t index) {
      Location loc = sources_.LocationOf(file_, span_of(index).begin);
      return std::to_string(loc.line) + ":" + std::to_string(loc.column);
    };
    size_t inner = open.back();
    bool brace = tokens->get(inner)->getType() == WardParser::LBRACE;
    sink_.Error(
        Code::kSyntaxError, at,
        "unexpected end of file: '" + BlockText(tokens, inner) + "' opened at " + where(inner) +
            " is not closed",
        std::string("add the missing '") + (brace ? "}" : "]") + "'" +
            (open.size() > 1 ? " (" + std::to_string(open.size()) + " blocks are open)" : ""));
    for (size_t k = open.size(); k-- > 0 && open.size() - k <= 3;) {
      sink_.AddRelated(span_of(open[k]),
                       "'" + BlockText(tokens, open[k]) + "' opened here is not closed");
    }
    return true;
  }

  // Two values in a row (`"/usr" "/lib"`): the list ended where the user
  // meant it to go on, so "expected allow, deny or }" would mislead.
  static bool MissingComma(WardParser* parser, antlr4::Token* token) {
    auto is_value = [](size_t type) {
      return type == WardParser::STRING || type == WardParser::WORD || type == WardParser::GROUPREF;
    };
    size_t index = token->getTokenIndex();
    if (index == 0 || index > (size_t{1} << 40) || !is_value(token->getType())) return false;
    antlr4::Token* previous = parser->getTokenStream()->get(index - 1);
    // Comments are on the hidden channel (for `ward fmt`): look past them.
    while (previous->getChannel() != antlr4::Token::DEFAULT_CHANNEL && --index > 0) {
      previous = parser->getTokenStream()->get(index - 1);
    }
    return is_value(previous->getType()) || previous->getType() == WardParser::RBRACKET;
  }

  const SourceManager& sources_;
  FileId file_;
  const OffsetMap& offsets_;
  DiagnosticSink& sink_;
  std::optional<Repair> repair_;
  size_t repaired_ = SIZE_MAX;
};

// The runtime's own UTF-8 decoding (std::wstring_convert) costs as much as a
// tenth of lexing; the text is known valid here, so it is decoded directly.
class Utf8InputStream : public antlr4::ANTLRInputStream {
 public:
  explicit Utf8InputStream(std::string_view text) {
    _data.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      char32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
      for (int k = 1; k < len; ++k) cp = (cp << 6) | (text[i + k] & 0x3F);
      _data.push_back(cp);
      i += len;
    }
  }
};

// Bracket and brace depth is bounded before parsing, so the recursive
// descent parser and the AST builder never run out of stack.
bool CheckNesting(antlr4::CommonTokenStream& tokens, FileId file, const OffsetMap& offsets,
                  DiagnosticSink& sink) {
  int depth = 0;
  for (antlr4::Token* t : tokens.getTokens()) {
    size_t type = t->getType();
    if (type == WardLexer::LBRACKET || type == WardLexer::LBRACE) {
      if (++depth > kMaxNesting) {
        uint32_t at = offsets.ByteOffset(t->getStartIndex());
        sink.Error(Code::kNestingTooDeep, {file, at, at + 1},
                   "nesting deeper than " + std::to_string(kMaxNesting) + " levels",
                   "flatten the lists");
        return false;
      }
    } else if (type == WardLexer::RBRACKET || type == WardLexer::RBRACE) {
      --depth;
    }
  }
  return true;
}

}  // namespace

std::optional<ast::File> ParseFile(const SourceManager& sources, FileId id, DiagnosticSink& sink) {
  const std::string& text = sources.file(id).text;
  if (text.size() > kMaxFileBytes) {
    sink.Error(Code::kFileTooLarge, {id, 0, 0},
               "file is " + std::to_string(text.size()) + " bytes; the limit is " +
                   std::to_string(kMaxFileBytes));
    return std::nullopt;
  }
  size_t bad = FindInvalidUtf8(text);
  if (bad != std::string::npos) {
    uint32_t at = static_cast<uint32_t>(bad);
    sink.Error(
        Code::kInvalidUtf8, {id, at, at + 1},
        "invalid UTF-8 byte '\\x" + Hex(static_cast<unsigned char>(text[bad])) + "' in source",
        "policies must be UTF-8 text");
    return std::nullopt;
  }
  size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    uint32_t at = static_cast<uint32_t>(nul);
    sink.Error(Code::kUnexpectedCharacter, {id, at, at + 1},
               "NUL byte in source: this looks like a binary file, not a policy",
               "policies are UTF-8 text without NUL bytes");
    return std::nullopt;
  }
  OffsetMap offsets(text);
  FirstErrorListener listener(sources, id, offsets, sink);
  try {
    Utf8InputStream input(text);
    WardLexer lexer(&input);
    lexer.removeErrorListeners();
    lexer.addErrorListener(&listener);
    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();
    if (!CheckNesting(tokens, id, offsets, sink)) return std::nullopt;

    // Two-stage parsing: fast SLL prediction first, full LL (with error
    // reporting) only when SLL fails.
    WardParser parser(&tokens);
    parser.removeErrorListeners();
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::SLL);
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    WardParser::File_Context* tree = nullptr;
    try {
      tree = parser.file_();
    } catch (const antlr4::ParseCancellationException&) {
      parser.addErrorListener(&listener);
      parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
          antlr4::atn::PredictionMode::LL);
      for (int repairs = 0;; ++repairs) {
        tokens.seek(0);
        parser.reset();
        try {
          tree = parser.file_();
          break;
        } catch (const StopParsing&) {
          std::optional<Repair> repair = listener.TakeRepair();
          if (!repair || repairs == kMaxRepairs) return std::nullopt;
          // Reported already; read on as if the keyword were spelt right.
          dynamic_cast<antlr4::WritableToken&>(*tokens.get(repair->index)).setType(repair->type);
          listener.SetRepaired(repair->index);
        }
      }
    }
    return BuildAst(tree, id, text, offsets, sink);
  } catch (const StopParsing&) {
    return std::nullopt;
  } catch (const std::exception& e) {
    sink.Error(Code::kSyntaxError, {id, 0, 0}, std::string("parser failure: ") + e.what());
    return std::nullopt;
  } catch (...) {
    sink.Error(Code::kSyntaxError, {id, 0, 0}, "parser failure");
    return std::nullopt;
  }
}

}  // namespace ward
