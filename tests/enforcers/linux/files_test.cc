// The one file writer (enforcers/linux/files.h), without root: paths the
// user names (regular files, symbolic links to the end of the chain,
// dangling links, loops, folders, FIFOs with and without a reader, sockets),
// staged sets that fail before and during the renames, and Ward's state
// folders and files (refused when linked, foreign or open to others). The
// device nodes and foreign owners are in files_root_test.cc.
#include "enforcers/linux/files.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "tests/enforcers/linux/scratch.h"

namespace ward::enforce {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Reads a FIFO to its end on a thread, from before the write.
struct FifoReader {
  std::string got;
  std::thread thread;
  explicit FifoReader(const std::string& path) {
    thread = std::thread([this, path] { got = Slurp(path); });
  }
  std::string Wait() {
    thread.join();
    return got;
  }
};

// Opens the FIFO for reading (so that a writer's open succeeds) and keeps
// it open until Wait; the thread of FifoReader would race the open.
struct OpenFifo {
  int fd;
  explicit OpenFifo(const std::string& path) : fd(open(path.c_str(), O_RDONLY | O_NONBLOCK)) {
    REQUIRE(fd >= 0);
  }
  std::string Drain() {
    fcntl(fd, F_SETFL, 0);
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
  }
};

TEST_CASE("WriteUserFile: a new file, 0666 less the umask, no temporary left", "[files]") {
  Scratch s;
  const mode_t old = umask(022);
  std::string error;
  REQUIRE(WriteUserFile(s / "out.json", "{}\n", &error));
  umask(old);
  CHECK(Slurp(s / "out.json") == "{}\n");
  CHECK((Lstat(s / "out.json").st_mode & 07777) == 0644);
  CHECK(Names(s.dir) == std::set<std::string>{"out.json"});
}

TEST_CASE("WriteUserFile: a regular file is replaced whole, keeping its mode", "[files]") {
  Scratch s;
  Put(s / "f", "old contents, longer than the new\n");
  chmod((s / "f").c_str(), 0640);
  const ino_t before = Lstat(s / "f").st_ino;
  std::string error;
  REQUIRE(WriteUserFile(s / "f", "new\n", &error));
  CHECK(Slurp(s / "f") == "new\n");
  CHECK((Lstat(s / "f").st_mode & 07777) == 0640);
  CHECK(Lstat(s / "f").st_ino != before);  // renamed over, never written in place
  CHECK(Names(s.dir) == std::set<std::string>{"f"});
}

TEST_CASE("WriteUserFile: symbolic links are followed to the end; the links stay", "[files]") {
  Scratch s;
  fs::create_directory(s / "sub");
  Put(s / "sub/target", "old\n");
  fs::create_symlink("sub/target", s / "rel");  // relative to the link's folder
  fs::create_symlink(s / "rel", s / "abs");     // absolute, to another link
  fs::create_symlink("../abs", s / "sub/up");   // relative, through ..
  std::string error;
  REQUIRE(WriteUserFile(s / "sub/up", "new\n", &error));
  CHECK(Slurp(s / "sub/target") == "new\n");
  CHECK(S_ISLNK(Lstat(s / "sub/up").st_mode));
  CHECK(fs::read_symlink(s / "sub/up") == "../abs");
  CHECK(S_ISLNK(Lstat(s / "abs").st_mode));
  CHECK(S_ISLNK(Lstat(s / "rel").st_mode));
  CHECK(Names(s.dir) == std::set<std::string>{"abs", "rel", "sub"});
  CHECK(Names(s / "sub") == std::set<std::string>{"target", "up"});
}

TEST_CASE("WriteUserFile: a dangling link creates its target", "[files]") {
  Scratch s;
  fs::create_symlink("made", s / "link");
  std::string error;
  REQUIRE(WriteUserFile(s / "link", "x\n", &error));
  CHECK(Slurp(s / "made") == "x\n");
  CHECK(S_ISREG(Lstat(s / "made").st_mode));
  CHECK(S_ISLNK(Lstat(s / "link").st_mode));
}

TEST_CASE("WriteUserFile: a loop of links is an error, and nothing is written", "[files]") {
  Scratch s;
  fs::create_symlink("b", s / "a");
  fs::create_symlink("a", s / "b");
  fs::create_symlink("self", s / "self");
  std::string error;
  CHECK_FALSE(WriteUserFile(s / "a", "x", &error));
  CHECK(error == s / "a" + ": Too many levels of symbolic links");
  CHECK_FALSE(WriteUserFile(s / "self", "x", &error));
  CHECK(error == s / "self" + ": Too many levels of symbolic links");
  CHECK(Names(s.dir) == std::set<std::string>{"a", "b", "self"});
}

TEST_CASE("WriteUserFile: a chain of exactly kMaxLinks links is followed, one more is not",
          "[files]") {
  Scratch s;
  Put(s / "end", "old");
  std::string next = "end";
  for (int i = 0; i < kMaxLinks; ++i) {
    fs::create_symlink(next, s / ("l" + std::to_string(i)));
    next = "l" + std::to_string(i);
  }
  std::string error;
  REQUIRE(WriteUserFile(s / next, "new", &error));
  CHECK(Slurp(s / "end") == "new");
  fs::create_symlink(next, s / "one-more");
  CHECK_FALSE(WriteUserFile(s / "one-more", "x", &error));
  CHECK(error == s / "one-more" + ": Too many levels of symbolic links");
}

TEST_CASE("WriteUserFile: a folder, a socket, a missing folder: errors, nothing written",
          "[files]") {
  Scratch s;
  fs::create_directory(s / "dir");
  fs::create_symlink("dir", s / "to-dir");
  std::string error;
  CHECK_FALSE(WriteUserFile(s / "dir", "x", &error));
  CHECK(error == s / "dir" + ": Is a directory");
  CHECK_FALSE(WriteUserFile(s / "to-dir", "x", &error));
  CHECK(error == s / "to-dir" + ": Is a directory");
  CHECK_FALSE(WriteUserFile(s / "dir/", "x", &error));
  CHECK(error == s / "dir/" + ": Is a directory");

  const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = s / "sock";
  REQUIRE(sock_path.size() < sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock_path.c_str());
  REQUIRE(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  CHECK_FALSE(WriteUserFile(sock_path, "x", &error));
  CHECK(error == sock_path + ": is a socket");
  close(sock);

  CHECK_FALSE(WriteUserFile(s / "missing/f", "x", &error));
  CHECK(error == s / "missing/f" + ": No such file or directory");
  Put(s / "file", "");
  CHECK_FALSE(WriteUserFile(s / "file/f", "x", &error));
  CHECK(error == s / "file/f" + ": Not a directory");
  CHECK(Names(s.dir) == std::set<std::string>{"dir", "file", "sock", "to-dir"});
  CHECK(Names(s / "dir").empty());
}

TEST_CASE("WriteUserFile: a FIFO is written through, and stays a FIFO", "[files]") {
  Scratch s;
  REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
  fs::create_symlink("fifo", s / "link");
  OpenFifo reader(s / "fifo");
  std::string error;
  REQUIRE(WriteUserFile(s / "link", "through the fifo\n", &error));
  CHECK(reader.Drain() == "through the fifo\n");
  CHECK(S_ISFIFO(Lstat(s / "fifo").st_mode));
  CHECK(S_ISLNK(Lstat(s / "link").st_mode));
  CHECK(Names(s.dir) == std::set<std::string>{"fifo", "link"});
}

TEST_CASE("WriteUserFile: more than a pipe holds goes through to a reader that reads", "[files]") {
  Scratch s;
  REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
  const std::string big(1 << 20, 'x');
  const int keep = open((s / "fifo").c_str(), O_RDONLY | O_NONBLOCK);  // so the open succeeds
  FifoReader reader(s / "fifo");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string error;
  const bool ok = WriteUserFile(s / "fifo", big, &error);
  close(keep);
  CHECK(ok);
  CHECK(reader.Wait() == big);
}

TEST_CASE("WriteUserFile: a FIFO without a reader is an error at once, not a hang", "[files]") {
  Scratch s;
  REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(WriteUserFile(s / "fifo", "x", &error));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(error == s / "fifo" + ": a FIFO without a reader");
  CHECK(S_ISFIFO(Lstat(s / "fifo").st_mode));
}

TEST_CASE("WriteUserFile: a reader that goes away is an error, not a SIGPIPE", "[files]") {
  Scratch s;
  REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
  const int reader = open((s / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  StagedFiles files;
  std::string error;
  REQUIRE(files.Stage(s / "fifo", std::string(1 << 20, 'x'), &error));
  close(reader);
  CHECK_FALSE(files.Commit(&error));
  CHECK(error == s / "fifo" + ": Broken pipe");
}

TEST_CASE("StagedFiles: a failure before the renames leaves the folder as it was", "[files]") {
  Scratch s;
  Put(s / "a.json", "old a\n");
  fs::create_directory(s / "c.json");  // in the way of the third file
  REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
  OpenFifo reader(s / "fifo");
  const auto before = Names(s.dir);
  {
    StagedFiles files(/*create_folders=*/true);
    std::string error;
    REQUIRE(files.Stage(s / "a.json", "new a\n", &error));
    REQUIRE(files.Stage(s / "sub/deeper/b.json", "b\n", &error));
    REQUIRE(files.Stage(s / "fifo", "to the fifo\n", &error));
    CHECK(Names(s.dir).size() == before.size() + 2);  // a's temporary, sub/
    CHECK_FALSE(files.Stage(s / "c.json", "c\n", &error));
    CHECK(error == s / "c.json" + ": Is a directory");
  }  // never committed: the destructor removes the staged files
  CHECK(Names(s.dir) == before);
  CHECK(Slurp(s / "a.json") == "old a\n");
  CHECK(reader.Drain().empty());  // nothing went through the FIFO
}

TEST_CASE("StagedFiles: Commit puts every file in place, creating folders", "[files]") {
  Scratch s;
  Put(s / "a.json", "old a\n");
  StagedFiles files(/*create_folders=*/true);
  std::string error;
  REQUIRE(files.Stage(s / "a.json", "new a\n", &error));
  REQUIRE(files.Stage(s / "sub/deeper/b.json", "b\n", &error));
  REQUIRE(files.Stage(s / "manifest.json", "m\n", &error));
  CHECK(Slurp(s / "a.json") == "old a\n");  // staged, not yet in place
  REQUIRE(files.Commit(&error));
  CHECK(Slurp(s / "a.json") == "new a\n");
  CHECK(Slurp(s / "sub/deeper/b.json") == "b\n");
  CHECK(Slurp(s / "manifest.json") == "m\n");
  CHECK(Names(s.dir) == std::set<std::string>{"a.json", "manifest.json", "sub"});
  CHECK(Names(s / "sub/deeper") == std::set<std::string>{"b.json"});
}

TEST_CASE("StagedFiles: without create_folders a missing folder is an error", "[files]") {
  Scratch s;
  StagedFiles files;
  std::string error;
  CHECK_FALSE(files.Stage(s / "sub/b.json", "b\n", &error));
  CHECK(error == s / "sub/b.json" + ": No such file or directory");
  CHECK(Names(s.dir).empty());
}

TEST_CASE(
    "StagedFiles: a rename that fails in Commit: the files before it are in place, the "
    "rest removed (the documented window)",
    "[files]") {
  Scratch s;
  StagedFiles files;
  std::string error;
  REQUIRE(files.Stage(s / "a", "a\n", &error));
  REQUIRE(files.Stage(s / "b", "b\n", &error));
  REQUIRE(files.Stage(s / "manifest", "m\n", &error));
  fs::create_directories(s / "b/in-the-way");  // after staging: rename(file, non-empty dir) fails
  CHECK_FALSE(files.Commit(&error));
  CHECK(error == s / "b" + ": Is a directory");
  CHECK(Slurp(s / "a") == "a\n");
  CHECK(Names(s.dir) == std::set<std::string>{"a", "b"});  // no manifest, no temporaries
}

TEST_CASE(
    "OpenStateDir: creates the folder 0700 whatever the umask; refuses a link, a file, "
    "a folder open to others, a relative path",
    "[files]") {
  Scratch s;
  std::string error;
  const mode_t old = umask(0277);
  const int fd = OpenStateDir(s / "var/cache/ward", &error);
  umask(old);
  REQUIRE(fd >= 0);
  close(fd);
  CHECK((Lstat(s / "var/cache/ward").st_mode & 07777) == 0700);
  CHECK((Lstat(s / "var/cache").st_mode & 07777) == 0755);
  const int again = OpenStateDir(s / "var/cache/ward", &error);  // positive control: it is fine
  CHECK(again >= 0);
  close(again);

  fs::create_directory_symlink(s / "var/cache/ward", s / "linked");
  CHECK(OpenStateDir(s / "linked", &error) == -1);
  CHECK(error == s / "linked" + ": is a symbolic link");
  Put(s / "file", "");
  CHECK(OpenStateDir(s / "file", &error) == -1);
  CHECK(error == s / "file" + ": Not a directory");
  fs::create_directory(s / "open");
  chmod((s / "open").c_str(), 0755);
  CHECK(OpenStateDir(s / "open", &error) == -1);
  CHECK(error == s / "open" + ": mode 0755, not 0700");
  CHECK(OpenStateDir("relative/dir", &error) == -1);
  CHECK(error == "relative/dir: not an absolute path");
}

TEST_CASE("WriteStateFile: 0600, replaced by a rename within the folder, never through a link",
          "[files]") {
  Scratch s;
  const std::string dir = s / "state";
  std::string error;
  REQUIRE(WriteStateFile(dir, "run-1", "first\n", &error));
  CHECK(Slurp(dir + "/run-1") == "first\n");
  CHECK((Lstat(dir + "/run-1").st_mode & 07777) == 0600);
  REQUIRE(WriteStateFile(dir, "run-1", "second\n", &error));
  CHECK(Slurp(dir + "/run-1") == "second\n");

  // A link planted under the name is replaced, its target untouched.
  Put(s / "outside", "not Ward's\n");
  fs::create_symlink(s / "outside", dir + "/run-2");
  REQUIRE(WriteStateFile(dir, "run-2", "ours\n", &error));
  CHECK(S_ISREG(Lstat(dir + "/run-2").st_mode));
  CHECK(Slurp(s / "outside") == "not Ward's\n");
  CHECK(Names(dir) == std::set<std::string>{"run-1", "run-2"});

  CHECK_FALSE(WriteStateFile(dir, "a/b", "x", &error));
  CHECK(error == dir + "/a/b: not a file name");
  fs::create_directory_symlink(dir, s / "linked");
  CHECK_FALSE(WriteStateFile(s / "linked", "run-3", "x", &error));
  CHECK(error == s / "linked" + ": is a symbolic link");
  CHECK_FALSE(fs::exists(dir + "/run-3"));
}

TEST_CASE("OpenStateFile: creates 0600; refuses a link and a file others may write", "[files]") {
  Scratch s;
  std::string error;
  const int dir = OpenStateDir(s / "state", &error);
  REQUIRE(dir >= 0);
  const int lock = OpenStateFile(dir, "x.lock", O_RDWR | O_CREAT, &error);
  CHECK(lock >= 0);
  close(lock);
  CHECK((Lstat(s / "state/x.lock").st_mode & 07777) == 0600);

  Put(s / "outside", "");
  fs::create_symlink(s / "outside", s / "state/linked.lock");
  CHECK(OpenStateFile(dir, "linked.lock", O_RDWR | O_CREAT, &error) == -1);
  CHECK(error == "linked.lock: Too many levels of symbolic links");
  Put(s / "state/open.lock", "");
  chmod((s / "state/open.lock").c_str(), 0622);
  CHECK(OpenStateFile(dir, "open.lock", O_RDWR, &error) == -1);
  CHECK(error == "open.lock: not a regular file of uid " + std::to_string(geteuid()) +
                     " that only it may write");
  close(dir);
}

}  // namespace
}  // namespace ward::enforce
