// The manifest's coverage against what each target's artifacts carry
// (issue 19 item 8): for every target and every process and limits field, a
// policy that sets only that field (to a value no default has) is compiled
// with `ward compile -t TARGET`, and the manifest's "fields" names the target
// exactly when its artifact holds the value as the policy means it (read
// back from the JSON/YAML the target writes); for syscalls, filesystem and
// network, a section the manifest credits to a target is in its artifact.
// And the reference's complete example: refused by -t linux at compile (its
// `disk` limit, which nothing on one host bounds) as `ward run` refuses it,
// and, without that line, compiled for linux and run under `ward run`.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/cli/run_ward.h"

using namespace ward::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kTargets = {"seccomp",  "oci",        "process",    "nftables",
                                           "ebpf",     "landlock",   "kubernetes", "cilium",
                                           "seatbelt", "firecracker"};

// Every probe compiles for every target: firecracker needs its two paths.
const char* kFirecracker = "  target firecracker { kernel \"/k\" rootfs \"/r\" }\n";

struct Compiled {
  int status = -1;
  std::string err;
  json manifest;
  std::map<std::string, std::string> files;  // relative path -> bytes
};

Compiled Compile(const std::string& target, const std::string& body) {
  static int n = 0;
  const std::string name = "cov" + std::to_string(n++);
  std::string p = WriteTemp(name + ".ward", "policy p {\n" + body + kFirecracker + "}\n");
  std::string out = ScratchDir() + "/" + name + "-out";
  Run r = Ward("compile " + p + " -t " + target + " -o " + out, kStdEnv);
  Compiled c;
  c.status = r.status;
  c.err = r.err;
  if (r.status != 0) return c;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    c.files[std::filesystem::relative(e.path(), out).string()] =
        std::string(std::istreambuf_iterator<char>(in), {});
  }
  c.manifest = json::parse(c.files.at("manifest.json"));
  return c;
}

const std::string* Find(const Compiled& c, const std::string& suffix) {
  for (const auto& [path, bytes] : c.files) {
    if (path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return &bytes;
    }
  }
  return nullptr;
}

json JsonOf(const Compiled& c, const std::string& suffix) {
  const std::string* b = Find(c, suffix);
  return b ? json::parse(*b) : json();
}

YAML::Node PodContainer(const Compiled& c) {
  const std::string* b = Find(c, ".pod.yaml");
  if (!b) return YAML::Node();
  return YAML::Load(*b)["spec"]["containers"][0];
}

YAML::Node PodSpec(const Compiled& c) {
  const std::string* b = Find(c, ".pod.yaml");
  return b ? YAML::Load(*b)["spec"] : YAML::Node();
}

bool HasRlimit(const json& list, const std::string& type, uint64_t value) {
  if (!list.is_array()) return false;
  for (const json& r : list) {
    if (r.value("type", "") == type && r.value("soft", uint64_t{0}) == value &&
        r.value("hard", uint64_t{0}) == value) {
      return true;
    }
  }
  return false;
}

std::string Str(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

// One field: the policy text that sets it, and per target how to read the
// value back from the artifacts (absent: the target's artifacts have no
// place for it).
struct Probe {
  std::string field;
  std::string body;
  std::map<std::string, std::function<bool(const Compiled&)>> carries;
};

std::vector<Probe> Probes() {
  std::vector<Probe> p;
  // A process section without no_new_privileges: the field is false.
  p.push_back({"process.no_new_privileges",
               "  process { capabilities drop all }\n",
               {{"process",
                 [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["no_new_privileges"] == false;
                 }},
                {"oci",
                 [](const Compiled& c) {
                   return JsonOf(c, ".runtime.json")["process"]["noNewPrivileges"] == false;
                 }},
                {"kubernetes", [](const Compiled& c) {
                   return Str(PodContainer(c)["securityContext"]["allowPrivilegeEscalation"]) ==
                          "true";
                 }}}});
  p.push_back({"process.capabilities",
               "  process { capabilities keep [CAP_NET_BIND_SERVICE] }\n",
               {{"process",
                 [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["capabilities"]["keep"] ==
                          json::array({"CAP_NET_BIND_SERVICE"});
                 }},
                {"oci",
                 [](const Compiled& c) {
                   return JsonOf(c, ".runtime.json")["process"]["capabilities"]["bounding"] ==
                          json::array({"CAP_NET_BIND_SERVICE"});
                 }},
                {"kubernetes", [](const Compiled& c) {
                   YAML::Node caps = PodContainer(c)["securityContext"]["capabilities"];
                   return Str(caps["drop"][0]) == "ALL" &&
                          Str(caps["add"][0]) == "NET_BIND_SERVICE" && caps["add"].size() == 1;
                 }}}});
  p.push_back({"process.user",
               "  process { user 1234:4321 }\n",
               {{"process",
                 [](const Compiled& c) {
                   json u = JsonOf(c, ".process.json")["user"];
                   return u["uid"] == 1234 && u["gid"] == 4321;
                 }},
                {"oci",
                 [](const Compiled& c) {
                   json u = JsonOf(c, ".runtime.json")["process"]["user"];
                   return u["uid"] == 1234 && u["gid"] == 4321;
                 }},
                {"kubernetes", [](const Compiled& c) {
                   YAML::Node sc = PodSpec(c)["securityContext"];
                   return Str(sc["runAsUser"]) == "1234" && Str(sc["runAsGroup"]) == "4321";
                 }}}});
  p.push_back({"process.env_allow",
               "  process { env allow [\"WARDPROBE\"] }\n",
               {{"process", [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["env_allow"] == json::array({"WARDPROBE"});
                 }}}});
  p.push_back({"limits.cpus",
               "  limits { cpus 0.25 }\n",
               {{"process",
                 [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["cgroup"]["cpu.max"] == "25000 100000";
                 }},
                {"oci",
                 [](const Compiled& c) {
                   json cpu = JsonOf(c, ".runtime.json")["linux"]["resources"]["cpu"];
                   return cpu["quota"] == 25000 && cpu["period"] == 100000;
                 }},
                {"kubernetes",
                 [](const Compiled& c) {
                   return Str(PodContainer(c)["resources"]["limits"]["cpu"]) == "250m";
                 }},
                {"firecracker", [](const Compiled& c) {
                   const std::string* args = Find(c, ".jailer.args");
                   return args && args->find("\ncpu.max=25000 100000\n") != std::string::npos &&
                          JsonOf(c, ".firecracker.json")["machine-config"]["vcpu_count"] == 1;
                 }}}});
  p.push_back({"limits.memory",
               "  limits { memory 300MiB }\n",
               {{"process",
                 [](const Compiled& c) {
                   json g = JsonOf(c, ".process.json")["cgroup"];
                   return g["memory.max"] == "314572800" && g["memory.swap.max"] == "0";
                 }},
                {"oci",
                 [](const Compiled& c) {
                   return JsonOf(c, ".runtime.json")["linux"]["resources"]["memory"]["limit"] ==
                          314572800;
                 }},
                {"kubernetes",
                 [](const Compiled& c) {
                   return Str(PodContainer(c)["resources"]["limits"]["memory"]) == "314572800";
                 }},
                {"firecracker", [](const Compiled& c) {
                   return JsonOf(c, ".firecracker.json")["machine-config"]["mem_size_mib"] == 300;
                 }}}});
  p.push_back({"limits.pids",
               "  limits { pids 77 }\n",
               {{"process",
                 [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["cgroup"]["pids.max"] == "77";
                 }},
                {"oci", [](const Compiled& c) {
                   return JsonOf(c, ".runtime.json")["linux"]["resources"]["pids"]["limit"] == 77;
                 }}}});
  p.push_back({"limits.open_files",
               "  limits { open_files 777 }\n",
               {{"process",
                 [](const Compiled& c) {
                   return HasRlimit(JsonOf(c, ".process.json")["rlimits"], "RLIMIT_NOFILE", 777);
                 }},
                {"oci", [](const Compiled& c) {
                   return HasRlimit(JsonOf(c, ".runtime.json")["process"]["rlimits"],
                                    "RLIMIT_NOFILE", 777);
                 }}}});
  // The whole run's CPU time: ward run's supervisor reads it from the
  // limits. OCI's RLIMIT_CPU bounds each process, not the total: no reader.
  p.push_back({"limits.cpu_time",
               "  limits { cpu_time 7m }\n",
               {{"process", [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["limits"]["cpu_time"] == 420000;
                 }}}});
  p.push_back({"limits.timeout",
               "  limits { timeout 9m }\n",
               {{"process",
                 [](const Compiled& c) {
                   return JsonOf(c, ".process.json")["limits"]["timeout"] == 540000;
                 }},
                {"kubernetes", [](const Compiled& c) {
                   return Str(PodSpec(c)["activeDeadlineSeconds"]) == "540";
                 }}}});
  // Only a pod bounds the disk; process.json lists the limit but no cgroup
  // file or rlimit holds it (ward run refuses it).
  p.push_back({"limits.disk",
               "  limits { disk 3GiB }\n",
               {{"process",
                 [](const Compiled& c) {
                   json j = JsonOf(c, ".process.json");
                   return j["cgroup"].contains("io.max") || j["rlimits"].size() > 0;
                 }},
                {"kubernetes", [](const Compiled& c) {
                   return Str(PodContainer(c)["resources"]["limits"]["ephemeral-storage"]) ==
                          "3221225472";
                 }}}});
  return p;
}

bool Names(const json& entry, const std::string& target) {
  return entry.is_array() && std::find(entry.begin(), entry.end(), target) != entry.end();
}

}  // namespace

TEST_CASE("coverage: every target's fields are exactly what its artifacts carry") {
  // The table below must name every target `ward compile -t help` lists.
  Run help = Ward("compile x -t help", kStdEnv);
  for (const std::string& t : kTargets) {
    CHECK(help.out.find("  " + t + " - ") != std::string::npos);
  }
  size_t listed = 0;
  for (size_t at = help.out.find("\n  "); at != std::string::npos;
       at = help.out.find("\n  ", at + 1)) {
    if (help.out.compare(at, 15, "\n  wardd-bundle") != 0) ++listed;
    if (help.out.find("profiles", at) < help.out.find("\n  ", at + 1)) break;
  }
  CHECK(listed == kTargets.size());

  int claimed = 0, read_back = 0;
  for (const Probe& probe : Probes()) {
    for (const std::string& t : kTargets) {
      Compiled c = Compile(t, probe.body);
      INFO("target " << t << ", field " << probe.field << "\n" << c.err);
      REQUIRE(c.status == 0);
      const json& fields = c.manifest["fields"];
      REQUIRE(fields.contains(probe.field));
      const bool claims = Names(fields[probe.field], t);
      auto reader = probe.carries.find(t);
      const bool carries = reader != probe.carries.end() && reader->second(c);
      CHECK(claims == carries);
      claimed += claims;
      read_back += reader != probe.carries.end();
      // The section is credited to the target exactly when the field is.
      const std::string section = probe.field.substr(0, probe.field.find('.'));
      if (probe.field.rfind("limits.", 0) == 0) {
        CHECK(Names(c.manifest["coverage"][section], t) == claims);
        if (!claims) CHECK(c.manifest["coverage"][section] == "unenforced");
      }
    }
  }
  // Positive control: the table is not empty on either side.
  CHECK(claimed == 26);
  CHECK(read_back == 27);
}

TEST_CASE("coverage: a section credited to a target is in its artifact") {
  // Marker values each section's artifact must hold when it is credited.
  const std::string body =
      "  syscalls {\n    default errno EPERM\n    allow read, write, exit_group\n"
      "    kill ptrace\n  }\n"
      "  filesystem { allow read \"/wardprobe\" }\n"
      "  network {\n    allow tcp to 10.77.0.0/16 port 4321\n"
      "    allow tcp to loopback port 4322\n  }\n";
  std::map<std::string, std::set<std::string>> credited;
  for (const std::string& t : kTargets) {
    Compiled c = Compile(t, body);
    INFO("target " << t << "\n" << c.err);
    REQUIRE(c.status == 0);
    for (const char* section : {"syscalls", "filesystem", "network"}) {
      if (!Names(c.manifest["coverage"][section], t)) continue;
      credited[section].insert(t);
      std::vector<std::string> markers =
          std::string(section) == "syscalls"     ? std::vector<std::string>{"ptrace"}
          : std::string(section) == "filesystem" ? std::vector<std::string>{"/wardprobe"}
                                                 : std::vector<std::string>{"4321", "4322"};
      bool found = false;
      for (const auto& [path, bytes] : c.files) {
        if (path == "manifest.json") continue;
        for (const std::string& m : markers) found = found || bytes.find(m) != std::string::npos;
      }
      INFO("section " << section);
      CHECK(found);
    }
  }
  CHECK(credited["syscalls"] == std::set<std::string>{"seccomp", "oci", "kubernetes"});
  CHECK(credited["filesystem"] == std::set<std::string>{"landlock", "seatbelt"});
  CHECK(credited["network"] == std::set<std::string>{"nftables", "ebpf", "kubernetes", "cilium",
                                                     "seatbelt", "firecracker"});
}

TEST_CASE("coverage: -t oci names the process and limits fields it carries") {
  Compiled c = Compile("oci",
                       "  process {\n    user 1000:1000\n    env allow [\"PATH\"]\n  }\n"
                       "  limits {\n    memory 1GiB\n    disk 1GiB\n  }\n");
  REQUIRE(c.status == 0);
  CHECK(c.manifest["coverage"]["process"] == "partial");
  CHECK(c.manifest["coverage"]["limits"] == "partial");
  CHECK(c.manifest["fields"] == json::parse(R"({
    "process.no_new_privileges": ["oci"], "process.capabilities": ["oci"],
    "process.user": ["oci"], "process.env_allow": "unenforced",
    "limits.disk": "unenforced", "limits.memory": ["oci"]})"));
  CHECK(c.err.find("warning[B3001]: not enforced by the chosen targets: filesystem, network, "
                   "process.env_allow, limits.disk\n") != std::string::npos);
  // Positive control: with -t process beside it every field is carried.
  Compiled both = Compile("oci,process",
                          "  process {\n    user 1000:1000\n    env allow [\"PATH\"]\n  }\n"
                          "  limits {\n    memory 1GiB\n  }\n");
  REQUIRE(both.status == 0);
  CHECK(both.manifest["coverage"]["process"] == json::array({"oci", "process"}));
  CHECK(both.manifest["fields"]["process.env_allow"] == json::array({"process"}));
  CHECK(both.manifest["coverage"]["limits"] == json::array({"oci", "process"}));
}

namespace {

// The complete example of language/reference.md, as the page holds it.
std::string ReferenceExample() {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/language/reference.md");
  std::string text(std::istreambuf_iterator<char>(in), {});
  size_t begin = text.find("## A complete example\n\n```ward\n");
  REQUIRE(begin != std::string::npos);
  begin = text.find('\n', text.find("```ward", begin)) + 1;
  size_t end = text.find("\n```\n", begin);
  REQUIRE(end != std::string::npos);
  return text.substr(begin, end - begin + 1);
}

}  // namespace

TEST_CASE("the reference's complete example: -t linux refuses what ward run refuses") {
  std::string example = ReferenceExample();
  REQUIRE(example.find("    disk 10GiB\n") != std::string::npos);
  WriteTemp("registries.ward", "");  // the example imports it
  std::string p = WriteTemp("reference.ward", example);
  std::string out = ScratchDir() + "/reference-out";
  Run linux = Ward("compile " + p + " -t linux -o " + out + " --home /home/agent", kStdEnv);
  CHECK(linux.status == 1);
  CHECK(linux.err.find("warning[B3002]: `disk` is not enforced by -t process") !=
        std::string::npos);
  CHECK(linux.err.find("error[B3001]: not enforced by the chosen targets: limits.disk\n") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  Run run = Ward("run " + p + " --home /tmp -- /bin/true", kStdEnv);
  CHECK(run.status == 125);
  CHECK(run.err.find("ward run: cgroup: disk: ward run has no scratch file system to bound") !=
        std::string::npos);
  // -t kubernetes carries the disk limit (ephemeral-storage); --partial
  // for its domains, which NetworkPolicy cannot name.
  Run pod = Ward("compile " + p + " -t kubernetes --partial -o " + out + "-pod --home /home/agent",
                 kStdEnv);
  CHECK(pod.status == 0);
  std::ifstream pod_manifest(out + "-pod/manifest.json");
  CHECK(json::parse(std::string(std::istreambuf_iterator<char>(pod_manifest),
                                {}))["fields"]["limits.disk"] == json::array({"kubernetes"}));

  // Positive control: without the disk line the example compiles for linux
  // with full coverage and runs under ward run.
  std::string no_disk = example;
  no_disk.erase(no_disk.find("    disk 10GiB\n"), std::string("    disk 10GiB\n").size());
  std::string q = WriteTemp("reference-no-disk.ward", no_disk);
  Run ok = Ward("compile " + q + " -t linux -o " + out + "-ok --home /home/agent", kStdEnv);
  INFO(ok.err);
  REQUIRE(ok.status == 0);
  std::ifstream in(out + "-ok/manifest.json");
  json m = json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  for (const char* s : {"syscalls", "filesystem", "network", "process", "limits"}) {
    CHECK(m["coverage"][s].is_array());
  }
  if (geteuid() == 0) {
    Run ran = Ward("run " + q + " --home /tmp -- /bin/true", kStdEnv);
    INFO(ran.err);
    CHECK(ran.status == 0);
  }
}
