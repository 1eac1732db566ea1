// The filesystem IR decides every (path, right) as language.md says: most
// specific pattern wins, deny on ties. The reference evaluator here shares
// nothing with compiler/ but the AST: it matches with std::regex and ranks
// specificity from the written rules.
#include <catch2/catch.hpp>
#include <random>
#include <regex>

#include "compiler/extends.h"
#include "compiler/filesystem.h"
#include "tests/language/frontend_fixture.h"

namespace ward::test {
namespace {

std::regex PatternRegex(const std::string& pattern) {
  std::string re = "^";
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = pattern.find('/', i + 1);
    if (j == std::string::npos) j = pattern.size();
    std::string comp = pattern.substr(i + 1, j - i - 1);  // without the '/'
    if (comp == "**") {
      re += "(/[^/]+)*";
    } else if (comp == "*") {
      re += "/[^/]+";
    } else {
      re += "/";
      for (char c : comp) {
        if (c == '*') {
          re += "[^/]*";
        } else if (std::isalnum(static_cast<unsigned char>(c))) {
          re += c;
        } else {
          re += std::string("\\") + c;
        }
      }
    }
    i = j;
  }
  return std::regex(re + "(/.*)?$");
}

// (literal components, then the ranks from the root) -- larger is more specific.
std::pair<int, std::vector<int>> Specificity(const std::string& pattern) {
  std::pair<int, std::vector<int>> s{0, {}};
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = pattern.find('/', i + 1);
    if (j == std::string::npos) j = pattern.size();
    std::string comp = pattern.substr(i + 1, j - i - 1);
    if (comp != "**") ++s.first;
    s.second.push_back(comp == "**" ? 0 : comp.find('*') != std::string::npos ? 1 : 2);
    i = j;
  }
  return s;
}

bool MoreSpecific(const std::string& a, const std::string& b, int* cmp) {
  auto sa = Specificity(a), sb = Specificity(b);
  if (sa.first != sb.first) {
    *cmp = sa.first < sb.first ? -1 : 1;
    return *cmp > 0;
  }
  for (size_t i = 0; i < std::min(sa.second.size(), sb.second.size()); ++i) {
    if (sa.second[i] != sb.second[i]) {
      *cmp = sa.second[i] < sb.second[i] ? -1 : 1;
      return *cmp > 0;
    }
  }
  *cmp = 0;
  return false;
}

bool Reference(const std::vector<const ast::Policy*>& sources, const std::string& path,
               uint8_t right) {
  bool found = false, allow = false;
  std::string best;
  for (const ast::Policy* p : sources) {
    if (!p->filesystem) continue;
    for (const ast::FsRule& r : p->filesystem->rules) {
      if (!(r.rights & right)) continue;
      for (const ast::Atom& a : r.paths) {
        if (!std::regex_match(path, PatternRegex(a.text))) continue;
        int cmp = 1;
        if (found) MoreSpecific(a.text, best, &cmp);
        if (cmp > 0) {
          found = true;
          best = a.text;
          allow = r.allow;
        } else if (cmp == 0 && !r.allow) {
          allow = false;  // a full tie: deny wins
        }
      }
    }
  }
  return found && allow;
}

struct Lowered {
  std::unique_ptr<FrontendResult> r;
  std::vector<const ast::Policy*> sources;
  ir::FileRules ir;
};

Lowered Lower(const std::string& text, const std::string& name) {
  Lowered l;
  l.r = CheckSource(text);
  INFO(l.r->text);
  REQUIRE_FALSE(l.r->sink.has_errors());
  for (const ast::Policy& p : l.r->program.file(l.r->program.roots.at(0))->policies) {
    if (p.name.text == name) l.sources = ir::ExtendsOrder(l.r->program, p);
  }
  REQUIRE_FALSE(l.sources.empty());
  std::vector<const ast::FilesystemSection*> sections;
  for (const ast::Policy* p : l.sources) {
    if (p->filesystem) sections.push_back(&*p->filesystem);
  }
  l.ir = ir::LowerFilesystem(sections);
  return l;
}

bool Allows(const Lowered& l, const std::string& path, ir::FsRight right) {
  return l.ir.Decide(path, right, std::string("/home/alice")).allow;
}

}  // namespace

TEST_CASE("most specific wins: a glob deny beats a shorter allow") {
  auto l = Lower(R"(policy p { filesystem {
    allow read "/home/alice"
    deny read "/home/*/.ssh"
    allow read write "/srv/notes"
  } })",
                 "p");
  CHECK_FALSE(Allows(l, "/home/alice/.ssh/id", ir::FsRight::kRead));
  CHECK(Allows(l, "/home/alice/src/x.c", ir::FsRight::kRead));
  CHECK(Allows(l, "/srv/notes", ir::FsRight::kWrite));
  CHECK(Allows(l, "/srv/notes/a/b", ir::FsRight::kWrite));
  CHECK_FALSE(Allows(l, "/srv/notesX", ir::FsRight::kWrite));  // a component, not a prefix
  CHECK_FALSE(Allows(l, "/srv", ir::FsRight::kRead));
  CHECK_FALSE(Allows(l, "/home/alice/x", ir::FsRight::kExec));
  ir::FsDecision d =
      l.ir.Decide("/home/alice/.ssh/id", ir::FsRight::kRead, std::string("/home/alice"));
  CHECK(d.pattern == "/home/*/.ssh");
}

TEST_CASE("a child's deeper allow carves into a base's deny; ties deny") {
  auto l = Lower(R"(
abstract policy base { filesystem { deny read write "~" } }
policy child extends base { filesystem {
  allow read "~/project"
  allow write "/data"
  deny write "/data"
} })",
                 "child");
  CHECK(Allows(l, "/home/alice/project/a", ir::FsRight::kRead));
  CHECK_FALSE(Allows(l, "/home/alice/other", ir::FsRight::kRead));
  CHECK_FALSE(Allows(l, "/data/x", ir::FsRight::kWrite));
  CHECK(l.ir.NeedsHome());
  CHECK_FALSE(l.ir.Decide("/home/alice/project", ir::FsRight::kRead, std::nullopt).allow);
}

TEST_CASE("order and list splitting do not change the IR") {
  auto a = Lower(R"(policy p { filesystem {
    allow read "/usr", "/lib"
    deny read "/usr/secret"
  } })",
                 "p");
  auto b = Lower(R"(policy p { filesystem {
    deny read "/usr/secret/"
    allow read "/lib"
    allow read "//usr"
  } })",
                 "p");
  CHECK(a.ir == b.ir);
}

TEST_CASE("redundant rules do not change the IR") {
  auto a = Lower(R"(policy p { filesystem {
    allow read "/usr"
    deny read "/usr/secret"
  } })",
                 "p");
  // A deeper allow under an allow, a deny under a deny, a deny of nothing.
  auto b = Lower(R"(policy p { filesystem {
    allow read "/usr", "/usr/lib", "/usr/lib/x"
    deny read "/usr/secret", "/usr/secret/key"
    deny read "/opt", "/"
  } })",
                 "p");
  CHECK(a.ir == b.ir);
  CHECK(b.ir.rules[0].size() == 2);
  // Kept where it decides: a glob could match under it, or `~` is in play.
  auto g = Lower(R"(policy p { filesystem {
    allow read "/srv", "/srv/app"
    deny read "/srv/*/secret"
  } })",
                 "p");
  CHECK(g.ir.rules[0].count("/srv/app") == 1);
  auto h = Lower(R"(policy p { filesystem {
    allow read "/home", "/home/alice"
    deny read "~/.ssh"
  } })",
                 "p");
  CHECK(h.ir.rules[0].count("/home/alice") == 1);
  // A literal sibling named like a prefix is not an ancestor.
  auto s = Lower(R"(policy p { filesystem {
    allow read "/srv/notes"
    allow read "/srv/notesX/a"
  } })",
                 "p");
  CHECK(s.ir.rules[0].size() == 2);
}

TEST_CASE("property: Decide agrees with the reference evaluator") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::mt19937 rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  static const char* kPatterns[] = {"/a",   "/a/b",  "/a/*",  "/a/**/c", "/a/b/c",
                                    "/*/b", "/**/c", "/a/b*", "/a/*/c",  "/b",
                                    "/**",  "/a/bc", "/*",    "/a/**",   "/a/*b/c"};
  static const char* kPaths[] = {"/a",       "/a/b", "/a/b/c",  "/a/bc",  "/a/x/c", "/b/b",
                                 "/a/b/c/d", "/c",   "/a/xb/c", "/x/y/c", "/a/b/x", "/b"};
  static const char* kRights[] = {"read", "write", "exec", "read write", "read exec"};
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int round = 0; round < 300; ++round) {
    std::string base, child;
    for (int i = pick(3); i > 0; --i) {
      base += std::string("    ") + (pick(3) ? "allow " : "deny ") + kRights[pick(5)] + " \"" +
              kPatterns[pick(15)] + "\"\n";
    }
    for (int i = 1 + pick(6); i > 0; --i) {
      child += std::string("    ") + (pick(3) ? "allow " : "deny ") + kRights[pick(5)] + " \"" +
               kPatterns[pick(15)] + "\"\n";
    }
    std::string text = "abstract policy b {\n  filesystem {\n" + base + "  }\n}\n" +
                       "policy c extends b {\n  filesystem {\n" + child + "  }\n}\n";
    INFO(text);
    auto l = Lower(text, "c");
    for (const char* path : kPaths) {
      for (auto [right, bit] : {std::pair{ir::FsRight::kRead, ast::kRead},
                                {ir::FsRight::kWrite, ast::kWrite},
                                {ir::FsRight::kExec, ast::kExec}}) {
        INFO("path " << path << " right " << static_cast<int>(bit));
        REQUIRE(l.ir.Decide(path, right, std::nullopt).allow == Reference(l.sources, path, bit));
      }
    }
  }
}

}  // namespace ward::test
