// [root] Output paths as a user gives them (enforcers/linux/files.h): `ward
// import -o` and `ward compile` write through a character device (a scratch
// node made with mknod, 1:3 like /dev/null: never /dev itself) and a FIFO,
// follow symbolic links and keep them, refuse a folder and a FIFO without a
// reader; `ward fmt` on a link keeps the link; `ward compile` that cannot
// write one artifact leaves the folder as it was.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "output_paths_cli_test: needs root (mknod); skipped\n");
    std::exit(77);
  }
  return true;
}();

const char* kProfile = R"({
  "defaultAction": "SCMP_ACT_ERRNO",
  "architectures": ["SCMP_ARCH_X86_64"],
  "syscalls": [{"names": ["read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"}]
})";

const char* kPolicy = R"(policy agent {
  syscalls {
    arch x86_64
    default errno EPERM
    allow read, write, exit_group
  }
  process {
    no_new_privileges
  }
}
)";

const std::string kUnenforced =
    "warning[B3001]: not enforced by the chosen targets: filesystem, network\n";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string CaseDir(const std::string& name) {
  const std::string dir = ScratchDir() + "/out-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Every name below `dir` (temporary files included) with its bytes, or
// "<not a file>"; links are not followed.
std::map<std::string, std::string> Tree(const std::string& dir, const std::string& prefix = "") {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = prefix + e.path().filename().string();
    const fs::file_type type = e.symlink_status().type();
    out[name] = type == fs::file_type::regular ? Slurp(e.path().string()) : "<not a file>";
    if (type == fs::file_type::directory) out.merge(Tree(e.path().string(), name + "/"));
  }
  return out;
}

struct stat Lstat(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st;
}

std::string Import(const std::string& out) {
  return "import --from docker-seccomp " + WriteTemp("profile.json", kProfile) + " -o " + out;
}

TEST_CASE("import -o a character device writes through it; the node stays", "[root][cli]") {
  const std::string dir = CaseDir("null");
  const std::string null = dir + "/null";
  REQUIRE(mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  fs::create_symlink("null", dir + "/link");
  const ino_t ino = Lstat(null).st_ino;
  Run r = Ward(Import(null), kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  r = Ward(Import(dir + "/link"), kStdEnv);
  CHECK(r.status == 0);
  const struct stat st = Lstat(null);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(st.st_rdev == makedev(1, 3));
  CHECK(st.st_ino == ino);
  CHECK(S_ISLNK(Lstat(dir + "/link").st_mode));
  CHECK(Tree(dir).size() == 2);  // null and link, no temporary file
}

TEST_CASE("import -o a FIFO: through it with a reader, an error at once without", "[root][cli]") {
  const std::string dir = CaseDir("fifo");
  const std::string fifo = dir + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  Run r = Ward(Import(fifo), kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward import: cannot write " + fifo + ": a FIFO without a reader\n");
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // positive control
  REQUIRE(reader >= 0);
  r = Ward(Import(fifo), kStdEnv);
  CHECK(r.status == 0);
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = read(reader, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(reader);
  CHECK(got.find("policy profile {\n") != std::string::npos);
  CHECK(S_ISFIFO(Lstat(fifo).st_mode));
}

TEST_CASE("import -o a link: the target is written and the link kept; dangling, loop, folder",
          "[root][cli]") {
  const std::string dir = CaseDir("links");
  std::ofstream(dir + "/target.ward") << "old\n";
  fs::create_symlink("target.ward", dir + "/link.ward");
  Run r = Ward(Import(dir + "/link.ward"), kStdEnv);
  CHECK(r.status == 0);
  CHECK(S_ISLNK(Lstat(dir + "/link.ward").st_mode));
  CHECK(Slurp(dir + "/target.ward").find("policy profile {\n") != std::string::npos);

  fs::create_symlink("made.ward", dir + "/dangling.ward");
  r = Ward(Import(dir + "/dangling.ward"), kStdEnv);
  CHECK(r.status == 0);
  CHECK(S_ISREG(Lstat(dir + "/made.ward").st_mode));
  CHECK(S_ISLNK(Lstat(dir + "/dangling.ward").st_mode));

  fs::create_symlink("loop.ward", dir + "/loop.ward");
  r = Ward(Import(dir + "/loop.ward"), kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "ward import: cannot write " + dir + "/loop.ward: Too many levels of symbolic links\n");
  fs::create_directory(dir + "/folder");
  r = Ward(Import(dir + "/folder"), kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward import: cannot write " + dir + "/folder: Is a directory\n");
  CHECK(Tree(dir).size() == 6);  // no temporary file
}

TEST_CASE("fmt on a link rewrites the target and keeps the link", "[root][cli]") {
  const std::string dir = CaseDir("fmt");
  fs::create_directory(dir + "/real");
  std::ofstream(dir + "/real/p.ward") << "policy p {\n  limits {   cpus 2 }\n}\n";
  chmod((dir + "/real/p.ward").c_str(), 0640);
  fs::create_symlink("real/p.ward", dir + "/p.ward");
  Run r = Ward("fmt " + dir + "/p.ward");
  CHECK(r.status == 0);
  CHECK(r.out == "reformatted " + dir + "/p.ward\n");
  CHECK(S_ISLNK(Lstat(dir + "/p.ward").st_mode));
  CHECK(fs::read_symlink(dir + "/p.ward") == "real/p.ward");
  CHECK(Slurp(dir + "/real/p.ward") == "policy p {\n  limits {\n    cpus 2\n  }\n}\n");
  CHECK((Lstat(dir + "/real/p.ward").st_mode & 07777) == 0640);
  CHECK(Tree(dir).size() == 3);  // real, real/p.ward, p.ward
}

TEST_CASE("compile: an artifact that cannot be written leaves the folder as it was",
          "[root][cli]") {
  const std::string p = WriteTemp("agent.ward", kPolicy);
  // A fresh folder: the third artifact (by path) has a folder in its way.
  const std::string fresh = CaseDir("compile-fresh");
  fs::create_directory(fresh + "/agent.seccomp.json");
  Run r = Ward("compile --color never " + p + " -t oci,process -o " + fresh, kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == kUnenforced + "ward compile: cannot write " + fresh +
                     "/agent.seccomp.json: Is a directory; nothing written\n");
  CHECK(r.out.empty());
  CHECK(Tree(fresh) == std::map<std::string, std::string>{{"agent.seccomp.json", "<not a file>"}});

  // A folder holding an earlier compile (positive control: that one works)
  // and the same obstacle: the earlier files keep their bytes.
  const std::string old = CaseDir("compile-old");
  REQUIRE(Ward("compile " + p + " -t oci,process -o " + old, kStdEnv).status == 0);
  fs::remove(old + "/agent.seccomp.json");
  fs::create_directory(old + "/agent.seccomp.json");
  const auto before = Tree(old);
  CHECK(before.size() == 4);
  std::string other = kPolicy;
  other.replace(other.find("read, "), 6, "");  // other bytes in every artifact
  r = Ward("compile " + WriteTemp("agent.ward", other) + " -t oci,process -o " + old, kStdEnv);
  CHECK(r.status == 2);
  CHECK(Tree(old) == before);

  // A FIFO without a reader as the manifest (staged last): the same.
  const std::string fifo = CaseDir("compile-fifo");
  REQUIRE(mkfifo((fifo + "/manifest.json").c_str(), 0600) == 0);
  r = Ward("compile --color never " + p + " -t oci,process -o " + fifo, kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == kUnenforced + "ward compile: cannot write " + fifo +
                     "/manifest.json: a FIFO without a reader; nothing written\n");
  CHECK(Tree(fifo) == std::map<std::string, std::string>{{"manifest.json", "<not a file>"}});
}

TEST_CASE("compile: artifacts through links and devices; the links and the node stay",
          "[root][cli]") {
  const std::string p = WriteTemp("agent.ward", kPolicy);
  const std::string dir = CaseDir("compile-links");
  fs::create_directory(dir + "/real");
  fs::create_directory_symlink("real", dir + "/out");
  REQUIRE(mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  fs::create_symlink("../null", dir + "/real/agent.process.json");
  Run r = Ward("compile " + p + " -t oci,process -o " + dir + "/out", kStdEnv);
  CHECK(r.status == 0);
  CHECK(S_ISLNK(Lstat(dir + "/out").st_mode));
  CHECK(S_ISLNK(Lstat(dir + "/real/agent.process.json").st_mode));
  CHECK(S_ISCHR(Lstat(dir + "/null").st_mode));
  CHECK(Slurp(dir + "/real/manifest.json").find("\"agent.process.json\"") != std::string::npos);
  CHECK(Tree(dir + "/real").size() == 4);  // and no temporary file
}

}  // namespace
}  // namespace ward::test
