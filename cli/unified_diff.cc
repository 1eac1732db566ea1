#include "cli/unified_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ward::cli {
namespace {

// Lines with their terminator, so that a last line without `\n` differs
// from the same line with one (as in diff).
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

struct Edit {
  char mark;  // ' ' kept, '-' removed, '+' added
  size_t a;   // line index in the old text (the next one for '+')
  size_t b;   // line index in the new text (the next one for '-')
};

std::vector<Edit> EditScript(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<Edit> script;
  for (size_t i = 0; i < prefix; ++i) script.push_back({' ', i, i});
  const size_t n = a.size() - suffix - prefix, m = b.size() - suffix - prefix;
  size_t i = 0, j = 0;
  if (n * m <= kMaxDiffCells) {
    std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
    for (size_t x = n; x-- > 0;) {
      for (size_t y = m; y-- > 0;) {
        lcs[x][y] = a[prefix + x] == b[prefix + y] ? lcs[x + 1][y + 1] + 1
                                                   : std::max(lcs[x + 1][y], lcs[x][y + 1]);
      }
    }
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        script.push_back({' ', prefix + i++, prefix + j++});
      } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        script.push_back({'-', prefix + i++, prefix + j});
      } else {
        script.push_back({'+', prefix + i, prefix + j++});
      }
    }
  } else {
    for (; i < n; ++i) script.push_back({'-', prefix + i, prefix});
    for (; j < m; ++j) script.push_back({'+', prefix + n, prefix + j});
  }
  for (size_t k = 0; k < suffix; ++k) {
    script.push_back({' ', a.size() - suffix + k, b.size() - suffix + k});
  }
  return script;
}

std::string Range(size_t start, size_t count) {
  // GNU diff: an empty range names the line before it.
  if (count == 0) return std::to_string(start) + ",0";
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

void AppendLine(char mark, const std::string& line, std::string* out) {
  *out += mark;
  *out += line;
  if (line.empty() || line.back() != '\n') *out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string UnifiedDiff(const std::string& old_name, const std::string& new_name,
                        const std::string& before, const std::string& after, size_t context) {
  if (before == after) return {};
  const std::vector<std::string> a = Lines(before), b = Lines(after);
  const std::vector<Edit> script = EditScript(a, b);
  std::string out = "--- " + old_name + "\n+++ " + new_name + "\n";
  size_t k = 0;
  while (k < script.size()) {
    while (k < script.size() && script[k].mark == ' ') ++k;
    if (k == script.size()) break;
    // A hunk: from `context` kept lines before its first change to
    // `context` after its last, taking in changes closer than 2 × context.
    size_t begin = k >= context ? k - context : 0;
    size_t end = k;
    for (;;) {
      while (end < script.size() && script[end].mark != ' ') ++end;
      size_t kept = end;
      while (kept < script.size() && script[kept].mark == ' ') ++kept;
      if (kept == script.size() || kept - end > 2 * context) {
        end = std::min(script.size(), end + context);
        break;
      }
      end = kept;
    }
    size_t a_count = 0, b_count = 0;
    for (size_t e = begin; e < end; ++e) {
      a_count += script[e].mark != '+';
      b_count += script[e].mark != '-';
    }
    out +=
        "@@ -" + Range(script[begin].a, a_count) + " +" + Range(script[begin].b, b_count) + " @@\n";
    for (size_t e = begin; e < end; ++e) {
      const Edit& edit = script[e];
      AppendLine(edit.mark, edit.mark == '+' ? b[edit.b] : a[edit.a], &out);
    }
    k = end;
  }
  return out;
}

}  // namespace ward::cli
