// The seatbelt backend's rename guard (backends/seatbelt/README.md,
// "Renames and links"): regression tests with their positive controls, and
// a property test that walks a file tree through renames, hard links and
// creations as the SBPL reader (sbpl_reader.h) decides them. WARD_SEED=N
// replays a run; the seed is printed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "compiler/fs_names.h"
#include "tests/backends/seatbelt/sbpl_reader.h"
#include "tests/backends/seatbelt/seatbelt_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

using sbpl::Profile;

// rename(2) as SBPL checks it (README.md, "Renames and links").
bool RenameAllowed(const Profile& p, const std::string& from, const std::string& to) {
  return OpAllowed(p, "file-write-unlink", from) && OpAllowed(p, "file-write-create", to);
}

TEST_CASE("seatbelt: what a deny protects, and the directories above it, keep their names") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/.git/hooks"
    deny read "/w/secret"
  } })");
  REQUIRE(c->result.ok);
  // Deleting /w/secret is a write the policy grants; SBPL cannot tell it
  // from a rename, so it goes, and is said. The hooks could not be deleted
  // anyway.
  CHECK(c->Diagnostics() ==
        "test.ward:4:5: warning[B3002]: SBPL checks a delete as it checks a rename: what these "
        "deny rules protect cannot be deleted, though the policy lets it be written: /w/secret\n"
        " 4 |     deny read \"/w/secret\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~~~~\n");
  Profile p(c->result.artifacts[0].bytes);
  // The protected paths and their ancestors cannot be renamed (or removed)...
  for (const char* path : {"/w/.git/hooks", "/w/.git/hooks/pre-commit", "/w/.git", "/w",
                           "/w/secret", "/w/secret/key"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
    CHECK_FALSE(RenameAllowed(p, path, "/w/elsewhere"));
  }
  // ...what they protect stays protected...
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/.git/hooks/pre-commit"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/w/secret"));
  // ...and the rest of the writable tree renames as before.
  for (const char* path : {"/w/src", "/w/src/main.c", "/w/.git/objects", "/w/.git/HEAD",
                           "/w/secretary", "/w/.github"}) {
    INFO(path);
    CHECK(RenameAllowed(p, path, "/w/elsewhere"));
  }
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/src/main.c"));
  CHECK(FileAllowed(p, ir::FsRight::kRead, "/w/.git/hooks/pre-commit"));
  CHECK(OpAllowed(p, "file-write-create", "/w/.git/new"));
}

TEST_CASE("seatbelt: hard links are never granted; new names are") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/.git/hooks"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  // link(2) is checked as file-link; whichever of its two paths macOS
  // checks, neither is granted.
  for (const char* path : {"/w/.git/hooks/pre-commit", "/w/a", "/w/src/new-name"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-link", path));
  }
  // The positive control: a new name in the writable tree (open O_CREAT,
  // mkdir, the target of a rename) is still allowed.
  CHECK(OpAllowed(p, "file-write-create", "/w/src/new-name"));
  CHECK(OpAllowed(p, "file-write-data", "/w/a"));
  // No filesystem section at all: still no link.
  auto empty = Seatbelt("policy p {}");
  REQUIRE(empty->result.ok);
  CHECK_FALSE(OpAllowed(Profile(empty->result.artifacts[0].bytes), "file-link", "/x"));
}

TEST_CASE("seatbelt: grants under a deny that allow what it denies rename freely") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    deny write "/w/ro"
    allow write "/w/ro/out"
    deny read write "/w/ro/out/keep"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  CHECK(RenameAllowed(p, "/w/ro/out/a.o", "/w/ro/out/b.o"));
  CHECK(RenameAllowed(p, "/w/ro/out/dir", "/w/x"));
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/ro/out/a.o"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro/x", "/w/x"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/ro/x"));
  // A deny under the grant, and the grant as its ancestor, keep their names.
  CHECK_FALSE(RenameAllowed(p, "/w/ro/out/keep", "/w/x"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro/out", "/w/x"));
  CHECK_FALSE(RenameAllowed(p, "/w/ro", "/w/x"));
}

TEST_CASE("seatbelt: what may be written but not read stays where reading is not granted") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow write "/out"
    allow read "/out/pub"
  } })");
  REQUIRE(c->result.ok);
  CHECK(c->Diagnostics() ==
        "test.ward:3:5: warning[B3002]: seatbelt keeps what these grants let be written but not "
        "read from being renamed (or deleted), or a rename could carry it to where reading is "
        "granted: /out\n"
        " 3 |     allow write \"/out\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~\n");
  Profile p(c->result.artifacts[0].bytes);
  CHECK_FALSE(RenameAllowed(p, "/out/log", "/w/log"));
  CHECK_FALSE(OpAllowed(p, "file-write-unlink", "/out"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kRead, "/out/log"));
  // Positive controls: written as before; what may be read renames.
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/out/log"));
  CHECK(OpAllowed(p, "file-write-create", "/out/new"));
  CHECK(RenameAllowed(p, "/out/pub/a", "/w/a"));
  CHECK(RenameAllowed(p, "/w/a", "/out/a"));
  // A place readable by one rule and writable by another is a destination
  // too (found by the property test: the IR keeps no `allow read "/w/a"`
  // under `allow read "/w"`).
  auto two_rules = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow write "/t"
    deny write "/w/**"
    allow read write "/w/a"
  } })");
  REQUIRE(two_rules->result.ok);
  Profile q(two_rules->result.artifacts[0].bytes);
  CHECK(FileAllowed(q, ir::FsRight::kRead, "/w/a/x"));
  CHECK(FileAllowed(q, ir::FsRight::kWrite, "/w/a/x"));
  CHECK_FALSE(RenameAllowed(q, "/t/x", "/w/a/x"));
  CHECK(FileAllowed(q, ir::FsRight::kWrite, "/t/x"));
  CHECK(OpAllowed(q, "file-write-create", "/t/new"));
  // No readable writable place: nothing to carry it to, nothing guarded.
  auto alone = Seatbelt(R"(policy p { filesystem {
    allow read "/usr"
    allow write "/out"
  } })");
  REQUIRE(alone->result.ok);
  CHECK(alone->Diagnostics().empty());
  CHECK(OpAllowed(Profile(alone->result.artifacts[0].bytes), "file-write-unlink", "/out/log"));
}

TEST_CASE("seatbelt: renames of globbed, `~` and /private paths") {
  auto c = Seatbelt(R"(policy p { filesystem {
    allow read write "/w", "~", "/tmp"
    deny read "/w/*/secret", "~/.ssh"
    deny write "/w/.git/hooks", "/tmp/keep"
    deny write "/w/*/.git/hooks"
  } })");
  REQUIRE(c->result.ok);
  Profile p(c->result.artifacts[0].bytes);
  // The matches, the literal directories above them, the directories a `*`
  // or a literal after a glob matches.
  for (const char* path : {"/w/a/secret", "/w/a", "/w", "/w/x/.git/hooks/h", "/w/x/.git", "/w/.git",
                           "/Users/agent/.ssh/id_ed25519", "/Users/agent", "/tmp/keep",
                           "/private/tmp/keep", "/tmp", "/private/tmp"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
  }
  // A `*` match moved deeper would leave `/w/*/secret`.
  CHECK_FALSE(RenameAllowed(p, "/w/a", "/w/b/a"));
  for (const char* path : {"/w/a/b", "/w/x/y", "/w/a/secretary", "/w/a/.gitx", "/Users/agent/src",
                           "/Users/agent/.sshx", "/tmp/other", "/private/tmp/other"}) {
    INFO(path);
    CHECK(OpAllowed(p, "file-write-unlink", path));
  }
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/a/b"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/x/.git/hooks/h"));
}

TEST_CASE("seatbelt: a `**` whose directories could be renamed out of it") {
  // /w/x/y/.git/hooks renamed to /tmp/y/.git/hooks would be writable: the
  // directories `**` matches cannot all be guarded, so this is an error...
  const char* source = R"(policy p { filesystem {
    allow read write "/w", "/tmp"
    deny write "/w/**/.git/hooks"
  } })";
  auto c = Seatbelt(source);
  CHECK_FALSE(c->result.ok);
  CHECK(c->result.artifacts.empty());
  CHECK(c->Diagnostics() ==
        "test.ward:3:5: error[B3002]: seatbelt cannot keep the directories that `**` matches in "
        "`/w/**/.git/hooks` from being renamed: one renamed where another grant decides would "
        "lose the deny for what it holds\n"
        " 3 |     deny write \"/w/**/.git/hooks\"\n"
        "   |     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "  = hint: pass --partial to deny renaming and deleting anything under /w instead, or "
        "name the directories without `**`\n");
  // ...and with --partial, towards deny: nothing under /w renames.
  auto partial = Seatbelt(source, kHome, {}, true);
  REQUIRE(partial->result.ok);
  CHECK(partial->Diagnostics().find(
            "warning[B3002]: seatbelt cannot keep the directories that `**` matches in "
            "`/w/**/.git/hooks` from being renamed; towards deny, nothing under /w can be renamed "
            "or deleted") != std::string::npos);
  Profile p(partial->result.artifacts[0].bytes);
  for (const char* path : {"/w/x/y", "/w/x/y/.git", "/w/x/y/.git/hooks/h", "/w/src/main.c"}) {
    INFO(path);
    CHECK_FALSE(OpAllowed(p, "file-write-unlink", path));
  }
  CHECK(OpAllowed(p, "file-write-unlink", "/tmp/x"));
  CHECK(FileAllowed(p, ir::FsRight::kWrite, "/w/src/main.c"));
  CHECK_FALSE(FileAllowed(p, ir::FsRight::kWrite, "/w/x/y/.git/hooks/h"));

  // Every grant of the denied right inside /w and less specific: a renamed
  // directory stays matched and denied, no error (a grant of another right
  // elsewhere does not matter), and those directories rename freely. A
  // leading `**` has the whole tree as its root.
  auto inside = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow read "/srv"
    deny write "/w/**/.git/hooks", "/**/.git/config"
  } })");
  REQUIRE(inside->result.ok);
  CHECK(inside->Diagnostics().empty());
  Profile q(inside->result.artifacts[0].bytes);
  CHECK(RenameAllowed(q, "/w/x/y", "/w/z"));
  CHECK_FALSE(OpAllowed(q, "file-write-unlink", "/w/x/y/.git"));
  CHECK_FALSE(OpAllowed(q, "file-write-unlink", "/w/x/y/.git/config"));
  // A grant of the denied right where nothing can be written is no place
  // to land: no error.
  auto read_only = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow read "/usr"
    deny read "/w/**/.env"
  } })");
  REQUIRE(read_only->result.ok);
  CHECK(read_only->Diagnostics().find("cannot keep") == std::string::npos);
  // Out of the root to a writable place that grants nothing the deny takes,
  // and back under another name (found by the property test: /tmp/c
  // renamed to /w/b/x, then /w/b/x/a/a to /tmp/b/c/x/x/b, executable).
  auto two_hops = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow read write exec "/tmp"
    deny exec "/tmp/**/a"
  } })");
  CHECK_FALSE(two_hops->result.ok);
  CHECK(two_hops->Diagnostics().find("error[B3002]: seatbelt cannot keep the directories that "
                                     "`**` matches in `/tmp/**/a`") != std::string::npos);
  // A more specific grant inside /w can decide a renamed directory.
  auto specific = Seatbelt(R"(policy p { filesystem {
    allow read write "/w"
    allow write "/w/a/b/c/d"
    deny write "/w/**/.git/hooks"
  } })");
  CHECK_FALSE(specific->result.ok);
  CHECK(specific->Diagnostics().find("error[B3002]: seatbelt cannot keep the directories") !=
        std::string::npos);
}

// ---- property: renames and links -------------------------------------------

// A file tree changed the way macOS would change it under a profile, each
// step decided by the profile as the SBPL reader reads it. macOS has no
// rename operation in SBPL: rename(2) is checked as file-write-unlink of the
// old name and file-write-create of the new one; link(2) as file-link (of
// the existing file or of the new name: this model lets a link through when
// either is granted) and file-write-create of the new name. The claim: an
// object at a path where a deny rule of the IR takes a right away, or where
// no rule grants reading, never stands at a name where the profile grants
// that right. (Renaming onto an existing name is not modelled: it needs
// the new name's unlink as well, so it is never easier.)
struct TreeModel {
  struct Object {
    bool dir = false;
    std::vector<ir::FsRight> forbidden;
  };
  std::vector<Object> objects;
  std::map<std::string, size_t> names;  // path -> object

  bool Exists(const std::string& path) const { return names.count(path) != 0; }
  bool IsDir(const std::string& path) const {
    auto it = names.find(path);
    return it != names.end() && objects[it->second].dir;
  }
  static std::string Parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  // Renames `from` and everything under it to `to`.
  void Rename(const std::string& from, const std::string& to) {
    std::vector<std::pair<std::string, size_t>> moved;
    for (auto it = names.lower_bound(from); it != names.end();) {
      if (it->first != from && it->first.rfind(from + "/", 0) != 0) break;
      moved.push_back({to + it->first.substr(from.size()), it->second});
      it = names.erase(it);
    }
    for (auto& [path, id] : moved) names[path] = id;
  }
};

TEST_CASE("seatbelt property: no rename or link carries a denied object to a granted name") {
  const uint32_t seed = Seed();
  std::mt19937 rng(seed);
  std::cout << "seatbelt rename property: seed " << seed << "\n";
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const char* kComponents[] = {"a", "b", "c", "a", "b", "*", "**"};
  static const char* kNames[] = {"a", "b", "c", "d", "x"};
  static const char* kRights[] = {"read", "write", "exec", "read write", "read exec"};
  static const char* kSecondRoots[] = {"/t", "/tmp", "~"};
  const std::optional<std::string> home = kHome;
  const int policies = std::getenv("WARD_PROPERTY_POLICIES")
                           ? std::atoi(std::getenv("WARD_PROPERTY_POLICIES"))
                           : Rounds(200);
  size_t steps = 0, allowed_steps = 0, protected_objects = 0, partial_policies = 0,
         mutant_bypasses = 0;
  for (int round = 0; round < policies; ++round) {
    // Roots as the policy spells them and as paths: /w, and now and then a
    // second writable tree, plain, under /private, or the home.
    std::vector<std::pair<std::string, std::string>> roots = {{"/w", "/w"}};
    std::string rules =
        std::string("    allow read write") + (pick(3) == 0 ? " exec" : "") + " \"/w\"\n";
    if (pick(2) == 0) {
      const std::string second = kSecondRoots[pick(3)];
      roots.push_back({second, second == "~" ? kHome : second});
      static const char* kSecondRights[] = {"read write", "read write exec", "write"};
      rules += std::string("    allow ") + kSecondRights[pick(3)] + " \"" + second + "\"\n";
    }
    auto pattern = [&]() {
      std::string text = roots[pick(static_cast<int>(roots.size()))].first;
      std::string prev;
      for (int k = 1 + pick(3); k > 0; --k) {
        std::string comp = kComponents[pick(7)];
        if (comp == "**" && prev == "**") comp = "a";
        text += "/" + comp;
        prev = comp;
      }
      return text;
    };
    for (int i = 1 + pick(3); i > 0; --i) {
      rules += std::string("    deny ") + kRights[pick(5)] + " \"" + pattern() + "\"\n";
    }
    for (int i = pick(3); i > 0; --i) {
      rules += std::string("    allow ") + kRights[pick(5)] + " \"" + pattern() + "\"\n";
    }
    const std::string source = "policy p {\n  filesystem {\n" + rules + "  }\n}\n";
    INFO(source);
    auto c = Seatbelt(source);
    if (!c->result.ok) {
      // The one refusal: a `**` whose directories could leave it. Then
      // towards deny, which must hold everywhere.
      INFO(c->Diagnostics());
      REQUIRE(c->Diagnostics().find("error[B3002]: seatbelt cannot keep the directories that "
                                    "`**` matches") != std::string::npos);
      c = Seatbelt(source, kHome, {}, true);
      REQUIRE(c->result.ok);
      ++partial_policies;
    }
    const std::string& text = c->result.artifacts[0].bytes;
    INFO(text);
    // The profile without its rename guard: the same walk must find a way
    // through it now and then, or the walk proves nothing.
    std::string unguarded = text;
    const size_t from = unguarded.find("(deny file-write-unlink");
    if (from != std::string::npos) unguarded.erase(from, unguarded.find("(deny file-link)") - from);
    const Profile guarded_profile(text), unguarded_profile(unguarded);

    for (const Profile* profile : {&guarded_profile, &unguarded_profile}) {
      const bool guarded = profile == &guarded_profile;
      std::map<std::pair<std::string, std::string>, bool> memo;
      auto allows = [&](const std::string& op, const std::string& path) {
        auto key = std::make_pair(op, path);
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        const bool allowed = OpAllowed(*profile, op, path);
        // The sandbox sees /tmp as /private/tmp: both spellings agree.
        if (guarded && (path == "/tmp" || path.rfind("/tmp/", 0) == 0)) {
          INFO(op << " " << path << " and its /private spelling");
          REQUIRE(OpAllowed(*profile, op, "/private" + path) == allowed);
        }
        return memo[key] = allowed;
      };
      auto right_op = [](ir::FsRight r) { return std::string(Operation(r)); };
      // Every path of depth 0 to 3 under the roots, of the names a, b, c;
      // the deepest are files.
      TreeModel tree;
      auto add = [&](const std::string& path, bool dir, bool original) {
        TreeModel::Object o;
        o.dir = dir;
        if (original) {
          for (ir::FsRight right : ir::kFsRights) {
            const ir::FsDecision d = c->ir.filesystem.Decide(path, right, home);
            // A right a deny rule takes; or reading, which no rule grants
            // (other rights, a copy would give as well as a rename).
            if (!d.allow && (!d.pattern.empty() || right == ir::FsRight::kRead)) {
              o.forbidden.push_back(right);
            }
          }
        }
        tree.objects.push_back(o);
        tree.names[path] = tree.objects.size() - 1;
      };
      std::vector<std::string> level;
      for (const auto& root : roots) level.push_back(root.second);
      for (int depth = 0; depth <= 3; ++depth) {
        std::vector<std::string> next;
        for (const std::string& path : level) {
          add(path, depth < 3, true);
          for (const char* n : {"a", "b", "c"}) next.push_back(path + "/" + n);
        }
        level = depth < 3 ? next : std::vector<std::string>{};
      }
      if (guarded) {
        for (const auto& o : tree.objects) protected_objects += !o.forbidden.empty();
      }
      auto random_name = [&](bool dirs_only) {
        std::vector<const std::string*> all;
        for (const auto& [path, id] : tree.names) {
          if (!dirs_only || tree.objects[id].dir) all.push_back(&path);
        }
        return *all[pick(static_cast<int>(all.size()))];
      };
      bool bypass = false;
      for (int step = 0; step < 40 && !bypass; ++step) {
        const int kind = pick(10);
        const std::string to = random_name(true) + "/" + kNames[pick(5)];
        if (tree.Exists(to)) continue;
        bool ok = false;
        if (kind < 5) {  // rename(from, to)
          const std::string from = random_name(false);
          if (from == to || to.rfind(from + "/", 0) == 0) continue;
          ok = allows("file-write-unlink", from) && allows("file-write-create", to);
          if (ok) tree.Rename(from, to);
        } else if (kind < 7) {  // link(from, to)
          std::string from = random_name(false);
          if (tree.IsDir(from)) continue;
          ok = (allows("file-link", from) || allows("file-link", to)) &&
               allows("file-write-create", to);
          if (ok) tree.names[to] = tree.names[from];
        } else {  // mkdir(to) or open(to, O_CREAT): a new object of the workload's
          ok = allows("file-write-create", to);
          if (ok) add(to, kind < 9, false);
        }
        if (guarded) {
          ++steps;
          allowed_steps += ok;
        }
        if (!ok) continue;
        for (const auto& [path, id] : tree.names) {
          for (ir::FsRight right : tree.objects[id].forbidden) {
            if (!allows(right_op(right), path)) continue;
            bypass = true;
            if (guarded) {
              FAIL_CHECK("step " << step << ": an object whose first name the IR denies "
                                 << ir::FsRightName(right) << " now stands at " << path
                                 << ", where the profile grants it");
            }
          }
        }
      }
      if (!guarded) mutant_bypasses += bypass;
    }
  }
  std::cout << "  " << policies << " policies, " << steps << " steps (" << allowed_steps
            << " allowed), " << protected_objects << " protected objects, " << partial_policies
            << " policies refused for `**` and walked with --partial, " << mutant_bypasses
            << " policies whose profile without the rename guard lets a denied object through\n";
  CHECK(allowed_steps > steps / 10);  // the walk moves
  CHECK(mutant_bypasses > 0);         // and finds what the guard stops
}

}  // namespace
}  // namespace ward::test
