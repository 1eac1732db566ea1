// Ward's own copy of the Landlock user-space API (include/uapi/linux/
// landlock.h), up to ABI 7. Debian 12's <linux/landlock.h> stops at ABI 2,
// so the enforcer never includes it. Values are the kernel's; each right
// notes the ABI that introduced it. Syscall numbers are the same on every
// architecture (the unified table: 444-446).
#pragma once

#include <cstdint>

namespace ward::enforce::landlock_uapi {

// Syscall numbers.
inline constexpr long kSysCreateRuleset = 444;
inline constexpr long kSysAddRule = 445;
inline constexpr long kSysRestrictSelf = 446;

// landlock_create_ruleset() flags.
inline constexpr uint32_t kCreateRulesetVersion = 1U << 0;  // ABI 1: returns the ABI
inline constexpr uint32_t kCreateRulesetErrata = 1U << 1;   // ABI 7: returns the errata mask

// landlock_restrict_self() flags (ABI 7: audit logging).
inline constexpr uint32_t kRestrictSelfLogSameExecOff = 1U << 0;
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1U << 1;
inline constexpr uint32_t kRestrictSelfLogSubdomainsOff = 1U << 2;

// enum landlock_rule_type.
inline constexpr int kRulePathBeneath = 1;
inline constexpr int kRuleNetPort = 2;  // ABI 4

// Filesystem access rights (struct landlock_ruleset_attr.handled_access_fs).
inline constexpr uint64_t kAccessFsExecute = 1ULL << 0;     // ABI 1
inline constexpr uint64_t kAccessFsWriteFile = 1ULL << 1;   // ABI 1
inline constexpr uint64_t kAccessFsReadFile = 1ULL << 2;    // ABI 1
inline constexpr uint64_t kAccessFsReadDir = 1ULL << 3;     // ABI 1
inline constexpr uint64_t kAccessFsRemoveDir = 1ULL << 4;   // ABI 1
inline constexpr uint64_t kAccessFsRemoveFile = 1ULL << 5;  // ABI 1
inline constexpr uint64_t kAccessFsMakeChar = 1ULL << 6;    // ABI 1
inline constexpr uint64_t kAccessFsMakeDir = 1ULL << 7;     // ABI 1
inline constexpr uint64_t kAccessFsMakeReg = 1ULL << 8;     // ABI 1
inline constexpr uint64_t kAccessFsMakeSock = 1ULL << 9;    // ABI 1
inline constexpr uint64_t kAccessFsMakeFifo = 1ULL << 10;   // ABI 1
inline constexpr uint64_t kAccessFsMakeBlock = 1ULL << 11;  // ABI 1
inline constexpr uint64_t kAccessFsMakeSym = 1ULL << 12;    // ABI 1
inline constexpr uint64_t kAccessFsRefer = 1ULL << 13;      // ABI 2
inline constexpr uint64_t kAccessFsTruncate = 1ULL << 14;   // ABI 3
inline constexpr uint64_t kAccessFsIoctlDev = 1ULL << 15;   // ABI 5
// The rights that apply to a non-directory; the kernel refuses (EINVAL) a
// path-beneath rule on a file with any other right.
inline constexpr uint64_t kAccessFile = kAccessFsExecute | kAccessFsWriteFile | kAccessFsReadFile |
                                        kAccessFsTruncate | kAccessFsIoctlDev;

// Network access rights (handled_access_net), ABI 4.
inline constexpr uint64_t kAccessNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kAccessNetConnectTcp = 1ULL << 1;

// Scopes (struct landlock_ruleset_attr.scoped), ABI 6.
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// The kernel reads as many bytes as the size passed says; a kernel older
// than a field refuses a non-zero value in it (E2BIG/EINVAL).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};
static_assert(sizeof(RulesetAttr) == 24);

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
static_assert(sizeof(PathBeneathAttr) == 12);

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;  // host byte order
};
static_assert(sizeof(NetPortAttr) == 16);

}  // namespace ward::enforce::landlock_uapi
