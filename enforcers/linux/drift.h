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
//
// nftables (linux/nftables_live.cc):
// - The policy's table gone: present = false, and `live` is what the host
//   then enforces for that scope: nothing, every flow allowed (the IPv4-
//   mapped IPv6 block stays empty, as in every IR), so the diff lists every
//   permission gained. Not an error: the answer Check reports.
// - Each flow has two legs, its opener's packets and the replies, looked
//   up by separate rules; live = (opener ∩ reply) ∪ (opener − desired): a
//   gain is what the opener's packets may now do (a datagram out is a gain
//   even if no answer comes back), a loss what either leg now refuses.
// - A deleted dispatch rule, or the final reject/drop of a chain, lets the
//   protocols concerned through (gains); a deleted `jump` or `allow` rule
//   refuses everything the chain decides (losses).
// - Domain grants: no DNS query is sent. The desired side's domain sets are
//   taken as whatever addresses they hold; an element with ports no grant
//   allows is a gain at that address, and a domain set's lookup taken away
//   (either family, either leg) loses the grant's protocol for every name
//   of the direction (the IR's domain entries know no family).
// - Rule order within Ward's chains is not compared.
// - Other tables' rules that name the same scope (`meta skuid`, the
//   cgroup's id, the interface) are unknown too; other Ward tables are
//   their own policies'.
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
  ir::Policy live;                   // see above (nftables: also when absent)
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
bool ReadLiveNftables(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                      LiveState* out, std::string* error);
bool ReadLiveEbpf(const ir::Policy& desired, const Target& target, const ApplyOptions& options,
                  LiveState* out, std::string* error);

}  // namespace ward::enforce
