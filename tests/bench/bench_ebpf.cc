// bench_ebpf: the cost of Ward's eBPF egress programs. Prints figures;
// asserts nothing (conventions.md #20). Needs root.
//
//   bench_ebpf [--connects N]
//
// For policies with 0, 10k and 100k address entries, either exact addresses
// (the HASH maps) or prefixes (the LPM tries; the exact lookup misses
// first), the connect4 program's own run time as the kernel measures it
// (BPF_ENABLE_STATS: run_time_ns / run_cnt) and the latency of a UDP
// connect() (the hook plus a route lookup, no packet) from a process in the
// enforced cgroup, against the same connect() with no program attached.
// Everything runs in a fresh network namespace routing 10.0.0.0/8 locally.
//
// Goal (issue 5): under 100 ns per program run at 100k entries.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "compiler/policy.h"
#include "enforcers/linux/ebpf.h"
#include "language/check.h"

namespace {

using namespace ward;

std::string netns, netns_path, cg;

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// Ward source for `n` entries: exact addresses 10.100.0.0 + 2i (never
// adjacent, so never merged), or /30 prefixes at 10.64.0.0 + 8i; the
// destination 10.200.0.1 is an exact entry or inside a prefix accordingly.
std::string Source(int n, bool prefixes) {
  std::string s = "policy benchebpf { network {\n";
  for (int i = 0; i < n; ++i) {
    uint32_t a = prefixes ? (10u << 24 | 64u << 16) + 8u * static_cast<uint32_t>(i)
                          : (10u << 24 | 100u << 16) + 2u * static_cast<uint32_t>(i);
    s += "  allow tcp to " + std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255) + (prefixes ? "/30" : "") +
         " port 443\n";
  }
  s +=
      prefixes ? "  allow udp to 10.200.0.0/30 port 443\n" : "  allow udp to 10.200.0.1 port 443\n";
  return s + "} }\n";
}

bool Compile(const std::string& source, ir::Policy* out) {
  FrontendOptions options;
  options.std_dir = WARD_BENCH_STD_DIR;
  options.memory_files["bench.ward"] = source;
  SourceManager sources;
  DiagnosticSink sink;
  Program program = RunFrontend({"bench.ward"}, options, sources, sink);
  if (sink.has_errors()) return false;
  *out = ir::Lower(program, program.file(program.roots[0])->policies[0], sink);
  return !sink.has_errors();
}

// ns per UDP connect() from a child in the cgroup and the namespace.
double ConnectNs(int n) {
  int p[2];
  if (pipe(p) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    std::ofstream(cg + "/cgroup.procs") << getpid();
    int ns = open(netns_path.c_str(), O_RDONLY);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) _exit(1);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(443);
    inet_pton(AF_INET, "10.200.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    double best = 1e18;
    for (int round = 0; round < 5; ++round) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) _exit(2);
      }
      double ns_per =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          n;
      if (ns_per < best) best = ns_per;
    }
    if (write(p[1], &best, sizeof best) != sizeof best) _exit(3);
    _exit(0);
  }
  close(p[1]);
  double r = -1;
  if (read(p[0], &r, sizeof r) != sizeof r) r = -1;
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
  return r;
}

// socket()+close() n times from a child in the cgroup: runs sock_create.
void Sockets(int n) {
  pid_t pid = fork();
  if (pid == 0) {
    std::ofstream(cg + "/cgroup.procs") << getpid();
    for (int i = 0; i < n; ++i) close(socket(AF_INET, SOCK_DGRAM, 0));
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
}

bool ProgStats(uint64_t* run_ns, uint64_t* runs, const char* link_name = "link_connect4") {
  int link = bpf_obj_get((enforce::EbpfObjectDir("benchebpf") + "/" + link_name).c_str());
  if (link < 0) return false;
  bpf_link_info li{};
  uint32_t len = sizeof li;
  bool ok = bpf_obj_get_info_by_fd(link, &li, &len) == 0;
  close(link);
  int prog = ok ? bpf_prog_get_fd_by_id(li.prog_id) : -1;
  if (prog < 0) return false;
  bpf_prog_info pi{};
  len = sizeof pi;
  ok = bpf_obj_get_info_by_fd(prog, &pi, &len) == 0;
  close(prog);
  *run_ns = pi.run_time_ns;
  *runs = pi.run_cnt;
  return ok;
}

// Loads `insns` as a cgroup/connect4 program, attaches it to the cgroup
// (beside Ward's programs: BPF_F_ALLOW_MULTI), runs `connects` UDP connects
// and returns its own run time per run (BPF_ENABLE_STATS); -1 when it could
// not be loaded or attached, or a connect failed (the program refused).
double RawProgramNs(const char* name, const bpf_insn* insns, size_t count, int connects) {
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_CGROUP_INET4_CONNECT);
  const int prog = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, name, "GPL", insns, count, &opts);
  if (prog < 0) return -1;
  const int cg_fd = open(cg.c_str(), O_RDONLY | O_DIRECTORY);
  double per = -1;
  if (cg_fd >= 0 &&
      bpf_prog_attach(prog, cg_fd, BPF_CGROUP_INET4_CONNECT, BPF_F_ALLOW_MULTI) == 0) {
    bpf_prog_info a{}, b{};
    uint32_t len = sizeof a;
    bpf_obj_get_info_by_fd(prog, &a, &len);
    const double connect_ns = ConnectNs(connects);
    len = sizeof b;
    bpf_obj_get_info_by_fd(prog, &b, &len);
    if (connect_ns > 0 && b.run_cnt > a.run_cnt) {
      per = static_cast<double>(b.run_time_ns - a.run_time_ns) /
            static_cast<double>(b.run_cnt - a.run_cnt);
    }
    bpf_prog_detach2(prog, cg_fd, BPF_CGROUP_INET4_CONNECT);
  }
  if (cg_fd >= 0) close(cg_fd);
  close(prog);
  return per;
}

// The most trivial cgroup/connect4 program (r0 = 1; exit), attached alone:
// what the kernel's own accounting (BPF_ENABLE_STATS reads the clock twice
// per run) and the hook cost before any of Ward's instructions run.
double TrivialConnect4Ns(int connects) {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  return RawProgramNs("ward_trivial", insns, 2, connects);
}

// A program that does one lookup in Ward's own exact map (of the applied
// policy, at its size) and nothing else, attached beside Ward's programs:
// the floor above plus the HASH lookup, the part of the decision no program
// deciding by address can skip. It refuses on a miss, so a key that is not
// there fails the connects (-1).
double LookupOnlyNs(int map_fd, int connects) {
  const bpf_insn insns[] = {
      {BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -8, 0},           // generation 0
      {BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0x0100c80a},  // 10.200.0.1
      {BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0},
      {BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8},
      {BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd},
      {0, 0, 0, 0, 0},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem},
      {BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  return RawProgramNs("ward_lookup", insns, sizeof insns / sizeof insns[0], connects);
}

}  // namespace

int main(int argc, char** argv) {
  int connects = 200000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--connects") == 0) connects = std::atoi(argv[i + 1]);
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "bench_ebpf needs root\n");
    return 77;
  }
  netns = "ward-bench-" + std::to_string(getpid());
  netns_path = "/var/run/netns/" + netns;
  std::string error;
  std::string mount = enforce::CgroupV2Mount(&error);
  cg = mount + "/" + netns;
  if (mount.empty() || !Sh("ip netns add " + netns) || !Sh("ip -n " + netns + " link set lo up") ||
      !Sh("ip -n " + netns + " route add local 10.0.0.0/8 dev lo") ||
      mkdir(cg.c_str(), 0755) != 0) {
    std::fprintf(stderr, "set-up failed\n");
    Sh("ip netns del " + netns);
    return 1;
  }
  int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  std::printf("udp connect() with no program: %.0f ns\n", ConnectNs(connects));
  std::printf("trivial cgroup/connect4 program (r0 = 1): %.1f ns/run\n",
              TrivialConnect4Ns(connects));
  std::printf("%-8s %-8s %10s %12s %14s %14s\n", "entries", "kind", "map size", "apply ms",
              "prog ns/run", "connect() ns");
  for (bool prefixes : {false, true}) {
    for (int n : {0, 10000, 100000}) {
      ir::Policy policy;
      if (!Compile(Source(n, prefixes), &policy)) {
        std::fprintf(stderr, "compile failed\n");
        break;
      }
      auto resolved = enforce::ResolveCgroup(cg, &error);
      DiagnosticSink sink;
      enforce::EbpfApplyResult r;
      auto t0 = std::chrono::steady_clock::now();
      bool ok = resolved && enforce::EbpfApply(policy, *resolved, {}, sink, &r, &error);
      double apply_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!ok) {
        std::fprintf(stderr, "apply failed: %s\n", error.c_str());
        break;
      }
      uint64_t ns0 = 0, c0 = 0, ns1 = 0, c1 = 0;
      ProgStats(&ns0, &c0);
      double connect_ns = ConnectNs(connects);
      ProgStats(&ns1, &c1);
      if (n == 0 && !prefixes) {
        // Baseline: sock_create, a program of five compares and no map.
        uint64_t s0 = 0, k0 = 0, s1 = 0, k1 = 0;
        ProgStats(&s0, &k0, "link_sock_create");
        Sockets(connects);
        ProgStats(&s1, &k1, "link_sock_create");
        std::printf("(baseline: sock_create, no map lookup: %.1f ns/run)\n",
                    k1 > k0 ? static_cast<double>(s1 - s0) / static_cast<double>(k1 - k0) : 0.0);
      }
      std::printf("%-8d %-8s %10zu %12.1f %14.1f %14.0f\n", n, prefixes ? "lpm" : "hash", r.entries,
                  apply_ms,
                  c1 > c0 ? static_cast<double>(ns1 - ns0) / static_cast<double>(c1 - c0) : 0.0,
                  connect_ns);
      if (!prefixes && n == 100000) {
        const int map = bpf_obj_get((enforce::EbpfObjectDir("benchebpf") + "/v4_exact").c_str());
        std::printf("(one HASH lookup in that map, nothing else: %.1f ns/run)\n",
                    map >= 0 ? LookupOnlyNs(map, connects) : -1.0);
        if (map >= 0) close(map);
      }
      bool removed;
      enforce::EbpfRemove("benchebpf", &removed, &error);
    }
  }
  if (stats_fd >= 0) close(stats_fd);
  rmdir(cg.c_str());
  Sh("ip netns del " + netns);
  return 0;
}
