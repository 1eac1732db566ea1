#include "language/path_match.h"

namespace ward {
namespace {

// Does the pattern match a prefix of `path` (the path itself or an ancestor)?
bool MatchPrefix(const std::vector<std::string>& pat, size_t pi,
                 const std::vector<std::string>& path, size_t ni) {
  if (pi == pat.size()) return true;  // matched an ancestor (or the path)
  if (pat[pi] == "**") {
    for (size_t k = ni; k <= path.size(); ++k) {
      if (MatchPrefix(pat, pi + 1, path, k)) return true;
    }
    return false;
  }
  if (ni == path.size()) return false;
  return ComponentMatches(pat[pi], path[ni]) && MatchPrefix(pat, pi + 1, path, ni + 1);
}

}  // namespace

std::vector<std::string> PathComponents(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// `*` within one component: matches any non-empty run of characters but '/'.
bool ComponentMatches(const std::string& pattern, const std::string& name) {
  if (pattern.find('*') == std::string::npos) return pattern == name;
  // Classic glob with backtracking over '*' only; components hold no '/'.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  // "never empty": a component that is only `*` needs at least one character,
  // which the loop guarantees since every path component is non-empty.
  return p == pattern.size();
}

bool PatternMatchesPathOrAncestor(const std::string& pattern, const std::string& path) {
  return MatchPrefix(PathComponents(pattern), 0, PathComponents(path), 0);
}

}  // namespace ward
