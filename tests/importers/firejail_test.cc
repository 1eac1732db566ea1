// `ward import --from firejail` (importers/firejail/): every profile Debian
// 12 ships in /etc/firejail (packages firejail and firejail-profiles
// 0.9.72, GPL-2.0-or-later), each imported with its includes, checked as
// `ward check` checks it, within a time bound; then, through `ward
// explain`'s library, the decisions whose meaning is clear: a profile with
// disable-common.inc denies writing ~/.ssh and ~/.bashrc, `seccomp` refuses
// kexec_load, `net none` refuses every connection, noblacklist undoes a
// later blacklist, a whitelist hides its siblings, read-only denies writes
// but not reads, include chains with .local files and ignore, the macros
// with --home. Small profiles of our own are in testdata/firejail/.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "compiler/explain.h"
#include "compiler/load.h"
#include "importers/checked_import.h"
#include "importers/firejail/firejail.h"
#include "language/constants.h"
#include "tests/importers/checked_load.h"

namespace ward::test {
namespace {

using importers::ImportDiagnostic;

const std::string kStd = std::string(WARD_SOURCE_DIR) + "/policies/std";
const std::string kData = std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/firejail";
const std::string kHome = "/home/u";

std::string Diagnostics(const importers::ImportResult& r) {
  std::string out;
  for (const ImportDiagnostic& d : r.diagnostics) {
    out += (d.file.empty() ? "<top>" : d.file) + ":" + std::to_string(d.line) + ": " +
           (d.severity == Severity::kError ? "error: " : "warning: ") + d.message + "\n";
  }
  return out;
}

struct Imported {
  importers::CheckedImport checked;
  std::unique_ptr<ir::LoadedPolicy> loaded;
  const std::string& text() const { return checked.result.text; }
  std::string Path(const std::string& path, ir::FsRight right) const {
    std::string error;
    auto e = ir::ExplainPath(loaded->ir, path, right, kHome, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision;
  }
  std::string Read(const std::string& p) const { return Path(p, ir::FsRight::kRead); }
  std::string Write(const std::string& p) const { return Path(p, ir::FsRight::kWrite); }
  std::string Exec(const std::string& p) const { return Path(p, ir::FsRight::kExec); }
  std::string Connect(const std::string& host, uint16_t port, ir::Protocol protocol,
                      ir::Direction direction = ir::Direction::kEgress) const {
    ir::FlowQuery q;
    q.protocol = protocol;
    q.host = host;
    q.port = port;
    q.direction = direction;
    std::string error;
    auto e = ir::ExplainFlow(loaded->ir, q, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision;
  }
  std::string Syscall(const std::string& name, std::map<int, uint64_t> args = {}) const {
    std::string error;
    auto e = ir::ExplainSyscall(loaded->ir, {name, std::nullopt, args}, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision + (e->decision == "errno" ? " " + std::to_string(e->errno_value) : "");
  }
};

importers::ImportOptions Options(const std::string& path, const std::string& home = "") {
  importers::ImportOptions options;
  options.name = "fj";
  options.source = std::filesystem::path(path).filename().string();
  options.from = "firejail";
  options.path = path;
  options.home = home;
  return options;
}

// Imports `text` as if it were the file `path`; REQUIREs that it checks.
std::unique_ptr<Imported> Import(const std::string& text, const std::string& path,
                                 const std::string& home = kHome) {
  auto out = std::make_unique<Imported>();
  out->checked.result = importers::ImportFirejail(text, Options(path, home));
  INFO(Diagnostics(out->checked.result));
  REQUIRE(out->checked.result.ok);
  out->loaded = CheckAndLoad(&out->checked, kStd);
  return out;
}

std::unique_ptr<Imported> ImportFile(const std::string& path, const std::string& home = kHome) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return Import(std::string(std::istreambuf_iterator<char>(in), {}), path, home);
}

std::string Refused(const std::string& text, const std::string& path = kData + "/x.profile") {
  importers::ImportResult r = importers::ImportFirejail(text, Options(path, kHome));
  CHECK_FALSE(r.ok);
  std::string out;
  for (const ImportDiagnostic& d : r.diagnostics) {
    if (d.severity == Severity::kError) out += std::to_string(d.line) + ": " + d.message + "\n";
  }
  return out;
}

bool HaveEtcFirejail() { return std::filesystem::exists("/etc/firejail/disable-common.inc"); }

TEST_CASE("firejail: every profile Debian ships imports and checks", "[firejail]") {
  if (!HaveEtcFirejail()) {
    FAIL("/etc/firejail is missing: ci/setup.sh installs firejail and firejail-profiles");
  }
  std::vector<std::string> profiles;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/firejail")) {
    if (entry.path().extension() == ".profile") profiles.push_back(entry.path().string());
  }
  std::sort(profiles.begin(), profiles.end());
  CHECK(profiles.size() == 1209);
  // Refused, as firejail refuses them: electron-hardened.inc.profile
  // includes chrome-common-hardened.inc.profile, which 0.9.72 does not ship
  // (a fatal "cannot access profile file" in firejail).
  const std::map<std::string, std::string> kRefused = {
      {"/etc/firejail/electron-hardened.inc.profile",
       "cannot access profile file 'chrome-common-hardened.inc.profile'"}};
  size_t imported = 0, refused = 0, warned = 0, deduplicated = 0;
  std::set<std::string> checked_texts;  // what CheckImport passed, comments left out
  std::map<std::string, size_t> by_construct;
  double slowest = 0;
  std::string slowest_name;
  for (const std::string& path : profiles) {
    INFO(path);
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    const auto start = std::chrono::steady_clock::now();
    importers::CheckedImport checked;
    checked.result = importers::ImportFirejail(text, Options(path));
    if (auto it = kRefused.find(path); it != kRefused.end()) {
      CHECK_FALSE(checked.result.ok);
      CHECK(Diagnostics(checked.result).find(it->second) != std::string::npos);
      ++refused;
      continue;
    }
    INFO(Diagnostics(checked.result));
    REQUIRE(checked.result.ok);
    // 572 profiles are redirects (`include X.profile`): their policy is X's
    // but for the comments that name the files. A text already checked is
    // not checked again (the check reads no comment): that halves the time,
    // which under ASan was 11 minutes.
    std::string key;
    for (size_t at = 0; at < checked.result.text.size();) {
      size_t end = checked.result.text.find('\n', at);
      if (end == std::string::npos) end = checked.result.text.size();
      const std::string line = checked.result.text.substr(at, end - at);
      if (line.find_first_not_of(' ') == std::string::npos ||
          line.compare(line.find_first_not_of(' '), 2, "//") != 0) {
        key += line + "\n";
      }
      at = end + 1;
    }
    if (!checked_texts.insert(key).second) {
      ++imported;
      ++deduplicated;
      warned += !checked.result.diagnostics.empty();
      continue;
    }
    importers::CheckImport(kStd, &checked);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > slowest) {
      slowest = seconds;
      slowest_name = path;
    }
    CHECK(seconds < 20.0);
    INFO(checked.result.text.substr(0, 20000));
    INFO(RenderText(checked.sources, checked.sink, RenderOptions{}));
    REQUIRE(checked.result.ok);
    REQUIRE_FALSE(checked.internal_error);
    ++imported;
    bool any = false;
    for (const ImportDiagnostic& d : checked.result.diagnostics) {
      CHECK(d.severity == Severity::kWarning);
      if (d.message.size() > 1 && d.message[0] == '\'') {
        std::string construct = d.message.substr(1, d.message.find('\'', 1) - 1);
        construct = construct.substr(0, construct.find(' '));
        ++by_construct[construct];
      } else {
        ++by_construct["(other)"];
      }
      any = true;
    }
    warned += any;
  }
  CHECK(imported == 1208);
  CHECK(refused == 1);
  std::cout << "firejail: " << imported << " profiles imported and checked, " << refused
            << " refused as firejail refuses it (" << deduplicated
            << " gave a policy already checked); " << warned << " with warnings; slowest "
            << slowest << " s (" << slowest_name << ")\n";
  std::cout << "firejail: warnings per construct:";
  for (const auto& [c, n] : by_construct) std::cout << " " << c << "=" << n;
  std::cout << "\n";
}

TEST_CASE("firejail: the default seccomp list is firejail's 71 calls", "[firejail]") {
  auto p = Import("seccomp\n", kData + "/x.profile");
  // The 71 calls of /usr/lib/x86_64-linux-gnu/firejail/seccomp, decoded
  // (importers/notes/firejail.md, section 6).
  const char* const kDefault[] = {"_sysctl",
                                  "acct",
                                  "add_key",
                                  "adjtimex",
                                  "afs_syscall",
                                  "bpf",
                                  "chroot",
                                  "clock_adjtime",
                                  "clock_settime",
                                  "create_module",
                                  "delete_module",
                                  "fanotify_init",
                                  "finit_module",
                                  "fsconfig",
                                  "fsmount",
                                  "fsopen",
                                  "fspick",
                                  "get_kernel_syms",
                                  "getpmsg",
                                  "init_module",
                                  "io_cancel",
                                  "io_destroy",
                                  "io_getevents",
                                  "io_setup",
                                  "io_submit",
                                  "ioperm",
                                  "iopl",
                                  "ioprio_set",
                                  "kexec_file_load",
                                  "kexec_load",
                                  "keyctl",
                                  "lookup_dcookie",
                                  "mbind",
                                  "migrate_pages",
                                  "modify_ldt",
                                  "mount",
                                  "move_mount",
                                  "move_pages",
                                  "name_to_handle_at",
                                  "nfsservctl",
                                  "open_by_handle_at",
                                  "open_tree",
                                  "perf_event_open",
                                  "personality",
                                  "pidfd_getfd",
                                  "pivot_root",
                                  "process_vm_readv",
                                  "process_vm_writev",
                                  "ptrace",
                                  "putpmsg",
                                  "query_module",
                                  "reboot",
                                  "remap_file_pages",
                                  "request_key",
                                  "security",
                                  "set_mempolicy",
                                  "setdomainname",
                                  "sethostname",
                                  "settimeofday",
                                  "swapoff",
                                  "swapon",
                                  "sysfs",
                                  "syslog",
                                  "tuxcall",
                                  "umount2",
                                  "uselib",
                                  "userfaultfd",
                                  "ustat",
                                  "vhangup",
                                  "vmsplice",
                                  "vserver"};
  CHECK(std::size(kDefault) == 71);
  for (const char* n : kDefault) {
    INFO(n);
    CHECK(p->Syscall(n) == "errno 1");
  }
  for (const char* n : {"read", "write", "openat", "execve", "clone", "socket", "mprotect"}) {
    INFO(n);
    CHECK(p->Syscall(n) == "allow");
  }
  // The rule in the text names exactly these 71.
  const std::string& t = p->text();
  size_t at = t.find("errno EPERM ");
  REQUIRE(at != std::string::npos);
  // The list goes on over lines after each comma.
  std::string line;
  for (size_t pos = at + 12;;) {
    size_t end = t.find('\n', pos);
    std::string piece = t.substr(pos, end - pos);
    piece = piece.substr(0, piece.find("  //"));
    piece = piece.substr(piece.find_first_not_of(' '));
    line += piece;
    if (line.back() != ',') break;
    line += ' ';
    pos = end + 1;
  }
  std::set<std::string> names;
  for (size_t start = 0; start <= line.size();) {
    size_t comma = std::min(line.find(", ", start), line.size());
    names.insert(line.substr(start, comma - start));
    start = comma + 2;
  }
  CHECK(names == std::set<std::string>(std::begin(kDefault), std::end(kDefault)));
}

TEST_CASE("firejail: seccomp lists, groups, exceptions, drop and keep", "[firejail]") {
  auto p = Import("seccomp !chroot,@swap,unlinkat:ENOENT,$59\n", kData + "/x.profile");
  CHECK(p->Syscall("chroot") == "allow");        // the exception
  CHECK(p->Syscall("kexec_load") == "errno 1");  // the default list stays
  CHECK(p->Syscall("swapon") == "errno 1");
  CHECK(p->Syscall("unlinkat") == "errno 2");
  CHECK(p->Syscall("execve") == "errno 1");  // $59
  auto d = Import("seccomp.drop @clock,ptrace\n", kData + "/x.profile");
  CHECK(d->Syscall("settimeofday") == "errno 1");
  CHECK(d->Syscall("ptrace") == "errno 1");
  CHECK(d->Syscall("kexec_load") == "allow");  // no default list with .drop
  auto k = Import("seccomp.keep read,write,exit_group\n", kData + "/x.profile");
  CHECK(k->Syscall("read") == "allow");
  CHECK(k->Syscall("execve") == "allow");  // @default-keep
  CHECK(k->Syscall("openat") == "errno 1");
  auto kill = Import("seccomp-error-action kill\nseccomp\n", kData + "/x.profile");
  CHECK(kill->Syscall("kexec_load") == "kill");
  CHECK(Refused("seccomp @nosuchgroup\n").find("unknown seccomp group") != std::string::npos);
}

TEST_CASE("firejail: memory-deny-write-execute, restrict-namespaces, protocol", "[firejail]") {
  auto p = Import("memory-deny-write-execute\nrestrict-namespaces user,net\nprotocol unix,inet\n",
                  kData + "/x.profile");
  const uint64_t kWX = 0x2 | 0x4;  // PROT_WRITE | PROT_EXEC
  CHECK(p->Syscall("mmap", {{2, kWX}}) == "errno 1");
  CHECK(p->Syscall("mmap", {{2, 0x1 | 0x2}}) == "allow");
  CHECK(p->Syscall("mprotect", {{2, 0x4}}) == "errno 1");
  CHECK(p->Syscall("memfd_create") == "errno 1");
  CHECK(p->Syscall("unshare", {{0, 0x10000000}}) == "errno 1");  // CLONE_NEWUSER
  CHECK(p->Syscall("unshare", {{0, 0x20000}}) == "allow");       // CLONE_NEWNS
  CHECK(p->Syscall("clone", {{0, 0x40000000}}) == "errno 1");    // CLONE_NEWNET
  CHECK(p->Syscall("setns", {{1, 0}}) == "errno 1");
  CHECK(p->Syscall("clone3") == "errno 38");             // ENOSYS
  CHECK(p->Syscall("socket", {{0, 1}}) == "allow");      // AF_UNIX
  CHECK(p->Syscall("socket", {{0, 2}}) == "allow");      // AF_INET
  CHECK(p->Syscall("socket", {{0, 10}}) == "errno 95");  // AF_INET6: ENOTSUP
  CHECK(p->Syscall("socket", {{0, 16}}) == "errno 95");  // AF_NETLINK
  // No inet6: no IPv6 connection either; no netlink.
  CHECK(p->Connect("192.0.2.1", 443, ir::Protocol::kTcp) == "allow");
  CHECK(p->Connect("2001:db8::1", 443, ir::Protocol::kTcp) == "deny");
}

TEST_CASE("firejail: net none refuses every connection", "[firejail]") {
  auto p = ImportFile("/etc/firejail/mp3splt.profile");  // net none, protocol unix
  for (ir::Protocol proto : {ir::Protocol::kTcp, ir::Protocol::kUdp, ir::Protocol::kIcmp}) {
    for (const char* host : {"192.0.2.1", "127.0.0.1", "2001:db8::1", "::1"}) {
      INFO(host);
      const uint16_t port = proto == ir::Protocol::kIcmp ? 0 : 443;
      CHECK(p->Connect(host, port, proto) == "deny");
      CHECK(p->Connect(host, port, proto, ir::Direction::kIngress) == "deny");
    }
  }
  auto open = Import("include globals.local\n", kData + "/x.profile");
  CHECK(open->Connect("192.0.2.1", 443, ir::Protocol::kTcp) == "allow");
  CHECK(open->Connect("2001:db8::1", 53, ir::Protocol::kUdp) == "allow");
}

TEST_CASE("firejail: disable-common.inc and seccomp in real profiles", "[firejail]") {
  // mp3splt.profile includes disable-common.inc and `seccomp`.
  auto p = ImportFile("/etc/firejail/mp3splt.profile");
  CHECK(p->Write("/home/u/.ssh/id_ed25519") == "deny");
  CHECK(p->Read("/home/u/.ssh/id_ed25519") == "deny");  // blacklist ${HOME}/.ssh
  CHECK(p->Write("/home/u/.bashrc") == "deny");         // read-only ${HOME}/.bashrc
  CHECK(p->Read("/home/u/.bashrc") == "allow");
  CHECK(p->Syscall("kexec_load") == "errno 1");
  CHECK(p->Syscall("read") == "allow");
  // Other users' homes are hidden (restrict_users), the user's own is not.
  CHECK(p->Read("/home/bob/notes.txt") == "deny");
  CHECK(p->Read("/home/u/notes.txt") == "allow");
  CHECK(p->Write("/home/u/notes.txt") == "allow");
  // The read-only system.
  CHECK(p->Write("/usr/bin/ls") == "deny");
  CHECK(p->Read("/usr/lib/x86_64-linux-gnu/libc.so.6") == "allow");
  CHECK(p->Write("/etc/passwd") == "deny");
  // firefox: ~/.mozilla is whitelisted, the rest of home hidden.
  auto f = ImportFile("/etc/firejail/firefox.profile");
  CHECK(f->Read("/home/u/.mozilla/firefox/profiles.ini") == "allow");
  CHECK(f->Write("/home/u/.mozilla/firefox/profiles.ini") == "allow");
  CHECK(f->Read("/home/u/Documents/letter.txt") == "deny");
  CHECK(f->Read("/home/u/.ssh/id_ed25519") == "deny");
  CHECK(f->Syscall("chroot") == "allow");  // seccomp !chroot
  CHECK(f->Syscall("kexec_load") == "errno 1");
}

TEST_CASE("firejail: noblacklist, whitelist, read-only, read-write in order", "[firejail]") {
  auto p = ImportFile(kData + "/order.profile");
  CHECK(p->Read("/home/u/.ssh/config") == "allow");        // noblacklist before the blacklist
  CHECK(p->Read("/home/u/.gnupg/pubring.kbx") == "deny");  // noblacklist after: no effect
  CHECK(p->Read("/var/lib/xkb/a") == "allow");             // whitelisted
  CHECK(p->Read("/var/lib/apt/lists") == "deny");          // its siblings hidden
  CHECK(p->Read("/home/u/notes/a.txt") == "allow");        // read-only: reads stay
  CHECK(p->Write("/home/u/notes/a.txt") == "deny");
  CHECK(p->Write("/home/u/notes/scratch/b") == "allow");  // a later read-write under it
  CHECK(p->Write("/home/u/work/data/x") == "deny");  // read-write, then a later read-only above it
  CHECK(p->Exec("/home/u/bin/tool") == "deny");      // noexec
  CHECK(p->Read("/home/u/bin/tool") == "allow");
  CHECK(p->Read("/home/u/.cache/x") == "deny");   // private-cache
  CHECK(p->Read("/mnt/usb/file") == "deny");      // disable-mnt
  CHECK(p->Read("/dev/snd/pcmC0D0p") == "deny");  // nosound
  CHECK(p->Read("/dev/null") == "allow");         // private-dev keeps it
  CHECK(p->Read("/dev/sda") == "deny");           // private-dev hides the rest
  CHECK(p->Read("/etc/hosts") == "allow");        // private-etc hosts
  CHECK(p->Read("/etc/shadow") == "deny");
  CHECK(p->Exec("/usr/bin/bash") == "allow");  // private-bin bash
  CHECK(p->Exec("/usr/bin/curl") == "deny");
  // Globs: firejail's '*' matches nothing too.
  CHECK(p->Read("/home/u/.mozilla") == "deny");
  CHECK(p->Read("/home/u/.mozilla-thunderbird/x") == "deny");
}

TEST_CASE("firejail: exemptions, whitelist-ro past ignore, protocol lines", "[firejail]") {
  // A noblacklist that matches part of a glob blacklist exempts that part.
  auto p = Import(
      "noblacklist ${HOME}/.local/share/flatpak/exports\n"
      "blacklist ${HOME}/.local/share/flatpak/*\n"
      "nowhitelist /opt/b\n"
      "whitelist /opt/a\n"
      "whitelist /opt/b\n"
      "ignore whitelist\n"
      "whitelist-ro /opt/c\n"
      "protocol unix,inet\n"
      "protocol -inet,inet6\n",
      kData + "/x.profile");
  CHECK(p->Read("/home/u/.local/share/flatpak/exports/bin/x") == "allow");
  CHECK(p->Read("/home/u/.local/share/flatpak/repo/x") == "deny");
  CHECK(p->Read("/opt/a/x") == "allow");
  CHECK(p->Read("/opt/b/x") == "deny");   // nowhitelist before it
  CHECK(p->Read("/opt/c/x") == "allow");  // whitelist-ro is not ignored
  CHECK(p->Write("/opt/c/x") == "deny");
  CHECK(p->Read("/opt/d/x") == "deny");  // the rest of /opt is hidden
  CHECK(p->Connect("2001:db8::1", 443, ir::Protocol::kTcp) == "allow");
  // An AF_INET6 socket reaches IPv4 hosts through mapped addresses, and
  // Ward's ::/0 covers them too; the AF_INET socket itself is refused.
  CHECK(p->Connect("192.0.2.1", 443, ir::Protocol::kTcp) == "allow");
  CHECK(p->Syscall("socket", {{0, 2}}) == "errno 95");
  CHECK(p->Syscall("socket", {{0, 10}}) == "allow");
  // What firejail refuses is refused.
  CHECK(Refused("net br0\n").find("restricted-network") != std::string::npos);
  CHECK(Refused("caps.keep sys_bogus\n").find("unknown capability") != std::string::npos);
  CHECK(Refused("whitelist ${PATH}/x\n").find("not an absolute path") != std::string::npos);
  CHECK(Refused("protocol unix,ipx\n").find("not one firejail knows") != std::string::npos);
  CHECK(Refused("blacklist /a/../etc\n").find("'..' is not allowed") != std::string::npos);
  CHECK(Refused("?HAS_NET: include x.inc\n").find("not allowed after a conditional") !=
        std::string::npos);
  std::string many;
  for (int i = 0; i < 33; ++i) many += "ignore x" + std::to_string(i) + "\n";
  CHECK(Refused(many).find("maximum 32 ignore") != std::string::npos);
}

TEST_CASE("firejail: include chains, .local files, ignore, conditionals", "[firejail]") {
  auto p = ImportFile(kData + "/chain.profile");
  // chain.local (next to the profile) ignores `net none` and adds a blacklist.
  CHECK(p->Connect("192.0.2.1", 443, ir::Protocol::kTcp) == "allow");
  CHECK(p->Read("/home/u/secret") == "deny");
  // chain.inc (next to the profile) is read, its own .local is missing (skipped).
  CHECK(p->Read("/home/u/.password-store/x") == "deny");
  // ?BROWSER_DISABLE_U2F: is true by default; ?BROWSER_ALLOW_DRM: false.
  CHECK(p->Read("/dev/hidraw0") == "deny");
  CHECK(p->Exec("/home/u/x") == "deny");  // noexec ${HOME} stays
  // ignore include disable-programs.inc: ~/.mozilla stays open.
  CHECK(p->Read("/home/u/.mozilla/x") == "allow");
  // A missing include other than .local is fatal.
  CHECK(Refused("include no-such-file.inc\n").find("cannot access profile file") !=
        std::string::npos);
  CHECK(Refused("foo bar\n").find("unknown command 'foo'") != std::string::npos);
  CHECK(Refused("?NO_SUCH: seccomp\n").find("invalid/unsupported conditional") !=
        std::string::npos);
  CHECK(Refused("include loop.profile\n").find("maximum profile include level") !=
        std::string::npos);
  CHECK(Refused("blacklist $HOME/x\n").find("use ${HOME}") != std::string::npos);
  CHECK(Refused("whitelist /etc\n").find("top-level folder") != std::string::npos);
}

TEST_CASE("firejail: macros with and without --home", "[firejail]") {
  const std::string text =
      "blacklist ${HOME}/.aws\nblacklist ~/.netrc\nwhitelist ${DOWNLOADS}\nblacklist "
      "${RUNUSER}/wayland-*\nblacklist ${PATH}/su\n";
  auto p = Import(text, kData + "/x.profile", "/srv/home/alice");
  CHECK(p->text().find("\"/srv/home/alice/.aws\"") != std::string::npos);
  CHECK(p->Read("/srv/home/alice/.aws/credentials") == "deny");
  CHECK(p->Read("/srv/home/alice/.netrc") == "deny");
  CHECK(p->Read("/srv/home/alice/Downloads/a.pdf") == "allow");
  CHECK(p->Read("/srv/home/alice/Music/a.ogg") == "deny");  // whitelist hides the rest of home
  CHECK(p->Read("/run/user/1000/wayland-0") == "deny");
  CHECK(p->Read("/run/user/1000/bus") == "allow");
  CHECK(p->Exec("/usr/bin/su") == "deny");
  CHECK(p->Exec("/bin/su") == "deny");
  CHECK(p->Exec("/usr/local/sbin/su") == "deny");
  // Without --home: Ward's own `~`.
  auto q = Import(text, kData + "/x.profile", "");
  CHECK(q->text().find("\"~/.aws\"") != std::string::npos);
  CHECK(q->Read("/home/u/.aws/credentials") == "deny");
  CHECK(q->Read("/home/u/Downloads/a.pdf") == "allow");
}

TEST_CASE("firejail: capabilities, nonewprivs, noroot, rlimits", "[firejail]") {
  auto p = Import("caps.keep net_raw,chown\nnonewprivs\nrlimit-nofile 100\nrlimit-as 1g\n",
                  kData + "/x.profile");
  CHECK(p->loaded->ir.process.no_new_privileges);
  CHECK(p->loaded->ir.process.capabilities_kept ==
        std::set<std::string>{"CAP_CHOWN", "CAP_NET_RAW"});
  CHECK(p->text().find("open_files 100") != std::string::npos);
  bool warned = false;
  for (const ImportDiagnostic& d : p->checked.result.diagnostics)
    warned |= d.message.find("'rlimit-as' has no exact Ward limit") != std::string::npos;
  CHECK(warned);
  auto open = Import("include globals.local\n", kData + "/x.profile");
  CHECK_FALSE(open->loaded->ir.process.no_new_privileges);
  CHECK(open->loaded->ir.process.capabilities_kept.size() == CapabilityNames().size());
  auto root = Import("noroot\n", kData + "/x.profile");
  CHECK(root->loaded->ir.process.no_new_privileges);
  CHECK(root->loaded->ir.process.capabilities_kept.empty());
  auto drop = Import("caps.drop sys_admin\n", kData + "/x.profile");
  CHECK(drop->loaded->ir.process.capabilities_kept.count("CAP_SYS_ADMIN") == 0);
  CHECK(drop->loaded->ir.process.capabilities_kept.count("CAP_NET_RAW") == 1);
}

TEST_CASE("firejail: the same input gives the same bytes; warnings are in the header",
          "[firejail]") {
  std::ifstream in("/etc/firejail/firefox.profile");
  REQUIRE(in);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  auto a = importers::ImportFirejail(text, Options("/etc/firejail/firefox.profile"));
  auto b = importers::ImportFirejail(text, Options("/etc/firejail/firefox.profile"));
  REQUIRE(a.ok);
  CHECK(a.text == b.text);
  CHECK(a.text.find("// - /etc/firejail/firefox-common.profile:") != std::string::npos);
  CHECK(a.text.find("'apparmor' loads firejail's AppArmor profile") != std::string::npos);
}

}  // namespace
}  // namespace ward::test
