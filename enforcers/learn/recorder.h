// `ward learn`'s recorder: kprobes on the kernel's LSM entry points, a raw
// sys_enter tracepoint and a cgroup_skb ingress program (bpf/learn.bpf.c,
// which says why not BPF LSM programs), loaded for one run's
// cgroup v2 tree and read through one ring buffer (README.md). They refuse
// nothing: what stays enforced while learning is ward run's (cli/learn.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ward::learn {

// What one run did, deduplicated: the recorder's events as sets, so the
// draft depends only on what was done, not on its order or count.
struct Records {
  // Absolute paths (as the kernel names them: bpf_path_d_path) and what was
  // done there.
  std::set<std::string> read, write, exec;
  std::set<std::string> read_dirs;  // opened for reading and directories
  // Entries created (files, directories, links), deleted, renamed (both
  // names): each needs write on its directory.
  std::set<std::string> created, deleted, renamed;
  struct Peer {
    int family = 0;  // AF_INET, AF_INET6
    int type = 0;    // SOCK_STREAM, SOCK_DGRAM, ...
    std::string address;
    uint16_t port = 0;
    auto operator<=>(const Peer&) const = default;
  };
  std::set<Peer> connects, binds;
  std::set<std::string> unix_connects;               // "/path" or "@abstract"
  std::set<std::tuple<int, int, int>> sockets;       // family, type, protocol
  std::set<std::pair<uint64_t, uint64_t>> syscalls;  // number, kept argument
  // Answers of the DNS replies the run received: address -> names.
  std::map<std::string, std::set<std::string>> dns_names;
  uint64_t dns_replies = 0;
  // Figures: events read, and events the kernel could not queue (a full ring
  // buffer): with any, the records may be incomplete.
  uint64_t events = 0;
  uint64_t drops = 0;
  // Paths deeper than the walk goes (learn_event.h: LEARN_DEPTH components,
  // LEARN_PATH bytes), left out.
  uint64_t truncated = 0;
};

struct RecorderOptions {
  uint64_t cgroup_id = 0;   // the run's v2 cgroup (its directory's inode)
  int cgroup_level = 0;     // its depth below the v2 root
  std::string cgroup_path;  // its directory, for the DNS program
  // The ring buffer's size in bytes (a power of two, pages); tests make it
  // small to see drops counted.
  uint32_t ring_bytes = 16u << 20;
};

class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  // Loads and attaches the programs and starts reading; false with *error
  // ("recorder: STEP: why") otherwise. Signals stay blocked in the reading
  // thread, so ward run's supervisor receives every one it forwards.
  bool Start(const RecorderOptions& options, std::string* error);
  // Stops reading after draining what the kernel queued, detaches
  // everything and returns the records.
  Records Stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The DNS message `data` (a reply) into `records->dns_names`, with ldns:
// the A and AAAA answers, each under its owner name and the name the CNAME
// chain started from. False when ldns cannot parse it.
bool AddDnsAnswers(const uint8_t* data, size_t len, Records* records);

}  // namespace ward::learn
