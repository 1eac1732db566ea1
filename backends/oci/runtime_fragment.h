// The OCI runtime-spec fragment of a policy (`<policy>.runtime.json`): the
// `process` and `linux` members a config.json takes from Ward — no new
// privileges, capabilities, user, rlimits, cgroup resources and the seccomp
// profile. Merge it into a bundle's config.json (objects key by key).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "backends/backend.h"
#include "compiler/policy.h"

namespace ward::backend::oci {

// The fragment, with `seccomp` as linux.seccomp. Appends to `enforced` the
// sections it enforces exactly: process unless the policy has `env allow`
// (an OCI config sets the environment; it cannot filter one), limits
// unless it has `disk`, `timeout` or `cpu_time` (no OCI field holds them;
// cpu_time becomes a per-process RLIMIT_CPU). Each gap is a warning.
// Appends to `fields` the fields it carries (backend.h PolicyFields):
// process.no_new_privileges, .capabilities, .user; limits.memory, .pids,
// .cpus, .open_files.
nlohmann::ordered_json RuntimeFragment(const ir::Policy& policy,
                                       const nlohmann::ordered_json& seccomp, DiagnosticSink& sink,
                                       std::vector<Section>* enforced,
                                       std::vector<std::string>* fields);

}  // namespace ward::backend::oci
