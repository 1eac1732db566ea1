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

// The kinds of table measured: `hash`, single addresses sharing one decision
// (tcp and udp port 443: one address set, Ward's per-decision class);
// `hash-ports`, single addresses each allowing its own TCP and UDP port (no
// class holds more than two: `ipv4_addr . inet_service` concatenations, two
// elements per address);
// `interval`, /30 prefixes sharing one decision (an interval address set).
enum class Kind { kHash, kHashPorts, kInterval };
const char* KindName(Kind k) {
  return k == Kind::kHash ? "hash" : k == Kind::kHashPorts ? "hash-ports" : "interval";
}

uint16_t PortOf(Kind kind, int i) {
  return kind == Kind::kHashPorts ? static_cast<uint16_t>(1024 + i % 60000) : kPort;
}

// A policy whose egress v4 partition holds `n` pieces of `kind`, each
// followed by an empty piece.
ward::ir::Policy Synthetic(int n, Kind kind) {
  ward::ir::Policy p;
  p.name = "bench";
  const bool interval = kind == Kind::kInterval;
  auto& pieces = p.network.egress.v4;
  uint32_t at = 0;
  const uint32_t step = interval ? 8 : 2, size = interval ? 4 : 1;
  for (int i = 0; i < n; ++i) {
    ward::ir::NetDecision allow;
    const uint16_t port = PortOf(kind, i);
    allow.tcp = ward::ir::PortSet({{port, port}});
    allow.udp = allow.tcp;
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
double ChildMeasure(uint32_t target, uint16_t port, bool tcp, int iterations) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgid(kUid) != 0 || setuid(kUid) != 0) _exit(1);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
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
pid_t StartServers(const std::vector<uint16_t>& ports) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  std::vector<pollfd> fds;
  for (const uint16_t port : ports) {
    const int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
    int one = 1;
    setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (bind(t, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(t, 4096) != 0 ||
        bind(u, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      _exit(1);
    }
    fds.push_back({t, POLLIN, 0});
    fds.push_back({u, POLLIN, 0});
  }
  char buf[64];
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) <= 0) continue;
    for (size_t i = 0; i < fds.size(); i += 2) {
      if (fds[i].revents & POLLIN) {
        const int c = accept(fds[i].fd, nullptr, nullptr);
        if (c >= 0) close(c);
      }
      if (fds[i + 1].revents & POLLIN) recv(fds[i + 1].fd, buf, sizeof buf, MSG_DONTWAIT);
    }
  }
}

struct Figures {
  double render = 0, load_text = 0, load_json = 0, udp = 0, tcp = 0;
  size_t elements = 0;
};

// Rendering as `ward apply --uid kUid` does.
nft::RenderOptions UidOptions() {
  nft::RenderOptions options;
  nft::Scope scope;
  scope.kind = nft::Scope::Kind::kUid;
  scope.uid = kUid;
  options.scope = scope;
  return options;
}

Figures Measure(int n, Kind kind, int iterations) {
  Figures f;
  const ward::ir::Policy p = Synthetic(n, kind);
  nft::RenderOptions options = UidOptions();
  ward::DiagnosticSink sink;
  // What `ward apply` renders: the text alone.
  nft::Ruleset r;
  options.render_json = false;
  auto t0 = Clock::now();
  nft::RenderRuleset(p, options, &r, sink);
  auto t1 = Clock::now();
  f.render = Seconds(t0, t1);
  nft::Ruleset rj;
  options.render_json = true;
  nft::RenderRuleset(p, options, &rj, sink);
  std::string error;
  std::string ignored;
  // JSON first (then removed), then text, which stays for the packets.
  t0 = Clock::now();
  if (!ward::enforce::RunNft(rj.json, true, false, nullptr, &error)) {
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
  f.elements = r.elements;
  // An address in the middle of the sets.
  const bool interval = kind == Kind::kInterval;
  const uint32_t target =
      kBase + static_cast<uint32_t>(n / 2) * (interval ? 8 : 2) + (interval ? 1 : 0);
  const uint16_t port = PortOf(kind, n / 2);
  f.udp = ChildMeasure(target, port, false, iterations * 10);
  f.tcp = ChildMeasure(target, port, true, iterations);
  ward::enforce::RunNft(nft::RemoveText(r.table), false, false, nullptr, &ignored);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (geteuid() != 0) {
    std::fprintf(stderr, "bench_nftables: needs root (a private network namespace)\n");
    return 2;
  }
  if (argc == 4 && std::string(argv[1]) == "--dump") {
    // The hash table of N addresses as nft text, to profile `nft -f` on.
    const nft::RenderOptions options = UidOptions();
    nft::Ruleset r;
    ward::DiagnosticSink sink;
    nft::RenderRuleset(Synthetic(std::atoi(argv[2]), Kind::kHash), options, &r, sink);
    FILE* out = std::fopen(argv[3], "w");
    if (!out) return 2;
    std::fwrite(r.text.data(), 1, r.text.size(), out);
    return std::fclose(out) == 0 ? 0 : 2;
  }
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3000;
  if (unshare(CLONE_NEWNET) != 0) {
    std::perror("unshare(CLONE_NEWNET)");
    return 2;
  }
  if (std::system("ip link set lo up && ip route add local 10.0.0.0/8 dev lo") != 0) return 2;
  const std::vector<int> sizes = {1000, 10000, 100000};
  std::vector<uint16_t> ports = {kPort};
  for (const int n : sizes) ports.push_back(PortOf(Kind::kHashPorts, n / 2));
  const pid_t servers = StartServers(ports);
  usleep(100000);
  const double udp0 = ChildMeasure(kBase + 1, kPort, false, iterations * 10);
  const double tcp0 = ChildMeasure(kBase + 1, kPort, true, iterations);
  std::printf("no table: udp sendto %.2f us, tcp connect %.2f us\n", udp0 * 1e6, tcp0 * 1e6);
  std::printf("%-10s %8s %9s %9s %10s %10s %12s %12s\n", "set", "addrs", "elements", "render s",
              "load s", "json s", "sendto us", "connect us");
  for (const Kind kind : {Kind::kHash, Kind::kHashPorts, Kind::kInterval}) {
    for (const int n : sizes) {
      const Figures f = Measure(n, kind, iterations);
      std::printf("%-10s %8d %9zu %9.3f %10.3f %10.3f %12.2f %12.2f\n", KindName(kind), n,
                  f.elements, f.render, f.load_text, f.load_json, f.udp * 1e6, f.tcp * 1e6);
      std::fflush(stdout);
    }
  }
  kill(servers, SIGKILL);
  waitpid(servers, nullptr, 0);
  return 0;
}
