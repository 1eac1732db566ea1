// nftables figures (README.md): the time libnftables takes to load a
// policy's table with 1k, 10k and 100k addresses, per set type (hash: one
// address and one port per element; interval: /30 prefixes), and the
// per-packet cost as the sets grow: UDP sendto() and TCP connect() from a
// process under the table (uid scope) to a local address, against the same
// calls with no table. Runs as root in a private network namespace; prints
// figures, asserts nothing (conventions.md #20).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/nftables/ruleset.h"
#include "enforcers/linux/nftables.h"

namespace {

namespace nft = ward::backend::nftables;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kBase = 0x0a000000;  // 10.0.0.0
constexpr uint32_t kUid = 54321;
constexpr uint16_t kPort = 443;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A policy whose egress v4 partition holds `n` pieces allowing tcp and udp
// port 443: single addresses (hash sets) or /30 prefixes (interval sets),
// each followed by an empty piece.
ward::ir::Policy Synthetic(int n, bool interval) {
  ward::ir::Policy p;
  p.name = "bench";
  ward::ir::NetDecision allow;
  allow.tcp = ward::ir::PortSet({{kPort, kPort}});
  allow.udp = allow.tcp;
  auto& pieces = p.network.egress.v4;
  uint32_t at = 0;
  const uint32_t step = interval ? 8 : 2, size = interval ? 4 : 1;
  for (int i = 0; i < n; ++i) {
    const uint32_t lo = kBase + static_cast<uint32_t>(i) * step;
    if (lo > at) pieces.push_back({{at, lo - 1}, {}, {}});
    pieces.push_back({{lo, lo + size - 1}, allow, {}});
    at = lo + size;
  }
  pieces.push_back({{at, 0xffffffffu}, {}, {}});
  p.network.egress.v6.push_back({{0, ~ward::ir::V6{0}}, {}, {}});
  return p;
}

// The mean cost of one call, in a child running as kUid (so under the table).
double ChildMeasure(uint32_t target, bool tcp, int iterations) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgid(kUid) != 0 || setuid(kUid) != 0) _exit(1);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(kPort);
    a.sin_addr.s_addr = htonl(target);
    int failures = 0;
    const auto start = Clock::now();
    if (tcp) {
      for (int i = 0; i < iterations; ++i) {
        const int s = socket(AF_INET, SOCK_STREAM, 0);
        failures += connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0;
        close(s);
      }
    } else {
      const int s = socket(AF_INET, SOCK_DGRAM, 0);
      for (int i = 0; i < iterations; ++i) {
        failures += sendto(s, "x", 1, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) != 1;
      }
      close(s);
    }
    double per = Seconds(start, Clock::now()) / iterations;
    if (failures) per = -failures;
    ssize_t w = write(fds[1], &per, sizeof per);
    (void)w;
    _exit(0);
  }
  close(fds[1]);
  double per = -1;
  ssize_t r = read(fds[0], &per, sizeof per);
  (void)r;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return per;
}

// Servers for the probes: a TCP listener that accepts and closes, and a UDP
// socket that drains.
pid_t StartServers() {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
  int one = 1;
  setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kPort);
  if (bind(t, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(t, 4096) != 0 ||
      bind(u, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    _exit(1);
  }
  pollfd fds[2] = {{t, POLLIN, 0}, {u, POLLIN, 0}};
  char buf[64];
  for (;;) {
    if (poll(fds, 2, -1) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int c = accept(t, nullptr, nullptr);
      if (c >= 0) close(c);
    }
    if (fds[1].revents & POLLIN) recv(u, buf, sizeof buf, MSG_DONTWAIT);
  }
}

struct Figures {
  double render = 0, load_text = 0, load_json = 0, udp = 0, tcp = 0;
};

Figures Measure(int n, bool interval, int iterations) {
  Figures f;
  ward::ir::Policy p = Synthetic(n, interval);
  nft::RenderOptions options;
  nft::Scope scope;
  scope.kind = nft::Scope::Kind::kUid;
  scope.uid = kUid;
  options.scope = scope;
  nft::Ruleset r;
  ward::DiagnosticSink sink;
  auto t0 = Clock::now();
  nft::RenderRuleset(p, options, &r, sink);
  auto t1 = Clock::now();
  f.render = Seconds(t0, t1);
  std::string error;
  std::string ignored;
  // JSON first (then removed), then text, which stays for the packets.
  t0 = Clock::now();
  if (!ward::enforce::RunNft(r.json, true, false, nullptr, &error)) {
    std::fprintf(stderr, "json load failed: %s\n", error.substr(0, 300).c_str());
  }
  t1 = Clock::now();
  f.load_json = Seconds(t0, t1);
  ward::enforce::RunNft(nft::RemoveText(r.table), false, false, nullptr, &ignored);
  t0 = Clock::now();
  if (!ward::enforce::RunNft(r.text, false, false, nullptr, &error)) {
    std::fprintf(stderr, "text load failed: %s\n", error.substr(0, 300).c_str());
  }
  t1 = Clock::now();
  f.load_text = Seconds(t0, t1);
  // An address in the middle of the sets.
  const uint32_t target =
      kBase + static_cast<uint32_t>(n / 2) * (interval ? 8 : 2) + (interval ? 1 : 0);
  f.udp = ChildMeasure(target, false, iterations * 10);
  f.tcp = ChildMeasure(target, true, iterations);
  ward::enforce::RunNft(nft::RemoveText(r.table), false, false, nullptr, &ignored);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (geteuid() != 0) {
    std::fprintf(stderr, "bench_nftables: needs root (a private network namespace)\n");
    return 2;
  }
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3000;
  if (unshare(CLONE_NEWNET) != 0) {
    std::perror("unshare(CLONE_NEWNET)");
    return 2;
  }
  if (std::system("ip link set lo up && ip route add local 10.0.0.0/8 dev lo") != 0) return 2;
  const pid_t servers = StartServers();
  usleep(100000);
  const double udp0 = ChildMeasure(kBase + 1, false, iterations * 10);
  const double tcp0 = ChildMeasure(kBase + 1, true, iterations);
  std::printf("no table: udp sendto %.2f us, tcp connect %.2f us\n", udp0 * 1e6, tcp0 * 1e6);
  std::printf("%-8s %8s %9s %10s %10s %12s %12s\n", "set", "addrs", "render s", "load s", "json s",
              "sendto us", "connect us");
  for (bool interval : {false, true}) {
    for (int n : {1000, 10000, 100000}) {
      const Figures f = Measure(n, interval, iterations);
      std::printf("%-8s %8d %9.3f %10.3f %10.3f %12.2f %12.2f\n", interval ? "interval" : "hash", n,
                  f.render, f.load_text, f.load_json, f.udp * 1e6, f.tcp * 1e6);
      std::fflush(stdout);
    }
  }
  kill(servers, SIGKILL);
  waitpid(servers, nullptr, 0);
  return 0;
}
