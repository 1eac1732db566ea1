// The network enforcers `ward apply`, `ward remove` and `ward status` drive
// (cli.md): each takes a policy's IR and a scope on this host (a cgroup v2,
// a user, or an interface such as a VM's tap), enforces it atomically, takes
// it away completely, and reads back what the kernel holds. nftables is
// built; eBPF (issue 5) plugs in by implementing the same class and adding
// one line to the list in enforcer.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/resolved.h"
#include "compiler/policy.h"
#include "enforcers/linux/dns.h"
#include "language/diagnostics.h"

namespace ward::enforce {

// Who a policy applies to, as the user named it.
struct Target {
  enum class Kind { kCgroup, kUid, kInterface };
  Kind kind = Kind::kCgroup;
  // kCgroup: an absolute path under the cgroup v2 mount, or a path relative
  // to it ("ward/agent-1").
  std::string cgroup;
  uint32_t uid = 0;
  std::string interface;
};

// A cgroup v2 directory, resolved.
struct Cgroup {
  std::string mount;     // where cgroup2 is mounted ("/sys/fs/cgroup/unified")
  std::string relative;  // "ward/agent-1"; "" for the root
  int level = 0;         // components in `relative`
  uint64_t id = 0;       // the cgroup id: the directory's inode number
};

// The cgroup2 mount point, read from /proc/mounts (never assumed); "" and
// *error when there is none.
std::string CgroupV2Mount(std::string* error);

// One line of the mount table.
struct MountEntry {
  std::string device, dir, type, options;
};
// The calling process's mount table (/proc/self/mounts), read once and
// again only after it changed (the kernel flags the open table POLLPRI on
// any mount or unmount in the namespace): `ward run` asked for it five
// times, 0.3 ms. Thread-safe.
std::vector<MountEntry> MountTable();
// Resolves `path` (absolute under the mount, or relative to it) to an
// existing cgroup directory.
std::optional<Cgroup> ResolveCgroup(const std::string& path, std::string* error);
// The path, relative to the v2 mount, of the cgroup whose id (inode) is
// `id`; "" when no cgroup has it any more.
std::string CgroupPathOfId(uint64_t id);

struct ApplyOptions {
  // Domain grants: resolve their names now into timed address entries.
  bool resolve_domains = true;
  DnsOptions dns;
  // When set, Apply leaves there the answers it enforced (`ward apply
  // --format json` lists them).
  std::vector<backend::ResolvedAddress>* resolved = nullptr;
};

// The domain grants that name one host, which an address-based enforcer
// resolves (a wildcard cannot be resolved ahead of time), by direction.
std::vector<std::pair<ir::Direction, std::string>> NamesToResolve(const ir::Policy& policy);

// What `ward apply` cannot see on a cgroup or a user, whichever enforcer:
// sockets outside IP (packet sockets with CAP_NET_RAW, vsock without any
// privilege) never meet netfilter's IP hooks nor the cgroup socket hooks.
// A warning at every such apply; `ward run` refuses those families itself
// (capabilities dropped, its guard filter).
void WarnNonIpSockets(std::string_view enforcer, DiagnosticSink& sink);

// Resolves every domain grant of the policy that names one host (a wildcard
// cannot be resolved ahead of time; backends warn about those). A name that
// does not resolve, or whose server does not answer, gets no addresses (its
// flows stay denied) and a warning in `sink` naming the rule.
std::vector<backend::ResolvedAddress> ResolveDomainGrants(const ir::Policy& policy,
                                                          const DnsOptions& dns,
                                                          DiagnosticSink& sink);
// How long to wait before resolving again: half the shortest TTL among the
// answers, at least one second; half the floor when there are none.
uint32_t RefreshSeconds(const std::vector<backend::ResolvedAddress>& answers,
                        const DnsOptions& dns);

// What an enforcer holds on this host for one policy, read back from the
// kernel.
struct Enforcement {
  std::string enforcer;  // "nftables"
  std::string policy;
  std::string table;  // enforcer-specific object name ("ward_agent")
  uint32_t generation = 0;
  std::optional<Target::Kind> scope;  // none: loaded without a scope
  uint64_t cgroup_id = 0;             // kCgroup: the id the kernel holds
  std::string cgroup;                 // kCgroup: path relative to the v2 mount, when found
  uint32_t uid = 0;
  std::string interface;
  size_t elements = 0;  // addresses x ports held
};

class NetworkEnforcer {
 public:
  virtual ~NetworkEnforcer() = default;
  virtual std::string_view name() const = 0;
  // Enforces the policy's network section on `target`, replacing what this
  // enforcer held for the same policy in one step (never an intermediate
  // wider state). Policy problems go to `sink` (then false, *error empty);
  // operational failures (no privileges, kernel refusal) to *error. All or
  // nothing: on failure the previous state is untouched.
  virtual bool Apply(const ir::Policy& policy, const Target& target, const ApplyOptions& options,
                     DiagnosticSink& sink, std::string* error) const = 0;
  // Resolves the policy's domain grants again and replaces the addresses
  // the applied policy holds for them, in one step (addresses nobody
  // refreshed expire by themselves with their TTL). The policy must be the
  // one applied. *next_seconds: when to call again (RefreshSeconds).
  virtual bool RefreshDomains(const ir::Policy& policy, const ApplyOptions& options,
                              DiagnosticSink& sink, uint32_t* next_seconds,
                              std::string* error) const = 0;
  // Removes everything this enforcer holds for `policy`; *removed says
  // whether there was anything.
  virtual bool Remove(const std::string& policy, bool* removed, std::string* error) const = 0;
  // What this enforcer holds on this host, by policy name.
  virtual bool Status(std::vector<Enforcement>* out, std::string* error) const = 0;
};

// The network enforcers in one explicit list, and the names that are planned
// but not built (`-t ebpf` until it lands): FindNetworkEnforcer returns
// nullptr for those, and IsPlannedEnforcer tells them from unknown names.
const std::vector<const NetworkEnforcer*>& NetworkEnforcers();
const NetworkEnforcer* FindNetworkEnforcer(std::string_view name);
bool IsPlannedEnforcer(std::string_view name);

// Whether the calling process holds `capability` (CAP_NET_ADMIN, ...) in its
// effective set.
bool HasCapability(int capability);

}  // namespace ward::enforce
