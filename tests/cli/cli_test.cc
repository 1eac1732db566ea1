// The `ward` binary as a user runs it: exit codes, streams, formats, colour.
#include <catch2/catch.hpp>

#include "tests/cli/run_ward.h"

using ward::test::Run;
using ward::test::Ward;
using ward::test::WriteTemp;

namespace {
const std::string kStd = ward::test::kStdEnv;
}  // namespace

TEST_CASE("check: a valid policy exits 0 and prints a summary on stdout") {
  std::string p = WriteTemp("ok.ward", "policy p { filesystem { allow read \"/usr\" } }\n");
  Run r = Ward("check " + p, kStd);
  CHECK(r.status == 0);
  CHECK(r.out == "checked 1 file, 1 policy: 0 errors, 0 warnings\n");
  CHECK(r.err.empty());
}

TEST_CASE("check: an invalid policy exits 1 with diagnostics on stderr") {
  std::string p = WriteTemp("bad.ward", "policy p {\n  limits { pids lots }\n}\n");
  Run r = Ward("check --color never " + p, kStd);
  CHECK(r.status == 1);
  CHECK(r.out == "checked 1 file, 1 policy: 1 error, 0 warnings\n");
  CHECK(r.err == p + ":2:17: error[W1008]: 'pids' expects a whole number, found a name 'lots'\n"
                     " 2 |   limits { pids lots }\n"
                     "   |                 ^~~~\n");
}

TEST_CASE("check: --format json writes the diagnostics to stdout") {
  std::string p = WriteTemp("bad2.ward", "policy p { network { allow tcp to any port 0 } }\n");
  Run r = Ward("check --format json " + p, kStd);
  CHECK(r.status == 1);
  CHECK(r.err.empty());
  CHECK(r.out.find("\"version\": 1") != std::string::npos);
  CHECK(r.out.find("\"code\": \"W1019\"") != std::string::npos);
  CHECK(r.out.find("\"column\": 44") != std::string::npos);
}

TEST_CASE("check: usage errors and missing files exit 2") {
  CHECK(Ward("check", kStd).status == 2);
  CHECK(Ward("check --format xml x.ward", kStd).status == 2);
  Run missing = Ward("check /nonexistent/policy.ward", kStd);
  CHECK(missing.status == 2);
  CHECK(missing.err == "ward check: /nonexistent/policy.ward: no such file or directory\n");
  CHECK(Ward("frobnicate", kStd).status == 2);
}

TEST_CASE("check: a missing standard library is an operational failure") {
  std::string p = WriteTemp("ok2.ward", "policy p {}\n");
  Run r = Ward("check --color never --std /nonexistent " + p);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "error[W1032]: the Ward standard library (std/) was not found\n"
        "  = hint: pass --std DIR or set WARD_STD to the policies/std folder\n");
}

TEST_CASE("check: folders expand to the .ward files below them") {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ward-cli-dir-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(dir + "/a.ward") << "policy a {}\n";
  std::ofstream(dir + "/sub/b.ward") << "policy b extends a {}\nimport \"../a.ward\"\n";
  std::ofstream(dir + "/notes.txt") << "not a policy";
  Run r = Ward("check " + dir, kStd);
  CHECK(r.out == "checked 2 files, 2 policies: 0 errors, 0 warnings\n");
  CHECK(r.status == 0);
}

TEST_CASE("check: reports what only lowering finds, as compile does") {
  // Precedence rule 3: two unconditional actions in one policy.
  std::string p =
      WriteTemp("conflict.ward", "policy p { syscalls {\n    allow ptrace\n    kill ptrace\n} }\n");
  const std::string expected =
      p +
      ":3:5: error[W1043]: policy 'p' gives 'ptrace' two unconditional actions: allow and kill\n"
      " 3 |     kill ptrace\n"
      "   |     ^~~~~~~~~~~\n" +
      p +
      ":2:5: note: the other rule\n"
      " 2 |     allow ptrace\n"
      "   |     ^~~~~~~~~~~~\n"
      "  = hint: make the rules agree, or narrow one so that they no longer overlap\n";
  Run r = Ward("check --color never " + p, kStd);
  CHECK(r.status == 1);
  CHECK(r.out == "checked 1 file, 1 policy: 1 error, 0 warnings\n");
  CHECK(r.err == expected);
  Run c = Ward("compile --color never -t seccomp -o " + ward::test::ScratchDir() + "/conflict " + p,
               kStd);
  CHECK(c.status == 1);
  CHECK(c.err == expected);
  // In an abstract policy nothing extends, once; in a base two policies
  // extend, once.
  std::string a =
      WriteTemp("abstract.ward",
                "abstract policy b { syscalls {\n    allow ptrace\n    kill ptrace\n} }\n"
                "policy c1 extends b {}\npolicy c2 extends b {}\n"
                "abstract policy lone { syscalls {\n    errno EPERM kill\n"
                "    errno EACCES kill if arg1 == 9\n} }\n");
  Run b = Ward("check --color never " + a, kStd);
  CHECK(b.status == 1);
  CHECK(b.out == "checked 1 file, 4 policies: 2 errors, 0 warnings\n");
  CHECK(b.err.find(a + ":3:5: error[W1043]: policy 'b' gives 'ptrace' two unconditional") == 0);
  CHECK(b.err.find(a + ":9:5: error[W1043]: overlapping rules give 'kill' two errno values: "
                       "EPERM and EACCES\n") != std::string::npos);
  // More regions than a filter can hold.
  std::string big = WriteTemp("regions.ward",
                              "policy p { syscalls {\n    allow prctl if arg1 != 1 and arg2 != 2 "
                              "and arg3 != 3\n} }\n");
  Run g = Ward("check --color never " + big, kStd);
  CHECK(g.status == 1);
  CHECK(g.err.find(big + ":2:5: error[W1043]: the conditions on 'prctl' split its arguments into "
                         "more than 4096 regions on x86_64") == 0);
  // The positive control: the same rules without the clash check clean.
  std::string ok =
      WriteTemp("noconflict.ward",
                "policy p { syscalls {\n    allow ptrace\n    kill ptrace if arg0 == 16\n} }\n");
  CHECK(Ward("check " + ok, kStd).status == 0);
}

TEST_CASE("colour: only on request or on a terminal, and never with NO_COLOR") {
  std::string p = WriteTemp("bad3.ward", "policy p { limits { pids x } }\n");
  CHECK(Ward("check " + p, kStd).err.find("\033[") == std::string::npos);  // not a TTY
  CHECK(Ward("check --color always " + p, kStd).err.find("\033[1;31merror") != std::string::npos);
  CHECK(Ward("check --color never " + p, kStd).err.find("\033[") == std::string::npos);
}

TEST_CASE("--version and help") {
  Run v = Ward("--version");
  CHECK(v.status == 0);
  CHECK(v.out.rfind("ward 0.1.0\n", 0) == 0);
  Run h = Ward("help check");
  CHECK(h.status == 0);
  CHECK(h.out.find("Parse and check policies") != std::string::npos);
  CHECK(Ward("help nosuch").status == 2);
  CHECK(Ward("check -h").status == 0);
}

TEST_CASE("ward hands its command line to ward-cli in libexec/ward, and says so when it is gone") {
  // The build tree has the installed layout: bin/ward, libexec/ward/ward-cli.
  const std::string bin = std::filesystem::path(WARD_BINARY).parent_path();
  CHECK(std::filesystem::exists(bin + "/../libexec/ward/ward-cli"));
  Run v = Ward("--version");
  CHECK(v.status == 0);
  CHECK(v.out.rfind("ward ", 0) == 0);
  // A `ward` copied alone: no ward-cli beside it.
  const std::string alone = ward::test::ScratchDir() + "/alone/bin";
  std::filesystem::create_directories(alone);
  std::filesystem::copy_file(WARD_BINARY, alone + "/ward",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string cli = alone + "/../libexec/ward/ward-cli";
  Run r = ward::test::Shell(alone + "/ward --version");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ward: cannot run " + cli +
                     ": No such file or directory (ward is installed as bin/ward and "
                     "libexec/ward/ward-cli)\n");
  // `ward run`'s own failures are 125 (the command never started).
  CHECK(ward::test::Shell(alone + "/ward run x.ward -- /usr/bin/true").status == 125);
}
