// [root] `ward doctor` on this host (cli/doctor.cc): the lines that follow
// from kernel facts the test reads itself (the Landlock ABI by the syscall,
// the cgroup v2 mount from /proc/mounts and its controller files, the
// seccomp actions, BTF), the verdict and its exit code, the JSON shape, and
// the same host seen by an unprivileged user: the layers it lacks named.
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/run_ward.h"

using ward::test::Run;
using ward::test::Shell;
using ward::test::Ward;

namespace {

const bool kRoot = [] {
  if (geteuid() != 0) {
    std::fprintf(stderr, "doctor_cli_test: needs root (setpriv, capabilities); skipped\n");
    std::exit(77);
  }
  return true;
}();

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Split(const std::string& text, char sep = ' ') {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; std::getline(in, w, sep);) {
    while (!w.empty() && (w.back() == '\n' || w.back() == ' ')) w.pop_back();
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out.empty() ? "none" : out;
}

std::vector<std::string> Lines(const std::string& text) { return Split(text, '\n'); }

std::string LineOf(const std::string& out, const std::string& prefix) {
  for (const std::string& l : Lines(out)) {
    if (l.rfind(prefix, 0) == 0) return l;
  }
  return "";
}

// What the test knows of the cgroup mounts, from /proc/mounts.
struct Cgroups {
  std::string v2;
  bool hybrid = false;
  std::vector<std::string> v1;
};

Cgroups ReadCgroups() {
  Cgroups c;
  std::istringstream in(Slurp("/proc/mounts"));
  for (std::string dev, dir, type, opts, rest; in >> dev >> dir >> type >> opts;) {
    std::getline(in, rest);
    if (type == "cgroup2" && c.v2.empty()) c.v2 = dir;
    if (type != "cgroup") continue;
    c.hybrid = true;
    for (const std::string& o : Split(opts, ',')) {
      for (const char* k : {"cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "io", "devices",
                            "freezer", "hugetlb", "net_cls", "net_prio", "perf_event", "rdma"}) {
        if (o == k) c.v1.push_back(o);
      }
    }
  }
  return c;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("doctor: the lines this kernel's facts decide, and the verdict's exit code") {
  Run r = Ward("doctor");
  INFO(r.out << r.err);
  CHECK(r.err.empty());
  utsname u{};
  REQUIRE(uname(&u) == 0);
  CHECK(Lines(r.out)[0] ==
        std::string("ward doctor: kernel ") + u.release + " (" + u.machine + ")");

  const long abi = syscall(444, nullptr, 0, 1U);  // landlock_create_ruleset(VERSION)
  CHECK(LineOf(r.out, "landlock ") ==
        (abi > 0 ? "landlock    ok       ABI " + std::to_string(abi) +
                       " (TCP ports from ABI 4, scopes from 6, audit logging from 7)"
                 : std::string("landlock    missing  ")));

  const std::string actions = Join(Split(Slurp("/proc/sys/kernel/seccomp/actions_avail")));
  CHECK(LineOf(r.out, "seccomp ")
            .rfind("seccomp     ok       filters; actions: " + actions +
                       "; SECCOMP_FILTER_FLAG_LOG: yes;",
                   0) == 0);

  const Cgroups c = ReadCgroups();
  REQUIRE(!c.v2.empty());
  const std::vector<std::string> controllers = Split(Slurp(c.v2 + "/cgroup.controllers"));
  const std::vector<std::string> subtree = Split(Slurp(c.v2 + "/cgroup.subtree_control"));
  std::string limits;
  for (const char* l : {"cpu", "memory", "pids"}) {
    limits += std::string(limits.empty() ? "" : ", ") + l + " " +
              (Has(controllers, l) ? "v2"
               : Has(c.v1, l)      ? "v1"
                                   : "none");
  }
  CHECK(LineOf(r.out, "cgroup ") ==
        "cgroup      ok       v2 at " + c.v2 +
            (c.hybrid ? " (hybrid: v1 hierarchies beside it)" : "") + "; controllers: " +
            Join(controllers) + "; subtree_control: " + Join(subtree) + "; limits: " + limits);

  const bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  CHECK(LineOf(r.out, "bpf ")
            .rfind(std::string("bpf         ok       cgroup programs sock, "
                               "sock_addr, skb; BTF: ") +
                       (btf ? "/sys/kernel/btf/vmlinux" : "none") + "; BPF LSM: ",
                   0) == 0);
  CHECK(LineOf(r.out, "nftables ") ==
        "nftables    ok       libnftables lists this network namespace");
  CHECK(LineOf(r.out, "privileges ") ==
        "privileges  ok       uid 0, euid 0; capabilities: CAP_SYS_ADMIN CAP_NET_ADMIN CAP_BPF "
        "CAP_PERFMON CAP_AUDIT_READ CAP_AUDIT_CONTROL CAP_SETUID CAP_SETGID CAP_SETPCAP; lacking: "
        "none");
  // Every layer is there on this host (CI's too): exit 0 and the one line
  // that says so.
  CHECK(r.status == 0);
  CHECK(LineOf(r.out, "ward run:") ==
        "ward run: enforces every layer here (cgroup, network, landlock, process, seccomp)");
  CHECK(LineOf(r.out, "ward apply:") == "ward apply: -t nftables yes; -t ebpf yes");
}

TEST_CASE("doctor: an unprivileged user is told which layers it lacks, exit 1") {
  // The same host seen by nobody without capabilities: cgroups, BPF and
  // privileges missing; Landlock and seccomp need none.
  Run r = Shell(std::string("setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all ") +
                "--bounding-set=-all " + WARD_BINARY + " doctor");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  const Cgroups c = ReadCgroups();
  std::vector<std::string> refused;
  for (const std::string& l : Lines(r.out)) {
    if (l.rfind("ward run: refuses ", 0) == 0) refused.push_back(l);
  }
  CHECK(refused ==
        std::vector<std::string>{
            "ward run: refuses every policy (cgroup): " + c.v2 + " is not writable by this user",
            "ward run: refuses every policy (network): loading cgroup BPF programs "
            "needs CAP_BPF (run as root)",
            "ward run: refuses every policy (privileges): ward run needs root (cgroups, "
            "BPF programs, capabilities)"});
  CHECK(LineOf(r.out, "landlock ").rfind("landlock    ok       ABI ", 0) == 0);
  CHECK(LineOf(r.out, "seccomp ").rfind("seccomp     ok       ", 0) == 0);
  CHECK(LineOf(r.out, "privileges ") ==
        "privileges  missing  uid 65534, euid 65534; capabilities: none; lacking: CAP_SYS_ADMIN "
        "CAP_NET_ADMIN CAP_BPF CAP_PERFMON CAP_AUDIT_READ CAP_AUDIT_CONTROL CAP_SETUID CAP_SETGID "
        "CAP_SETPCAP");
  CHECK(LineOf(r.out, "nftables ") ==
        "nftables    missing  libnftables cannot list this network "
        "namespace: listing needs CAP_NET_ADMIN");
  CHECK(LineOf(r.out, "ward run --log:") ==
        "ward run --log: seccomp denials no (the read-only audit group is not readable); Landlock "
        "denials no (the read-only audit group is not readable)");
  CHECK(LineOf(r.out, "ward apply:") == "ward apply: -t nftables no; -t ebpf no");
  CHECK(LineOf(r.out, "ward run: enforces").empty());
  // Nothing on stderr: libnftables is not asked without the capability.
  CHECK(r.err.empty());
}

TEST_CASE("doctor --format json: the documented shape, the same facts") {
  Run r = Ward("doctor --format json");
  CHECK(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(j["version"] == 1);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys ==
        std::vector<std::string>{"apply", "kernel", "layers", "log", "machine", "run", "version"});
  std::vector<std::string> layers;
  for (const auto& [k, v] : j["layers"].items()) layers.push_back(k);
  std::sort(layers.begin(), layers.end());
  CHECK(layers == std::vector<std::string>{"audit", "bpf", "cgroup", "landlock", "nftables",
                                           "privileges", "seccomp", "userns"});
  const long abi = syscall(444, nullptr, 0, 1U);
  CHECK(j["layers"]["landlock"]["abi"] == abi);
  CHECK(j["layers"]["cgroup"]["mount"] == ReadCgroups().v2);
  CHECK(j["layers"]["cgroup"]["controllers"] ==
        Split(Slurp(ReadCgroups().v2 + "/cgroup.controllers")));
  CHECK(j["layers"]["seccomp"]["actions"] ==
        Split(Slurp("/proc/sys/kernel/seccomp/actions_avail")));
  CHECK(j["layers"]["bpf"]["btf"] == (access("/sys/kernel/btf/vmlinux", R_OK) == 0));
  const std::string lsm = j["layers"]["bpf"]["lsm"];
  CHECK((lsm == "active" || lsm == "inactive" || lsm == "unknown"));
  CHECK(
      (j["layers"]["audit"]["enabled"].is_boolean() || j["layers"]["audit"]["enabled"].is_null()));
  CHECK(j["run"]["ok"] == (r.status == 0));
  CHECK(j["run"]["missing"] == nlohmann::json::array());
  CHECK(j["apply"] == nlohmann::json{{"nftables", true}, {"ebpf", true}});
  CHECK(r.status == 0);
}
