#include "tests/importers/docker_reference.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ward::test {
namespace {

using nlohmann::json;

const std::map<std::string, Arch>& OciArches() {
  static const std::map<std::string, Arch> m = {
      {"SCMP_ARCH_X86_64", Arch::kX86_64},   {"SCMP_ARCH_X86", Arch::kX86},
      {"SCMP_ARCH_AARCH64", Arch::kAarch64}, {"SCMP_ARCH_ARM", Arch::kArm},
      {"SCMP_ARCH_RISCV64", Arch::kRiscv64}, {"SCMP_ARCH_PPC64LE", Arch::kPpc64le},
      {"SCMP_ARCH_S390X", Arch::kS390x}};
  return m;
}

// Docker compares includes/excludes.arches with libseccomp's native name.
std::string NativeName(Arch a) {
  static const std::map<Arch, std::string> m = {
      {Arch::kX86_64, "amd64"}, {Arch::kX86, "x86"},         {Arch::kAarch64, "arm64"},
      {Arch::kArm, "arm"},      {Arch::kRiscv64, "riscv64"}, {Arch::kPpc64le, "ppc64le"},
      {Arch::kS390x, "s390x"}};
  return m.at(a);
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array()) {
    for (const json& s : j[key]) out.push_back(s.get<std::string>());
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// kernel >= "X.Y" (Docker compares MAJOR.MINOR, the patch level of the
// requirement being 0).
bool KernelAtLeast(const DockerHost& host, const std::string& min) {
  if (!host.kernel) return true;
  unsigned long major = 0, minor = 0;
  if (std::sscanf(min.c_str(), "%lu.%lu", &major, &minor) != 2) return false;
  const auto& k = *host.kernel;
  return k[0] != major ? k[0] > major : k[1] >= minor;
}

bool Applies(const json& entry, const DockerHost& host) {
  const std::string native = host.arch ? NativeName(*host.arch) : "";
  if (entry.contains("excludes")) {
    const json& ex = entry["excludes"];
    if (!native.empty() && Contains(Strings(ex, "arches"), native)) return false;
    for (const std::string& c : Strings(ex, "caps")) {
      if (Contains(host.caps, c)) return false;
    }
    if (ex.contains("minKernel") && KernelAtLeast(host, ex["minKernel"])) return false;
  }
  if (entry.contains("includes")) {
    const json& in = entry["includes"];
    std::vector<std::string> arches = Strings(in, "arches");
    if (!arches.empty() && !Contains(arches, native)) return false;
    for (const std::string& c : Strings(in, "caps")) {
      if (!Contains(host.caps, c)) return false;
    }
    if (in.contains("minKernel") && !KernelAtLeast(host, in["minKernel"])) return false;
  }
  return true;
}

// An action as runc hands it to libseccomp: (kind, data). runc skips a
// rule equal to the default.
struct Act {
  std::string kind;
  uint32_t data = 0;
  bool operator==(const Act&) const = default;
};

Act ActionOf(const json& j, const char* action_key, const char* errno_key) {
  std::string kind = j[action_key];
  uint32_t data = 0;
  if (kind == "SCMP_ACT_ERRNO" || kind == "SCMP_ACT_TRACE") {
    data = j.contains(errno_key) ? static_cast<uint32_t>(j[errno_key].get<uint64_t>() & 0xffff)
                                 : 1;  // runc's default: EPERM
  }
  if (kind == "SCMP_ACT_KILL") kind = "SCMP_ACT_KILL_THREAD";
  return {kind, data};
}

// What the calling process sees.
std::string Outcome(const Act& a) {
  if (a.kind == "SCMP_ACT_ALLOW") return "allow";
  if (a.kind == "SCMP_ACT_LOG") return "log";
  if (a.kind == "SCMP_ACT_NOTIFY") return "notify";
  if (a.kind == "SCMP_ACT_TRAP") return "trap";
  if (a.kind == "SCMP_ACT_KILL_THREAD") return "kill-thread";
  if (a.kind == "SCMP_ACT_KILL_PROCESS") return "kill";
  if (a.kind == "SCMP_ACT_TRACE") return "errno 38";                   // no tracer: ENOSYS
  return "errno " + std::to_string(std::min<uint32_t>(a.data, 4095));  // the kernel caps it
}

int Rank(const std::string& outcome) {
  static const char* kOrder[] = {"allow", "log", "notify", "errno", "trap", "kill-thread", "kill"};
  for (int i = 0; i < 7; ++i) {
    if (outcome.rfind(kOrder[i], 0) == 0) return i;
  }
  return 7;
}

// libseccomp: unsigned comparisons of the register; the datum keeps 32
// bits on a 32-bit architecture; MASKED_EQ masks the datum too.
bool ArgMatches(const json& a, Arch arch, const std::array<uint64_t, 6>& args) {
  const uint64_t reg = ArchBits(arch) == 64 ? ~uint64_t{0} : 0xffffffffu;
  const uint64_t x = args.at(a["index"].get<size_t>());
  const uint64_t v = a["value"].get<uint64_t>() & reg;
  const uint64_t v2 = (a.contains("valueTwo") ? a["valueTwo"].get<uint64_t>() : 0) & reg;
  const std::string op = a["op"];
  if (op == "SCMP_CMP_EQ") return x == v;
  if (op == "SCMP_CMP_NE") return x != v;
  if (op == "SCMP_CMP_LT") return x < v;
  if (op == "SCMP_CMP_LE") return x <= v;
  if (op == "SCMP_CMP_GT") return x > v;
  if (op == "SCMP_CMP_GE") return x >= v;
  if (op == "SCMP_CMP_MASKED_EQ") return (x & v) == (v2 & v);
  return false;
}

// runc: an entry naming one index twice becomes one rule per comparison.
bool EntryMatches(const json& entry, Arch arch, const std::array<uint64_t, 6>& args) {
  const json& list = entry["args"];
  std::vector<uint64_t> seen;
  bool repeated = false;
  for (const json& a : list) {
    repeated |= std::count(seen.begin(), seen.end(), a["index"].get<uint64_t>()) > 0;
    seen.push_back(a["index"].get<uint64_t>());
  }
  if (repeated) {
    return std::any_of(list.begin(), list.end(),
                       [&](const json& a) { return ArgMatches(a, arch, args); });
  }
  return std::all_of(list.begin(), list.end(),
                     [&](const json& a) { return ArgMatches(a, arch, args); });
}

std::vector<std::string> Names(const json& entry) {
  std::vector<std::string> names = Strings(entry, "names");
  if (entry.contains("name")) names.push_back(entry["name"]);
  return names;
}

}  // namespace

std::vector<Arch> FilterArches(const json& profile, const DockerHost& host) {
  std::vector<Arch> out;
  auto add = [&](const std::string& name) {
    auto it = OciArches().find(name);
    if (it != OciArches().end()) out.push_back(it->second);
  };
  for (const std::string& a : Strings(profile, "architectures")) add(a);
  if (profile.contains("archMap") && host.arch) {
    for (const json& m : profile["archMap"]) {
      auto it = OciArches().find(m["architecture"]);
      if (it == OciArches().end() || it->second != *host.arch) continue;
      add(m["architecture"]);
      for (const std::string& s : Strings(m, "subArchitectures")) add(s);
      break;
    }
  }
  if (host.arch) out.push_back(*host.arch);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Verdict Decide(const json& profile, const DockerHost& host, Arch arch, const std::string& name,
               const std::array<uint64_t, 6>& args) {
  const bool disabled = !profile.contains("defaultAction") &&
                        (!profile.contains("syscalls") || profile["syscalls"].empty());
  if (disabled) return {"allow", false};
  const Act def = ActionOf(profile, "defaultAction", "defaultErrnoRet");
  std::vector<const json*> entries;
  if (profile.contains("syscalls")) {
    for (const json& e : profile["syscalls"]) {
      if (!Applies(e, host) || ActionOf(e, "action", "errnoRet") == def) continue;
      if (!Contains(Names(e), name) || !SyscallNumber(arch, name)) continue;
      entries.push_back(&e);
    }
  }
  // An unconditional rule decides every call; of two, the first.
  for (const json* e : entries) {
    if (!e->contains("args") || (*e)["args"].empty()) {
      return {Outcome(ActionOf(*e, "action", "errnoRet")), false};
    }
  }
  std::vector<std::string> matched;
  for (const json* e : entries) {
    if (EntryMatches(*e, arch, args))
      matched.push_back(Outcome(ActionOf(*e, "action", "errnoRet")));
  }
  if (matched.empty()) return {Outcome(def), false};
  std::sort(matched.begin(), matched.end(),
            [](const std::string& a, const std::string& b) { return Rank(a) > Rank(b); });
  const bool ambiguous = std::any_of(matched.begin(), matched.end(),
                                     [&](const std::string& m) { return m != matched[0]; });
  return {matched[0], ambiguous};
}

}  // namespace ward::test
