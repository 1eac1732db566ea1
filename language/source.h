// Source files and spans. Every AST node and diagnostic points into a file
// held here by byte offsets; line and column are computed only when rendered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ward {

using FileId = uint32_t;
inline constexpr FileId kNoFile = UINT32_MAX;

// A half-open byte range [begin, end) in one source file.
struct Span {
  FileId file = kNoFile;
  uint32_t begin = 0;
  uint32_t end = 0;
  bool valid() const { return file != kNoFile; }
};

// A 1-based line and column; the column counts UTF-8 characters.
struct Location {
  uint32_t line = 0;
  uint32_t column = 0;
};

struct SourceFile {
  std::string display_path;  // as given by the user or the import
  std::string real_path;     // canonical, for de-duplicating imports
  // How the IR names the file (its provenance, hashed as ir_sha256): relative
  // to the folder of the first file named on the command line, `std/...` for
  // the standard library, so the hash does not depend on how the user named
  // the file (`p.ward`, `./p.ward`, `/abs/p.ward`). Empty: display_path.
  std::string ir_path;
  std::string text;
  std::vector<uint32_t> line_starts;  // byte offset of every line
  // The column at byte offset k * kColumnStride, for every k: LocationOf
  // then scans at most kColumnStride bytes, however long the line (JSON
  // lists every diagnostic, and thousands may sit on one line).
  std::vector<uint32_t> column_marks;
};

inline constexpr uint32_t kColumnStride = 4096;

class SourceManager {
 public:
  // Adds a file whose text is already in memory; returns its id.
  FileId Add(std::string display_path, std::string real_path, std::string text);
  const SourceFile& file(FileId id) const { return files_[id]; }
  void SetIrPath(FileId id, std::string path) { files_[id].ir_path = std::move(path); }
  // ir_path, or display_path when the file has none.
  const std::string& IrPath(FileId id) const {
    return files_[id].ir_path.empty() ? files_[id].display_path : files_[id].ir_path;
  }
  size_t size() const { return files_.size(); }
  // The file with this real path, or kNoFile.
  FileId Find(std::string_view real_path) const;

  Location LocationOf(FileId id, uint32_t offset) const;
  // The text of the given 1-based line, without its line break.
  std::string_view LineText(FileId id, uint32_t line) const;
  std::string_view Text(Span span) const;

 private:
  std::vector<SourceFile> files_;
};

}  // namespace ward
