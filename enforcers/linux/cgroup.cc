#include "enforcers/linux/cgroup.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "enforcers/linux/enforcer.h"

namespace ward::enforce {
namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  for (const std::string& s : list)
    if (s == item) return true;
  return false;
}

// The v1 hierarchy that has `controller`: its mount point and the caller's
// own cgroup in it ("" when none is mounted).
bool FindV1(const std::string& controller, std::string* mount, std::string* own) {
  std::vector<std::string> hierarchy_controllers;
  for (const MountEntry& m : MountTable()) {
    if (m.type != "cgroup") continue;
    const std::vector<std::string> opts = Split(m.options, ',');
    if (Contains(opts, controller)) {
      *mount = m.dir;
      hierarchy_controllers = opts;
      break;
    }
  }
  if (mount->empty()) return false;
  std::string line;
  std::ifstream self("/proc/self/cgroup");
  while (std::getline(self, line)) {
    // "4:memory:/process_api/f70..."; co-mounted: "2:cpu,cpuacct:/".
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (Contains(Split(line.substr(a + 1, b - a - 1), ','), controller)) {
      *own = line.substr(b + 1);
      if (*own == "/") own->clear();
      return true;
    }
  }
  return false;
}

std::set<std::string> V2Controllers(const std::string& mount) {
  std::ifstream in(mount + "/cgroup.controllers");
  std::set<std::string> out;
  std::string c;
  while (in >> c) out.insert(c);
  return out;
}

bool WriteFile(const std::string& path, const std::string& value, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = Errno("opening " + path, errno);
    return false;
  }
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    *error = Errno("writing \"" + value + "\" to " + path, n < 0 ? err : EIO);
    return false;
  }
  return true;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Whether any swap device is active (/proc/swaps lists more than its header).
bool SwapActive() {
  std::ifstream in("/proc/swaps");
  std::string line;
  int lines = 0;
  while (std::getline(in, line))
    if (!line.empty()) ++lines;
  return lines > 1;
}

CgroupDir* DirFor(RunCgroup* c, const std::string& controller) {
  if (controller.empty()) return &c->v2;
  for (CgroupDir& d : c->v1)
    if (d.controller == controller) return &d;
  return nullptr;
}

// The pids in a cgroup.procs file.
std::vector<pid_t> Procs(const std::string& dir) {
  std::ifstream in(dir + "/cgroup.procs");
  std::vector<pid_t> out;
  pid_t p;
  while (in >> p) out.push_back(p);
  return out;
}

}  // namespace

bool PlanRunCgroup(const ir::Limits& limits, const std::string& run_id, RunCgroup* out,
                   std::string* error) {
  *out = RunCgroup{};
  const std::string mount = CgroupV2Mount(error);
  if (mount.empty()) return false;
  out->v2.path = mount + "/ward/run-" + run_id;
  const std::set<std::string> v2 = V2Controllers(mount);
  for (const auto& [name, value] : limits) {
    std::string controller;
    if (name == "cpus") {
      controller = "cpu";
    } else if (name == "memory") {
      controller = "memory";
    } else if (name == "pids") {
      controller = "pids";
    } else if (name == "cpu_time") {
      // cpu.stat's usage_usec is there in every v2 cgroup, controller or not.
      out->cpu_usage_file = out->v2.path + "/cpu.stat";
      continue;
    } else if (name == "timeout" || name == "open_files") {
      continue;  // the supervisor's timer; an rlimit
    } else if (name == "disk") {
      *error =
          "disk: ward run has no scratch file system to bound; remove the limit (a pod "
          "bounds it: -t kubernetes sets ephemeral-storage)";
      return false;
    } else {
      *error = name + ": ward run does not know how to apply this limit";
      return false;
    }
    if (v2.count(controller)) continue;  // written under out->v2
    std::string v1_mount, own;
    if (!FindV1(controller, &v1_mount, &own)) {
      *error = name + ": the cgroup v2 root does not offer the " + controller +
               " controller and no v1 hierarchy mounts it";
      return false;
    }
    if (!DirFor(out, controller)) {
      out->v1.push_back({v1_mount + own + "/ward-run-" + run_id, controller, -1});
    }
  }
  return true;
}

bool CreateRunCgroup(const ir::Limits& limits, RunCgroup* c, std::string* error) {
  std::string mount = c->v2.path.substr(0, c->v2.path.rfind("/ward/"));
  const std::set<std::string> v2 = V2Controllers(mount);
  auto fail = [&](const std::string& why) {
    *error = why;
    std::string ignored;
    RemoveRunCgroup(*c, &ignored);
    return false;
  };
  // The v2 controllers the limits use must be enabled down to the run.
  std::string enable;
  for (const char* ctl : {"cpu", "memory", "pids"}) {
    for (const auto& [name, v] : limits) {
      if ((name == "cpus" && std::string(ctl) == "cpu") || name == ctl) {
        if (v2.count(ctl)) enable += std::string(enable.empty() ? "" : " ") + "+" + ctl;
      }
    }
  }
  if (mkdir((mount + "/ward").c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(Errno("creating " + mount + "/ward", errno));
  }
  if (!enable.empty()) {
    std::string e;
    if (!WriteFile(mount + "/cgroup.subtree_control", enable, &e) ||
        !WriteFile(mount + "/ward/cgroup.subtree_control", enable, &e)) {
      return fail(e);
    }
  }
  std::vector<CgroupDir*> dirs = {&c->v2};
  for (CgroupDir& d : c->v1) dirs.push_back(&d);
  for (CgroupDir* d : dirs) {
    if (mkdir(d->path.c_str(), 0755) != 0) {
      const int err = errno;
      // EEXIST: a run with this id did not clean up; refuse rather than
      // share its directory.
      return fail(Errno("creating " + d->path, err));
    }
    // v1: the child moves itself through `tasks`, one thread (it has only
    // one). Writing cgroup.procs moves a whole thread group under the
    // global threadgroup lock, whose first writer waits for an RCU grace
    // period: 10-18 ms measured here, against 0.2 ms for three `tasks`.
    const std::string file = d->controller.empty() ? "/cgroup.procs" : "/tasks";
    d->procs_fd = open((d->path + file).c_str(), O_WRONLY | O_CLOEXEC);
    if (d->procs_fd < 0) return fail(Errno("opening " + d->path + file, errno));
  }
  struct stat st;
  if (stat(c->v2.path.c_str(), &st) != 0) return fail(Errno("stat " + c->v2.path, errno));
  c->v2_id = st.st_ino;

  auto put = [&](const std::string& limit, const std::string& controller, const std::string& file,
                 const std::string& value) {
    CgroupDir* d = DirFor(c, controller);
    if (!d) return false;
    std::string e;
    if (!WriteFile(d->path + "/" + file, value, &e)) {
      *error = limit + ": " + e;
      return false;
    }
    return true;
  };
  for (const auto& [name, lv] : limits) {
    const uint64_t v = lv.value;
    bool ok = true;
    if (name == "cpus") {
      const std::string quota = std::to_string(v * 100);  // milli-CPUs per 100 ms
      ok = v2.count("cpu") ? put(name, "", "cpu.max", quota + " 100000")
                           : put(name, "cpu", "cpu.cfs_period_us", "100000") &&
                                 put(name, "cpu", "cpu.cfs_quota_us", quota);
    } else if (name == "memory") {
      if (v2.count("memory")) {
        ok =
            put(name, "", "memory.max", std::to_string(v)) && put(name, "", "memory.swap.max", "0");
      } else {
        ok = put(name, "memory", "memory.limit_in_bytes", std::to_string(v));
        const CgroupDir* d = DirFor(c, "memory");
        if (ok && d && Exists(d->path + "/memory.memsw.limit_in_bytes")) {
          ok = put(name, "memory", "memory.memsw.limit_in_bytes", std::to_string(v));
        } else if (ok && SwapActive()) {
          *error =
              "memory: swap is active and this kernel does not account it per v1 cgroup "
              "(no memory.memsw.limit_in_bytes): the limit would not hold";
          ok = false;
        }
      }
    } else if (name == "pids") {
      ok = put(name, v2.count("pids") ? "" : "pids", "pids.max", std::to_string(v));
    }
    if (!ok) return fail(*error);
  }
  return true;
}

bool EnterRunCgroup(const RunCgroup& c, bool in_v2, const char** failed_step) {
  if (!in_v2 && write(c.v2.procs_fd, "0", 1) != 1) {
    *failed_step = "cgroup.procs (v2)";
    return false;
  }
  for (const CgroupDir& d : c.v1) {
    if (write(d.procs_fd, "0", 1) != 1) {
      *failed_step = "tasks (v1)";
      return false;
    }
  }
  if (unshare(CLONE_NEWCGROUP) != 0) {
    *failed_step = "unshare(CLONE_NEWCGROUP)";
    return false;
  }
  return true;
}

bool RemoveRunCgroup(RunCgroup& c, std::string* error) {
  std::vector<CgroupDir*> dirs;
  if (!c.v2.path.empty()) dirs.push_back(&c.v2);
  for (CgroupDir& d : c.v1) dirs.push_back(&d);
  for (CgroupDir* d : dirs) {
    if (d->procs_fd >= 0) close(d->procs_fd);
    d->procs_fd = -1;
  }
  // Kill whatever is left: cgroup.kill takes the whole v2 subtree at once,
  // forks in flight included; the loop catches the rest (older kernels, v1).
  if (!c.v2.path.empty() && Exists(c.v2.path + "/cgroup.kill")) {
    std::string ignored;
    WriteFile(c.v2.path + "/cgroup.kill", "1", &ignored);
  }
  bool ok = true;
  for (CgroupDir* d : dirs) {
    if (!Exists(d->path)) continue;
    bool removed = false;
    for (int i = 0; i < 200 && !removed; ++i) {
      for (pid_t p : Procs(d->path)) kill(p, SIGKILL);
      if (rmdir(d->path.c_str()) == 0 || errno == ENOENT) {
        removed = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!removed) {
      *error = Errno("removing " + d->path, errno);
      ok = false;
    }
  }
  return ok;
}

int64_t RunCpuUsageUsec(const RunCgroup& c) {
  if (c.cpu_usage_file.empty()) return -1;
  std::ifstream in(c.cpu_usage_file);
  std::string key;
  int64_t value;
  while (in >> key >> value) {
    if (key == "usage_usec") return value;
  }
  return -1;
}

std::string RunCgroupRecord(const RunCgroup& c) {
  std::string out = "v2 " + c.v2.path + "\n";
  for (const CgroupDir& d : c.v1) out += "v1 " + d.controller + " " + d.path + "\n";
  return out;
}

RunCgroup ParseRunCgroupRecord(const std::string& text) {
  RunCgroup c;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("v2 ", 0) == 0) {
      c.v2.path = line.substr(3);
    } else if (line.rfind("v1 ", 0) == 0) {
      const size_t sp = line.find(' ', 3);
      if (sp == std::string::npos) continue;
      c.v1.push_back({line.substr(sp + 1), line.substr(3, sp - 3), -1});
    }
  }
  return c;
}

}  // namespace ward::enforce
