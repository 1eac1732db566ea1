// The ebpf enforcer (backends/ebpf/README.md): Ward's BPF program set
// loaded through its libbpf skeleton, its maps filled with a policy's egress
// and ingress partitions and unix socket names, attached to a cgroup v2
// directory with links, and links and
// maps pinned under /sys/fs/bpf/ward/<policy>/ so that enforcement outlives
// the process that applied it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "enforcers/linux/enforcer.h"
#include "language/diagnostics.h"

namespace ward::enforce {

// /sys/fs/bpf/ward/<policy>: the policy's folder. Each BPF object loaded
// for it (its maps, its links) has a folder of its own in there,
// <identity>-<n> (EbpfObjectIdentity, then a number counting up), so that an
// upgrade attaches a new object beside the old one before it detaches the
// old (make before break). Earlier Wards pinned one object flat in the
// policy's folder: that layout is still read, and replaced at the next apply.
std::string EbpfPinDir(const std::string& policy);

// One object pinned for a policy.
struct EbpfPinnedObject {
  std::string dir;          // its folder (EbpfPinDir(policy) itself: the flat layout)
  std::string id;           // "<identity>-<n>"; empty for the flat layout
  std::string identity;     // the object build (EbpfObjectIdentity); empty for flat
  uint64_t seq = 0;         // n; 0 for the flat layout
  bool has_config = false;  // ward_cfg is pinned there
  bool has_links = false;   // every hook's link is pinned there
  bool any_link = false;    // some hook's link is
};
// The objects pinned for `policy`, oldest first (the flat layout first).
std::vector<EbpfPinnedObject> EbpfPinnedObjects(const std::string& policy);
// The folder of the object enforcing `policy`: the newest one with its
// config and every link pinned; "" when there is none.
std::string EbpfObjectDir(const std::string& policy);

// What a pinned ward_cfg holds, in the current layout (the state word) or in
// the flat layout's (generation and flags in words of their own).
struct EbpfConfig {
  uint32_t generation = 0;
  uint32_t flags = 0;  // WARD_CFG_*
  uint64_t cgroup_id = 0;
  uint32_t cgroup_level = 0;
  bool atomic = false;  // the current layout (mmapable, one state word)
};
bool EbpfReadConfig(int cfg_fd, EbpfConfig* out, std::string* error);
bool EbpfReadConfigAt(const std::string& object_dir, EbpfConfig* out, std::string* error);
// The state word of a generation and its flags.
uint64_t EbpfState(uint32_t generation, uint32_t flags);
// Flips: one atomic 8-byte store of `state` into the mmapable ward_cfg.
bool EbpfStoreState(int cfg_fd, uint64_t state, std::string* error);
// Returns once every program run that may have read the state word before
// the call has ended (an RCU grace period).
void EbpfWaitForPrograms();
// BPF_LINK_DETACH on every hook link pinned in `dir`.
bool EbpfDetachLinks(const std::string& dir, std::string* error);
// Unlinks every pin in `dir` (not its folders) and removes it if empty.
void EbpfUnpinFolder(const std::string& dir);
// Detaches the object's links, then removes its pins.
bool EbpfRemoveObject(const EbpfPinnedObject& object, std::string* error);

// The cgroup hooks: each pinned link's file name and its attach type.
std::vector<std::pair<std::string, int>> EbpfHookLinks();
// A short hex identity of the BPF object this ward carries: programs loaded
// by another build are never reused for it.
std::string EbpfObjectIdentity();

struct EbpfApplyOptions {
  // For `ward run`, which scopes abstract unix sockets with Landlock
  // (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET: the workload reaches the abstract
  // sockets it created itself, and no other). When set and the policy
  // grants no abstract name (`policy.network.unix_abstract` is empty), the
  // programs let every abstract address through and leave it to that scope;
  // they still decide paths. When the policy grants an abstract name, the
  // programs decide abstract names (Landlock cannot scope them one by one).
  bool abstract_unix_by_landlock = false;
  // Load a new object and switch to it make-before-break (attached beside
  // the current one, which is then detached) even when the current object
  // could take the policy by a generation flip. An upgrade of Ward does
  // this by itself (another object identity), and so does a re-apply the
  // current object's maps are too small for.
  bool new_object = false;
};

struct EbpfApplyResult {
  uint32_t generation = 0;          // the generation now active
  size_t entries = 0;               // address entries written (both directions)
  size_t unix_names = 0;            // unix socket names written
  bool abstract_unix_open = false;  // abstract addresses are let through (see the option)
  bool replaced = false;            // a previous generation was replaced
  bool new_object = false;          // a new object replaced the previous one (or none was there)
  std::string object_dir;           // the folder of the object now enforcing
};

// Enforces `policy`'s egress, ingress and unix socket rules on `cgroup`
// (kernel 6.7 or later: the unix hooks). Ingress is stateless (README.md):
// an explicit bind() to a port no ingress rule allows fails with EPERM; a
// TCP SYN, and a UDP datagram to an explicitly bound unconnected socket,
// from a source the rules do not allow is dropped. A unix path is matched byte for byte as the
// process spelled it, an abstract name exactly; a name no rule grants is
// refused (EPERM), also one the workload bound itself. First apply: loads
// the programs, fills generation 0, attaches (links: BPF_F_ALLOW_MULTI
// semantics, so a descendant can add programs but never remove or override
// these) and pins.
// Re-apply by the same object: fills the inactive generation of the pinned
// maps, flips the state word once (one atomic store), moves the pinned
// links onto the freshly loaded programs, waits for the runs that read the
// old word, clears the old generation, and destroys the TCP connections
// the new generation refuses. Re-apply by a new object (another build of
// the programs, a policy the pinned maps cannot hold, or
// options.new_object): make before break, the new object filled and
// attached beside the old one (both run: a connection either refuses is
// refused), then the old one detached and unpinned. All or
// nothing: on failure nothing new is attached and the active generation is
// unchanged. Policy problems go to `sink`; operational ones to *error.
// `resolved`: the answers for the policy's domain grants
// (ResolveDomainGrants), as exact entries; they do not expire in the maps:
// a refresh re-applies (RefreshDomains), as `ward apply --refresh` does.
// The option is part of the flipped state: a re-apply changes it at the
// flip, atomically.
bool EbpfApply(const ir::Policy& policy, const Cgroup& cgroup,
               const std::vector<backend::ResolvedAddress>& resolved,
               const EbpfApplyOptions& options, DiagnosticSink& sink, EbpfApplyResult* result,
               std::string* error);
// The same with the default options (`ward apply`: the programs decide
// paths and abstract names).
bool EbpfApply(const ir::Policy& policy, const Cgroup& cgroup,
               const std::vector<backend::ResolvedAddress>& resolved, DiagnosticSink& sink,
               EbpfApplyResult* result, std::string* error);

// ward run's network layer for a policy with no names to resolve
// (ebpf_shared.cc): the programs and filled maps of the policy whose hash is
// `key` are loaded once and kept pinned under /sys/fs/bpf/ward/cache-<key>-
// <object identity>/<object id>/; each run links them to its own cgroup,
// with the links pinned under EbpfPinDir(run_name)/<object id>/
// (EbpfRemove(run_name) takes them away;
// the cache stays). Runs of one policy share its maps and its event ring
// buffer. A lock file in `lock_dir` serialises the creation of an entry.
// *cache_hit: whether the programs were there already.
bool EbpfAttachShared(const ir::Policy& policy, const std::string& key, const Cgroup& cgroup,
                      const EbpfApplyOptions& options, const std::string& run_name,
                      const std::string& lock_dir, DiagnosticSink& sink, bool* cache_hit,
                      std::string* error);

// Keeps the kernel's cgroup hooks enabled between runs: one allow-all
// program per hook (two instructions: return 1) linked to the empty cgroup
// `<cgroup_mount>/ward/anchor` and pinned under EbpfPinDir("anchor"),
// created once, under a lock file in `lock_dir`, and then left. The kernel
// calls a cgroup hook only while some program of its kind is attached
// anywhere on the host (a static key); the first attach and the last
// detach of a kind rewrite kernel code and interrupt every CPU to do it,
// which cost each run ~1 ms of its start and its end when its programs
// were the only ones. No process is ever in that cgroup, so the programs
// decide nothing; the price is every socket operation on the host
// checking its cgroup's (empty) program list, which any host with one
// cgroup program (systemd's IP accounting, Cilium) pays already. Not
// having them only costs time: false with *error when they could not all
// be created, and callers go on.
bool EbpfAnchorHooks(const std::string& cgroup_mount, const std::string& lock_dir,
                     std::string* error);

// Keeps the cache of EbpfAttachShared bounded: entries of other builds of
// ward go, and of this build's entries the `keep` most recently used stay;
// the rest go once unused for `idle_seconds` (a run links to an entry it
// found a moment ago; one it misses is loaded again). Entries are pinned
// programs and maps, kernel memory that nothing else ever frees. Returns
// the number removed.
int EbpfPruneCache(size_t keep, int64_t idle_seconds);

// Detaches every link (even if another process holds an fd to it) and
// removes the pinned directory. *removed: whether anything was there.
bool EbpfRemove(const std::string& policy, bool* removed, std::string* error);

// Adds an address a name resolved to (a DNS-aware resolver's answer) to the
// active generation, without a reload, trusted for `ttl_seconds`:
// `names_allow` is what the allowed names matching the answer grant.
bool EbpfAddResolved(const ir::Policy& policy, const IpPrefix& addr,
                     const ir::NetDecision& names_allow, uint32_t ttl_seconds, std::string* error);

// One denial event (struct ward_event), decoded.
struct EbpfDenial {
  uint32_t pid = 0;
  // The rule that decided: 0 none (the default), else the 1-based index of
  // `policy.network.rules`, then of `unix_rules` after them
  // (backends/ebpf/maps.h).
  uint32_t rule = 0;
  // "connect", "send", "bind", "accept", "receive", "packet" or "socket".
  std::string op;
  std::string protocol;   // "tcp", "udp", "icmp", "protocol N"; empty for unix and socket
  std::string address;    // the peer (no brackets); empty for bind, unix, socket
  int port = -1;          // the peer's port; -1 without one
  int local_port = -1;    // bind, accept, receive: the local port
  std::string unix_name;  // "/path" or "@name", bytes outside printable ASCII as \xNN
  int family = 0;         // the address family (AF_INET, AF_INET6, AF_UNIX)
  int sock_type = 0, sock_proto = 0;  // "socket": the refused socket's type and protocol
  std::string line;                   // FormatEbpfEvent's line
};

// Reads the denial events of an applied policy from its pinned ring buffer.
class EbpfEventReader {
 public:
  ~EbpfEventReader();
  // Opens the pinned ring buffer and rule texts of `policy`.
  static std::unique_ptr<EbpfEventReader> Open(const std::string& policy, std::string* error);
  // Waits up to `timeout_ms` for events and appends one line per denial:
  // "connect to 203.0.113.9:443 denied (no rule matched)",
  // "sendmsg to unix:@name denied (rule 4: deny unix \"@name\")",
  // "bind to port 5353/udp denied (no rule matched)",
  // "accept from 10.0.0.5:40000 on port 22 denied (no rule matched)",
  // "udp receive from [fd00::1:5]:40005 on port 5353 denied (no rule matched)".
  bool Poll(int timeout_ms, std::vector<std::string>* lines, std::string* error);
  // The same, decoded (`ward run --log`).
  bool Poll(int timeout_ms, std::vector<EbpfDenial>* denials, std::string* error);
  // The ring buffer's descriptor, for poll(2) beside others.
  int fd() const;

 private:
  EbpfEventReader() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One event (struct ward_event, bpf/ward_ebpf.h) as a line; `rule_text` is
// the text of its rule, when it has one. A unix name is printed as
// "unix:/path" or "unix:@name", bytes outside printable ASCII (and `\`) as
// \xNN.
std::string FormatEbpfEvent(const void* event, const std::string& rule_text);

// The `ward apply -t ebpf` adapter (enforcer.h): cgroup targets only.
const NetworkEnforcer& EbpfEnforcer();

}  // namespace ward::enforce
