// nftables through libnftables (README.md in backends/nftables): the
// backend's ruleset with the scope filled in, loaded as one transaction that
// replaces the policy's table (delete + add in one batch), removed the same
// way, and read back as JSON.
#pragma once

#include <string>

#include "enforcers/linux/enforcer.h"

namespace ward::enforce {

const NetworkEnforcer& NftablesEnforcer();

// Runs nft commands (text, or JSON when `json`) in one libnftables
// transaction in this process's network namespace. With `json_output`, what
// the commands print (a listing) is JSON. False with libnftables' message
// in *error.
bool RunNft(const std::string& commands, bool json, bool json_output, std::string* output,
            std::string* error);

// The same from a forked child in a private mount namespace where the
// cgroup v2 tree `cgroup_mount` is bound at /sys/fs/cgroup, which is where
// libnftables resolves `socket cgroupv2` paths (a hybrid host mounts v2
// elsewhere). The kernel state it leaves is the same as RunNft's.
bool RunNftInCgroupView(const std::string& commands, const std::string& cgroup_mount,
                        std::string* error);

}  // namespace ward::enforce
