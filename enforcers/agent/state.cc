#include "enforcers/agent/state.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "enforcers/agent/lock.h"
#include "enforcers/agent/service.h"
#include "enforcers/linux/files.h"

namespace ward::agent {
namespace {

std::string BundleFile(const std::string& policy, const std::string& sha256) {
  return "bundle." + policy + "." + sha256;
}

}  // namespace

bool ValidPolicyName(const std::string& name) {
  // A policy name of the language (a word), but never one a folder entry
  // or a temporary could take: no leading '.'.
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

std::string NowRfc3339() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

State::~State() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
  if (dir_fd_ >= 0) close(dir_fd_);
}

std::unique_ptr<State> State::Open(const std::string& dir, std::string* error) {
  std::unique_ptr<State> s(new State());
  s->dir_ = dir;
  s->dir_fd_ = enforce::OpenStateDir(dir, error);
  if (s->dir_fd_ < 0) return nullptr;
  s->lock_fd_ = enforce::OpenStateFile(s->dir_fd_, kAgentLockFile, O_RDWR | O_CREAT, error);
  if (s->lock_fd_ < 0) return nullptr;
  if (flock(s->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      const int64_t pid = ReadLockPid(s->lock_fd_);
      *error = dir + " is held by another wardd" +
               (pid > 0 ? " (pid " + std::to_string(pid) + ")" : std::string());
    } else {
      *error = dir + "/" + kAgentLockFile + ": " + std::strerror(errno);
    }
    return nullptr;
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(s->lock_fd_, 0) != 0 ||
      pwrite(s->lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    *error = dir + "/" + kAgentLockFile + ": " + std::strerror(errno);
    return nullptr;
  }
  return s;
}

bool State::ReadFile(const std::string& name, std::string* out, std::string* error) const {
  const int fd = enforce::OpenStateFile(dir_fd_, name, O_RDONLY, error);
  if (fd < 0) return false;
  out->clear();
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = name + ": " + std::strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

bool State::Unlink(const std::string& name, std::string* error) {
  if (unlinkat(dir_fd_, name.c_str(), 0) != 0 && errno != ENOENT) {
    *error = name + ": " + std::strerror(errno);
    return false;
  }
  // The removal is durable before the caller goes on.
  if (fsync(dir_fd_) != 0) {
    *error = dir_ + ": fsync: " + std::strerror(errno);
    return false;
  }
  return true;
}

std::vector<std::string> State::Names(const std::string& prefix) const {
  std::vector<std::string> out;
  const int fd = dup(dir_fd_);
  if (fd < 0) return out;
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return out;
  }
  rewinddir(d);
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool State::SealBundle(const v1::Bundle& bundle, std::string* error) {
  std::string bytes;
  if (!bundle.SerializeToString(&bytes)) {
    *error = "cannot serialise the bundle";
    return false;
  }
  return enforce::WriteStateFile(dir_fd_, BundleFile(bundle.policy(), bundle.sha256()), bytes,
                                 error);
}

bool State::ReadBundle(const std::string& policy, const std::string& sha256, v1::Bundle* out,
                       std::string* error) const {
  std::string bytes;
  if (!ReadFile(BundleFile(policy, sha256), &bytes, error)) return false;
  if (!out->ParseFromString(bytes) || out->policy() != policy || out->sha256() != sha256) {
    *error = BundleFile(policy, sha256) + ": not the sealed bundle it names";
    return false;
  }
  return true;
}

void State::DropBundle(const std::string& policy, const std::string& sha256) {
  std::string error;
  Unlink(BundleFile(policy, sha256), &error);
}

bool State::WriteIntent(const IntentRecord& i, std::string* error) {
  const nlohmann::ordered_json j = {{"version", 1},
                                    {"policy", i.policy},
                                    {"sha256", i.sha256},
                                    {"generation", i.generation},
                                    {"enforcer", i.enforcer},
                                    {"kernel_held", i.kernel_held},
                                    {"kernel_generation", i.kernel_generation},
                                    {"previous_sha256", i.previous_sha256},
                                    {"previous_enforcer", i.previous_enforcer},
                                    {"sequence", i.sequence}};
  return enforce::WriteStateFile(dir_fd_, "intent." + i.policy, j.dump() + "\n", error);
}

bool State::DropIntent(const std::string& policy, std::string* error) {
  return Unlink("intent." + policy, error);
}

std::vector<IntentRecord> State::Intents(std::vector<std::string>* errors) const {
  std::vector<IntentRecord> out;
  for (const std::string& name : Names("intent.")) {
    std::string bytes, error;
    if (!ReadFile(name, &bytes, &error)) {
      errors->push_back(error);
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
    IntentRecord i;
    if (!j.is_object() || !j.contains("policy") || !j["policy"].is_string()) {
      errors->push_back(name + ": not an intent record");
      continue;
    }
    i.policy = j.value("policy", "");
    i.sha256 = j.value("sha256", "");
    i.generation = j.value("generation", uint64_t{0});
    i.enforcer = j.value("enforcer", "");
    i.kernel_held = j.value("kernel_held", false);
    i.kernel_generation = j.value("kernel_generation", 0u);
    i.previous_sha256 = j.value("previous_sha256", "");
    i.previous_enforcer = j.value("previous_enforcer", "");
    i.sequence = j.value("sequence", uint64_t{0});
    if (name != "intent." + i.policy) {
      errors->push_back(name + ": names another policy");
      continue;
    }
    out.push_back(std::move(i));
  }
  return out;
}

bool State::WriteRecord(const PolicyRecord& r, std::string* error) {
  const nlohmann::ordered_json j = {{"version", 1},           {"policy", r.policy},
                                    {"sha256", r.sha256},     {"generation", r.generation},
                                    {"enforcer", r.enforcer}, {"applied_at", r.applied_at},
                                    {"removed", r.removed},   {"sequence", r.sequence}};
  return enforce::WriteStateFile(dir_fd_, "policy." + r.policy, j.dump() + "\n", error);
}

std::vector<PolicyRecord> State::Records(std::vector<std::string>* errors) const {
  std::vector<PolicyRecord> out;
  for (const std::string& name : Names("policy.")) {
    std::string bytes, error;
    if (!ReadFile(name, &bytes, &error)) {
      errors->push_back(error);
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
    if (!j.is_object() || !j.contains("policy") || !j["policy"].is_string()) {
      errors->push_back(name + ": not a policy record");
      continue;
    }
    PolicyRecord r;
    r.policy = j.value("policy", "");
    r.sha256 = j.value("sha256", "");
    r.generation = j.value("generation", uint64_t{0});
    r.enforcer = j.value("enforcer", "");
    r.applied_at = j.value("applied_at", "");
    r.removed = j.value("removed", false);
    r.sequence = j.value("sequence", uint64_t{0});
    if (name != "policy." + r.policy) {
      errors->push_back(name + ": names another policy");
      continue;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<PolicyRecord> State::Record(const std::string& policy) const {
  std::vector<std::string> errors;
  for (PolicyRecord& r : Records(&errors)) {
    if (r.policy == policy) return std::move(r);
  }
  return std::nullopt;
}

void State::CollectGarbage() {
  std::set<std::string> keep;
  std::vector<std::string> errors;
  for (const PolicyRecord& r : Records(&errors)) {
    if (!r.removed) keep.insert(BundleFile(r.policy, r.sha256));
  }
  for (const IntentRecord& i : Intents(&errors)) {
    keep.insert(BundleFile(i.policy, i.sha256));
    if (!i.previous_sha256.empty()) keep.insert(BundleFile(i.policy, i.previous_sha256));
  }
  for (const std::string& name : Names("bundle.")) {
    if (keep.count(name)) continue;
    std::string error;
    Unlink(name, &error);
  }
  // Temporaries of a write a crash interrupted (files.h: `.NAME.ward-PID-N`),
  // of this folder's own files only.
  for (const char* kind : {".bundle.", ".intent.", ".policy."}) {
    for (const std::string& name : Names(kind)) {
      if (name.find(".ward-") == std::string::npos) continue;
      std::string error;
      Unlink(name, &error);
    }
  }
}

}  // namespace ward::agent
