#include "language/source.h"

#include <algorithm>

namespace ward {

FileId SourceManager::Add(std::string display_path, std::string real_path, std::string text) {
  SourceFile f;
  f.display_path = std::move(display_path);
  f.real_path = std::move(real_path);
  f.text = std::move(text);
  f.line_starts.push_back(0);
  uint32_t column = 1;
  for (uint32_t i = 0; i < f.text.size(); ++i) {
    if (i % kColumnStride == 0) f.column_marks.push_back(column);
    if (f.text[i] == '\n') {
      f.line_starts.push_back(i + 1);
      column = 1;
    } else if ((static_cast<unsigned char>(f.text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  if (f.text.size() % kColumnStride == 0) f.column_marks.push_back(column);  // for the end
  files_.push_back(std::move(f));
  return static_cast<FileId>(files_.size() - 1);
}

FileId SourceManager::Find(std::string_view real_path) const {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (!files_[i].real_path.empty() && files_[i].real_path == real_path) {
      return static_cast<FileId>(i);
    }
  }
  return kNoFile;
}

Location SourceManager::LocationOf(FileId id, uint32_t offset) const {
  const SourceFile& f = files_[id];
  offset = std::min<uint32_t>(offset, f.text.size());
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - f.line_starts.begin());
  uint32_t column = 1;
  uint32_t from = f.line_starts[line - 1];
  if (offset - from >= kColumnStride) {
    from = offset / kColumnStride * kColumnStride;  // within the line
    column = f.column_marks[from / kColumnStride];
  }
  for (uint32_t i = from; i < offset; ++i) {
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    if ((static_cast<unsigned char>(f.text[i]) & 0xC0) != 0x80) ++column;
  }
  return {line, column};
}

std::string_view SourceManager::LineText(FileId id, uint32_t line) const {
  const SourceFile& f = files_[id];
  if (line == 0 || line > f.line_starts.size()) return {};
  uint32_t begin = f.line_starts[line - 1];
  uint32_t end = line < f.line_starts.size() ? f.line_starts[line] : f.text.size();
  std::string_view text(f.text.data() + begin, end - begin);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::string_view SourceManager::Text(Span span) const {
  if (!span.valid()) return {};
  const std::string& t = files_[span.file].text;
  uint32_t b = std::min<uint32_t>(span.begin, t.size());
  uint32_t e = std::min<uint32_t>(std::max(span.end, b), t.size());
  return std::string_view(t).substr(b, e - b);
}

}  // namespace ward
