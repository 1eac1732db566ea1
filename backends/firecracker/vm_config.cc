#include "backends/firecracker/vm_config.h"

#include <nlohmann/json.hpp>

#include "language/literals.h"

namespace ward::backend::firecracker {
namespace {

constexpr uint32_t kMaxVcpus = 32;  // MachineConfiguration.vcpu_count maximum
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kCpuPeriodUs = 100000;

const ir::TargetSetting* Setting(const ir::Policy& policy, const std::string& key) {
  auto t = policy.targets.find("firecracker");
  if (t == policy.targets.end()) return nullptr;
  auto k = t->second.find(key);
  return k == t->second.end() ? nullptr : &k->second;
}

// A Linux interface name: 1 to 15 bytes, no '/', no whitespace, not "." or "..".
bool InterfaceName(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (unsigned char c : name) {
    if (c <= 0x20 || c == 0x7f || c == '/' || c == ':' || c == '"' || c == '\\') return false;
  }
  return true;
}

bool AnyGrant(const ir::Partition& part) {
  for (const auto& p : part.v4) {
    if (!p.decision.empty()) return true;
  }
  for (const auto& p : part.v6) {
    if (!p.decision.empty()) return true;
  }
  return false;
}

}  // namespace

Bucket BucketFor(uint64_t bytes_per_second) { return {bytes_per_second / 10, 100}; }

bool Plan(const ir::Policy& policy, VmPlan* plan, DiagnosticSink& sink) {
  bool ok = true;
  const ir::TargetSetting* kernel = Setting(policy, "kernel");
  const ir::TargetSetting* rootfs = Setting(policy, "rootfs");
  if (!kernel || !rootfs) {
    sink.Error(Code::kCannotExpress,
               kernel   ? kernel->span
               : rootfs ? rootfs->span
                        : Span{},
               std::string("a microVM needs a kernel and a root filesystem: `target firecracker` "
                           "has no ") +
                   (!kernel && !rootfs ? "`kernel` and no `rootfs`"
                    : !kernel          ? "`kernel`"
                                       : "`rootfs`"),
               "add `target firecracker { kernel \"/path/vmlinux\"  rootfs \"/path/rootfs.ext4\" "
               "read_only }`");
    ok = false;
  } else {
    plan->kernel = kernel->value;
    plan->rootfs = rootfs->value;
    for (const std::string& f : rootfs->flags) plan->rootfs_read_only |= f == "read_only";
  }
  if (const ir::TargetSetting* b = Setting(policy, "boot_args")) plan->boot_args = b->value;
  if (const ir::TargetSetting* t = Setting(policy, "tap")) {
    if (!InterfaceName(t->value)) {
      sink.Error(Code::kCannotExpress, t->span,
                 "`" + t->value +
                     "` is not a network interface name (1 to 15 characters, no "
                     "'/', ':', quotes or whitespace)");
      ok = false;
    }
    plan->tap = t->value;
  }

  // vCPUs: `vcpus` as given, else the `cpus` limit rounded up (the cgroup
  // quota below holds the fraction), else 1.
  const auto cpus = policy.limits.find("cpus");
  if (cpus != policy.limits.end()) plan->cpu_quota = cpus->second.value * (kCpuPeriodUs / 1000);
  if (const ir::TargetSetting* v = Setting(policy, "vcpus")) {
    std::string error;
    auto n = ParseInteger(v->value, &error);
    if (!n || *n < 1 || *n > kMaxVcpus) {
      sink.Error(Code::kCannotExpress, v->span,
                 "Firecracker runs 1 to " + std::to_string(kMaxVcpus) + " vCPUs, not " + v->value);
      ok = false;
    } else {
      plan->vcpus = static_cast<uint32_t>(*n);
    }
  } else if (cpus != policy.limits.end()) {
    uint64_t n = (cpus->second.value + 999) / 1000;
    // More than Firecracker runs: fewer vCPUs, which is narrower.
    plan->vcpus = static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(n, 1), kMaxVcpus));
  }

  if (auto m = policy.limits.find("memory"); m != policy.limits.end()) {
    // Rounded down to whole MiB: never more memory than the limit.
    plan->mem_mib = m->second.value / kMiB;
    if (plan->mem_mib == 0) {
      sink.Error(Code::kCannotExpress, m->second.span,
                 "a microVM's memory is a whole number of MiB; this limit is less than 1 MiB");
      ok = false;
    }
  }
  for (const auto& [name, value] : policy.limits) {
    if (name == "cpus" || name == "memory") continue;
    plan->limits_complete = false;
    sink.Warning(Code::kUnenforcedSection, value.span,
                 "limit `" + name +
                     "` is not enforced by firecracker: it applies inside the guest, which "
                     "the VM configuration does not reach");
  }

  if (const ir::TargetSetting* r = Setting(policy, "network_rate")) {
    std::string error;
    auto bits = ParseRate(r->value, &error);
    if (!bits || BucketFor(*bits / 8).size == 0) {
      sink.Error(Code::kCannotExpress, r->span,
                 "network_rate " + r->value + " is below one byte per 100 ms");
      ok = false;
    } else {
      plan->rate_bytes = *bits / 8;
    }
  }

  const ir::NetRules& net = policy.network;
  plan->network = AnyGrant(net.egress) || AnyGrant(net.ingress) || !net.egress_domains.empty() ||
                  !net.ingress_domains.empty();
  if (!net.unix_rules.empty()) {
    sink.Warning(Code::kCannotExpress, net.unix_rules.front().span,
                 "a microVM reaches no unix socket of the host: these grants are left out "
                 "(denied)");
  }

  if (policy.process.user && policy.process.user->first != 0) {
    plan->uid = policy.process.user->first;
    plan->gid = policy.process.user->second;
  }
  return ok;
}

std::string ConfigJson(const VmPlan& plan) {
  using nlohmann::ordered_json;
  ordered_json j;
  ordered_json boot = {{"kernel_image_path", plan.kernel}};
  if (plan.boot_args) boot["boot_args"] = *plan.boot_args;
  j["boot-source"] = boot;
  j["drives"] = ordered_json::array({ordered_json{{"drive_id", "rootfs"},
                                                  {"path_on_host", plan.rootfs},
                                                  {"is_root_device", true},
                                                  {"is_read_only", plan.rootfs_read_only}}});
  j["machine-config"] = {
      {"vcpu_count", plan.vcpus}, {"mem_size_mib", plan.mem_mib}, {"smt", false}};
  ordered_json nics = ordered_json::array();
  if (plan.network) {
    ordered_json nic = {{"iface_id", "eth0"}, {"host_dev_name", plan.tap}};
    if (plan.rate_bytes) {
      Bucket b = BucketFor(*plan.rate_bytes);
      ordered_json limiter = {{"bandwidth", {{"size", b.size}, {"refill_time", b.refill_ms}}}};
      nic["rx_rate_limiter"] = limiter;
      nic["tx_rate_limiter"] = limiter;
    }
    nics.push_back(nic);
  }
  j["network-interfaces"] = nics;
  return j.dump(2) + "\n";
}

std::vector<std::string> JailerArgs(const ir::Policy& policy, const VmPlan& plan) {
  std::vector<std::string> args = {
      "--uid", std::to_string(plan.uid), "--gid", std::to_string(plan.gid), "--cgroup-version",
      "2"};
  if (plan.cpu_quota) {
    args.push_back("--cgroup");
    args.push_back("cpu.max=" + std::to_string(*plan.cpu_quota) + " " +
                   std::to_string(kCpuPeriodUs));
  }
  // Firecracker's own arguments; its default seccomp filter stays on.
  args.push_back("--");
  args.push_back("--config-file");
  args.push_back(policy.name + ".firecracker.json");
  return args;
}

}  // namespace ward::backend::firecracker
