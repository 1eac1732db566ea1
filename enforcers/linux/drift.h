// Drift: what a network enforcer really holds for a policy on this host,
// read back from the kernel and turned into an IR, so that wardd's Check and
// `ward diff --host` compare it with the desired policy through the same
// engine as `ward diff` (compiler/diff.h).
//
// Contract (issue 20, "Drift"):
// - nftables: the policy's table read through libnftables JSON (handles,
//   counters, expiry normalised away) and compared with what the desired IR
//   renders for the same scope (backends/nftables, the code `ward apply`
//   uses); eBPF: the links (program id, tag, cgroup, attach type) and the
//   active generation's map contents, through libbpf.
// - Only what differs is turned back into IR: `live` is `desired` with its
//   network section replaced by the one the kernel enforces, so that
//   ir::Diff(desired, live) names exactly the permissions gained (widened)
//   and lost (narrowed), with the desired rules concerned.
// - Rules, programs or tables in the policy's scope that Ward's renderer
//   does not produce are `unknown`, never merged into `live`.
// - Reads only; never changes the kernel.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/policy.h"
#include "enforcers/linux/enforcer.h"

namespace ward::enforce {

struct LiveState {
  bool present = false;  // the enforcer holds something for the policy
  bool in_sync = false;  // the live objects equal what `desired` renders
  uint32_t generation = 0;
  ir::Policy live;                   // see above; meaningful when present
  std::vector<std::string> unknown;  // foreign objects, described
};

// Reads what `enforcer` ("nftables" or "ebpf") holds for `desired.name`,
// applied on `target` with `options` (domain grants: the addresses held
// are compared as addresses, their timeouts ignored). False and *error
// when the kernel cannot be read (no privilege, no such enforcer).
bool ReadLive(const ir::Policy& desired, const Target& target, std::string_view enforcer,
              const ApplyOptions& options, LiveState* out, std::string* error);

// The two halves ReadLive dispatches to (drift.cc): linux/nftables_live.cc
// and linux/ebpf_live.cc.
bool ReadLiveNftables(const ir::Policy& desired, const Target& target,
                      const ApplyOptions& options, LiveState* out, std::string* error);
bool ReadLiveEbpf(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                  LiveState* out, std::string* error);

}  // namespace ward::enforce
