// The Landlock ruleset `ward run` applies, as a pure function of the IR
// (backends/landlock/README.md): which access rights it handles, the
// policy's filesystem patterns the enforcer resolves at apply time into
// path-beneath rules (walk.h), the TCP ports it grants, the scopes, and
// the minimum Landlock ABI all of that needs. Bit values are the kernel's
// (enforcers/linux/landlock_uapi.h asserts they agree).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/policy.h"
#include "language/diagnostics.h"

namespace ward::backend::landlock {

// One Landlock access right or scope: its name in the artifact, its bit in
// the kernel's mask and the ABI that introduced it.
struct Right {
  const char* name;
  uint64_t bit;
  int abi;
};
inline constexpr Right kFsRights[] = {
    {"execute", 1ULL << 0, 1},    {"write_file", 1ULL << 1, 1}, {"read_file", 1ULL << 2, 1},
    {"read_dir", 1ULL << 3, 1},   {"remove_dir", 1ULL << 4, 1}, {"remove_file", 1ULL << 5, 1},
    {"make_char", 1ULL << 6, 1},  {"make_dir", 1ULL << 7, 1},   {"make_reg", 1ULL << 8, 1},
    {"make_sock", 1ULL << 9, 1},  {"make_fifo", 1ULL << 10, 1}, {"make_block", 1ULL << 11, 1},
    {"make_sym", 1ULL << 12, 1},  {"refer", 1ULL << 13, 2},     {"truncate", 1ULL << 14, 3},
    {"ioctl_dev", 1ULL << 15, 5},
};
inline constexpr Right kNetRights[] = {{"bind_tcp", 1ULL << 0, 4}, {"connect_tcp", 1ULL << 1, 4}};
inline constexpr Right kScopes[] = {{"abstract_unix_socket", 1ULL << 0, 6},
                                    {"signal", 1ULL << 1, 6}};
// restrict_self's audit-log flags need this ABI.
inline constexpr int kLogFlagsAbi = 7;

// Ward's rights as Landlock rights (README.md § Rights).
uint64_t FsAccessOf(ir::FsRight right);
// Every filesystem right Ward maps: the ruleset handles them all, since
// every policy denies by default.
uint64_t AllFsAccess();

// The format version of the JSON artifact; a consumer refuses any other.
inline constexpr int kRulesetJsonVersion = 1;

struct Ruleset {
  std::string policy;
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
  // The filesystem patterns and verdicts (the IR's), resolved at apply time.
  ir::FileRules filesystem;
  // TCP ports Landlock can grant exactly: allowed to (connect) or from
  // (bind) every address. Meaningful only where handled_access_net has
  // the right.
  ir::PortSet connect_tcp;
  ir::PortSet bind_tcp;
  // Ports allowed to some addresses only (or to names): granted as well when
  // an address-aware egress layer (ward run's eBPF step) is attached, since
  // that layer then holds the address part.
  ir::PortSet connect_tcp_partial;

  // The minimum ABI for the handled rights and scopes.
  int Abi() const;
  // Every handled right and scope newer than `abi`, as "ioctl_dev needs ABI
  // 5"; empty when the kernel's ABI suffices.
  std::vector<std::string> Missing(int abi) const;
};

// Builds the ruleset. Diagnostics (B3002) go to `sink` at the rules
// concerned: approximations towards deny as warnings, what cannot even be
// approximated as errors unless `partial`. Returns false on error.
// `address_layer`: built for ward run, whose eBPF layer holds the address
// part of TCP grants, decides every bind (TCP and UDP, by port) and refuses
// the abstract unix names not granted: the ruleset then handles no bind
// right, and the warnings about those parts are not given.
bool BuildRuleset(const ir::Policy& policy, bool partial, Ruleset* out, DiagnosticSink& sink,
                  bool address_layer = false);

// The artifact (README.md § Format) and back. FromJson refuses another
// version, unknown right names and malformed patterns, naming the field.
std::string ToJson(const Ruleset& ruleset);
bool FromJson(const std::string& bytes, Ruleset* out, std::string* error);

// Names of the bits of `mask` in `table`, in bit order.
std::vector<std::string> Names(uint64_t mask, const Right* table, size_t count);

}  // namespace ward::backend::landlock
