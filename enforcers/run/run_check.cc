#include "enforcers/run/run_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "enforcers/linux/seccomp_readback.h"

namespace ward::enforce {
namespace {

std::string ReadAll(const std::string& path, int flags) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) return text;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

// A process's start time (field 22 of /proc/PID/stat), empty when it is
// gone or a zombie: a workload that exited, or a pid since reused, is not
// the one the record names.
std::string LiveStartTime(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat", 0);
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return "";
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
    if (i == 3 && (f == "Z" || f == "X")) return "";
    if (i == 22) return f;
  }
  return "";
}

// How many filters a process holds (/proc/PID/status "Seccomp_filters:",
// Linux 5.9; before it, 0 in no filter mode), -1 when unknown.
int FilterCount(pid_t pid) {
  std::istringstream status(ReadAll("/proc/" + std::to_string(pid) + "/status", 0));
  int mode = -1;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Seccomp_filters:", 0) == 0) return std::atoi(line.c_str() + 16);
    if (line.rfind("Seccomp:", 0) == 0) mode = std::atoi(line.c_str() + 8);
  }
  return mode == 0 ? 0 : -1;
}

// What a run's record says of its workload (run.h).
struct Recorded {
  std::vector<std::string> filters;  // struct sock_filter[] each, install order
  pid_t workload = 0;
  std::string workload_start;
  bool malformed = false;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Recorded ParseRecord(const std::string& text) {
  Recorded r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("seccomp ", 0) == 0) {
      const std::string hex = line.substr(8);
      std::string bytes(hex.size() / 2, '\0');
      r.malformed |= hex.empty() || hex.size() % 16 != 0;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        const int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
        r.malformed |= hi < 0 || lo < 0;
        bytes[i / 2] = static_cast<char>((hi << 4) | (lo & 15));
      }
      r.filters.push_back(std::move(bytes));
    } else if (line.rfind("workload ", 0) == 0) {
      std::istringstream fields(line.substr(9));
      long pid = 0;
      fields >> pid >> r.workload_start;
      r.workload = pid > 0 && !r.workload_start.empty() ? static_cast<pid_t>(pid) : 0;
      r.malformed |= r.workload == 0;
    }
  }
  return r;
}

std::string Instructions(size_t n) {
  return std::to_string(n) + (n == 1 ? " instruction" : " instructions");
}

std::string Filters(size_t n) { return std::to_string(n) + (n == 1 ? " filter" : " filters"); }

// The name of the filter ward run installs at `i` (of `n`), as run.cc
// installs them.
std::string OwnName(size_t i, size_t n) {
  if (n != 2) return "";
  return i == 0 ? " (ward run's guard)" : " (the policy's filter)";
}

// "matches" or "differs: ...": `live` (oldest first) after its `inherited`
// filters against `recorded`.
std::string Compare(const std::vector<CbpfProgram>& live, size_t inherited,
                    const std::vector<std::string>& recorded) {
  if (live.size() < inherited) {
    return "differs: the workload holds " + Filters(live.size()) + ", fewer than the " +
           std::to_string(inherited) + " ward run itself runs under";
  }
  const size_t own = live.size() - inherited;
  std::vector<std::string> how;
  for (size_t i = 0; i < std::min(own, recorded.size()); ++i) {
    const CbpfProgram& l = live[inherited + i];
    const std::string& r = recorded[i];
    const size_t bytes = l.size() * sizeof(sock_filter);
    if (bytes == r.size() && std::memcmp(l.data(), r.data(), bytes) == 0) continue;
    how.push_back("index " + std::to_string(inherited + i) + OwnName(i, recorded.size()) +
                  " is not the filter ward run installed (" + Instructions(l.size()) +
                  ", recorded " + Instructions(r.size() / sizeof(sock_filter)) + ")");
  }
  if (own > recorded.size()) {
    std::string extra = Filters(own - recorded.size()) + " more than ward run installed:";
    for (size_t i = inherited + recorded.size(); i < live.size(); ++i) {
      extra += (i == inherited + recorded.size() ? " index " : ", index ") + std::to_string(i) +
               " (" + Instructions(live[i].size()) + ")";
    }
    how.push_back(extra);
  } else if (own < recorded.size()) {
    how.push_back(Filters(recorded.size() - own) + " fewer than ward run installed: from index " +
                  std::to_string(live.size()) + " on");
  }
  if (how.empty()) return "matches";
  std::string out = "differs: " + how[0];
  for (size_t i = 1; i < how.size(); ++i) out += "; " + how[i];
  return out;
}

void Check(RunCheck* run) {
  const Recorded r = ParseRecord(ReadAll(run->record, O_NOFOLLOW));
  run->workload_pid = r.workload;
  const std::string exited =
      "unreadable: the workload (pid " + std::to_string(r.workload) + ") exited";
  if (r.malformed) {
    run->seccomp = "unreadable: the run's record is malformed (" + run->record + ")";
  } else if (r.filters.empty()) {
    run->seccomp = "unreadable: the run's record names no filters (written by an older ward run)";
  } else if (r.workload == 0) {
    run->seccomp = "unreadable: the workload is not recorded yet (0.1 s after its start)";
  } else if (LiveStartTime(r.workload) != r.workload_start) {
    run->seccomp = exited;
  } else if (const int inherited = FilterCount(run->supervisor); inherited < 0) {
    run->seccomp = "unreadable: how many filters ward run (pid " + std::to_string(run->supervisor) +
                   ") runs under is unknown";
  } else {
    std::vector<CbpfProgram> live;
    std::string error;
    const bool read = ReadSeccompFilters(r.workload, &live, &error);
    // Read, or failed, on the process the record names: not on a pid reused
    // since the first look.
    if (LiveStartTime(r.workload) != r.workload_start) {
      run->seccomp = exited;
    } else if (!read) {
      run->seccomp = "unreadable: " + error;
    } else {
      run->inherited_filters = inherited;
      run->seccomp = Compare(live, static_cast<size_t>(inherited), r.filters);
    }
  }
}

}  // namespace

std::vector<RunCheck> CheckRuns(const std::string& state_dir) {
  std::vector<RunCheck> out;
  for (LiveRun& run : ListRuns(state_dir)) {
    RunCheck check;
    static_cast<LiveRun&>(check) = std::move(run);
    Check(&check);
    out.push_back(std::move(check));
  }
  return out;
}

}  // namespace ward::enforce
