// The command line's front door (issue 22) as a user meets it: options
// before or after FILE, one exit-code scheme, what a path that is not a
// policy file is called, `-` for standard input, `fmt --diff`, the
// Kubernetes advice on domain rules, lint's configuration and a vendored
// standard library found upward. Every case runs the built `ward`.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_ward.h"

using ward::test::Run;
using ward::test::ScratchDir;
using ward::test::Shell;
using ward::test::Ward;

namespace {

namespace fs = std::filesystem;
const std::string kStd = ward::test::kStdEnv;

// A fresh folder under the scratch folder.
std::string Folder(const std::string& name) {
  std::string dir = ScratchDir() + "/front-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `cd DIR && ENV ward ARGS`.
Run WardIn(const std::string& dir, const std::string& args, const std::string& env = kStd) {
  return Ward(args, "cd " + dir + " && " + env);
}

const char* kPolicy =
    "import \"std/linux.ward\"\n"
    "policy p extends linux-base {\n"
    "  filesystem {\n"
    "    allow read \"/usr\"\n"
    "  }\n"
    "  network {\n"
    "    allow tcp to 10.0.0.0/8 port 443\n"
    "  }\n"
    "}\n";

}  // namespace

// ---- 1. Options before or after FILE ----

TEST_CASE("every command: options before or after FILE mean the same", "[cli][front]") {
  const std::string dir = Folder("order");
  Write(dir + "/p.ward", kPolicy);
  Write(dir + "/q.ward",
        "import \"std/linux.ward\"\n"
        "policy p extends linux-base {\n"
        "  filesystem { allow read \"/usr\" }\n"
        "  network { allow tcp to 10.0.0.0/8 port 443\n    allow tcp to 1.2.3.4 port 22 }\n"
        "}\n");
  Write(dir + "/messy.ward", "policy   p {\n}\n");
  Write(
      dir + "/docker.json",
      R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]})");
  Write(dir + "/lint.yaml", "rules: {L2404: error}\n");
  struct Case {
    const char* command;
    std::string before;  // options first
    std::string after;   // FILE first
    int status;
  };
  const std::vector<Case> cases = {
      {"check", "check --color never --format json p.ward",
       "check p.ward --format json --color never", 0},
      {"lint", "lint --config lint.yaml --fail-on warning --format json p.ward",
       "lint p.ward --format json --fail-on warning --config lint.yaml", 0},
      {"fmt", "fmt --check --format json messy.ward", "fmt messy.ward --format json --check", 1},
      {"ir", "ir --policy p --color never p.ward", "ir p.ward --color never --policy p", 0},
      {"compile", "compile -t oci -o out p.ward", "compile p.ward -o out -t oci", 0},
      {"compile,", "compile -t oci,seccomp --partial -o out2 p.ward",
       "compile p.ward -o out2 --partial -t oci,seccomp", 0},
      {"diff", "diff --fail-on widen --format json p.ward q.ward",
       "diff p.ward q.ward --format json --fail-on widen", 1},
      {"import", "import --from docker-seccomp --capabilities CAP_NET_ADMIN docker.json",
       "import docker.json --capabilities CAP_NET_ADMIN --from docker-seccomp", 0},
      {"import repeated",
       "import --capabilities CAP_NET_ADMIN --capabilities CAP_CHOWN --from docker-seccomp "
       "docker.json",
       "import docker.json --capabilities CAP_NET_ADMIN --from docker-seccomp --capabilities "
       "CAP_CHOWN",
       0},
      {"audit verify", "audit verify --format json missing.log",
       "audit verify missing.log --format json", 2},
      // explain is the lang helper's; the list options are taken one value
      // at a time here (cli/option_order.h), which is what the issue's
      // example needs.
      {"explain", "explain --resolve api.example=1.2.3.4 p.ward --connect api.example:443",
       "explain p.ward --connect api.example:443 --resolve api.example=1.2.3.4", 0},
      {"apply", "apply --cgroup /nonexistent -t nftables p.ward",
       "apply p.ward -t nftables --cgroup /nonexistent", 2},
      // ward-remote's parser (cli/remote.cc): one URL per --host already.
      {"push", "push --cgroup /x --host unix:///nonexistent.sock p.ward",
       "push p.ward --host unix:///nonexistent.sock --cgroup /x", 2},
  };
  for (const Case& c : cases) {
    INFO(c.command);
    Run a = WardIn(dir, c.before);
    Run b = WardIn(dir, c.after);
    INFO(a.err << b.err);
    CHECK(a.status == c.status);
    CHECK(b.status == c.status);
    CHECK(a.out == b.out);
    CHECK(a.err == b.err);
  }
  // A list option takes one value per occurrence: FILE after it stays FILE.
  Run r = WardIn(dir, "import --from docker-seccomp --capabilities CAP_NET_ADMIN docker.json");
  CHECK(r.status == 0);
  CHECK(r.out.find("CAP_NET_ADMIN") != std::string::npos);
}

// ---- 2. One exit-code scheme ----

TEST_CASE("an unreadable policy file is exit 2 with the same words for every command",
          "[cli][front]") {
  const std::string dir = Folder("unreadable");
  fs::permissions(dir, fs::perms::all);
  Write(dir + "/p.ward", kPolicy);
  Write(dir + "/secret.ward", kPolicy);
  fs::permissions(dir + "/secret.ward", fs::perms::none);
  // Root reads any file: run as nobody when root.
  const std::string as =
      geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const std::string ward_cmd = std::string(WARD_BINARY) + " ";
  auto run = [&](const std::string& args) {
    return Shell("cd " + dir + " && " + kStd + " " + as + ward_cmd + args);
  };
  struct Case {
    std::string args;
    std::string prefix;  // how the command names itself
  };
  const std::vector<Case> cases = {
      {"check secret.ward", "ward check"},
      {"lint secret.ward", "ward lint"},
      {"fmt secret.ward", "ward fmt"},
      {"ir secret.ward", "ward"},
      {"compile secret.ward -t oci -o out", "ward"},
      {"explain secret.ward --path /usr --access read", "ward"},
      {"diff secret.ward p.ward", "ward diff"},
      {"diff p.ward secret.ward", "ward diff"},
      {"import --from docker-seccomp secret.ward", "ward import"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    Run r = run(c.args);
    CHECK(r.status == 2);
    CHECK(r.err == c.prefix + ": secret.ward: permission denied\n");
    CHECK(r.out.empty());
  }
  // The positive control: the readable file, the same commands.
  CHECK(run("check p.ward").status == 0);
  CHECK(run("lint p.ward").status == 0);
  CHECK(run("fmt --check p.ward").status == 0);
  CHECK(run("ir p.ward").status == 0);
  CHECK(run("explain p.ward --path /usr --access read").status == 0);
  CHECK(run("diff p.ward p.ward").status == 0);
  fs::permissions(dir + "/secret.ward", fs::perms::owner_all);
}

TEST_CASE("exit codes: 1 for what a command finds, 2 for usage and operational failures",
          "[cli][front]") {
  const std::string dir = Folder("codes");
  Write(dir + "/p.ward", kPolicy);
  Write(dir + "/bad.ward", "policy p {\n  limits { pids lots }\n}\n");
  struct Case {
    std::string args;
    int status;
  };
  const std::vector<Case> cases = {
      {"check p.ward", 0},
      {"check bad.ward", 1},
      {"check missing.ward", 2},
      {"check --format xml p.ward", 2},
      {"lint p.ward", 0},
      {"lint bad.ward", 1},
      {"lint missing.ward", 2},
      {"fmt --check p.ward", 0},
      {"fmt --check bad.ward", 1},
      {"fmt missing.ward", 2},
      {"ir p.ward", 0},
      {"ir bad.ward", 1},
      {"ir missing.ward", 2},
      {"ir --policy nope p.ward", 2},
      {"compile p.ward -t oci -o out", 0},
      {"compile bad.ward -t oci -o out", 1},
      {"compile missing.ward -t oci -o out", 2},
      {"compile p.ward -t nope -o out", 2},
      {"diff p.ward p.ward", 0},
      {"diff bad.ward p.ward", 1},
      {"diff missing.ward p.ward", 2},
      {"explain p.ward --path /usr --access read", 0},
      {"explain p.ward --path /etc --access read --fail-on deny", 1},
      {"explain missing.ward --path /usr --access read", 2},
      {"frobnicate", 2},
      {"check --no-such-flag p.ward", 2},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    CHECK(WardIn(dir, c.args).status == c.status);
  }
}

// ---- 3. What a path is ----

TEST_CASE("a directory, FIFO, socket, device or symlink loop is named as what it is",
          "[cli][front]") {
  const std::string dir = Folder("kinds");
  fs::create_directories(dir + "/p.ward");  // a folder named like a policy
  REQUIRE(mkfifo((dir + "/fifo.ward").c_str(), 0600) == 0);
  fs::create_symlink("loop-b.ward", dir + "/loop-a.ward");
  fs::create_symlink("loop-a.ward", dir + "/loop-b.ward");
  fs::create_symlink("gone.ward", dir + "/dangling.ward");
  REQUIRE(Shell("/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_UNIX)"
                ".bind('" +
                dir + "/sock.ward')\"")
              .status == 0);
  // A sparse file one byte over the 16 MiB cap.
  REQUIRE(truncate(Write(dir + "/huge.ward", "").c_str(), (16 << 20) + 1) == 0);
  Write(dir + "/ok.ward", kPolicy);
  struct Case {
    std::string file;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"fifo.ward", "is a FIFO, not a policy file"},
      {"sock.ward", "is a socket, not a policy file"},
      {"/dev/null", "is a character device, not a policy file"},
      {"loop-a.ward", "too many levels of symbolic links"},
      {"dangling.ward", "is a symbolic link to gone.ward, which does not exist"},
      {"missing.ward", "no such file or directory"},
      {"huge.ward", "is 16777217 bytes, over the limit of 16 MiB"},
  };
  for (const Case& c : cases) {
    for (const char* command : {"check", "lint", "fmt", "ir"}) {
      INFO(command << " " << c.file);
      // `timeout`: a FIFO must never be opened for reading (it would block).
      Run r = WardIn(dir, std::string(command) + " " + c.file, "timeout 10 env " + kStd);
      CHECK(r.status == 2);
      const std::string prefix =
          std::string(command) == "ir" ? "ward" : "ward " + std::string(command);
      CHECK(r.err == prefix + ": " + c.file + ": " + c.problem + "\n");
    }
    Run r = WardIn(dir, "compile " + c.file + " -t oci -o out", "timeout 10 env " + kStd);
    CHECK(r.status == 2);
    CHECK(r.err == "ward: " + c.file + ": " + c.problem + "\n");
    r = WardIn(dir, "diff ok.ward " + c.file, "timeout 10 env " + kStd);
    CHECK(r.status == 2);
    CHECK(r.err == "ward diff: " + c.file + ": " + c.problem + "\n");
  }
  // A folder is a policy file for the one-policy commands only...
  Run r = WardIn(dir, "ir p.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward: p.ward: is a directory\n");
  r = WardIn(dir, "compile p.ward -t oci -o out");
  CHECK(r.err == "ward: p.ward: is a directory\n");
  // ...check, lint and fmt read the .ward files below it (none here).
  r = WardIn(dir, "check p.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward check: no .ward files found\n");
  // The positive control: a regular file beside them.
  CHECK(WardIn(dir, "check ok.ward").status == 0);
  CHECK(WardIn(dir, "ir ok.ward").status == 0);
}

// ---- 4. `-` is standard input ----

TEST_CASE("- reads standard input for check, lint, fmt and ir, named <stdin>", "[cli][front]") {
  const std::string dir = Folder("stdin");
  Write(dir + "/p.ward", kPolicy);
  Write(dir + "/bad.ward", "policy p {\n  limits { pids lots }\n}\n");
  Write(dir + "/messy.ward", "policy   p {\n}\n");
  Run r = WardIn(dir, "check - < p.ward");
  CHECK(r.status == 0);
  CHECK(r.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  r = WardIn(dir, "check --color never - < bad.ward");
  CHECK(r.status == 1);
  CHECK(r.err ==
        "<stdin>:2:17: error[W1008]: 'pids' expects a whole number, found a name 'lots'\n"
        " 2 |   limits { pids lots }\n"
        "   |                 ^~~~\n");
  r = WardIn(dir, "lint --color never - < p.ward");
  CHECK(r.status == 0);
  std::string linted = WardIn(dir, "lint --color never p.ward").out;
  for (size_t at; (at = linted.find("p.ward:")) != std::string::npos;) {
    linted.replace(at, 6, "<stdin>");
  }
  CHECK(r.out == linted);
  r = WardIn(dir, "lint --format json - < bad.ward");
  CHECK(r.status == 1);
  CHECK(nlohmann::json::parse(r.out)["diagnostics"][0]["file"] == "<stdin>");
  // fmt -: the formatted text on stdout, the file on disk untouched.
  r = WardIn(dir, "fmt - < messy.ward");
  CHECK(r.status == 0);
  CHECK(r.out == "policy p {}\n");
  CHECK(Slurp(dir + "/messy.ward") == "policy   p {\n}\n");
  r = WardIn(dir, "fmt - < p.ward");
  CHECK(r.status == 0);
  CHECK(r.out == kPolicy);
  r = WardIn(dir, "fmt --check - < messy.ward");
  CHECK(r.status == 1);
  CHECK(r.out.rfind("would reformat <stdin>\n", 0) == 0);
  // ir -: the same IR as from the file, but for the file's name.
  r = WardIn(dir, "ir - < p.ward");
  CHECK(r.status == 0);
  std::string from_file = WardIn(dir, "ir p.ward").out;
  for (size_t at; (at = from_file.find("\"p.ward")) != std::string::npos;) {
    from_file.replace(at, 7, "\"<stdin>");
  }
  CHECK(r.out == from_file);
  // Relative imports resolve against the current folder.
  Write(dir + "/lib/base.ward", "abstract policy base { filesystem { allow read \"/opt\" } }\n");
  const std::string main_text =
      "import \"std/linux.ward\"\nimport \"lib/base.ward\"\n"
      "policy p extends base, linux-base {}\n";
  Write(dir + "/main.ward", main_text);
  r = Shell("cd " + dir + " && printf '%s' '" + main_text + "' | " + kStd + " " + WARD_BINARY +
            " check -");
  CHECK(r.status == 0);
  CHECK(r.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  // ...so from another folder the import is not found, at its line.
  r = Shell("cd / && " + kStd + " " + WARD_BINARY + " check --color never - < " + dir +
            "/main.ward");
  CHECK(r.status == 1);
  CHECK(r.err.rfind("<stdin>:2:8: error[W1001]: cannot read 'lib/base.ward': No such file or "
                    "directory\n",
                    0) == 0);
  // fmt - --format json: the text in the document.
  r = WardIn(dir, "fmt --format json - < messy.ward");
  CHECK(r.status == 0);
  auto fmt_json = nlohmann::json::parse(r.out);
  CHECK(fmt_json["files"][0] ==
        nlohmann::json(
            {{"file", "<stdin>"}, {"status", "reformatted"}, {"formatted", "policy p {}\n"}}));
  // diff: one side from standard input.
  Write(dir + "/wider.ward",
        std::string(kPolicy).replace(std::string(kPolicy).find("/usr"), 4, "/"));
  r = WardIn(dir, "diff --fail-on widen - wider.ward < p.ward");
  CHECK(r.status == 1);
  CHECK(r.out == WardIn(dir, "diff --fail-on widen p.ward wider.ward").out);
  r = WardIn(dir, "diff - - < p.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward diff: only one of OLD and NEW can be - (standard input)\n");
  // ward run: standard input is the command's.
  r = WardIn(dir, "run - -- true < p.ward");
  CHECK(r.status == 125);
  CHECK(r.err == "ward run: the policy cannot be - (standard input is the command's)\n");
  // `-` once only.
  r = WardIn(dir, "check - - < p.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward check: <stdin>: `-` given twice\n");
}

// ---- 5. fmt --check --diff ----

TEST_CASE("fmt --check --diff prints the whole unified diff, which patch applies", "[cli][front]") {
  const std::string dir = Folder("diff");
  // Changes far apart: three hunks.
  std::string messy = "import \"std/linux.ward\"\npolicy   p   extends linux-base {\n";
  for (int i = 0; i < 12; ++i) messy += "  // comment " + std::to_string(i) + "\n";
  messy += "  filesystem {   allow read \"/usr\" }\n";
  for (int i = 12; i < 24; ++i) messy += "  // comment " + std::to_string(i) + "\n";
  messy += "  network {\n  allow tcp to 10.0.0.0/8 port 443\n  }\n}";
  Write(dir + "/p.ward", messy);
  Run formatted = WardIn(dir, "fmt - < p.ward");
  REQUIRE(formatted.status == 0);
  Run r = WardIn(dir, "fmt --check --diff p.ward");
  CHECK(r.status == 1);
  CHECK(r.err == "ward fmt: 1 of 1 file would be reformatted\n");
  CHECK(Slurp(dir + "/p.ward") == messy);  // nothing written
  CHECK(r.out ==
        "--- a/p.ward\n"
        "+++ b/p.ward\n"
        "@@ -1,5 +1,5 @@\n"
        " import \"std/linux.ward\"\n"
        "-policy   p   extends linux-base {\n"
        "+policy p extends linux-base {\n"
        "   // comment 0\n"
        "   // comment 1\n"
        "   // comment 2\n"
        "@@ -12,7 +12,9 @@\n"
        "   // comment 9\n"
        "   // comment 10\n"
        "   // comment 11\n"
        "-  filesystem {   allow read \"/usr\" }\n"
        "+  filesystem {\n"
        "+    allow read \"/usr\"\n"
        "+  }\n"
        "   // comment 12\n"
        "   // comment 13\n"
        "   // comment 14\n"
        "@@ -26,6 +28,6 @@\n"
        "   // comment 22\n"
        "   // comment 23\n"
        "   network {\n"
        "-  allow tcp to 10.0.0.0/8 port 443\n"
        "+    allow tcp to 10.0.0.0/8 port 443\n"
        "   }\n"
        "-}\n"
        "\\ No newline at end of file\n"
        "+}\n");
  // The same hunks as diff -u finds (its headers carry dates: compared
  // from the first @@), and patch -p1 turns the file into fmt's output.
  Write(dir + "/b/p.ward", formatted.out);
  Run gnu = Shell("cd " + dir + " && diff -u p.ward b/p.ward");
  CHECK(gnu.status == 1);
  CHECK(gnu.out.substr(gnu.out.find("@@")) == r.out.substr(r.out.find("@@")));
  Run patched = Shell("cd " + dir + " && (" + kStd + " " + WARD_BINARY +
                      " fmt --diff p.ward | patch -p1 --quiet)");
  CHECK(patched.status == 0);
  CHECK(Slurp(dir + "/p.ward") == formatted.out);
  CHECK(WardIn(dir, "fmt --check --diff p.ward").out.empty());  // canonical now: no diff
}

TEST_CASE("fmt --diff: patch reproduces fmt's output for every bundled policy, mangled",
          "[cli][front]") {
  // Each policy of the repository with its indentation stripped and blank
  // lines doubled: many hunks per file, several files in one diff.
  const std::string dir = Folder("mangled");
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(WARD_SOURCE_DIR "/policies")) {
    if (entry.path().extension() != ".ward") continue;
    std::ifstream in(entry.path());
    std::string mangled;
    for (std::string line; std::getline(in, line);) {
      size_t first = line.find_first_not_of(' ');
      mangled += (first == std::string::npos ? "\n" : line.substr(first) + "\n");
      if (first == std::string::npos) mangled += "\n";
    }
    Write(dir + "/" + std::to_string(files++) + ".ward", mangled);
  }
  REQUIRE(files >= 3);
  Run diff = WardIn(dir, "fmt --diff .");
  CHECK(diff.status == 0);
  Write(dir + "/all.diff", diff.out);
  std::vector<std::string> want;
  for (size_t i = 0; i < files; ++i) {
    want.push_back(WardIn(dir, "fmt - < " + std::to_string(i) + ".ward").out);
  }
  Run patched = Shell("cd " + dir + " && patch -p1 --quiet < all.diff");
  CHECK(patched.status == 0);
  for (size_t i = 0; i < files; ++i) {
    INFO(i);
    CHECK(Slurp(dir + "/" + std::to_string(i) + ".ward") == want[i]);
  }
}

// ---- 6. Kubernetes and domain rules ----

TEST_CASE("kubernetes refuses a domain rule with advice that works: -t kubernetes,cilium",
          "[cli][front]") {
  const std::string dir = Folder("k8s");
  Write(dir + "/svc.ward",
        "import \"std/linux.ward\"\n"
        "policy svc extends linux-base {\n"
        "  network {\n"
        "    allow tcp to 10.0.0.0/8 port 443\n"
        "    allow tcp to \"api.example.com\" port 443\n"
        "  }\n"
        "}\n");
  Run r = WardIn(dir, "compile --color never svc.ward -t kubernetes -o out");
  CHECK(r.status == 1);
  CHECK(r.err.find("svc.ward:5:5: error[B3002]: NetworkPolicy cannot name domains: "
                   "api.example.com\n") != std::string::npos);
  CHECK(r.err.find("  = hint: compile with Cilium too (-t kubernetes,cilium: its toFQDNs carries "
                   "them), or pass --partial to leave them out (not allowed)\n") !=
        std::string::npos);
  // The hinted command succeeds, and the manifest says who enforces what.
  r = WardIn(dir, "compile --color never svc.ward -t kubernetes,cilium -o out");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("svc.ward:5:5: note[B3002]: NetworkPolicy cannot name domains; left to -t "
                   "cilium (toFQDNs): api.example.com\n") != std::string::npos);
  CHECK(r.err.find("error") == std::string::npos);
  auto manifest = nlohmann::json::parse(Slurp(dir + "/out/manifest.json"));
  CHECK(manifest["coverage"]["network"] == nlohmann::json::array({"cilium"}));
  CHECK(manifest["coverage"]["syscalls"] == nlohmann::json::array({"kubernetes"}));
  CHECK(fs::exists(dir + "/out/svc.networkpolicy.yaml"));
  CHECK(Slurp(dir + "/out/svc.cilium.yaml").find("matchName: \"api.example.com\"") !=
        std::string::npos);
  // --partial alone: the warning's hint names the same command.
  r = WardIn(dir, "compile --color never svc.ward -t kubernetes --partial -o out3");
  CHECK(r.status == 0);
  CHECK(r.err.find("  = hint: the network section is not enforced by -t kubernetes: compile with "
                   "Cilium too (-t kubernetes,cilium)\n") != std::string::npos);
  manifest = nlohmann::json::parse(Slurp(dir + "/out3/manifest.json"));
  CHECK(manifest["coverage"]["network"] == "unenforced");
  // The positive control: addresses only, kubernetes alone enforces them.
  Write(dir + "/addr.ward",
        "import \"std/linux.ward\"\npolicy addr extends linux-base { network { allow tcp to "
        "10.0.0.0/8 port 443 } }\n");
  r = WardIn(dir, "compile addr.ward -t kubernetes -o out2");
  CHECK(r.status == 0);
  manifest = nlohmann::json::parse(Slurp(dir + "/out2/manifest.json"));
  CHECK(manifest["coverage"]["network"] == nlohmann::json::array({"kubernetes"}));
}

// ---- 7. lint's configuration and a vendored std ----

// lint's JSON with only the L2404 findings (the rule the configurations set).
nlohmann::json L2404(const std::string& out) {
  nlohmann::json j = nlohmann::json::parse(out);
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& f : j["findings"]) {
    if (f["rule"] == "L2404") kept.push_back(f);
  }
  j["findings"] = kept;
  return j;
}

TEST_CASE("lint finds .ward-lint.yaml upward from each file, stopping at the repository root",
          "[cli][front]") {
  const std::string top = Folder("lintcfg");
  const std::string repo = top + "/repo";
  // Above the repository: never read.
  Write(top + "/.ward-lint.yaml", "rules: {L2404: off}\n");
  fs::create_directories(repo + "/.git");
  Write(repo + "/.ward-lint.yaml", "rules: {L2404: error}\n");
  Write(repo + "/team/.ward-lint.yaml", "rules: {L2404: note}\n");
  const std::string policy =
      "import \"std/linux.ward\"\npolicy p extends linux-base {\n  limits {\n    memory 4G\n  "
      "}\n}\n";
  Write(repo + "/a/deep/a.ward", policy);  // repo's config: error
  std::string other = policy;
  other.replace(other.find("policy p"), 8, "policy q");
  Write(repo + "/team/sub/b.ward", other);  // team's config: note
  Run r = WardIn(repo + "/a", "lint --color never --format json deep/a.ward ../team/sub/b.ward");
  INFO(r.out << r.err);
  CHECK(r.status == 1);  // a.ward's finding is an error
  auto j = L2404(r.out);
  REQUIRE(j["findings"].size() == 2);
  CHECK(j["findings"][0]["file"] == "deep/a.ward");
  CHECK(j["findings"][0]["severity"] == "error");
  CHECK(j["findings"][1]["file"] == "../team/sub/b.ward");
  CHECK(j["findings"][1]["severity"] == "note");
  // The same from any current folder: the files' folders decide.
  r = WardIn("/", "lint --format json " + repo + "/team/sub/b.ward");
  CHECK(r.status == 0);
  CHECK(L2404(r.out)["findings"][0]["severity"] == "note");
  // --config wins over every file's own.
  Write(top + "/explicit.yaml", "rules: {L2404: warning}\n");
  r = WardIn(repo, "lint --format json --config ../explicit.yaml a/deep/a.ward team/sub/b.ward");
  CHECK(r.status == 0);
  j = L2404(r.out);
  CHECK(j["findings"][0]["severity"] == "warning");
  CHECK(j["findings"][1]["severity"] == "warning");
  // Without a config in the repository, the search stops at .git: the
  // folder above's `off` is not read; the rule keeps its own level.
  fs::remove(repo + "/.ward-lint.yaml");
  r = WardIn(repo, "lint --format json a/deep/a.ward");
  CHECK(r.status == 0);
  j = L2404(r.out);
  CHECK(j["findings"][0]["severity"] == "warning");
  CHECK(j["findings"][0]["suppressed"] == false);
  // A bad configuration on the way is named.
  Write(repo + "/a/.ward-lint.yaml", "rules: {L9999: error}\n");
  r = WardIn(repo, "lint a/deep/a.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward lint: " + repo + "/a/.ward-lint.yaml: unknown rule 'L9999'\n");
}

TEST_CASE("a vendored standard library (.ward/std or policies/std) is found upward",
          "[cli][front]") {
  const std::string top = Folder("vendored");
  const std::string repo = top + "/repo";
  fs::create_directories(repo + "/.git");
  fs::create_directories(repo + "/.ward");
  fs::create_directories(repo + "/policies");
  fs::copy(WARD_SOURCE_DIR "/policies/std", repo + "/.ward/std", fs::copy_options::recursive);
  // Only the vendored copy has this file: importing it proves which std.
  Write(repo + "/.ward/std/vendored-only.ward",
        "abstract policy vendored { filesystem { allow read \"/vendored\" } }\n");
  const std::string policy =
      "import \"std/linux.ward\"\nimport \"std/vendored-only.ward\"\n"
      "policy p extends vendored, linux-base {}\n";
  Write(repo + "/svc/p.ward", policy);
  // No WARD_STD: the copy beside the file, upward, is used by every command.
  for (const char* command : {"check", "lint", "ir", "explain --path /vendored --access read"}) {
    INFO(command);
    Run r = Ward(std::string(command).substr(0, std::string(command).find(' ')) + " " + repo +
                     "/svc/p.ward" +
                     (std::string(command).find(' ') == std::string::npos
                          ? ""
                          : std::string(command).substr(std::string(command).find(' '))),
                 "cd / && env -u WARD_STD");
    INFO(r.err);
    CHECK(r.status == 0);
  }
  // policies/std, as in Ward's own repository, likewise.
  fs::rename(repo + "/.ward/std", repo + "/policies/std");
  CHECK(Ward("check " + repo + "/svc/p.ward", "env -u WARD_STD").status == 0);
  // The positive control: outside that repository the installed std has no
  // such file, at the import's line.
  Write(top + "/elsewhere/p.ward", policy);
  Run r = Ward("check --color never " + top + "/elsewhere/p.ward", "env -u WARD_STD");
  CHECK(r.status == 1);
  CHECK(r.err.find("p.ward:2:8: error[W1001]: cannot read '") != std::string::npos);
  // --std and $WARD_STD come first.
  r = Ward("check " + repo + "/svc/p.ward", kStd);
  CHECK(r.status == 1);
  r = Ward("check --std " + std::string(WARD_SOURCE_DIR) + "/policies/std " + repo + "/svc/p.ward",
           "env -u WARD_STD");
  CHECK(r.status == 1);
}
