// The bundle file of pull mode (README.md, "Pull mode"): one
// ward.agent.v1.Bundle as the protobuf JSON mapping, which `ward compile -t
// wardd-bundle` writes and `wardd --bundle-dir` reads. Messages only (no
// service, no files), for wardd and the command line alike.
#pragma once

#include <cstddef>
#include <string>

#include "backends/signing.h"
#include "ward/agent/v1/agent.pb.h"

namespace ward::agent {

// NAME.wardd-bundle.json, NAME being the bundle's policy.
inline constexpr char kBundleFileSuffix[] = ".wardd-bundle.json";
// NAME.wardd-remove.json: a signed tombstone, a RemoveRequest.
inline constexpr char kRemoveFileSuffix[] = ".wardd-remove.json";
// A bundle file larger than this is refused unread (wardd's message limit).
inline constexpr size_t kMaxBundleFile = 64u << 20;

// The scope as signed statements name it (backends/signing.h): "cgroup",
// "uid" (in decimal) or "interface", and its value; false when `scope`
// names none. wardd checks and the command line signs with this one.
bool SignedScopeOf(const v1::Scope& scope, trust::SignedScope* out);

// Parses a bundle file's bytes: strict (an unknown field is an error), so
// that a file meant for a later wardd is refused, not half-read.
bool ParseBundleFile(const std::string& bytes, v1::Bundle* out, std::string* error);
// The bundle file's bytes: the JSON mapping with the proto's field names
// (ir_json, key_id, ...), fields in field-number order, bytes in base64,
// 64-bit integers as strings, indented, a final newline. Same bundle, same
// bytes.
bool WriteBundleFile(const v1::Bundle& bundle, std::string* out, std::string* error);
// The same for a tombstone file (policy, scope, signature).
bool ParseRemoveFile(const std::string& bytes, v1::RemoveRequest* out, std::string* error);
bool WriteRemoveFile(const v1::RemoveRequest& request, std::string* out, std::string* error);

}  // namespace ward::agent
