// Named constants a policy may use in syscall conditions and actions:
// errno names, AF_*, SOCK_*, CLONE_*, IPPROTO_*, PR_*, PROT_*, MS_*, MSG_*,
// F_*, SIG*, PER_* and capabilities. Values come from the system headers.
// Only families whose values are the same on every supported architecture
// are offered (O_*, MAP_* and ioctl numbers differ, e.g. on arm and ppc64le:
// write those as numbers).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "language/syscall_facts.h"

namespace ward {

std::optional<uint64_t> LookupConstant(std::string_view name, Arch arch);
// The errno value for a name such as "EPERM" (glibc's strerrorname_np).
std::optional<int> LookupErrno(std::string_view name);
// The capability number for "CAP_SYS_ADMIN", or nullopt.
std::optional<int> LookupCapability(std::string_view name);

// The netlink protocols by their NETLINK_* names, lower-cased without the
// prefix ("route", "sock_diag", "generic", ...): `allow netlink` grants
// "route" only, and names the others to say so.
const std::vector<std::string>& NetlinkProtocolNames();

// Candidates for "did you mean" hints.
std::vector<std::string> ConstantNames();
std::vector<std::string> ErrnoNames();
std::vector<std::string> CapabilityNames();

// The candidate closest to `name` by edit distance, when close enough to be a
// plausible typo; empty otherwise. The first of ClosestMatches.
std::string ClosestMatch(std::string_view name, const std::vector<std::string>& candidates);

// Every candidate at the smallest edit distance from `name` (insertions,
// deletions, substitutions and adjacent transpositions cost one), when that
// distance is at most max(1, size / 3); when none is that close, the
// candidates that start with `name` (at least 3 characters: `@network` for
// `@network-io`). Ties are all kept, in candidate order, at most 4.
std::vector<std::string> ClosestMatches(std::string_view name,
                                        const std::vector<std::string>& candidates);

// "did you mean 'a'?", "did you mean 'a' or 'b'?", "did you mean 'a', 'b' or
// 'c'?"; empty for no match.
std::string DidYouMean(const std::vector<std::string>& matches);

}  // namespace ward
