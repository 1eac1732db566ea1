#include "enforcers/linux/landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "enforcers/linux/hardlinks.h"
#include "enforcers/linux/landlock_uapi.h"

namespace ward::enforce {
namespace {

namespace uapi = landlock_uapi;
namespace ll = backend::landlock;

// The backend's tables carry the kernel's bits; they must agree.
static_assert(ll::kFsRights[0].bit == uapi::kAccessFsExecute);
static_assert(ll::kFsRights[1].bit == uapi::kAccessFsWriteFile);
static_assert(ll::kFsRights[2].bit == uapi::kAccessFsReadFile);
static_assert(ll::kFsRights[3].bit == uapi::kAccessFsReadDir);
static_assert(ll::kFsRights[4].bit == uapi::kAccessFsRemoveDir);
static_assert(ll::kFsRights[5].bit == uapi::kAccessFsRemoveFile);
static_assert(ll::kFsRights[6].bit == uapi::kAccessFsMakeChar);
static_assert(ll::kFsRights[7].bit == uapi::kAccessFsMakeDir);
static_assert(ll::kFsRights[8].bit == uapi::kAccessFsMakeReg);
static_assert(ll::kFsRights[9].bit == uapi::kAccessFsMakeSock);
static_assert(ll::kFsRights[10].bit == uapi::kAccessFsMakeFifo);
static_assert(ll::kFsRights[11].bit == uapi::kAccessFsMakeBlock);
static_assert(ll::kFsRights[12].bit == uapi::kAccessFsMakeSym);
static_assert(ll::kFsRights[13].bit == uapi::kAccessFsRefer);
static_assert(ll::kFsRights[14].bit == uapi::kAccessFsTruncate);
static_assert(ll::kFsRights[15].bit == uapi::kAccessFsIoctlDev);
static_assert(ll::kNetRights[0].bit == uapi::kAccessNetBindTcp);
static_assert(ll::kNetRights[1].bit == uapi::kAccessNetConnectTcp);
static_assert(ll::kScopes[0].bit == uapi::kScopeAbstractUnixSocket);
static_assert(ll::kScopes[1].bit == uapi::kScopeSignal);

std::string Errno(int e) { return std::strerror(e); }

uint64_t AccessOf(uint8_t rights) {
  uint64_t access = 0;
  for (ir::FsRight r : ir::kFsRights) {
    if (rights & ll::RightBit(r)) access |= ll::FsAccessOf(r);
  }
  return access;
}

// The real file system, opened from the root down with O_PATH|O_NOFOLLOW,
// one component at a time: each rule's fd is the object the policy names,
// never a symlink's target, and no symlink is ever descended.
class FdTree final : public ll::Tree {
 public:
  FdTree(int ruleset_fd, uint64_t handled) : ruleset_fd_(ruleset_fd), handled_(handled) {}
  ~FdTree() override {
    for (Node& n : nodes_) {
      if (n.fd >= 0) close(n.fd);
    }
  }

  bool OpenRoot(std::string* error) {
    const int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      *error = "open /: " + Errno(errno);
      return false;
    }
    return Add(fd) == 0;
  }

  int Child(int dir, const std::string& name) override {
    if (nodes_[dir].fd < 0) return -1;
    const int fd = openat(nodes_[dir].fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -1 : Add(fd);
  }
  Kind KindOf(int node) override { return nodes_[node].kind; }
  bool List(int dir, std::vector<std::string>* names) override {
    const int fd = openat(nodes_[dir].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      return false;
    }
    errno = 0;
    while (const dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        names->push_back(e->d_name);
      }
    }
    const bool ok = errno == 0;
    closedir(d);
    return ok;
  }
  bool Grant(int node, const std::string& path, uint8_t rights, std::string* error) override {
    uint64_t access = AccessOf(rights) & handled_;
    if (nodes_[node].kind != Kind::kDirectory) access &= uapi::kAccessFile;
    if (!access) return true;
    uapi::PathBeneathAttr attr{access, nodes_[node].fd};
    if (syscall(uapi::kSysAddRule, ruleset_fd_, uapi::kRulePathBeneath, &attr, 0) != 0) {
      *error = "add_rule " + path + ": " + Errno(errno);
      return false;
    }
    return true;
  }
  // A file in a carved subtree (a deny nested in an allow) with another
  // name could be reached through it (hardlinks.h): such a file stops the
  // walk, so the run does not start.
  bool Carved(int node, const std::string& path, uint8_t rights, std::string* error) override {
    if (nodes_[node].fd < 0 || nodes_[node].kind == Kind::kSymlink) return true;
    return CheckOtherNames(nodes_[node].fd, path, rights, &other_names_, error);
  }

  std::vector<ll::Loss> TakeUnchecked() { return std::move(other_names_.unchecked); }

 public:
  void Release(int node) override {
    if (nodes_[node].fd >= 0) close(nodes_[node].fd);
    nodes_[node].fd = -1;
  }

 private:
  struct Node {
    int fd;
    Kind kind;
  };

  int Add(int fd) {
    struct stat st {};
    if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0) {
      close(fd);
      return -1;
    }
    Kind kind = S_ISDIR(st.st_mode)   ? Kind::kDirectory
                : S_ISLNK(st.st_mode) ? Kind::kSymlink
                : S_ISREG(st.st_mode) ? Kind::kFile
                                      : Kind::kOther;
    nodes_.push_back({fd, kind});
    return static_cast<int>(nodes_.size() - 1);
  }

  int ruleset_fd_;
  uint64_t handled_;
  std::vector<Node> nodes_;
  OtherNamesCheck other_names_;
};

bool AddPorts(int ruleset_fd, const ir::PortSet& ports, uint64_t access, size_t* count,
              std::string* error) {
  for (const auto& [lo, hi] : ports.ranges()) {
    for (uint32_t p = lo; p <= hi; ++p) {
      uapi::NetPortAttr attr{access, p};
      if (syscall(uapi::kSysAddRule, ruleset_fd, uapi::kRuleNetPort, &attr, 0) != 0) {
        *error = "landlock: add_rule port " + std::to_string(p) + ": " + Errno(errno);
        return false;
      }
      ++*count;
    }
  }
  return true;
}

}  // namespace

int LandlockAbi(std::string* error) {
  const long abi = syscall(uapi::kSysCreateRuleset, nullptr, 0, uapi::kCreateRulesetVersion);
  if (abi < 0) {
    *error = errno == EOPNOTSUPP ? "Landlock is disabled at boot (lsm=)"
             : errno == ENOSYS   ? "the kernel has no Landlock"
                                 : Errno(errno);
    return 0;
  }
  return static_cast<int>(abi);
}

bool PrepareLandlock(const ll::Ruleset& ruleset, const LandlockOptions& options,
                     PreparedLandlock* out, std::string* error) {
  *out = PreparedLandlock{};
  int abi = options.abi;
  if (abi == 0) {
    std::string why;
    abi = LandlockAbi(&why);
    if (abi == 0) {
      *error = "landlock: abi: " + why;
      return false;
    }
  }
  std::vector<std::string> missing = ruleset.Missing(abi);
  if (options.log_new_exec && abi < ll::kLogFlagsAbi) {
    missing.push_back("audit logging after exec needs ABI " + std::to_string(ll::kLogFlagsAbi));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    *error = "landlock: abi: the kernel offers Landlock ABI " + std::to_string(abi) +
             ", the ruleset needs " + std::to_string(std::max(ruleset.Abi(), abi + 1)) + " (" +
             list + "); refusing to run with a weaker ruleset";
    return false;
  }
  out->abi = abi;
  out->restrict_flags = options.log_new_exec ? uapi::kRestrictSelfLogNewExecOn : 0;

  ir::PortSet connect = ruleset.connect_tcp;
  uint64_t handled_net = ruleset.handled_access_net;
  if (options.egress_checked_by_address) {
    connect = connect.Union(ruleset.connect_tcp_partial);
    if (connect == ir::PortSet::All()) handled_net &= ~uapi::kAccessNetConnectTcp;
  }
  uapi::RulesetAttr attr{ruleset.handled_access_fs, handled_net, ruleset.scoped};
  // Older kernels read a shorter struct: pass only the fields in use.
  const size_t size = ruleset.scoped ? sizeof(attr) : handled_net ? 16 : 8;
  const long fd = syscall(uapi::kSysCreateRuleset, &attr, size, 0);
  if (fd < 0) {
    *error = "landlock: create_ruleset: " + Errno(errno);
    return false;
  }
  out->ruleset_fd = static_cast<int>(fd);

  if (ruleset.filesystem.NeedsHome() && !options.home) {
    *error = "landlock: resolve: the policy has ~ patterns and no home directory was given";
    ReleaseLandlock(*out);
    return false;
  }
  {
    FdTree tree(out->ruleset_fd, ruleset.handled_access_fs);
    std::string why;
    if (!tree.OpenRoot(&why)) {
      *error = "landlock: resolve: " + why;
      ReleaseLandlock(*out);
      return false;
    }
    ll::WalkResult walk = ll::Walk(ruleset.filesystem, options.home, tree, options.max_nodes);
    if (!walk.ok) {
      *error = "landlock: " +
               (walk.error.rfind("add_rule", 0) == 0 ? walk.error : "resolve: " + walk.error);
      ReleaseLandlock(*out);
      return false;
    }
    out->grants = std::move(walk.grants);
    out->losses = std::move(walk.losses);
    for (ll::Loss& l : tree.TakeUnchecked()) out->losses.push_back(std::move(l));
  }
  if (((handled_net & uapi::kAccessNetConnectTcp) &&
       !AddPorts(out->ruleset_fd, connect, uapi::kAccessNetConnectTcp, &out->port_rules, error)) ||
      ((handled_net & uapi::kAccessNetBindTcp) &&
       !AddPorts(out->ruleset_fd, ruleset.bind_tcp, uapi::kAccessNetBindTcp, &out->port_rules,
                 error))) {
    ReleaseLandlock(*out);
    return false;
  }
  return true;
}

bool ApplyLandlock(PreparedLandlock& prepared, const LandlockOptions& options,
                   LandlockFailure* failure) {
  if (options.set_no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *failure = {"no_new_privs", errno};
    ReleaseLandlock(prepared);
    return false;
  }
  if (syscall(uapi::kSysRestrictSelf, prepared.ruleset_fd, prepared.restrict_flags) != 0) {
    *failure = {"restrict_self", errno};
    ReleaseLandlock(prepared);
    return false;
  }
  ReleaseLandlock(prepared);
  return true;
}

void ReleaseLandlock(PreparedLandlock& prepared) {
  if (prepared.ruleset_fd >= 0) close(prepared.ruleset_fd);
  prepared.ruleset_fd = -1;
}

std::string DescribeLandlock(const PreparedLandlock& prepared) {
  auto rights = [](uint8_t r) { return ll::RightNames(r); };
  std::string out;
  for (const ll::Grant& g : prepared.grants)
    out += "grant " + g.path + " " + rights(g.rights) + "\n";
  for (const ll::Loss& l : prepared.losses) {
    out += "lost " + l.path + " " + rights(l.rights) + ": " + l.why + "\n";
  }
  return out;
}

}  // namespace ward::enforce
