#include "language/parser.h"

#include <memory>
#include <string>

#include "WardLexer.h"
#include "WardParser.h"
#include "antlr4-runtime.h"
#include "language/ast_builder.h"
#include "language/utf8.h"

namespace ward {
namespace {

using grammar::WardLexer;
using grammar::WardParser;

// Thrown by the listener after it recorded the first error, to stop ANTLR
// from recovering into a cascade. Never leaves this file.
struct StopParsing {};

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

std::string Quote(std::string s) {
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return "'" + s + "'";
}

class FirstErrorListener : public antlr4::BaseErrorListener {
 public:
  FirstErrorListener(const SourceManager& sources, FileId file, const OffsetMap& offsets,
                     DiagnosticSink& sink)
      : sources_(sources), file_(file), offsets_(offsets), sink_(sink) {}

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

  static std::string Hex(unsigned char c) {
    static const char* kDigits = "0123456789abcdef";
    return {kDigits[c >> 4], kDigits[c & 15]};
  }

  void ParserError(WardParser* parser, antlr4::Token* token) {
    Span span{file_, offsets_.ByteOffset(token->getStartIndex()), 0};
    std::string message;
    if (token->getType() == antlr4::Token::EOF) {
      span.end = span.begin;
      message = "unexpected end of file";
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
    sink_.Error(Code::kSyntaxError, span, message, hint);
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
    sink.Error(Code::kInvalidUtf8, {id, at, at + 1}, "invalid UTF-8 byte in source",
               "policies must be UTF-8 text");
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
      tokens.seek(0);
      parser.reset();
      parser.addErrorListener(&listener);
      parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
          antlr4::atn::PredictionMode::LL);
      tree = parser.file_();
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
