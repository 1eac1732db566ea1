// cli/command_tree.h on its own: the edit distance against a plain recursive
// definition over random short words, the ranking of Nearest, and what a
// CLI11 app's tree holds (option values from CLI::IsMember, flags without
// values, merging a command's --host form).
#include <catch2/catch.hpp>
#include <random>

#include "cli/command_tree.h"
#include "tests/property_rounds.h"

namespace {

// Optimal string alignment, straight from its definition (no table shared
// with the implementation).
size_t Reference(const std::string& a, const std::string& b) {
  if (a.empty()) return b.size();
  if (b.empty()) return a.size();
  const std::string ra = a.substr(1), rb = b.substr(1);
  size_t best = std::min(
      {Reference(ra, b) + 1, Reference(a, rb) + 1, Reference(ra, rb) + (a[0] == b[0] ? 0 : 1)});
  if (a.size() > 1 && b.size() > 1 && a[0] == b[1] && a[1] == b[0]) {
    best = std::min(best, Reference(a.substr(2), b.substr(2)) + 1);
  }
  return best;
}

}  // namespace

TEST_CASE("EditDistance: the definition, on random words over a small alphabet") {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("WARD_SEED")) seed = std::strtoull(s, nullptr, 10);
  INFO("seed " << seed << " (replay: WARD_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  auto word = [&] {
    std::string w(rng() % 7, ' ');
    for (char& c : w) c = "abc-"[rng() % 4];
    return w;
  };
  const int rounds = ward::test::Rounds(3000);
  for (int i = 0; i < rounds; ++i) {
    const std::string a = word(), b = word();
    INFO(a << " / " << b);
    REQUIRE(ward::cli::EditDistance(a, b) == Reference(a, b));
  }
  // Positive controls: the cases the messages rely on.
  CHECK(ward::cli::EditDistance("hots", "host") == 1);
  CHECK(ward::cli::EditDistance("targt", "target") == 1);
  CHECK(ward::cli::EditDistance("compile", "compile") == 0);
}

TEST_CASE("Nearest: prefixes first, then the distance, ties alphabetical, far words none") {
  using ward::cli::Nearest;
  const std::vector<std::string> commands = {"check", "ir",   "explain", "compile",   "diff",
                                             "run",   "push", "doctor",  "completion"};
  CHECK(Nearest("compil", commands) == std::vector<std::string>{"compile"});
  CHECK(Nearest("com", commands) == std::vector<std::string>{"compile", "completion"});
  CHECK(Nearest("rnu", commands) == std::vector<std::string>{"run"});
  CHECK(Nearest("dcotor", commands) == std::vector<std::string>{"doctor"});
  CHECK(Nearest("xyzzy", commands).empty());
  CHECK(Nearest("d", commands).empty());      // one letter: no guess
  CHECK(Nearest("check", commands).empty());  // the word itself is not a suggestion
  CHECK(ward::cli::DidYouMean({"a", "b", "c"}) == "did you mean 'a', 'b' or 'c'?");
  CHECK(ward::cli::DidYouMean({}).empty());
}

TEST_CASE("DescribeApp and MergeTree: values, flags, positionals, the --host form") {
  CLI::App app{"test", "ward"};
  std::string format, host;
  bool check = false;
  CLI::App* status = app.add_subcommand("status", "local");
  status->add_option("--format", format, "f")->check(CLI::IsMember({"text", "json"}));
  status->add_flag("--check", check, "c");
  CLI::App* shell = app.add_subcommand("completion", "c");
  shell->add_option("shell", format, "s")->check(CLI::IsMember({"bash", "zsh"}));
  CLI::App remote{"remote", "ward"};
  remote.add_subcommand("status", "remote")->add_option("--host", host, "h");
  remote.add_subcommand("push", "p");

  ward::cli::CommandNode tree = ward::cli::DescribeApp(app);
  ward::cli::MergeTree(&tree, ward::cli::DescribeApp(remote));
  const ward::cli::CommandNode* s = ward::cli::FindCommand(tree, "status");
  REQUIRE(s);
  CHECK(s->description == "local");
  std::vector<std::string> names;
  for (const auto& o : s->options) names.push_back(o.names.back());
  CHECK(names == std::vector<std::string>{"--help", "--format", "--check", "--host"});
  CHECK(s->options[1].takes_value);
  CHECK(s->options[1].values == std::vector<std::string>{"text", "json"});
  CHECK_FALSE(s->options[2].takes_value);
  CHECK(ward::cli::FindCommand(tree, "completion")->positional_values ==
        std::vector<std::string>{"bash", "zsh"});
  CHECK(tree.commands.back().name == "push");
}
