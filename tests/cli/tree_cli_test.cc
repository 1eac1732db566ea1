// The command tree as a user meets it (cli/command_tree.h): did-you-mean for
// commands and options of ward-cli and ward-remote, `ward help`, `ward
// --version`, `ward completion` run in bash, zsh and fish, and the man pages.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "tests/cli/run_ward.h"

using ward::test::Run;
using ward::test::Shell;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {

const std::string kWard = WARD_BINARY;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The completions bash's completion function offers for a command line;
// the last word is the one completed ("" after a trailing space).
std::string BashComplete(const std::string& script, const std::string& words) {
  const std::string cmd = "bash --norc --noprofile -c 'source " + script + "; COMP_WORDS=(" +
                          words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _ward; " +
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
  Run r = Shell(cmd);
  REQUIRE(r.err.empty());
  return Trim(r.out);
}

// The targets `ward compile -t help` lists, in its order: the registry as
// compile sees it, read apart from the completion code.
std::string TargetsFromHelp() {
  Run r = Ward("compile -t help");
  std::istringstream in(r.out);
  std::string names, line;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    names += (names.empty() ? "" : "\n") + line.substr(2, line.find(" - ") - 2);
  }
  return names;
}

}  // namespace

TEST_CASE("did you mean: a misspelt command, exit 2, and the command spelt right") {
  Run r = Ward("compil");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ward: unknown command 'compil': did you mean 'compile'?\n");
  // Positive control: spelt right, the same command line reaches compile.
  r = Ward("compile -t help");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("did you mean: ties are all listed, a word near nothing gets no guess") {
  Run r = Ward("com");
  CHECK(r.status == 2);
  CHECK(r.err == "ward: unknown command 'com': did you mean 'compile' or 'completion'?\n");
  r = Ward("xyzzy");
  CHECK(r.status == 2);
  CHECK(r.err == "ward: unknown command 'xyzzy' (ward help lists the commands)\n");
}

TEST_CASE("did you mean: a misspelt option is named before the required one it hid") {
  std::string p = WriteTemp("tree.ward", "policy p { filesystem { allow read \"/usr\" } }\n");
  Run r = Ward("compile --targt linux " + p);
  CHECK(r.status == 2);
  CHECK(r.err == "ward compile: unknown option '--targt': did you mean '--target'?\n");
  r = Ward("compile --target=help");
  CHECK(r.status == 0);
}

TEST_CASE("did you mean: every unknown word, in command-line order") {
  Run r = Ward("compile --targt y --outptu d --zzzzzz");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward compile: unknown option '--targt': did you mean '--target'?\n"
        "ward compile: unknown option '--outptu': did you mean '--output'?\n"
        "ward compile: unknown option '--zzzzzz' (ward help compile lists its options)\n");
}

TEST_CASE("did you mean: a value outside an option's fixed set") {
  std::string p = WriteTemp("values.ward", "policy p { filesystem { allow read \"/usr\" } }\n");
  Run r = Ward("lint --fail-on erorr " + p, ward::test::kStdEnv);
  CHECK(r.status == 2);
  CHECK(
      r.err ==
      "ward lint: --fail-on 'erorr' is not one of error, warning, never: did you mean 'error'?\n");
  r = Ward("check --format=xml " + p, ward::test::kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward check: --format 'xml' is not one of text, json\n");
  // ward-remote's sets too.
  r = Ward("push --host unix:///nowhere --format jsno " + p);
  CHECK(r.status == 2);
  CHECK(r.err == "ward push: --format 'jsno' is not one of text, json: did you mean 'json'?\n");
  // Positive control: in the set, the command runs.
  r = Ward("lint --fail-on error " + p, ward::test::kStdEnv);
  CHECK(r.status == 0);
}

TEST_CASE("did you mean: nested commands, the --host form and ward-remote's own commands") {
  Run r = Ward("audit verfy log");
  CHECK(r.status == 2);
  CHECK(r.err == "ward audit: unknown command 'verfy': did you mean 'verify'?\n");
  // ward status (ward-cli) knows the flags of its --host form (ward-remote).
  r = Ward("status --hots unix:///nowhere");
  CHECK(r.status == 2);
  CHECK(r.err == "ward status: unknown option '--hots': did you mean '--host' or '--hosts'?\n");
  // ward push is parsed by ward-remote, which says the same.
  r = Ward("push --host unix:///nowhere --polcy p f.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward push: unknown option '--polcy': did you mean '--policy'?\n");
  // ward compile -t wardd-bundle is parsed by ward-bundle, which says the same.
  r = Ward("compile -t wardd-bundle --outptu d f.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward compile: unknown option '--outptu': did you mean '--output'?\n");
  // ward run keeps 125 for its own usage errors; the command after -- is
  // nobody's typo.
  r = Ward("run --polcy p f.ward -- sh -c true");
  CHECK(r.status == 125);
  CHECK(r.err == "ward run: unknown option '--polcy': did you mean '--policy'?\n");
}

TEST_CASE("help: the overview, one command's help, ward-remote's, and a typo") {
  Run overview = Ward("--help");
  Run r = Ward("help");
  CHECK(r.status == 0);
  CHECK(r.out == overview.out);
  CHECK(r.out.find("  doctor  ") != std::string::npos);
  r = Ward("help compile");
  CHECK(r.status == 0);
  CHECK(r.out == Ward("compile --help").out);
  CHECK(r.out.rfind("Compile a policy for one or more targets\nUsage: ward compile [OPTIONS]", 0) ==
        0);
  // push is ward-remote's: the same text `ward push --help` prints there.
  Run push = Ward("push --help");
  r = Ward("help push");
  CHECK(r.status == 0);
  CHECK(r.out == push.out);
  CHECK(r.out.find("--host TEXT") != std::string::npos);
  // status: this host's, then the --host form's.
  r = Ward("help status");
  CHECK(r.out.rfind(Ward("status --help").out, 0) == 0);
  CHECK(r.out.find("With --host or --hosts, ward status asks wardd agents:\n"
                   "What hosts' wardd enforce, and whether it drifted\n"
                   "Usage: ward status [OPTIONS]") != std::string::npos);
  r = Ward("help audit verify");
  CHECK(r.out == Ward("audit verify --help").out);
  r = Ward("help compil");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ward help: unknown command 'compil': did you mean 'compile'?\n");
}

TEST_CASE("--version: version, commit, build type and the libraries' versions") {
  Run r = Ward("--version");
  CHECK(r.status == 0);
  const std::string seccomp = Trim(Shell("pkg-config --modversion libseccomp").out);
  std::string bpf = Trim(Shell("pkg-config --modversion libbpf").out);
  bpf = bpf.substr(0, bpf.rfind('.'));  // libbpf reports major.minor
  const std::string nft = Trim(Shell("pkg-config --modversion libnftables").out);
  std::string backends;
  for (const char* b : {"seccomp", "oci", "process", "nftables", "ebpf", "landlock", "kubernetes",
                        "cilium", "seatbelt", "firecracker"}) {
    backends += std::string(" ") + b;
  }
  // The commit: git describe when CMake configured the build, one of this
  // checkout's commits (HEAD or an ancestor: configure ran before the last
  // commits), "-dirty" when the tree had changes.
  const std::vector<std::string> lines = [&] {
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }();
  REQUIRE(lines.size() == 7);
  REQUIRE(lines[1].rfind("commit: ", 0) == 0);
  const std::string commit = lines[1].substr(8, lines[1].find("-dirty") - 8);
  CHECK(commit.size() == 12);
  CHECK(Shell("git -C " + std::string(WARD_SOURCE_DIR) + " merge-base --is-ancestor " + commit +
              " HEAD")
            .status == 0);
  CHECK(r.out == std::string("ward ") + WARD_PROJECT_VERSION + "\n" + lines[1] + "\nbuild type: " +
                     WARD_BUILD_TYPE + "\nlibseccomp: " + seccomp + "\nlibbpf: " + bpf +
                     "\nlibnftables: " + nft + " (at build time)\nbackends:" + backends + "\n");
}

TEST_CASE("completion bash: commands, options and their values, run in bash") {
  Run r = Ward("completion bash");
  REQUIRE(r.status == 0);
  const std::string script = WriteTemp("ward.bash", r.out);
  CHECK(BashComplete(script, "ward com") == "compile\ncompletion");
  CHECK(BashComplete(script, "ward \"\"").find("check\nir\nexplain\ncompile\n") == 0);
  CHECK(BashComplete(script, "ward compile -t \"\"") == TargetsFromHelp() + "\nhelp");
  CHECK(BashComplete(script, "ward compile p.ward -t linux,se") == "linux,seccomp\nlinux,seatbelt");
  CHECK(BashComplete(script, "ward compile --ta") == "--target");
  CHECK(BashComplete(script, "ward import --from \"\"") ==
        "docker-seccomp\nspo-seccomp\nsrt\nkafel\nnetworkpolicy\nfirejail");
  CHECK(BashComplete(script, "ward lint --format \"\"") == "text\njson\nsarif");
  // ward-remote's commands and the --host form of ward status.
  CHECK(BashComplete(script, "ward status --ho") == "--host\n--hosts");
  CHECK(BashComplete(script, "ward push --format j") == "json");
  CHECK(BashComplete(script, "ward push -t \"\"") == "nftables\nebpf");
  CHECK(BashComplete(script, "ward audit \"\"") == "verify");
  CHECK(BashComplete(script, "ward help st") == "status");
  CHECK(BashComplete(script, "ward completion \"\"") == "bash\nzsh\nfish");
  // A free value (a file): the folder's files.
  const std::string dir = ward::test::ScratchDir() + "/files";
  std::filesystem::create_directories(dir);
  WriteTemp("files/only.ward", "");
  CHECK(BashComplete(script, "ward check " + dir + "/on") == dir + "/only.ward");
}

TEST_CASE("completion zsh: valid zsh, the same tables") {
  Run r = Ward("completion zsh");
  REQUIRE(r.status == 0);
  const std::string script = WriteTemp("_ward", r.out);
  r = Shell("zsh -n " + script);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // Loaded as compinit loads it, in a zsh without a user's setup.
  // compinit's dump file goes to the scratch folder: compinit writes it
  // beside its name and renames it into place, so `-d /dev/null` replaced
  // the host's /dev/null with a regular file (the lead saw it happen).
  const std::string dump = ward::test::ScratchDir() + "/zcompdump";
  r = Shell("zsh -f -c 'autoload -U compinit; compinit -u -d " + dump + "; source " + script +
            "; _ward_values compile --target; _ward_commands audit; _ward_values fmt --check "
            "|| echo none'");
  CHECK(r.err.empty());
  CHECK(r.out == "__list__ " + [] {
    std::string t = TargetsFromHelp() + "\nhelp";
    for (char& c : t) c = c == '\n' ? ' ' : c;
    return t;
  }() + "\nverify\nnone\n");
}

TEST_CASE("completion fish: what fish itself completes") {
  Run r = Ward("completion fish");
  REQUIRE(r.status == 0);
  const std::string script = WriteTemp("ward.fish", r.out);
  r = Shell("fish --no-execute " + script);
  CHECK(r.status == 0);
  auto complete = [&](const std::string& line) {
    Run c = Shell("HOME=" + ward::test::ScratchDir() + " fish --no-config -c 'source " + script +
                  "; complete -C\"" + line + "\"' | cut -f1");
    CHECK(c.err.empty());
    return Trim(c.out);
  };
  CHECK(complete("ward com") == "compile\ncompletion");
  CHECK(complete("ward import --from ") ==
        "docker-seccomp\nfirejail\nkafel\nnetworkpolicy\nspo-seccomp\nsrt");
  CHECK(complete("ward status --hos") == "--host\n--hosts");
  CHECK(complete("ward audit ") == "verify");
}

#ifdef WARD_MAN_DIR
TEST_CASE("man pages: one per command, rendered by man and groff without a warning") {
  const std::string dir = WARD_MAN_DIR;
  std::vector<std::string> pages = {"ward"};
  Run overview = Ward("--help");
  std::istringstream in(overview.out.substr(overview.out.find("Subcommands:\n") + 13));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  ", 0) != 0) break;
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    if (name != "help") pages.push_back("ward-" + name);
  }
  std::vector<std::string> built;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    built.push_back(entry.path().stem().string());
  }
  std::sort(built.begin(), built.end());
  std::vector<std::string> expected = pages;
  std::sort(expected.begin(), expected.end());
  CHECK(built == expected);
  CHECK(pages.size() >= 17);
  for (const std::string& page : pages) {
    INFO(page);
    const std::string file = dir + "/" + page + ".1";
    REQUIRE(std::filesystem::is_regular_file(file));
    Run g = Shell("groff -man -Tutf8 -ww -z " + file);
    CHECK(g.status == 0);
    CHECK(g.err.empty());
    Run m = Shell("MANWIDTH=300 man --warnings -l " + file);
    CHECK(m.status == 0);
    CHECK(m.err.empty());
    CHECK(m.out.find("NAME\n       " + page + " - ") != std::string::npos);
  }
  // cmake --install puts them in share/man/man1, where man finds them.
  const std::string prefix = ward::test::ScratchDir() + "/prefix";
  Run install =
      Shell(std::string(WARD_CMAKE) + " --install " + WARD_CLI_BUILD_DIR + " --prefix " + prefix);
  CHECK(install.status == 0);
  for (const std::string& page : pages) {
    INFO(page);
    CHECK(Shell("cmp " + dir + "/" + page + ".1 " + prefix + "/share/man/man1/" + page + ".1")
              .status == 0);
  }
  CHECK(Shell("MANPATH=" + prefix + "/share/man man -w ward-doctor").out ==
        prefix + "/share/man/man1/ward-doctor.1\n");
  Run compile = Shell("MANWIDTH=200 man -l " + dir + "/ward-compile.1");
  CHECK(compile.out.find("       -t,--target TEXT REQUIRED\n") != std::string::npos);
  Run doctor = Shell("MANWIDTH=200 man -l " + dir + "/ward-doctor.1");
  CHECK(doctor.out.find("EXIT STATUS\n       0: ward run can enforce every layer here.") !=
        std::string::npos);
}
#endif  // WARD_MAN_DIR
