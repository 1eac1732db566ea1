#include "enforcers/linux/hardlinks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace ward::enforce {
namespace {

namespace ll = backend::landlock;

bool Single(const struct stat& st, const std::string& path, uint8_t rights, std::string* error) {
  if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode) || st.st_nlink <= 1) return true;
  *error = "hard links: " + path + " has " + std::to_string(st.st_nlink) +
           " names and the policy denies it " + ll::RightNames(rights) +
           "; another name in a granted tree would reach it with that tree's grant. Remove the "
           "other names (find / -xdev -samefile " +
           path + ") or change the policy";
  return false;
}

// Searches the directory `dir` (taken: closed here) on device `dev`.
bool Search(int dir, dev_t dev, const std::string& path, uint8_t rights, OtherNamesCheck* check,
            std::string* error) {
  DIR* d = fdopendir(dir);
  if (!d) {
    close(dir);
    check->unchecked.push_back(
        {path, rights, "cannot be listed: its files were not checked for other names"});
    return true;
  }
  std::vector<std::string> subdirs;
  bool ok = true;
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (check->searched++ == check->budget) {
      check->unchecked.push_back({path, rights,
                                  "beyond the first " + std::to_string(check->budget) +
                                      " entries of the protected trees: not checked for other "
                                      "names"});
    }
    if (check->searched > check->budget) break;
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    const std::string child = path + "/" + e->d_name;
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev == dev) subdirs.push_back(e->d_name);
    } else if (!Single(st, child, rights, error)) {
      ok = false;
      break;
    }
  }
  for (size_t i = 0; ok && i < subdirs.size() && check->searched <= check->budget; ++i) {
    const int sub =
        openat(dirfd(d), subdirs[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      check->unchecked.push_back({path + "/" + subdirs[i], rights,
                                  "cannot be listed: its files were not checked for other names"});
      continue;
    }
    ok = Search(sub, dev, path + "/" + subdirs[i], rights, check, error);
  }
  closedir(d);
  return ok;
}

}  // namespace

bool CheckOtherNames(int fd, const std::string& path, uint8_t rights, OtherNamesCheck* check,
                     std::string* error) {
  struct stat st {};
  if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0) return true;  // nothing there to reach
  if (!S_ISDIR(st.st_mode)) return Single(st, path, rights, error);
  const int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    check->unchecked.push_back(
        {path, rights, "cannot be listed: its files were not checked for other names"});
    return true;
  }
  return Search(dir, st.st_dev, path, rights, check, error);
}

}  // namespace ward::enforce
