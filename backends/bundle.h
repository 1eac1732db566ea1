// A bundle: a policy's IR, the artifacts its backends make of it, and the
// manifest that lists them. `ward compile` writes one to a folder, `ward
// push` sends one to wardd (with the scope and the enforcer it is applied
// with), wardd keeps the one in force. Pure: no files, no kernel.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "compiler/policy.h"
#include "language/diagnostics.h"
#include "language/source.h"

namespace ward::backend {

struct BundleArtifact {
  std::string path;    // relative, no `.` or `..` component, not manifest.json
  std::string target;  // the backend's name
  std::string bytes;
};

struct Bundle {
  std::string policy;                     // the IR's name
  std::string ir_json;                    // ir::ToJson(...).dump(), as `ward ir` prints it
  std::string manifest;                   // manifest.json's bytes
  std::vector<BundleArtifact> artifacts;  // sorted by path
};

// Compiles `ir` with `chosen` (registry order) into a bundle. Diagnostics go
// to `sink` (each message once even when two backends say it); false when
// any error was reported, and then `*out` is unspecified. `profile`: a
// profile was named, so a section no chosen backend enforces is an error
// unless options.partial.
bool CompileBundle(const ir::Policy& ir, const SourceManager& sources,
                   const std::vector<const Backend*>& chosen, bool profile, const Options& options,
                   DiagnosticSink& sink, Bundle* out);

// What a manifest says, read back; nullopt and *error when it is not one
// of ours (version 1) or does not list exactly `artifacts` with their
// hashes.
struct ManifestEntry {
  std::string path, target, sha256;
};
struct Manifest {
  std::string policy;
  std::string ir_sha256;
  std::vector<std::string> targets;
  std::vector<ManifestEntry> artifacts;
  // section -> the targets that enforce it; empty: unenforced
  std::map<std::string, std::vector<std::string>> coverage;
};
std::optional<Manifest> ReadManifest(const std::string& bytes, std::string* error);
// Checks that the manifest belongs to `bundle`: same policy, its ir_sha256
// is the IR's, and it lists exactly the bundle's artifacts with their
// hashes. false and *error naming the first mismatch.
bool CrossCheck(const Bundle& bundle, std::string* error);

// Lower-case hex SHA-256 of `bytes` ("" only if OpenSSL fails).
std::string Sha256(const std::string& bytes);

// The content hash of what wardd is asked to enforce: the bundle and how it
// is applied. SHA-256 over each field as an 8-byte little-endian length and
// its bytes, in this order: "ward-bundle-v1", policy, ir_json, manifest,
// the number of artifacts, then each artifact's path, target and bytes
// (in the bundle's order), scope kind ("cgroup", "uid", "interface"),
// scope value (the uid in decimal), enforcer.
std::string BundleHash(const Bundle& bundle, const std::string& scope_kind,
                       const std::string& scope_value, const std::string& enforcer);

}  // namespace ward::backend
