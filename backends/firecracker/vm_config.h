// The pieces of the firecracker backend (README.md): the VM configuration,
// the jailer's arguments, the numbers they are made of. Pure functions of
// the IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace ward::backend::firecracker {

// What the policy asks of the VM, read from `limits`, `process` and
// `target firecracker`, checked.
struct VmPlan {
  std::string kernel;
  std::string rootfs;
  bool rootfs_read_only = false;
  std::optional<std::string> boot_args;
  uint32_t vcpus = 1;
  uint64_t mem_mib = 128;              // Firecracker's own default without `memory`
  std::optional<uint64_t> cpu_quota;   // cgroup cpu.max quota (µs per 100000 µs)
  std::optional<uint64_t> rate_bytes;  // network_rate in bytes per second
  std::string tap = "tap0";
  bool network = false;  // the policy grants some network: the VM gets a NIC
  uint32_t uid = 65534, gid = 65534;
  bool limits_complete = true;  // every limit is applied by the VM or the jailer
};

// The token bucket of a rate: size = rate x 100 ms (bytes), refill 100 ms.
struct Bucket {
  uint64_t size = 0;
  uint64_t refill_ms = 100;
};
Bucket BucketFor(uint64_t bytes_per_second);

bool Plan(const ir::Policy& policy, VmPlan* plan, DiagnosticSink& sink);
std::string ConfigJson(const VmPlan& plan);  // FullVmConfiguration, 2-space JSON
std::vector<std::string> JailerArgs(const ir::Policy& policy, const VmPlan& plan);

}  // namespace ward::backend::firecracker
