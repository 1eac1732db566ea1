// `ward diff` as a user runs it: the text and JSON output, the rules behind
// each line, --fail-on and the exit codes of cli.md.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string TempDir() {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ward-diff-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Slurp(const std::string& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `ward ARGS` through the shell with the repository's standard library.
Run Ward(const std::string& args) {
  static int counter = 0;
  std::string out = TempDir() + "/out" + std::to_string(counter);
  std::string err = TempDir() + "/err" + std::to_string(counter++);
  std::string cmd = std::string("WARD_STD=") + WARD_SOURCE_DIR + "/policies/std " + WARD_BINARY +
                    " " + args + " >" + out + " 2>" + err;
  int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, Slurp(out), Slurp(err)};
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

constexpr char kOld[] = R"(policy p {
  description "reads the database"
  network {
    allow tcp to 10.1.99.0/24 ports 5432, 6379
    deny tcp to 10.1.99.0/24
  }
}
)";

constexpr char kNew[] = R"(policy p {
  description "reads the database"
  network {
    allow tcp to 10.1.99.0/24 ports 5432, 6379
    deny tcp to 10.1.99.0/25
  }
}
)";

}  // namespace

TEST_CASE("diff: equivalent policies print exactly 'no changes' and exit 0") {
  std::string a = Write("same-a.ward", kOld);
  std::string b = Write("same-b.ward", R"(policy p {
  network {
    deny tcp to 10.1.99.0/25, 10.1.99.128/25
    allow tcp to 10.1.99.0/24 ports 6379
    allow tcp to 10.1.99.0/24 ports 5432
  }
  description "reads the database"
}
)");
  Run r = Ward("diff " + a + " " + b + " --fail-on any");
  CHECK(r.status == 0);
  CHECK(r.out == "no changes\n");
  CHECK(r.err.empty());
}

TEST_CASE("diff: each line is followed by the rules behind it") {
  std::string a = Write("old.ward", kOld), b = Write("new.ward", kNew);
  Run r = Ward("diff " + a + " " + b);
  CHECK(r.status == 0);
  CHECK(r.out ==
        "+ egress tcp 10.1.99.128/25 ports 5432,6379\n"
        "  " +
            b +
            ":4:5: allow tcp to 10.1.99.0/24 ports 5432, 6379\n"
            "  " +
            a + ":5:5: deny tcp to 10.1.99.0/24\n");
  // Backwards it is a loss: the old grant first, then the new deny.
  r = Ward("diff " + b + " " + a);
  CHECK(r.out ==
        "- egress tcp 10.1.99.128/25 ports 5432,6379\n"
        "  " +
            b +
            ":4:5: allow tcp to 10.1.99.0/24 ports 5432, 6379\n"
            "  " +
            a + ":5:5: deny tcp to 10.1.99.0/24\n");
}

TEST_CASE("diff: --fail-on widen fails only on a widening, --fail-on any on any change") {
  std::string a = Write("fail-old.ward", kOld), b = Write("fail-new.ward", kNew);
  CHECK(Ward("diff --fail-on widen " + a + " " + b).status == 1);
  CHECK(Ward("diff --fail-on widen " + b + " " + a).status == 0);
  CHECK(Ward("diff --fail-on any " + b + " " + a).status == 1);
  std::string c = Write("fail-desc.ward", R"(policy p {
  description "reads the database, carefully"
  network {
    allow tcp to 10.1.99.0/24 ports 5432, 6379
    deny tcp to 10.1.99.0/24
  }
}
)");
  Run r = Ward("diff --fail-on widen " + a + " " + c);
  CHECK(r.status == 0);
  CHECK(r.out == "~ description \"reads the database\" -> \"reads the database, carefully\"\n");
  CHECK(Ward("diff --fail-on any " + a + " " + c).status == 1);
}

TEST_CASE("diff: --format json") {
  std::string a = Write("json-old.ward", kOld), b = Write("json-new.ward", R"(policy p {
  description "reads the database"
  network {
    allow tcp to 10.1.99.0/24 ports 5432, 6379
    deny tcp to 10.1.99.0/25
  }
  filesystem { allow read "/data" }
}
)");
  Run r = Ward("diff --format json " + a + " " + b);
  CHECK(r.status == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["version"] == 1);
  REQUIRE(j["changes"].size() == 2);
  CHECK(j["changes"][0] == nlohmann::json::parse(R"({
    "section": "network", "kind": "widened",
    "line": "+ egress tcp 10.1.99.128/25 ports 5432,6379",
    "old_rules": [")" + a + R"(:5:5"], "new_rules": [")" +
                                                 b + R"(:4:5"]})"));
  CHECK(j["changes"][1] == nlohmann::json::parse(R"({
    "section": "filesystem", "kind": "widened", "line": "+ read /data",
    "old_rules": [], "new_rules": [")" + b + R"(:7:16"], "example": "/data"})"));
  r = Ward("diff --format json " + a + " " + a);
  CHECK(nlohmann::json::parse(r.out) == nlohmann::json::parse(R"({"version": 1, "changes": []})"));
}

TEST_CASE("diff: --policy applies to both files") {
  std::string a = Write("multi-old.ward", R"(policy p { limits { pids 10 } }
policy q { limits { pids 20 } }
)");
  std::string b = Write("multi-new.ward", R"(policy p { limits { pids 10 } }
policy q { limits { pids 30 } }
)");
  Run r = Ward("diff --policy q " + a + " " + b);
  CHECK(r.status == 0);
  CHECK(r.out == "~ limits pids 20 -> 30\n  " + b + ":2:21: pids 30\n  " + a + ":2:21: pids 20\n");
  CHECK(Ward("diff --policy p " + a + " " + b).out == "no changes\n");
  r = Ward("diff " + a + " " + b);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward: " + a + ": the file holds several policies (p, q): choose one with --policy NAME\n");
  r = Ward("diff --policy nope " + a + " " + b);
  CHECK(r.status == 2);
}

TEST_CASE("diff: a missing file is exit 2, a policy with errors exit 1") {
  std::string a = Write("ok.ward", kOld);
  Run r = Ward("diff " + a + " " + TempDir() + "/missing.ward");
  CHECK(r.status == 2);
  CHECK(r.err == "ward diff: " + TempDir() + "/missing.ward: no such file or directory\n");
  CHECK(r.out.empty());
  std::string bad = Write("bad.ward", "policy p {\n  limits { pids lots }\n}\n");
  r = Ward("diff --color never " + a + " " + bad);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error[W1008]") != std::string::npos);
  CHECK(Ward("diff " + a).status == 2);  // NEW is required
  CHECK(Ward("diff --fail-on narrow " + a + " " + a).status == 2);
}

TEST_CASE("diff: --home says what ~ stands for") {
  std::string a =
      Write("home-old.ward", "policy p { filesystem { allow read \"/home/alice\" } }\n");
  std::string b = Write("home-new.ward", R"(policy p { filesystem {
  allow read "/home/alice"
  deny read "~/.ssh"
} }
)");
  // By default ~ is a home no absolute rule names: /home/alice is not it.
  CHECK(Ward("diff " + a + " " + b).out == "no changes\n");
  Run r = Ward("diff --home /home/alice " + a + " " + b);
  CHECK(r.status == 0);
  CHECK(r.out == "- read ~/.ssh\n  " + a + ":1:25: allow read \"/home/alice\"\n  " + b +
                     ":3:3: deny read \"~/.ssh\"\n");
  r = Ward("diff --home alice " + a + " " + b);
  CHECK(r.status == 2);
  CHECK(r.err == "ward diff: --home must be an absolute path\n");
}

TEST_CASE("diff: --color always paints gains green and losses red") {
  std::string a = Write("color-old.ward", kOld), b = Write("color-new.ward", kNew);
  Run r = Ward("diff --color always " + a + " " + b);
  CHECK(r.out.rfind("\033[32m+ egress tcp 10.1.99.128/25 ports 5432,6379\033[0m\n", 0) == 0);
  r = Ward("diff --color always " + b + " " + a);
  CHECK(r.out.rfind("\033[31m- egress tcp", 0) == 0);
}

TEST_CASE("diff: syscalls: architectures, the default and conditions, with their rules") {
  std::string a = Write("sys-old.ward", R"(policy p {
  syscalls {
    default errno EPERM
    allow clone, read
    errno ENOSYS clone3
  }
}
)");
  std::string b = Write("sys-new.ward", R"(policy p {
  syscalls {
    arch x86_64, aarch64
    default kill
    allow clone, read
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno ENOSYS clone3
  }
}
)");
  Run r = Ward("diff " + a + " " + b);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // A loss lists the OLD rules first; a gain the NEW ones.
  CHECK(r.out ==
        "+ arch aarch64\n"
        "~ syscalls default: errno EPERM -> kill\n"
        "  " +
            a +
            ":3:5: default errno EPERM\n"
            "  " +
            b +
            ":4:5: default kill\n"
            "~ syscall x86_64 clone if arg0 & 0x10000000 == 0x10000000: allow -> errno EPERM\n"
            "  " +
            a +
            ":4:5: allow clone, read\n"
            "  " +
            b + ":6:5: errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER\n");
  r = Ward("diff --format json " + a + " " + b);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["changes"].size() == 3);
  CHECK(j["changes"][0] == nlohmann::json::parse(R"j({
    "section": "syscalls", "kind": "widened", "line": "+ arch aarch64",
    "old_rules": [], "new_rules": [], "example": "aarch64 clone()"})j"));
  CHECK(j["changes"][2] == nlohmann::json::parse(R"j({
    "section": "syscalls", "kind": "narrowed",
    "line": "~ syscall x86_64 clone if arg0 & 0x10000000 == 0x10000000: allow -> errno EPERM",
    "old_rules": [")j" + a + R"j(:4:5"], "new_rules": [")j" +
                                                 b + R"j(:6:5"],
    "example": "x86_64 clone(arg0=0x10000000)"})j"));
  // A new architecture widens, and so does the default back from kill.
  CHECK(Ward("diff --fail-on widen " + a + " " + b).status == 1);
  CHECK(Ward("diff --fail-on widen " + b + " " + a).status == 1);
  // A conditional errno added only narrows.
  std::string c = Write("sys-narrow.ward", R"(policy p {
  syscalls {
    default errno EPERM
    allow clone, read
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno ENOSYS clone3
  }
}
)");
  CHECK(Ward("diff --fail-on widen " + a + " " + c).status == 0);
  CHECK(Ward("diff --fail-on any " + a + " " + c).status == 1);
  CHECK(Ward("diff --fail-on widen " + c + " " + a).status == 1);
}

TEST_CASE("diff: syscalls: a group's change is one line for its syscalls") {
  std::string a = Write("group-old.ward", R"(group @mine = [getpid, getppid]
policy p {
  syscalls {
    allow @mine
  }
}
)");
  std::string b = Write("group-new.ward", R"(group @mine = [getpid, getppid]
policy p {
  syscalls {
    errno EPERM @mine
  }
}
)");
  Run r = Ward("diff " + a + " " + b);
  CHECK(r.status == 0);
  CHECK(r.out == "~ syscall x86_64 getpid,getppid: allow -> errno EPERM\n  " + a +
                     ":4:5: allow @mine\n  " + b + ":4:5: errno EPERM @mine\n");
  CHECK(Ward("diff " + a + " " + a).out == "no changes\n");
}
