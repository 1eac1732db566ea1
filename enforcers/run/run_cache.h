// The run cache of `ward run`: the IR of a policy file, stored by the run
// that compiled it, so that the next run of the same file under the same
// options skips the front end (parsing, checking and lowering cost ~20 ms;
// the whole start-up goal is 5 ms).
//
// An entry (one CBOR file, root's, mode 0600, under RunOptions::
// run_cache_dir) holds its key, every source file the policy was read from
// (path and text), the policy hash, the IR without its syscall rules (most
// of its size) and instead the seccomp filter compiled from them for this
// machine. It is used only when every
// source still reads the same, so an edit of the policy or of anything it imports is never
// missed; any doubt (a missing, foreign or malformed entry) means "compile
// as if there were no cache", never an error. Entries are written only for
// policies that load without a single diagnostic, so a run from the cache
// prints exactly what a compiled run prints. The workload never sees the
// directory (ward run hides it in the run's mount namespace).
#pragma once

#include <optional>
#include <string>

#include "compiler/load.h"

namespace ward::enforce {

// What a run's entry is for: `programs` (Ward's version and an identity of
// its two executables, cli/programs.h: "ward 0.1.0\nexe ..."), FILE's
// canonical path, the policy chosen and where the standard library comes
// from; "" when FILE has no canonical path.
std::string RunCacheKey(const std::string& file, const std::optional<std::string>& policy,
                        const std::string& std_dir, const std::string& programs);

// The entry file for `key` under `dir` ("" for an empty key). The name only
// spreads entries; each holds its whole key, compared on reading.
std::string RunCacheEntry(const std::string& dir, const std::string& key);

struct CachedPolicy {
  SourceManager sources;  // as loaded, in the same order (diagnostics render the same)
  ir::Policy ir;
  std::string policy_hash;  // RunPolicyHash of the above, as computed when stored
  std::string filter;       // the seccomp filter for this machine (ir has no syscall rules)
  std::string guard;        // ward run's guard filter for this machine
};

// The cached policy, when the entry is there, trustworthy (root's, mode
// 0600, its key equal to `key`), and every source is unchanged byte for
// byte. No hashing: reading a few kilobytes twice costs less than starting
// OpenSSL (1.6 ms).
std::optional<CachedPolicy> ReadRunCache(const std::string& entry, const std::string& key);

// Stores what `loaded` holds (only called for policies without
// diagnostics); silently does nothing when it cannot.
void WriteRunCache(const std::string& entry, const std::string& key, const ir::LoadedPolicy& loaded,
                   const std::string& policy_hash, const std::string& filter,
                   const std::string& guard);

}  // namespace ward::enforce
