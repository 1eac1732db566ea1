// [root] The one file writer (enforcers/linux/files.h) on scratch device
// nodes made with mknod in a temporary folder (never on /dev): a character
// device is written through and stays the same node, directly and through
// a link; a failing device write is an error; a block device is refused;
// another user's link in a sticky shared folder is not followed; a
// replaced file keeps its foreign owner; state folders and files of
// another user are refused.
#include "enforcers/linux/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/enforcers/linux/scratch.h"

namespace ward::enforce {
namespace {

namespace fs = std::filesystem;

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "files_root_test: needs root; skipped\n");
    std::exit(77);
  }
  return true;
}();

// A character device like /dev/null (1:3) or /dev/full (1:7), in the scratch folder.
std::string Device(const Scratch& s, const std::string& name, unsigned minor) {
  const std::string path = s / name;
  REQUIRE(mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0);
  return path;
}

TEST_CASE("WriteUserFile: a character device is written through and stays the same node",
          "[root][files]") {
  Scratch s("ward-files-root");
  const std::string null = Device(s, "null", 3);
  fs::create_symlink("null", s / "link");
  const struct stat before = Lstat(null);
  std::string error;
  REQUIRE(WriteUserFile(null, "discarded\n", &error));
  REQUIRE(WriteUserFile(s / "link", "discarded\n", &error));
  const struct stat after = Lstat(null);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_rdev == makedev(1, 3));
  CHECK(after.st_ino == before.st_ino);
  CHECK(S_ISLNK(Lstat(s / "link").st_mode));
  CHECK(Names(s.dir) == std::set<std::string>{"link", "null"});
}

TEST_CASE(
    "WriteUserFile: a device that refuses the write is an error (positive control: "
    "the same node type takes it)",
    "[root][files]") {
  Scratch s("ward-files-root");
  const std::string full = Device(s, "full", 7);
  std::string error;
  CHECK_FALSE(WriteUserFile(full, "x", &error));
  CHECK(error == full + ": No space left on device");
  CHECK(S_ISCHR(Lstat(full).st_mode));
  CHECK(WriteUserFile(Device(s, "null", 3), "x", &error));
}

TEST_CASE("WriteUserFile: a block device is refused, never opened", "[root][files]") {
  Scratch s("ward-files-root");
  // A loop device number no loop device has: nothing could be reached.
  const std::string disk = s / "disk";
  REQUIRE(mknod(disk.c_str(), S_IFBLK | 0600, makedev(7, 250)) == 0);
  fs::create_symlink("disk", s / "link");
  std::string error;
  CHECK_FALSE(WriteUserFile(disk, "x", &error));
  CHECK(error == disk + ": is a block device");
  CHECK_FALSE(WriteUserFile(s / "link", "x", &error));
  CHECK(error == s / "link" + ": is a block device");
  CHECK(S_ISBLK(Lstat(disk).st_mode));
  CHECK(Names(s.dir) == std::set<std::string>{"disk", "link"});
}

TEST_CASE("StagedFiles: a device staged with a failing file is never written", "[root][files]") {
  Scratch s("ward-files-root");
  const std::string full = Device(s, "full", 7);  // any write would fail: none is tried
  fs::create_directory(s / "in-the-way");
  StagedFiles files;
  std::string error;
  REQUIRE(files.Stage(full, "x", &error));
  CHECK_FALSE(files.Stage(s / "in-the-way", "y", &error));
  CHECK(error == s / "in-the-way" + ": Is a directory");
  files.Abort();
  CHECK(Names(s.dir) == std::set<std::string>{"full", "in-the-way"});
}

TEST_CASE(
    "WriteUserFile: in a sticky folder others may write, another user's link is not "
    "followed (fs.protected_symlinks)",
    "[root][files]") {
  Scratch s("ward-files-root");
  fs::create_directory(s / "tmp");
  REQUIRE(chmod((s / "tmp").c_str(), 01777) == 0);
  std::ofstream(s / "precious") << "root's\n";
  fs::create_symlink(s / "precious", s / "tmp/planted");
  REQUIRE(lchown((s / "tmp/planted").c_str(), 1234, 1234) == 0);
  std::string error;
  CHECK_FALSE(WriteUserFile(s / "tmp/planted", "x", &error));
  CHECK(error == s / "tmp/planted" + ": Permission denied");
  std::ifstream in(s / "precious");
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "root's\n");
  // Positive controls: the caller's own link there, and the other user's
  // link in a folder that is not shared.
  fs::create_symlink(s / "precious", s / "tmp/mine");
  CHECK(WriteUserFile(s / "tmp/mine", "new\n", &error));
  REQUIRE(chmod((s / "tmp").c_str(), 0755) == 0);
  CHECK(WriteUserFile(s / "tmp/planted", "newer\n", &error));
  CHECK(S_ISLNK(Lstat(s / "tmp/planted").st_mode));
}

TEST_CASE("WriteUserFile: a replaced file keeps its owner and mode", "[root][files]") {
  Scratch s("ward-files-root");
  std::ofstream(s / "theirs") << "old\n";
  REQUIRE(chown((s / "theirs").c_str(), 1234, 1235) == 0);
  REQUIRE(chmod((s / "theirs").c_str(), 0604) == 0);
  std::string error;
  REQUIRE(WriteUserFile(s / "theirs", "new\n", &error));
  const struct stat st = Lstat(s / "theirs");
  CHECK(st.st_uid == 1234);
  CHECK(st.st_gid == 1235);
  CHECK((st.st_mode & 07777) == 0604);
}

TEST_CASE("OpenStateDir and OpenStateFile: another user's folder or file is refused",
          "[root][files]") {
  Scratch s("ward-files-root");
  std::string error;
  fs::create_directory(s / "foreign");
  REQUIRE(chmod((s / "foreign").c_str(), 0700) == 0);
  REQUIRE(chown((s / "foreign").c_str(), 1234, 1234) == 0);
  CHECK(OpenStateDir(s / "foreign", &error) == -1);
  CHECK(error == s / "foreign" + ": owned by uid 1234, not 0");
  CHECK_FALSE(WriteStateFile(s / "foreign", "run-1", "x", &error));
  CHECK(Names(s / "foreign").empty());

  const int dir = OpenStateDir(s / "state", &error);
  REQUIRE(dir >= 0);
  std::ofstream(s / "state/planted.lock") << "";
  REQUIRE(chown((s / "state/planted.lock").c_str(), 1234, 1234) == 0);
  REQUIRE(chmod((s / "state/planted.lock").c_str(), 0600) == 0);
  CHECK(OpenStateFile(dir, "planted.lock", O_RDWR, &error) == -1);
  CHECK(error == "planted.lock: not a regular file of uid 0 that only it may write");
  const int ours = OpenStateFile(dir, "ours.lock", O_RDWR | O_CREAT, &error);  // positive control
  CHECK(ours >= 0);
  close(ours);
  close(dir);
}

}  // namespace
}  // namespace ward::enforce
