// wardd's durable state (README.md, "State"): one folder (--state-dir),
// written only through the one writer (enforcers/linux/files.h), held by one
// agent at a time (a flock on `wardd.lock`, which holds the agent's pid).
//
// Files, each replaced whole (temporary, fsync, rename, fsync of the folder):
//   wardd.lock             the lock; its content is the holder's pid
//   bundle.NAME.SHA256     a sealed bundle (v1::Bundle, protobuf bytes)
//   intent.NAME            an apply under way: the bundle it applies, the
//                          generation it will get, what was in force before
//   policy.NAME            the commit record: the bundle in force and its
//                          generation (a removed policy keeps a record with
//                          `removed`, so that generations keep increasing)
//   audit.log              the audit chain (audit.h)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ward/agent/v1/agent.pb.h"

namespace ward::agent {

// Whether `name` may name a policy in the state folder: 1 to 128 of
// [A-Za-z0-9_.:-] (the language's words), not starting with '.', so that
// it is one safe path component.
bool ValidPolicyName(const std::string& name);

// A commit record.
struct PolicyRecord {
  std::string policy;
  std::string sha256;  // the bundle in force ("" when removed)
  uint64_t generation = 0;
  std::string enforcer;
  std::string applied_at;  // RFC 3339, UTC
  bool removed = false;
  // The highest signature sequence accepted for the policy, by a bundle
  // or a tombstone (0: none): kept through removals and restarts, so that
  // no older statement is accepted again (signature_check.h).
  uint64_t sequence = 0;
};

// An intent record: written before the enforcer is asked to switch, removed
// after the commit record is written.
struct IntentRecord {
  std::string policy;
  std::string sha256;  // the bundle being applied
  uint64_t generation = 0;
  std::string enforcer;
  // What the enforcer held for the policy just before (Status): whether it
  // held anything, and its own generation counter then. The enforcer's
  // counter moves forward at every apply, so a higher one afterwards means
  // the new bundle is in force.
  bool kernel_held = false;
  uint32_t kernel_generation = 0;
  std::string previous_sha256;  // the bundle in force before ("" none)
  std::string previous_enforcer;
  // The sequence the commit record takes when the new bundle is in force.
  uint64_t sequence = 0;
};

class State {
 public:
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Opens (creating) `dir` and takes its lock; nullopt-like nullptr and
  // *error ("DIR is held by wardd pid N") when another agent holds it.
  static std::unique_ptr<State> Open(const std::string& dir, std::string* error);

  int dir_fd() const { return dir_fd_; }
  const std::string& dir() const { return dir_; }

  bool SealBundle(const v1::Bundle& bundle, std::string* error);
  bool ReadBundle(const std::string& policy, const std::string& sha256, v1::Bundle* out,
                  std::string* error) const;
  void DropBundle(const std::string& policy, const std::string& sha256);

  bool WriteIntent(const IntentRecord& intent, std::string* error);
  bool DropIntent(const std::string& policy, std::string* error);
  std::vector<IntentRecord> Intents(std::vector<std::string>* errors) const;

  bool WriteRecord(const PolicyRecord& record, std::string* error);
  std::vector<PolicyRecord> Records(std::vector<std::string>* errors) const;
  std::optional<PolicyRecord> Record(const std::string& policy) const;

  // Removes sealed bundles that no record or intent names (left by a crash
  // after the seal).
  void CollectGarbage();

 private:
  State() = default;
  std::vector<std::string> Names(const std::string& prefix) const;
  bool ReadFile(const std::string& name, std::string* out, std::string* error) const;
  bool Unlink(const std::string& name, std::string* error);

  std::string dir_;
  int dir_fd_ = -1;
  int lock_fd_ = -1;
};

// Test builds only (WARD_AGENT_CRASH_POINTS, crash.cc): kills the process
// with SIGKILL when the environment variable WARD_AGENT_CRASH_AT names
// `point`. Does nothing in the library wardd is built from.
void CrashPoint(const char* point);

// The current time, RFC 3339 in UTC with milliseconds.
std::string NowRfc3339();

}  // namespace ward::agent
