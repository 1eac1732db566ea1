// `ward fmt` (language/format.h): goldens, idempotence, comments, refusal of
// files that do not parse, and meaning: the IR of every policy (and the
// groups of every file) before and after formatting must be equal, on every
// policy in the repository and on random policies written with random
// layout and comments.
#include "language/format.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/ir_json.h"
#include "compiler/policy.h"
#include "tests/language/frontend_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

struct Formatted {
  std::optional<std::string> text;
  std::string diagnostics;
};

Formatted Fmt(const std::string& source, const std::string& name = "test.ward") {
  SourceManager sources;
  DiagnosticSink sink;
  FileId id = sources.Add(name, name, source);
  Formatted f;
  f.text = FormatFile(sources, id, sink);
  f.diagnostics = RenderText(sources, sink, RenderOptions{});
  return f;
}

std::string MustFmt(const std::string& source) {
  Formatted f = Fmt(source);
  INFO(source << "\n" << f.diagnostics);
  REQUIRE(f.text);
  return *f.text;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void StripProvenance(nlohmann::ordered_json& j) {
  if (j.is_object()) {
    j.erase("rules");
    for (auto& [key, value] : j.items()) StripProvenance(value);
  } else if (j.is_array()) {
    for (auto& value : j) StripProvenance(value);
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.find(".ward:") != std::string::npos) j = "<where>";
  }
}

// The IR of every policy of the file, or empty when it has errors.
std::vector<ir::Policy> Lowered(const std::string& source) {
  auto r = CheckSource(source);
  std::vector<ir::Policy> out;
  if (r->sink.has_errors()) return out;
  for (const ast::Policy& p : r->program.file(r->program.roots.at(0))->policies) {
    DiagnosticSink sink;
    out.push_back(ir::Lower(r->program, p, sink));
  }
  return out;
}

std::string ValueText(const ast::Value& v) {
  if (v.kind != ast::ValueKind::kList) return v.text;
  std::string out = "[";
  for (const ast::Value& item : v.items) out += ValueText(item) + " ";
  return out + "]";
}

// What a file means, as far as formatting could change it: for each policy
// its IR as canonical JSON without provenance (and its name and bases), each
// group's members, each let's values, the imports; with front-end errors,
// their codes and the AST parts only.
std::string Meaning(const std::string& source) {
  auto r = CheckSource(source);
  const ast::File* file = r->program.file(r->program.roots.at(0));
  if (!file) return "errors: " + r->codes();
  // With errors (std/syscalls.ward checked as a user file redefines the
  // standard groups) only what the AST says is compared.
  std::string out = r->sink.has_errors() ? "errors: " + r->codes() + "\n" : "";
  for (const ast::Import& i : file->imports) out += "import " + i.path + "\n";
  for (const ast::Let& l : file->lets) {
    out += "let " + l.name.text + " =";
    for (const ast::Value& v : l.values) out += " " + ValueText(v);
    out += "\n";
  }
  for (const ast::Group& g : file->groups) {
    out += "group " + g.name.text + " =";
    for (const ast::SysTarget& m : g.members) out += " " + m.name;
    out += "\n";
  }
  for (const ast::Policy& p : file->policies) {
    if (r->sink.has_errors()) break;
    DiagnosticSink sink;
    ir::Policy lowered = ir::Lower(r->program, p, sink);
    if (sink.has_errors()) return "lowering errors";
    out += std::string(p.is_abstract ? "abstract " : "") + "policy " + p.name.text;
    for (const ast::Name& e : p.extends) out += " " + e.text;
    // Provenance ("rules": ["file:line:col"]) moves with the layout; the
    // rest is the canonical form (operator== is checked too, below).
    nlohmann::ordered_json j = ir::ToJson(lowered, r->sources);
    StripProvenance(j);
    out += "\n" + j.dump() + "\n";
  }
  return out;
}

// Formatting is idempotent and keeps the meaning.
void CheckFormatKeepsMeaning(const std::string& source) {
  std::string once = MustFmt(source);
  INFO("input:\n" << source << "\nformatted:\n" << once);
  CHECK(MustFmt(once) == once);
  CHECK(Meaning(once) == Meaning(source));
  CHECK(Lowered(once) == Lowered(source));
}

TEST_CASE("fmt goldens", "[fmt]") {
  for (const char* name : {"layout", "comments", "wrap"}) {
    std::string dir = std::string("language/testdata/format/") + name;
    std::string input = ReadTestFile(dir + ".in.ward");
    REQUIRE(!input.empty());
    std::string out = MustFmt(input);
    INFO(name << ":\n" << out);
    CHECK(MatchesGolden(dir + ".out.ward", out));
    CHECK(MustFmt(out) == out);
  }
}

TEST_CASE("fmt keeps the meaning of the golden inputs", "[fmt]") {
  // layout.in.ward checks clean; the other two are about layout only.
  std::string input = ReadTestFile("language/testdata/format/layout.in.ward");
  REQUIRE(Meaning(input).rfind("errors", 0) != 0);
  CheckFormatKeepsMeaning(input);
}

TEST_CASE("fmt small cases", "[fmt]") {
  CHECK(MustFmt("") == "");
  CHECK(MustFmt("  \n\n\t\n") == "");
  CHECK(MustFmt("// only\n\n\n// comments") == "// only\n\n// comments\n");
  CHECK(MustFmt("ward 1") == "ward 1\n");
  CHECK(MustFmt("policy p{}") == "policy p {}\n");
  CHECK(MustFmt("policy p { filesystem {} }") == "policy p {\n  filesystem {}\n}\n");
  CHECK(MustFmt("policy p { labels {} }") == "policy p {\n  labels {}\n}\n");
  CHECK(MustFmt("let x = [ [\"a\" , \"b\" ,] ,\"c\" ]\n") == "let x = [[\"a\", \"b\"], \"c\"]\n");
  CHECK(MustFmt("policy p {\n\n\n  limits { cpus 2 }\n\n\n}\n") ==
        "policy p {\n  limits {\n    cpus 2\n  }\n}\n");
  // CRLF line ends and tabs.
  CHECK(MustFmt("policy p {\r\n\tlimits {\r\n\t\tcpus 2 // two\r\n\t}\r\n}\r\n") ==
        "policy p {\n  limits {\n    cpus 2 // two\n  }\n}\n");
  CHECK(MustFmt("policy p { network { allow   netlink route,route\n deny netlink [ route ] } }") ==
        "policy p {\n  network {\n    allow netlink route, route\n    deny netlink [route]\n  "
        "}\n}\n");
  CheckFormatKeepsMeaning("policy p { network { allow netlink route // host's interfaces\n } }");
  // A trailing comma that carries a comment is kept with it.
  CHECK(MustFmt("let x = [\"a\", // keep\n]\n") == "let x = [\"a\", // keep\n    ]\n");
}

TEST_CASE("fmt preserves comments", "[fmt]") {
  std::string out = MustFmt(
      "policy p {\n"
      "  filesystem {\n"
      "    allow read \"/a\" // why a\n"
      "    allow read write \"/bb\" # why bb\n"
      "    /* before */ allow exec \"/c\"\n"
      "    allow read /* mid */ \"/d\"\n"
      "\n"
      "    // last\n"
      "  }\n"
      "}\n");
  CHECK(out ==
        "policy p {\n"
        "  filesystem {\n"
        "    allow read \"/a\"        // why a\n"
        "    allow read write \"/bb\" # why bb\n"
        "    /* before */ allow exec \"/c\"\n"
        "    allow read /* mid */ \"/d\"\n"
        "\n"
        "    // last\n"
        "  }\n"
        "}\n");
}

TEST_CASE("fmt refuses a file that does not parse", "[fmt]") {
  Formatted f = Fmt("policy p {\n  filesystem { allow read \"/a\" \"/b\" }\n}\n");
  CHECK(!f.text);
  CHECK(f.diagnostics.find("error[W0001]: unexpected '\"/b\"'") != std::string::npos);
  CHECK(f.diagnostics.find("put a ',' between the values of a list") != std::string::npos);
  // The same hint with a comment between the two values (comments are on the
  // hidden channel now; the hint looks past them).
  f = Fmt("policy p {\n  filesystem { allow read \"/a\" /* c */ \"/b\" }\n}\n");
  CHECK(f.diagnostics.find("put a ',' between the values of a list") != std::string::npos);
  CHECK(!Fmt("policy p { /* unterminated").text);
  CHECK(!Fmt("let x = \"\xff\"").text);
  CHECK(Fmt("let x = \"\xff\"").diagnostics.find("W0005") != std::string::npos);
}

// Every policy file in the repository.
TEST_CASE("fmt keeps the meaning of every policy in the repository", "[fmt]") {
  size_t files = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(WARD_SOURCE_DIR) + "/policies")) {
    if (entry.path().extension() != ".ward") continue;
    ++files;
    INFO(entry.path());
    std::string source = ReadFile(entry.path());
    if (entry.path().filename() != "syscalls.ward") CHECK(Meaning(source).rfind("errors", 0) != 0);
    CheckFormatKeepsMeaning(source);
  }
  CHECK(files >= 3);
}

// fmt never crashes, on anything the front end's tests and fuzzer feed it,
// and what parses formats idempotently.
TEST_CASE("fmt on the fuzz corpus and test data", "[fmt]") {
  size_t files = 0;
  for (const char* dir : {"/tests/fuzz/corpus", "/tests/language/testdata", "/tests"}) {
    std::filesystem::path root = std::string(WARD_SOURCE_DIR) + dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      if (entry.path().extension() != ".ward" && std::string(dir) != "/tests/fuzz/corpus") {
        continue;
      }
      ++files;
      std::string source = ReadFile(entry.path());
      Formatted f = Fmt(source);
      INFO(entry.path());
      if (f.text) CHECK(MustFmt(*f.text) == *f.text);
    }
  }
  CHECK(files >= 4);
}

// -- random policies as source text --

template <size_t N>
const char* Pick(std::mt19937& rng, const char* const (&a)[N]) {
  return a[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}
int Coin(std::mt19937& rng, int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

// A list of 1..n values from `pool`, sometimes in brackets, sometimes with a
// trailing comma inside them.
std::vector<std::string> Values(std::mt19937& rng, const std::vector<std::string>& pool, int n) {
  std::vector<std::string> out;
  bool bracket = Coin(rng, 3) == 0;
  if (bracket) out.push_back("[");
  std::vector<std::string> chosen = pool;
  std::shuffle(chosen.begin(), chosen.end(), rng);
  int count = 1 + Coin(rng, std::min<int>(n, static_cast<int>(chosen.size())));
  for (int i = 0; i < count; ++i) {
    if (i) out.push_back(",");
    out.push_back(chosen[i]);
  }
  if (bracket && Coin(rng, 2)) out.push_back(",");
  if (bracket) out.push_back("]");
  return out;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// The tokens of a random policy file that checks clean.
std::vector<std::string> RandomPolicyTokens(std::mt19937& rng) {
  std::vector<std::string> t;
  if (Coin(rng, 2)) Append(t, {"ward", "1"});
  if (Coin(rng, 2)) Append(t, {"import", "\"std/linux.ward\""});
  bool let = Coin(rng, 2);
  if (let) Append(t, {"let", "dirs", "="}), Append(t, Values(rng, {"\"/srv\"", "\"/opt\""}, 2));
  bool group = Coin(rng, 2);
  if (group) {
    Append(t, {"group", "@mine", "=", "["});
    std::vector<std::string> members = Values(rng, {"read", "write", "@basic-io", "openat"}, 4);
    if (members.front() == "[") members = {"close", ",", "read"};  // no nested lists here
    Append(t, members);
    if (Coin(rng, 2)) t.push_back(",");
    t.push_back("]");
  }
  Append(t, {"policy", "p", "{"});
  if (Coin(rng, 2)) Append(t, {"description", "\"random\""});
  if (Coin(rng, 2)) {
    Append(t, {"labels", "{", "a", "=", "\"1\""});
    if (Coin(rng, 2)) t.push_back(",");
    Append(t, {"b", "=", "\"2\"", "}"});
  }
  if (Coin(rng, 4)) {
    Append(t, {"filesystem", "{"});
    static const std::vector<std::string> kPaths = {"\"/a\"",  "\"/a/b\"", "\"/a/*\"",  "\"/**/c\"",
                                                    "\"~/s\"", "\"/b\"",   "\"/a/b/c\""};
    static const char* const kRights[] = {"read", "write", "exec"};
    for (int i = Coin(rng, 6); i > 0; --i) {
      t.push_back(Coin(rng, 3) ? "allow" : "deny");
      t.push_back(Pick(rng, kRights));
      if (Coin(rng, 2)) t.push_back("write");
      Append(t, Values(rng, kPaths, 4));
      if (let && Coin(rng, 4) == 0) Append(t, {",", "dirs"});
    }
    t.push_back("}");
  }
  if (Coin(rng, 4)) {
    Append(t, {"network", "{"});
    static const std::vector<std::string> kPeers = {"10.0.0.0/8",        "\"example.com\"",
                                                    "\"*.example.org\"", "loopback",
                                                    "fd00::/8",          "192.168.1.1"};
    static const std::vector<std::string> kPorts = {"22", "53", "443", "8000-8100"};
    for (int i = Coin(rng, 6); i > 0; --i) {
      t.push_back(Coin(rng, 3) ? "allow" : "deny");
      if (Coin(rng, 5) == 0) {
        Coin(rng, 2) ? Append(t, {"unix", "\"/run/a.sock\""}) : Append(t, {"netlink", "route"});
        continue;
      }
      bool ingress = Coin(rng, 4) == 0;
      if (ingress) t.push_back("ingress");
      t.push_back(Coin(rng, 2) ? "tcp" : "udp");
      t.push_back(ingress ? "from" : "to");
      Append(t, Values(rng, kPeers, 3));
      if (Coin(rng, 2))
        t.push_back(Coin(rng, 2) ? "port" : "ports"), Append(t, Values(rng, kPorts, 3));
    }
    t.push_back("}");
  }
  if (Coin(rng, 4)) {
    Append(t, {"syscalls", "{"});
    if (Coin(rng, 2)) Append(t, {"arch", "x86_64", ",", "aarch64"});
    if (Coin(rng, 2)) Append(t, {"default", "errno", "EPERM"});
    Append(t, {"allow", "@system-service"});
    if (group) Append(t, {",", "@mine"});
    if (Coin(rng, 2)) Append(t, {"kill", "ptrace", ",", "bpf"});
    if (Coin(rng, 2)) {
      Append(t, {"errno", "EPERM", "clone", "if", "arg0", "&", "CLONE_NEWUSER",
                 "==", "CLONE_NEWUSER"});
    }
    if (Coin(rng, 2)) {
      Append(t, {"errno", "EAFNOSUPPORT", "socket", "if", "arg0", "not", "in", "[", "AF_UNIX", ",",
                 "AF_INET"});
      if (Coin(rng, 2)) t.push_back(",");
      t.push_back("]");
    }
    if (Coin(rng, 2)) {
      Append(t, {"errno", "EPERM", "personality", "if", "arg0", "!=", "PER_LINUX", "and", "arg0",
                 "!=", "0xffffffff"});
    }
    t.push_back("}");
  }
  if (Coin(rng, 3)) {
    Append(t, {"process", "{", "no_new_privileges", "capabilities"});
    if (Coin(rng, 2)) {
      t.push_back("drop"), t.push_back("all");
    } else {
      t.push_back("keep"), Append(t, Values(rng, {"CAP_CHOWN", "CAP_KILL", "CAP_SETUID"}, 3));
    }
    if (Coin(rng, 2)) Append(t, {"user", "1000:1000"});
    if (Coin(rng, 2))
      t.push_back("env"), t.push_back("allow"),
          Append(t, Values(rng, {"\"PATH\"", "\"HOME\"", "\"LC_*\""}, 3));
    t.push_back("}");
  }
  if (Coin(rng, 3)) Append(t, {"limits", "{", "cpus", "2", "memory", "4GiB", "pids", "64", "}"});
  if (Coin(rng, 3)) {
    Append(t, {"target", "kubernetes", "{", "namespace", "\"agents\"", "pod_selector", "{", "app",
               "=", "\"x\"", "}", "}"});
  }
  t.push_back("}");
  return t;
}

// The tokens joined by random whitespace and comments.
std::string RandomLayout(const std::vector<std::string>& tokens, std::mt19937& rng) {
  static const char* const kSeparators[] = {" ",
                                            " ",
                                            " ",
                                            "\n",
                                            "  ",
                                            "\n\n\n",
                                            "\t",
                                            " /* c */ ",
                                            "\n  /* b */\n",
                                            " // line\n",
                                            "\n# hash\n",
                                            "\n\n// lead\n",
                                            "\r\n",
                                            " /* two\n   lines */ "};
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) out += Coin(rng, 3) ? " " : Pick(rng, kSeparators);
    out += tokens[i];
  }
  if (Coin(rng, 2)) out += Coin(rng, 2) ? " // end" : "\n";
  return out;
}

TEST_CASE("fmt keeps the meaning of random policies", "[fmt][property]") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::mt19937 rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  const int rounds = Rounds(300);
  int clean = 0;
  for (int i = 0; i < rounds; ++i) {
    std::string source = RandomLayout(RandomPolicyTokens(rng), rng);
    if (Meaning(source).rfind("errors", 0) != 0) ++clean;
    CheckFormatKeepsMeaning(source);
  }
  // The generator writes policies that check clean (more than 2 in 3).
  CHECK(clean * 3 > rounds * 2);
}

}  // namespace
}  // namespace ward::test
