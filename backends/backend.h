// The backend interface (architecture.md § Backends): a backend is a pure
// function of the IR. Same IR, same bytes: no timestamps, no absolute paths,
// no iteration over unordered containers. Validation against the real
// consumer (kernel, runc, libnftables, schemas) lives in tests and in the
// enforcer layer, never here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/policy.h"
#include "language/diagnostics.h"

namespace ward::backend {

// The IR sections a backend can enforce; the manifest names, for each of
// them, which target enforces it.
enum class Section { kSyscalls, kFilesystem, kNetwork, kProcess, kLimits };
inline constexpr Section kAllSections[] = {Section::kSyscalls, Section::kFilesystem,
                                           Section::kNetwork, Section::kProcess, Section::kLimits};
std::string_view SectionName(Section section);  // "syscalls", ...

// The process and limits sections are enforced field by field: a target may
// carry `limits.memory` and not `limits.disk`. The fields a policy gives, as
// "section.field": process.no_new_privileges and process.capabilities always
// (their defaults are decisions too), process.user and process.env_allow when
// set, limits.KEY per limit. Empty for the other sections.
std::vector<std::string> PolicyFields(const ir::Policy& policy, Section section);

struct Artifact {
  std::string path;   // relative to the output folder; `/` separated, no `..`
  std::string bytes;  // written as is
};

struct Options {
  // Backends add settings here (never read the environment or the clock).
  // What `~` stands for in filesystem patterns, for ahead-of-time targets
  // (seatbelt): `ward compile --home DIR`. Absent: a policy with `~` patterns
  // is an error for them.
  std::optional<std::string> home;
  // `ward compile --partial`: what a target cannot express may be left out
  // (approximated towards deny, with a warning listing it) instead of being
  // an error.
  bool partial = false;
  // Every target compiled together with this one (`-t kubernetes,cilium`),
  // itself included: a backend may leave to another what that one carries
  // (kubernetes leaves domain grants to cilium). Set by CompileBundle.
  std::vector<std::string> targets;
};

struct Result {
  bool ok = false;  // false: diagnostics say why; artifacts must be ignored
  std::vector<Artifact> artifacts;
  // What this compile enforces: usually covers(), less when the policy uses
  // something the target cannot express (then a warning says so).
  std::vector<Section> enforced;
  // The process and limits fields (PolicyFields) the artifacts carry and the
  // target enforces as the policy means them; the manifest's coverage of
  // those two sections is made from these, not from `enforced`.
  std::vector<std::string> fields;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;         // "seccomp"
  virtual std::string_view description() const = 0;  // one line for `-t help`
  virtual std::vector<Section> covers() const = 0;
  // Diagnostics are B3xxx (language/codes.h); spans point at the rules
  // concerned when there are any (the IR's provenance).
  virtual Result Compile(const ir::Policy& policy, const Options& options,
                         DiagnosticSink& sink) const = 0;
};

}  // namespace ward::backend
