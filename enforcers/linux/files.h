// Ward's one file writer: every file Ward writes goes through here, so that
// an output path never damages the host (a device node replaced by a
// regular file, a link replaced by a copy) and a reader never sees half a
// file. Two kinds of destination, two sets of rules:
//
// Paths the user names (`-o` of every command, the files `ward fmt`
// rewrites): written as the shell's `>` would write them, but atomically.
// A symbolic link is followed to its final target (every level; a dangling
// link creates its target; more than kMaxLinks levels, a loop included, is
// an error; as fs.protected_symlinks has it, whatever the sysctl says, a
// link in a sticky folder that others may write is followed only when it
// is the caller's or the folder owner's). A character device or a FIFO is
// written through (opened without O_TRUNC or O_CREAT, never renamed); a
// FIFO without a reader is an error at once, not a hang. A block device (a
// disk: no policy belongs there), a socket or a directory is an error. A
// regular file, or a name that does not exist, is written as a temporary
// file in the same folder (`.NAME.ward-PID-N`), fsynced and renamed over
// the name; the replaced file's mode and owner are kept (the owner when the
// caller may give it), a new file gets 0666 less the umask. An existing
// file the caller could not open for writing is refused, as `>` refuses
// it. Unlike `>`, a replaced file's other hard links keep the old contents,
// and its ACLs and extended attributes are not copied (as with an editor's
// save). On every failure the temporary file is removed.
//
// Ward's own state (run records, the run cache, the seccomp filter cache,
// lock files; wardd's later): a folder that must be a real directory (not
// a symbolic link), owned by the effective user (root, for every caller)
// and mode 0700, opened once with O_NOFOLLOW|O_DIRECTORY; every file in it
// is reached through that descriptor, never by following a link, and
// written as an O_EXCL|O_NOFOLLOW temporary (mode 0600) renamed within it.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace ward::enforce {

inline constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit

// Writes `bytes` to `path`, a path the user named (the rules above).
// False with *error ("PATH: reason") when nothing was written.
bool WriteUserFile(const std::string& path, std::string_view bytes, std::string* error);

// Files written together (`ward compile`'s artifacts and manifest), all or
// none as far as the file system allows: Stage writes each in full (a
// regular file as a temporary beside its name; a device or FIFO opened,
// not yet written); Commit renames (or writes
// through) them in the order staged. Until Commit starts, a failure
// leaves the destination as it was: Abort (and the destructor of an
// uncommitted set) removes every temporary file and every folder Stage
// created. The one window is inside Commit: a crash, or a failing write
// through a device, between two renames leaves the earlier files new and
// the later ones old, so stage the file that vouches for the others (a
// manifest) last.
class StagedFiles {
 public:
  // `create_folders`: Stage creates the missing folders above a new file
  // (as mkdir -p); otherwise a missing folder is an error, as for `>`.
  explicit StagedFiles(bool create_folders = false) : create_folders_(create_folders) {}
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();

  // False with *error ("PATH: reason"); the set is then still whole, and
  // Abort removes what was staged.
  bool Stage(const std::string& path, std::string_view bytes, std::string* error);
  // False with *error at the first file that could not be put in place;
  // the ones before it are in place, the rest are removed.
  bool Commit(std::string* error);
  void Abort();

 private:
  struct Entry {
    std::string path;    // as given, for messages
    std::string target;  // the final name (links resolved)
    std::string temp;    // the staged file; "" for a device or FIFO
    int fd = -1;         // the open device or FIFO
    std::string bytes;   // what to write through fd
  };
  std::vector<Entry> entries_;
  std::vector<std::string> made_dirs_;  // created by Stage, parents first
  bool create_folders_ = false;
  bool committed_ = false;
};

// Opens Ward's state folder `dir` (an absolute path), creating it (mode
// 0700) and its missing parents (0755) if needed: its O_DIRECTORY
// descriptor, or -1 with *error ("DIR: reason") when it is a symbolic link,
// not a directory, not the effective user's, or not mode 0700.
int OpenStateDir(const std::string& dir, std::string* error);

// Replaces `name` (one path component) in the state folder `dir_fd` with
// `bytes`: a temporary `.NAME.ward-PID-N` (O_EXCL|O_NOFOLLOW, 0600),
// fsynced, renamed over `name` within the folder, which is then synced
// (wardd's desired state: temp file, fsync, rename, fsync of the folder).
bool WriteStateFile(int dir_fd, const std::string& name, std::string_view bytes,
                    std::string* error);

// OpenStateDir, then WriteStateFile.
bool WriteStateFile(const std::string& dir, const std::string& name, std::string_view bytes,
                    std::string* error);

// Opens `name` in the state folder `dir_fd` with `flags` (O_NOFOLLOW and
// O_CLOEXEC added; O_CREAT creates it 0600): its descriptor, or -1 with
// *error when it cannot, or when it is not a regular file of the effective
// user's that nobody else may write.
int OpenStateFile(int dir_fd, const std::string& name, int flags, std::string* error);

}  // namespace ward::enforce
