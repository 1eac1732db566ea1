// UTF-8 validation, done before the ANTLR runtime sees the text (its
// decoder throws on invalid input).
#pragma once

#include <cstddef>
#include <string_view>

namespace ward {

// The byte offset of the first invalid UTF-8 sequence (overlong forms,
// surrogates and code points past U+10FFFF count as invalid), or npos.
size_t FindInvalidUtf8(std::string_view text);

}  // namespace ward
