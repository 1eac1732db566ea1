#include "backends/process/process_backend.h"

#include <algorithm>
#include <string>

namespace ward::backend {
namespace process {
namespace {

using nlohmann::ordered_json;

constexpr uint64_t kCpuPeriodUs = 100000;

ordered_json Rlimit(const char* type, uint64_t value) {
  ordered_json r;
  r["type"] = type;
  r["soft"] = value;
  r["hard"] = value;
  return r;
}

// The cgroup v2 interface files and values for the limits that have one.
ordered_json Cgroup(const ir::Limits& limits) {
  ordered_json cgroup = ordered_json::object();
  auto put = [&](const char* file, std::string value) { cgroup[file] = std::move(value); };
  if (auto it = limits.find("cpus"); it != limits.end()) {
    put("cpu.max", std::to_string(it->second.value * (kCpuPeriodUs / 1000)) + " " +
                       std::to_string(kCpuPeriodUs));
  }
  if (auto it = limits.find("memory"); it != limits.end()) {
    put("memory.max", std::to_string(it->second.value));
    put("memory.swap.max", "0");
  }
  if (auto it = limits.find("pids"); it != limits.end()) {
    put("pids.max", std::to_string(it->second.value));
  }
  return cgroup;
}

ordered_json Rlimits(const ir::Limits& limits) {
  ordered_json out = ordered_json::array();
  if (auto it = limits.find("open_files"); it != limits.end()) {
    out.push_back(Rlimit("RLIMIT_NOFILE", it->second.value));
  }
  return out;
}

}  // namespace

ordered_json ProcessJson(const ir::Policy& policy) {
  const ir::ProcessRules& p = policy.process;
  ordered_json j;
  j["version"] = kProcessJsonVersion;
  j["policy"] = policy.name;
  j["no_new_privileges"] = p.no_new_privileges;
  j["capabilities"] = {{"keep", p.capabilities_kept}};
  if (p.user) {
    j["user"] = {{"uid", p.user->first}, {"gid", p.user->second}};
  } else {
    j["user"] = nullptr;
  }
  if (p.env_allowed.empty()) {
    j["env_allow"] = nullptr;
  } else {
    j["env_allow"] = p.env_allowed;
  }
  ordered_json limits = ordered_json::object();
  for (const auto& [key, v] : policy.limits) limits[key] = v.value;
  j["limits"] = std::move(limits);
  j["rlimits"] = Rlimits(policy.limits);
  j["cgroup"] = Cgroup(policy.limits);
  return j;
}

}  // namespace process

namespace {

class Process final : public Backend {
 public:
  std::string_view name() const override { return "process"; }
  std::string_view description() const override {
    return "JSON for ward run / ward apply: privileges, capabilities, user, rlimits, cgroup "
           "limits";
  }
  std::vector<Section> covers() const override { return {Section::kProcess, Section::kLimits}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    result.artifacts.push_back(
        {policy.name + ".process.json", process::ProcessJson(policy).dump(2) + "\n"});
    result.fields = PolicyFields(policy, Section::kProcess);
    bool limits_exact = true;
    for (const auto& [key, limit] : policy.limits) {
      // ward run and ward apply bound a cgroup and rlimits; nothing on the
      // host bounds the disk a workload fills (enforcers/linux/cgroup.cc
      // refuses the limit), so it is not claimed.
      if (key == "disk") {
        limits_exact = false;
        sink.Warning(Code::kCannotExpress, limit.span,
                     "`disk` is not enforced by -t process: ward run and ward apply have no "
                     "scratch file system to bound (ward run refuses the limit)",
                     "-t kubernetes bounds it (ephemeral-storage); for ward run, remove it");
        continue;
      }
      result.fields.push_back("limits." + key);
    }
    result.enforced = {Section::kProcess};
    if (limits_exact) result.enforced.push_back(Section::kLimits);
    result.ok = true;
    return result;
  }
};

}  // namespace

const Backend& ProcessBackend() {
  static const Process backend;
  return backend;
}

}  // namespace ward::backend
