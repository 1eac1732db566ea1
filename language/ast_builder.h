// Internal to the parser: turns an ANTLR parse tree into the AST.
#pragma once

#include <cstdint>
#include <vector>

#include "WardParser.h"
#include "language/ast.h"
#include "language/diagnostics.h"

namespace ward {

// Maps ANTLR's code-point indices to byte offsets in the source text.
class OffsetMap {
 public:
  explicit OffsetMap(std::string_view text);
  uint32_t ByteOffset(size_t code_point_index) const;

 private:
  bool ascii_ = true;
  std::vector<uint32_t> offsets_;
  uint32_t size_ = 0;
};

// Reports string-escape errors into `sink`; the tree is known to be valid.
// `text` is the file's UTF-8 source, which the tree's tokens index.
ast::File BuildAst(grammar::WardParser::File_Context* tree, FileId file, std::string_view text,
                   const OffsetMap& offsets, DiagnosticSink& sink);

}  // namespace ward
