// `ward doctor [--format json]`: what this host's kernel offers each layer,
// and so what `ward run` and `ward apply` can enforce here. The probes are
// enforcers/linux/host_probe.h (they change nothing on the host); this file
// judges and prints. Exit 0 when `ward run` can enforce every layer, 1 when
// one is missing (a policy with that section is refused), 2 for a usage
// error.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "enforcers/linux/host_probe.h"

namespace ward::cli {
namespace {

using enforce::HostProbe;

std::string Join(const std::vector<std::string>& items, const char* sep = " ") {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : sep) + i;
  return out.empty() ? "none" : out;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Where each limit that `ward run` writes through a cgroup controller can go:
// "v2", "v1" or "" (cgroup.h: v2 when the root lists it, else v1).
std::string LimitHome(const enforce::CgroupProbe& c, const std::string& controller) {
  if (Has(c.controllers, controller)) return "v2";
  if (Has(c.v1, controller)) return "v1";
  return "";
}

// A layer `ward run` lacks, and the policy section it refuses because of it.
struct Gap {
  std::string layer, section, why;
};

struct Verdict {
  bool landlock = false, seccomp = false, cgroup = false, bpf = false, root = false;
  std::vector<Gap> gaps;
  bool apply_nftables = false, apply_ebpf = false;
  bool log_seccomp = false, log_landlock = false;
};

bool BpfPrograms(const enforce::BpfProbe& b) {
  return b.built && b.cgroup_sock_addr == 1 && b.cgroup_sock == 1 && b.cgroup_skb == 1;
}

Verdict Judge(const HostProbe& h) {
  Verdict v;
  const auto& c = h.cgroup;
  v.cgroup = !c.mount.empty() && c.writable;
  if (c.mount.empty()) {
    v.gaps.push_back({"cgroup", "every policy", "no cgroup v2 is mounted (" + c.error + ")"});
  } else if (!c.writable) {
    v.gaps.push_back({"cgroup", "every policy", c.mount + " is not writable by this user"});
  }
  for (const char* limit : {"cpu", "memory", "pids"}) {
    if (!c.mount.empty() && LimitHome(c, limit).empty()) {
      v.cgroup = false;
      v.gaps.push_back({"cgroup", std::string("limits { ") + limit + " }",
                        std::string("no ") + limit + " controller, in v2 or in a v1 hierarchy"});
    }
  }
  v.bpf = BpfPrograms(h.bpf) && !c.mount.empty();
  if (!h.bpf.built) {
    v.gaps.push_back({"network", "every policy", "this ward is built without the eBPF enforcer"});
  } else if (!v.bpf) {
    const auto& b = h.bpf;
    const bool refused = b.cgroup_sock < 0 || b.cgroup_sock_addr < 0 || b.cgroup_skb < 0;
    v.gaps.push_back({"network", "every policy",
                      refused ? "loading cgroup BPF programs needs CAP_BPF (run as root)"
                              : "the kernel lacks cgroup BPF programs (sock, sock_addr, skb)"});
  }
  v.landlock = h.landlock_abi >= 1;
  if (!v.landlock) {
    v.gaps.push_back({"landlock", "every policy", "no Landlock: " + h.landlock_error});
  }
  const auto& s = h.seccomp;
  v.seccomp = s.filters && Has(s.actions, "kill_process") && Has(s.actions, "errno");
  if (!v.seccomp) {
    v.gaps.push_back(
        {"seccomp", "every policy",
         s.error.empty() ? "the kernel lacks the kill_process or errno action" : s.error});
  }
  v.root = h.privileges.euid == 0;
  if (!v.root) {
    v.gaps.push_back({"privileges", "every policy",
                      "ward run needs root (cgroups, BPF programs, capabilities)"});
  }
  v.apply_nftables = h.nftables.built && h.nftables.lists;
  v.apply_ebpf = v.bpf;
  v.log_seccomp = h.audit.readlog;
  v.log_landlock = h.audit.readlog && h.audit.enabled.value_or(false) && h.landlock_abi >= 7;
  return v;
}

std::string Programs(const enforce::BpfProbe& b) {
  if (!b.built) return "not built into this ward";
  auto one = [](int r, const char* name) {
    return std::string(name) + (r == 1   ? ""
                                : r == 0 ? " (unsupported)"
                                         : " (not probed: no CAP_BPF)");
  };
  return "cgroup programs " + one(b.cgroup_sock, "sock") + ", " +
         one(b.cgroup_sock_addr, "sock_addr") + ", " + one(b.cgroup_skb, "skb");
}

void Row(const char* layer, bool ok, const std::string& detail, const char* info = nullptr) {
  std::string name = layer;
  name.resize(12, ' ');
  std::string status = info ? info : ok ? "ok" : "missing";
  status.resize(9, ' ');
  std::cout << name << status << detail << "\n";
}

void PrintText(const HostProbe& h, const Verdict& v) {
  std::cout << "ward doctor: kernel " << h.kernel << " (" << h.machine << ")\n";
  Row("landlock", v.landlock,
      v.landlock ? "ABI " + std::to_string(h.landlock_abi) +
                       " (TCP ports from ABI 4, scopes from 6, audit logging from 7)"
                 : h.landlock_error);
  const auto& s = h.seccomp;
  Row("seccomp", v.seccomp,
      s.filters ? "filters; actions: " + Join(s.actions) +
                      "; SECCOMP_FILTER_FLAG_LOG: " + (s.flag_log ? "yes" : "no") +
                      "; user notification: " + (s.flag_listener ? "yes" : "no") +
                      "; libseccomp API level " + std::to_string(s.api_level)
                : s.error);
  const auto& c = h.cgroup;
  std::string limits;
  for (const char* limit : {"cpu", "memory", "pids"}) {
    const std::string home = LimitHome(c, limit);
    limits +=
        std::string(limits.empty() ? "" : ", ") + limit + " " + (home.empty() ? "none" : home);
  }
  Row("cgroup", v.cgroup,
      c.mount.empty()
          ? c.error
          : "v2 at " + c.mount + (c.hybrid ? " (hybrid: v1 hierarchies beside it)" : "") +
                "; controllers: " + Join(c.controllers) + "; subtree_control: " + Join(c.subtree) +
                "; limits: " + limits);
  const auto& b = h.bpf;
  Row("bpf", v.bpf,
      Programs(b) + "; BTF: " + (b.btf ? "/sys/kernel/btf/vmlinux" : "none") + "; BPF LSM: " +
          (b.lsm == "unknown" ? "cannot tell (" + b.lsm_how + ")"
                              : b.lsm + " (" + b.lsm_how + ")"));
  Row("nftables", v.apply_nftables,
      !h.nftables.built  ? "not built into this ward"
      : h.nftables.lists ? "libnftables lists this network namespace"
                         : "libnftables cannot list this network namespace: " + h.nftables.error);
  const auto& a = h.audit;
  Row("audit", true,
      std::string("read-only log group: ") +
          (a.readlog ? "readable" : "not readable (" + a.readlog_error + ")") + "; audit: " +
          (!a.enabled   ? "status unknown (" + a.status_error + ")"
           : *a.enabled ? "enabled"
                        : "disabled") +
          "; audit daemon: " + (a.daemon_pid ? "pid " + std::to_string(a.daemon_pid) : "none"),
      "info");
  const auto& u = h.userns;
  Row("userns", true,
      std::string("user namespaces: ") + (u.unshare ? "available" : "refused (" + u.error + ")") +
          (u.max >= 0 ? " (max_user_namespaces " + std::to_string(u.max) + ")" : ""),
      "info");
  const auto& p = h.privileges;
  Row("privileges", v.root,
      "uid " + std::to_string(p.uid) + ", euid " + std::to_string(p.euid) +
          "; capabilities: " + Join(p.capabilities) + "; lacking: " + Join(p.lacking));
  if (v.gaps.empty()) {
    std::cout << "ward run: enforces every layer here (cgroup, network, landlock, process, "
                 "seccomp)\n";
  }
  for (const Gap& g : v.gaps) {
    std::cout << "ward run: refuses " << g.section << " (" << g.layer << "): " << g.why << "\n";
  }
  std::cout << "ward run --log: seccomp denials "
            << (v.log_seccomp ? "yes" : "no (the read-only audit group is not readable)")
            << "; Landlock denials "
            << (v.log_landlock       ? "yes"
                : !a.readlog         ? "no (the read-only audit group is not readable)"
                : h.landlock_abi < 7 ? "no (Landlock ABI 7 needed)"
                : !a.enabled         ? "unknown (the audit status is not readable)"
                                     : "no (audit is disabled host-wide)")
            << "\n";
  std::cout << "ward apply: -t nftables " << (v.apply_nftables ? "yes" : "no") << "; -t ebpf "
            << (v.apply_ebpf ? "yes" : "no") << "\n";
}

nlohmann::ordered_json DoctorJson(const HostProbe& h, const Verdict& v) {
  using J = nlohmann::ordered_json;
  const auto& c = h.cgroup;
  J limits = J::object();
  for (const char* limit : {"cpu", "memory", "pids"}) {
    const std::string home = LimitHome(c, limit);
    limits[limit] = home.empty() ? J(nullptr) : J(home);
  }
  J gaps = J::array();
  for (const Gap& g : v.gaps)
    gaps.push_back({{"layer", g.layer}, {"section", g.section}, {"why", g.why}});
  const auto& a = h.audit;
  return J{
      {"version", 1},
      {"kernel", h.kernel},
      {"machine", h.machine},
      {"layers",
       {{"landlock", {{"ok", v.landlock}, {"abi", h.landlock_abi}, {"error", h.landlock_error}}},
        {"seccomp",
         {{"ok", v.seccomp},
          {"actions", h.seccomp.actions},
          {"flag_log", h.seccomp.flag_log},
          {"user_notification", h.seccomp.flag_listener},
          {"api_level", h.seccomp.api_level},
          {"error", h.seccomp.error}}},
        {"cgroup",
         {{"ok", v.cgroup},
          {"mount", c.mount},
          {"hybrid", c.hybrid},
          {"controllers", c.controllers},
          {"subtree_control", c.subtree},
          {"v1_controllers", c.v1},
          {"limits", limits}}},
        {"bpf",
         {{"ok", v.bpf},
          {"built", h.bpf.built},
          {"programs",
           {{"cgroup_sock", h.bpf.cgroup_sock == 1},
            {"cgroup_sock_addr", h.bpf.cgroup_sock_addr == 1},
            {"cgroup_skb", h.bpf.cgroup_skb == 1}}},
          {"btf", h.bpf.btf},
          {"lsm", h.bpf.lsm},
          {"lsm_how", h.bpf.lsm_how}}},
        {"nftables",
         {{"ok", v.apply_nftables}, {"built", h.nftables.built}, {"error", h.nftables.error}}},
        {"audit",
         {{"readlog", a.readlog},
          {"enabled", a.enabled ? J(*a.enabled) : J(nullptr)},
          {"daemon_pid", a.daemon_pid}}},
        {"userns", {{"available", h.userns.unshare}, {"max", h.userns.max}}},
        {"privileges",
         {{"ok", v.root},
          {"uid", h.privileges.uid},
          {"euid", h.privileges.euid},
          {"capabilities", h.privileges.capabilities},
          {"lacking", h.privileges.lacking}}}}},
      {"run", {{"ok", v.gaps.empty()}, {"missing", gaps}}},
      {"log", {{"seccomp", v.log_seccomp}, {"landlock", v.log_landlock}}},
      {"apply", {{"nftables", v.apply_nftables}, {"ebpf", v.apply_ebpf}}}};
}

}  // namespace

void AddDoctorCommand(CLI::App& app, int* exit_code) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check this host for every layer: what ward run and ward apply can enforce here");
  cmd->add_option("--format", *format, "output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([format, exit_code] {
    const HostProbe host = enforce::ProbeHost();
    const Verdict verdict = Judge(host);
    if (*format == "json") {
      std::cout << DoctorJson(host, verdict).dump(2) << "\n";
    } else {
      PrintText(host, verdict);
    }
    *exit_code = verdict.gaps.empty() ? kOk : kFound;
  });
}

}  // namespace ward::cli
