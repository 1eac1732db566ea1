#include "backends/oci/runtime_fragment.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace ward::backend::oci {
namespace {

using nlohmann::ordered_json;

// The CFS period runc and Docker use; `cpus N` is a quota of N periods.
constexpr uint64_t kCpuPeriodUs = 100000;

// OCI sizes are int64; anything larger is no limit at all.
int64_t ClampToInt64(uint64_t v) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(v > kMax ? kMax : v);
}

ordered_json Capabilities(const ir::ProcessRules& p) {
  ordered_json kept = ordered_json::array();
  for (const std::string& c : p.capabilities_kept) kept.push_back(c);
  // A workload that is not root loses its permitted capabilities at
  // execve unless they are ambient (which needs them inheritable too).
  const bool non_root = p.user && p.user->first != 0;
  ordered_json caps;
  caps["bounding"] = kept;
  caps["effective"] = kept;
  caps["permitted"] = kept;
  caps["inheritable"] = non_root ? kept : ordered_json::array();
  caps["ambient"] = non_root ? kept : ordered_json::array();
  return caps;
}

ordered_json Rlimit(const char* type, uint64_t value) {
  ordered_json r;
  r["type"] = type;
  r["hard"] = value;
  r["soft"] = value;
  return r;
}

// process.rlimits and linux.resources from the limits; false when one of
// them has no exact OCI form (after a warning).
bool Limits(const ir::Limits& limits, DiagnosticSink& sink, ordered_json* rlimits,
            ordered_json* resources, std::vector<std::string>* fields) {
  bool exact = true;
  for (const auto& [key, limit] : limits) {
    const uint64_t v = limit.value;
    // Carried exactly unless the branch below says otherwise.
    if (key == "memory" || key == "pids" || key == "cpus" || key == "open_files") {
      fields->push_back("limits." + key);
    }
    if (key == "memory") {
      // swap is memory plus swap: equal to the limit, no swap on top.
      (*resources)["memory"] = {{"limit", ClampToInt64(v)}, {"swap", ClampToInt64(v)}};
    } else if (key == "pids") {
      (*resources)["pids"] = {{"limit", ClampToInt64(v)}};
    } else if (key == "cpus") {
      (*resources)["cpu"] = {{"quota", ClampToInt64(v * (kCpuPeriodUs / 1000))},
                             {"period", kCpuPeriodUs}};
    } else if (key == "open_files") {
      rlimits->push_back(Rlimit("RLIMIT_NOFILE", v));
    } else if (key == "cpu_time") {
      // Whole seconds, rounded down (towards deny).
      rlimits->push_back(Rlimit("RLIMIT_CPU", v / 1000));
      exact = false;
      sink.Warning(Code::kCannotExpress, limit.span,
                   "cpu_time becomes RLIMIT_CPU of " + std::to_string(v / 1000) +
                       " s, which bounds each process, not the container's total",
                   "compile with -t process as well: `ward run` bounds the total");
    } else {
      exact = false;
      sink.Warning(Code::kCannotExpress, limit.span,
                   "an OCI runtime config has no field for the limit '" + key + "'",
                   "the limit is not enforced by this target");
    }
  }
  std::sort(rlimits->begin(), rlimits->end(),
            [](const ordered_json& a, const ordered_json& b) { return a["type"] < b["type"]; });
  return exact;
}

}  // namespace

ordered_json RuntimeFragment(const ir::Policy& policy, const ordered_json& seccomp,
                             DiagnosticSink& sink, std::vector<Section>* enforced,
                             std::vector<std::string>* fields) {
  const ir::ProcessRules& p = policy.process;
  ordered_json process;
  process["noNewPrivileges"] = p.no_new_privileges;
  if (p.user) process["user"] = {{"uid", p.user->first}, {"gid", p.user->second}};
  process["capabilities"] = Capabilities(p);
  ordered_json rlimits = ordered_json::array();
  ordered_json resources = ordered_json::object();
  // process.noNewPrivileges, .user and .capabilities carry those fields;
  // nothing carries env allow (below).
  fields->push_back("process.no_new_privileges");
  fields->push_back("process.capabilities");
  if (p.user) fields->push_back("process.user");
  const bool limits_exact = Limits(policy.limits, sink, &rlimits, &resources, fields);
  if (!rlimits.empty()) process["rlimits"] = std::move(rlimits);

  ordered_json linux;
  if (!resources.empty()) linux["resources"] = std::move(resources);
  linux["seccomp"] = seccomp;

  ordered_json fragment;
  fragment["process"] = std::move(process);
  fragment["linux"] = std::move(linux);

  if (p.env_allowed.empty()) {
    enforced->push_back(Section::kProcess);
  } else {
    sink.Warning(Code::kCannotExpress, {},
                 "an OCI runtime config cannot filter the environment: `env allow` is not "
                 "enforced by this target",
                 "process.env in config.json is the whole environment the workload gets");
  }
  if (limits_exact) enforced->push_back(Section::kLimits);
  return fragment;
}

}  // namespace ward::backend::oci
