// [root] The ebpf enforcer changed under traffic (backends/ebpf/README.md,
// "Generations" and "Pins"): a client in the enforced cgroup connects in a
// tight loop while the test flips generations or replaces the BPF object,
// and every outcome it saw must be one that the policy before or the
// policy after gives. Connects go to ports nothing listens on, in the
// fixture's network namespace: allowed is ECONNREFUSED (the kernel's RST),
// refused is EPERM (the cgroup hook), anything else is neither.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "enforcers/linux/ebpf.h"
#include "tests/backends/ebpf/ebpf_fixture.h"
#include "tests/root_guard.h"

namespace ward::test::ebpf {
namespace {

WARD_SKIP_UNLESS_ROOT("the ebpf upgrade tests");

namespace fs = std::filesystem;

struct Cleanup {
  std::vector<std::string> policies;
  ~Cleanup() {
    for (const std::string& p : policies) {
      bool removed;
      std::string error;
      enforce::EbpfRemove(p, &removed, &error);
    }
  }
};

// One destination of the loop: TCP connect to addr:port.
struct Target {
  const char* addr;
  uint16_t port;
};

constexpr int kMaxTargets = 4;

// What the loop saw, in memory shared with it.
struct Seen {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> rounds{0};
  std::atomic<uint64_t> refused[kMaxTargets];  // ECONNREFUSED: allowed
  std::atomic<uint64_t> eperm[kMaxTargets];    // EPERM: refused by the programs
  // A connect the old state let start and the new one refused: destroyed
  // by the flow cutter (ECONNABORTED), or its SYN dropped by the new
  // backstop (cgroup_skb/egress; tcp_connect ignores that error, so the
  // connect times out: EINPROGRESS after SO_SNDTIMEO). Never a connection.
  std::atomic<uint64_t> cut[kMaxTargets];
  std::atomic<uint64_t> other[kMaxTargets];  // anything else (connected, timeouts)
  std::atomic<int> other_errno[kMaxTargets];
};

int ConnectOnce(const Target& t) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(t.port);
  inet_pton(AF_INET, t.addr, &sa.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 ? 0 : errno;
  close(fd);
  return rc;
}

// A child in `cgroup` and the namespace at `netns` connecting to every
// target in turn until told to stop.
class Loop {
 public:
  Loop(const std::string& cgroup, const std::string& netns, std::vector<Target> targets)
      : targets_(std::move(targets)) {
    REQUIRE(targets_.size() <= kMaxTargets);
    void* p =
        mmap(nullptr, sizeof(Seen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    seen_ = new (p) Seen();
    int ready[2];
    REQUIRE(pipe2(ready, O_CLOEXEC) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::ofstream(cgroup + "/cgroup.procs") << getpid() << std::flush;
      const int ns = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(2);
      if (write(ready[1], "r", 1) != 1) _exit(3);
      while (!seen_->stop.load()) {
        for (size_t i = 0; i < targets_.size(); ++i) {
          const int rc = ConnectOnce(targets_[i]);
          if (rc == ECONNREFUSED) {
            ++seen_->refused[i];
          } else if (rc == EPERM) {
            ++seen_->eperm[i];
          } else if (rc == ECONNABORTED || rc == EINPROGRESS) {
            ++seen_->cut[i];
          } else {
            ++seen_->other[i];
            seen_->other_errno[i] = rc;
          }
        }
        ++seen_->rounds;
      }
      _exit(0);
    }
    close(ready[1]);
    char c;
    const bool ok = read(ready[0], &c, 1) == 1;
    close(ready[0]);
    REQUIRE(ok);
  }
  ~Loop() {
    Stop();
    munmap(seen_, sizeof(Seen));
  }
  void Stop() {
    if (pid_ <= 0) return;
    seen_->stop = true;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // Waits for `n` more rounds (the loop runs under the state in force).
  void Rounds(uint64_t n) {
    const uint64_t until = seen_->rounds.load() + n;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (seen_->rounds.load() < until) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);  // the loop is stuck or gone
      usleep(200);
    }
  }
  const Seen& seen() const { return *seen_; }

 private:
  std::vector<Target> targets_;
  Seen* seen_ = nullptr;
  pid_t pid_ = -1;
};

void ApplyWith(const ir::Policy& policy, const std::string& cgroup_dir,
               const std::vector<backend::ResolvedAddress>& resolved,
               const enforce::EbpfApplyOptions& options, enforce::EbpfApplyResult* r) {
  std::string error;
  std::optional<enforce::Cgroup> cg = enforce::ResolveCgroup(cgroup_dir, &error);
  INFO(error);
  REQUIRE(cg);
  DiagnosticSink sink;
  const bool ok = enforce::EbpfApply(policy, *cg, resolved, options, sink, r, &error);
  INFO(error);
  REQUIRE(ok);
}

backend::ResolvedAddress Answer(const std::string& pattern, const std::string& addr) {
  backend::ResolvedAddress a;
  a.pattern = pattern;
  std::string error;
  a.address = *ParseIpOrCidr(addr, &error);
  a.ttl = 3600;
  return a;
}

// The probes' outcomes under one state: ECONNREFUSED or EPERM each.
std::vector<int> Outcomes(const std::string& cgroup, const std::string& netns,
                          const std::vector<Target>& targets) {
  Loop loop(cgroup, netns, targets);
  loop.Rounds(3);
  loop.Stop();
  std::vector<int> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Seen& s = loop.seen();
    INFO(targets[i].addr << ":" << targets[i].port);
    REQUIRE(s.other[i] + s.cut[i] == 0);
    REQUIRE((s.refused[i] == 0) != (s.eperm[i] == 0));
    out.push_back(s.refused[i] ? ECONNREFUSED : EPERM);
  }
  return out;
}

TEST_CASE("a generation flip under a connect loop: every decision is the old or the new one",
          "[root]") {
  // A allows 10.7.0.2:7001 only through a resolved name (the domain maps,
  // flag WARD_CFG_DOMAINS); B allows it by address, without that flag. A
  // run that took A's generation with B's flags (the two words the
  // programs used to read apart) finds nothing in A's address maps and
  // refuses: EPERM, which neither policy gives. Port 7002 of 10.7.0.1 only
  // A allows, 10.7.0.3:7003 only B; 10.7.0.1:7004 neither.
  Environment env;
  Cleanup cleanup{{"ebpfflip"}};
  const std::string cg = env.Cgroup("flip");
  const ir::Policy a = CompilePolicy(
      "policy ebpfflip { network { allow tcp to \"flip.test\" port 7001\n"
      "  allow tcp to 10.7.0.1 port 7002 } }");
  const ir::Policy b = CompilePolicy(
      "policy ebpfflip { network { allow tcp to 10.7.0.2 port 7001\n"
      "  allow tcp to 10.7.0.3 port 7003 } }");
  const std::vector<backend::ResolvedAddress> answers = {Answer("flip.test", "10.7.0.2")};
  const std::vector<Target> targets = {
      {"10.7.0.2", 7001}, {"10.7.0.1", 7002}, {"10.7.0.3", 7003}, {"10.7.0.1", 7004}};
  const std::vector<int> under_a = {ECONNREFUSED, ECONNREFUSED, EPERM, EPERM};
  const std::vector<int> under_b = {ECONNREFUSED, EPERM, ECONNREFUSED, EPERM};

  enforce::EbpfApplyResult r;
  ApplyWith(a, cg, answers, {}, &r);
  CHECK(Outcomes(cg, env.netns_path(), targets) == under_a);
  ApplyWith(b, cg, {}, {}, &r);
  CHECK(Outcomes(cg, env.netns_path(), targets) == under_b);
  const std::string object = r.object_dir;

  Loop loop(cg, env.netns_path(), targets);
  constexpr int kFlips = 12;
  for (int i = 0; i < kFlips; ++i) {
    const bool to_a = i % 2 == 0;
    ApplyWith(to_a ? a : b, cg, to_a ? answers : std::vector<backend::ResolvedAddress>{}, {}, &r);
    // Each flip is a generation flip of the same object, not a new one.
    REQUIRE_FALSE(r.new_object);
    REQUIRE(r.object_dir == object);
    loop.Rounds(20);
  }
  loop.Stop();
  const Seen& s = loop.seen();
  INFO("rounds: " << s.rounds.load());
  CHECK(s.rounds.load() >= 20u * kFlips);
  for (size_t i = 0; i < targets.size(); ++i) {
    INFO(targets[i].addr << ":" << targets[i].port << ": " << s.refused[i] << " refused by the "
                         << "kernel (allowed), " << s.eperm[i] << " EPERM, " << s.other[i]
                         << " other (last errno " << s.other_errno[i] << ")");
    CHECK(s.other[i] == 0);
    // Only outcomes one of the two policies gives.
    if (under_a[i] == under_b[i]) {
      CHECK((under_a[i] == EPERM ? s.refused[i].load() : s.eperm[i] + s.cut[i]) == 0u);
    } else {
      // The flips happened under traffic: both were seen.
      CHECK(s.refused[i] > 0u);
      CHECK(s.eperm[i] > 0u);
    }
  }
}

// The objects pinned for a policy, by folder name.
std::vector<std::string> ObjectIds(const std::string& policy) {
  std::vector<std::string> out;
  for (const enforce::EbpfPinnedObject& o : enforce::EbpfPinnedObjects(policy)) {
    out.push_back(o.id.empty() ? "(flat)" : o.id);
  }
  return out;
}

// A loop over one port allowed before and after, one refused before and
// after, and one only the old policy allows; after the change, the first
// was never refused and the second never allowed.
void CheckNoGap(const Loop& loop, uint64_t min_rounds) {
  const Seen& s = loop.seen();
  INFO("rounds: " << s.rounds.load() << "; allowed port: " << s.refused[0] << " allowed, "
                  << s.eperm[0] << " EPERM, " << s.cut[0] << " cut; refused port: " << s.refused[1]
                  << " allowed, " << s.eperm[1] << " EPERM; other: " << s.other[0] << "/"
                  << s.other[1] << "/" << s.other[2] << " (last errno " << s.other_errno[2] << ")");
  CHECK(s.rounds.load() >= min_rounds);
  CHECK(s.eperm[0] + s.cut[0] == 0u);
  CHECK(s.refused[1] == 0u);
  CHECK(s.other[0] + s.other[1] + s.other[2] == 0u);
}

const char* const kOld =
    "policy ebpfupgrade { network { allow tcp to 10.8.0.1 port 7001\n"
    "  allow tcp to 10.8.0.1 port 7003 } }";
const char* const kNew =
    "policy ebpfupgrade { network { deny tcp to 10.8.0.2 port 7005\n"
    "  allow tcp to 10.8.0.1 port 7001 } }";
const std::vector<Target> kUpgradeTargets = {
    {"10.8.0.1", 7001}, {"10.8.0.1", 7002}, {"10.8.0.1", 7003}};

TEST_CASE("an upgrade to a new object under a connect loop never lets a refused connect through",
          "[root]") {
  Environment env;
  Cleanup cleanup{{"ebpfupgrade"}};
  const std::string cg = env.Cgroup("upgrade");
  enforce::EbpfApplyResult r;
  ApplyWith(CompilePolicy(kOld), cg, {}, {}, &r);
  CHECK(r.new_object);
  const std::string first = r.object_dir;
  CHECK(first == enforce::EbpfPinDir("ebpfupgrade") + "/" + enforce::EbpfObjectIdentity() + "-1");
  CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
        std::vector<int>{ECONNREFUSED, EPERM, ECONNREFUSED});
  // Opened on the first object: each new object takes its event ring
  // buffer over, so this reader sees the refusals of the last one.
  std::string error;
  auto reader = enforce::EbpfEventReader::Open("ebpfupgrade", &error);
  INFO(error);
  REQUIRE(reader);

  Loop loop(cg, env.netns_path(), kUpgradeTargets);
  loop.Rounds(20);
  enforce::EbpfApplyOptions upgrade;
  upgrade.new_object = true;
  constexpr int kUpgrades = 4;
  for (int i = 0; i < kUpgrades; ++i) {
    ApplyWith(CompilePolicy(i % 2 == 0 ? kNew : kOld), cg, {}, upgrade, &r);
    REQUIRE(r.new_object);
    REQUIRE(r.replaced);
    // The new object alone is left, in a folder of its own.
    CHECK(ObjectIds("ebpfupgrade") ==
          std::vector<std::string>{enforce::EbpfObjectIdentity() + "-" + std::to_string(i + 2)});
    CHECK(enforce::EbpfObjectDir("ebpfupgrade") == r.object_dir);
    loop.Rounds(20);
  }
  loop.Stop();
  CheckNoGap(loop, 20u * (kUpgrades + 1));
  // The last upgrade applied kOld: port 7003 is allowed again.
  CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
        std::vector<int>{ECONNREFUSED, EPERM, ECONNREFUSED});
  std::vector<std::string> lines;
  do {  // what the loops left
    lines.clear();
    REQUIRE(reader->Poll(0, &lines, &error));
  } while (!lines.empty());
  CHECK(Outcomes(cg, env.netns_path(), {{"10.8.0.1", 7002}}) == std::vector<int>{EPERM});
  REQUIRE(reader->Poll(1000, &lines, &error));
  CHECK(std::find(lines.begin(), lines.end(),
                  "connect to 10.8.0.1:7002 denied (no rule matched)") != lines.end());
  // One more object, whose rule 1 the first one did not have: the reader
  // names it by the new object's rule texts.
  ApplyWith(CompilePolicy(kNew), cg, {}, upgrade, &r);
  lines.clear();
  CHECK(Outcomes(cg, env.netns_path(), {{"10.8.0.2", 7005}}) == std::vector<int>{EPERM});
  REQUIRE(reader->Poll(1000, &lines, &error));
  CHECK(std::find(lines.begin(), lines.end(),
                  "connect to 10.8.0.2:7005 denied (rule 1: deny tcp to 10.8.0.2 port 7005)") !=
        lines.end());
  Remove("ebpfupgrade");
  CHECK_FALSE(fs::exists(enforce::EbpfPinDir("ebpfupgrade")));
  CHECK(Outcomes(cg, env.netns_path(), {{"10.8.0.1", 7002}}) == std::vector<int>{ECONNREFUSED});
}

TEST_CASE("a re-apply the maps are too small for loads a new object, make before break", "[root]") {
  // The hash maps are sized when an object is created (at least 4096
  // entries, both generations together): 4200 addresses of one policy
  // cannot be written beside the 2 of the generation in force.
  Environment env;
  Cleanup cleanup{{"ebpfupgrade"}};
  const std::string cg = env.Cgroup("grow");
  enforce::EbpfApplyResult r;
  ApplyWith(CompilePolicy(kOld), cg, {}, {}, &r);
  const std::string first = r.object_dir;
  std::string big = "policy ebpfupgrade { network {\n  allow tcp to 10.8.0.1 port 7001\n";
  for (int i = 0; i < 4200; ++i) {
    // Not adjacent: each its own /32, an entry of the HASH map.
    big += "  allow tcp to 10.60." + std::to_string(i / 100) + "." +
           std::to_string(2 * (i % 100) + 1) + " port 7001\n";
  }
  big += "} }";
  const ir::Policy grown = CompilePolicy(big);
  Loop loop(cg, env.netns_path(), kUpgradeTargets);
  loop.Rounds(20);
  ApplyWith(grown, cg, {}, {}, &r);
  loop.Rounds(20);
  loop.Stop();
  CheckNoGap(loop, 40);
  CHECK(r.new_object);
  CHECK(r.object_dir != first);
  CHECK(ObjectIds("ebpfupgrade") == std::vector<std::string>{enforce::EbpfObjectIdentity() + "-2"});
  const int fd = bpf_obj_get((r.object_dir + "/v4_exact").c_str());
  REQUIRE(fd >= 0);
  bpf_map_info info{};
  uint32_t len = sizeof info;
  REQUIRE(bpf_obj_get_info_by_fd(fd, &info, &len) == 0);
  close(fd);
  CHECK(info.max_entries == 32768u);  // 4 x 4201, rounded up to a power of two
  CHECK(Outcomes(cg, env.netns_path(), {{"10.60.41.199", 7001}, {"10.60.41.200", 7001}}) ==
        std::vector<int>{ECONNREFUSED, EPERM});
}

// Turns the policy's object folder into the flat layout of earlier Wards:
// its pins moved up into the policy's folder.
void Flatten(const std::string& policy) {
  const std::string object = enforce::EbpfObjectDir(policy);
  REQUIRE(!object.empty());
  for (const auto& e : fs::directory_iterator(object)) {
    REQUIRE(rename(e.path().c_str(),
                   (enforce::EbpfPinDir(policy) + "/" + e.path().filename().string()).c_str()) ==
            0);
  }
  REQUIRE(rmdir(object.c_str()) == 0);
  REQUIRE(enforce::EbpfObjectDir(policy) == enforce::EbpfPinDir(policy));
}

TEST_CASE("the flat layout of earlier Wards: listed, upgraded make-before-break, removed",
          "[root]") {
  Environment env;
  Cleanup cleanup{{"ebpfupgrade"}};
  const std::string cg = env.Cgroup("flat");
  enforce::EbpfApplyResult r;
  ApplyWith(CompilePolicy(kOld), cg, {}, {}, &r);
  Flatten("ebpfupgrade");
  CHECK(ObjectIds("ebpfupgrade") == std::vector<std::string>{"(flat)"});
  // `ward status` lists it, with the folder its pins are in.
  std::vector<enforce::Enforcement> held;
  std::string error;
  REQUIRE(enforce::EbpfEnforcer().Status(&held, &error));
  auto it = std::find_if(held.begin(), held.end(),
                         [](const enforce::Enforcement& e) { return e.policy == "ebpfupgrade"; });
  REQUIRE(it != held.end());
  CHECK(it->table == enforce::EbpfPinDir("ebpfupgrade"));
  CHECK(it->generation == 0u);
  CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
        std::vector<int>{ECONNREFUSED, EPERM, ECONNREFUSED});

  SECTION("a re-apply replaces it by an object folder, never leaving the cgroup open") {
    Loop loop(cg, env.netns_path(), kUpgradeTargets);
    loop.Rounds(20);
    ApplyWith(CompilePolicy(kNew), cg, {}, {}, &r);
    CHECK(r.new_object);
    loop.Rounds(20);
    loop.Stop();
    CheckNoGap(loop, 40);
    CHECK(ObjectIds("ebpfupgrade") ==
          std::vector<std::string>{enforce::EbpfObjectIdentity() + "-1"});
    // No pin is left in the policy's folder but the object's folder.
    std::vector<std::string> top;
    for (const auto& e : fs::directory_iterator(enforce::EbpfPinDir("ebpfupgrade"))) {
      top.push_back(e.path().filename().string());
    }
    CHECK(top == std::vector<std::string>{enforce::EbpfObjectIdentity() + "-1"});
    CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
          std::vector<int>{ECONNREFUSED, EPERM, EPERM});
  }
  SECTION("an earlier Ward's object without some of today's hooks is replaced too") {
    // As one built before the unix hooks: those links never existed.
    for (const char* link : {"link_connect_unix", "link_sendmsg_unix"}) {
      const std::string pin = enforce::EbpfPinDir("ebpfupgrade") + "/" + link;
      const int fd = bpf_obj_get(pin.c_str());
      REQUIRE(fd >= 0);
      REQUIRE(bpf_link_detach(fd) == 0);
      close(fd);
      REQUIRE(unlink(pin.c_str()) == 0);
    }
    CHECK(enforce::EbpfObjectDir("ebpfupgrade").empty());  // not complete: not in force
    Loop loop(cg, env.netns_path(), kUpgradeTargets);
    loop.Rounds(20);
    ApplyWith(CompilePolicy(kNew), cg, {}, {}, &r);
    CHECK(r.new_object);
    loop.Rounds(20);
    loop.Stop();
    CheckNoGap(loop, 40);
    CHECK(ObjectIds("ebpfupgrade") ==
          std::vector<std::string>{enforce::EbpfObjectIdentity() + "-1"});
  }
  SECTION("ward remove detaches it") {
    Remove("ebpfupgrade");
    CHECK_FALSE(fs::exists(enforce::EbpfPinDir("ebpfupgrade")));
    CHECK(Outcomes(cg, env.netns_path(), {{"10.8.0.1", 7002}}) == std::vector<int>{ECONNREFUSED});
  }
}

TEST_CASE("an apply interrupted between attaching the new object and detaching the old", "[root]") {
  // Both objects attached (the state a crash there leaves): both run, so
  // what either refuses is refused; the next apply keeps the newer one's
  // folder order and removes the older.
  Environment env;
  Cleanup cleanup{{"ebpfupgrade", "ebpfupgrade-hidden"}};
  const std::string cg = env.Cgroup("twice");
  enforce::EbpfApplyResult r;
  ApplyWith(CompilePolicy(kOld), cg, {}, {}, &r);
  Flatten("ebpfupgrade");
  // A second object beside the flat one, attached too: what the old Ward's
  // object (flat, allows 7003) and the new one (kNew) both allow passes.
  const std::string flat = enforce::EbpfPinDir("ebpfupgrade");
  const std::string hidden = flat + "-hidden";
  REQUIRE(rename(flat.c_str(), hidden.c_str()) == 0);
  ApplyWith(CompilePolicy(kNew), cg, {}, {}, &r);
  const std::string object = r.object_dir;
  REQUIRE(rename(object.c_str(), (hidden + "/" + fs::path(object).filename().string()).c_str()) ==
          0);
  REQUIRE(rmdir(flat.c_str()) == 0);
  REQUIRE(rename(hidden.c_str(), flat.c_str()) == 0);
  CHECK(ObjectIds("ebpfupgrade") ==
        std::vector<std::string>{"(flat)", enforce::EbpfObjectIdentity() + "-1"});
  CHECK(enforce::EbpfObjectDir("ebpfupgrade") == object);
  CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
        std::vector<int>{ECONNREFUSED, EPERM, EPERM});
  // The next apply (the old policy again) flips the newer object and
  // removes the flat one: 7003 is allowed again.
  ApplyWith(CompilePolicy(kOld), cg, {}, {}, &r);
  CHECK_FALSE(r.new_object);
  CHECK(ObjectIds("ebpfupgrade") == std::vector<std::string>{enforce::EbpfObjectIdentity() + "-1"});
  CHECK(Outcomes(cg, env.netns_path(), kUpgradeTargets) ==
        std::vector<int>{ECONNREFUSED, EPERM, ECONNREFUSED});
}

}  // namespace
}  // namespace ward::test::ebpf
