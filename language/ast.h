// The Ward AST. The parser fills the syntactic fields; the checker fills the
// fields marked "checked" with typed, let-resolved values. Every node keeps
// the span that produced it (conventions.md #10).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "language/literals.h"
#include "language/source.h"

namespace ward::ast {

// ---- values, as written -------------------------------------------------

struct StringPiece {
  bool is_ref = false;  // `${name}`
  std::string text;     // literal text, or the referenced name
  Span span;
};

enum class ValueKind { kString, kWord, kAny, kLoopback, kList };

struct Value {
  ValueKind kind = ValueKind::kWord;
  Span span;
  std::string text;                 // kString: unescaped (no interpolation); kWord: raw
  std::vector<StringPiece> pieces;  // kString with `${...}`: the pieces
  std::vector<Value> items;         // kList
};

// A value after `let` substitution, interpolation and list flattening.
struct Atom {
  ValueKind kind = ValueKind::kWord;  // never kList
  std::string text;
  Span span;
};

struct Name {
  std::string text;
  Span span;
};

// ---- filesystem ---------------------------------------------------------

enum Right : uint8_t { kRead = 1, kWrite = 2, kExec = 4 };

struct FsRule {
  Span span;
  bool allow = true;
  uint8_t rights = 0;  // Right bits
  std::vector<Value> raw;
  std::vector<Atom> paths;  // checked: normalised path patterns
};

struct FilesystemSection {
  Span span;
  std::vector<FsRule> rules;
};

// ---- network ------------------------------------------------------------

enum class Direction { kEgress, kIngress };
enum class Protocol { kAll, kTcp, kUdp, kIcmp };
enum class PeerKind { kAny, kLoopback, kAddress, kDomain, kWildcardDomain };

struct Peer {
  PeerKind kind = PeerKind::kAny;
  IpPrefix prefix;     // kAddress
  std::string domain;  // kDomain, kWildcardDomain (without the `*.`)
  Span span;
};

struct UnixSocket {
  bool abstract = false;  // `@name`
  std::string name;       // path, or the abstract name without `@`
  Span span;
};

struct NetRule {
  Span span;
  bool allow = true;
  bool is_unix = false;
  bool is_netlink = false;  // `allow netlink route`: raw_peers holds the protocols
  Direction direction = Direction::kEgress;
  Span direction_span;  // invalid when the direction is implicit
  Protocol protocol = Protocol::kAll;
  Span protocol_span;
  std::optional<Direction> peer_keyword;  // `to` is egress, `from` ingress
  Span peer_keyword_span;
  std::vector<Value> raw_peers;
  Span ports_keyword_span;
  std::vector<Value> raw_ports;
  // checked
  std::vector<Peer> peers;
  std::vector<PortRange> ports;  // empty = every port
  std::vector<UnixSocket> sockets;
  std::vector<Name> netlink;  // the protocols: "route"
};

struct NetworkSection {
  Span span;
  std::vector<NetRule> rules;
};

// ---- syscalls -----------------------------------------------------------

enum class ActionKind { kAllow, kErrno, kKill, kKillThread, kTrap, kLog, kNotify };

struct SysAction {
  ActionKind kind = ActionKind::kKill;
  Span span;
  std::string errno_text;  // as written, for kErrno
  Span errno_span;
  int errno_value = 0;  // checked
};

struct SysTarget {
  std::string name;  // syscall name, or group name with its `@`
  bool is_group = false;
  Span span;
};

enum class CondOp { kEq, kNe, kLt, kLe, kGt, kGe, kMaskedEq, kIn, kNotIn };

// `A | B | 0x10`: constants and integers or-ed together.
struct Expr {
  std::vector<Name> terms;
  Span span;
  uint64_t value = 0;  // checked; two's complement for negative numbers
};

struct Condition {
  Span span;
  int arg = -1;  // checked: 0..5
  Name arg_name;
  CondOp op = CondOp::kEq;
  Expr mask;                 // kMaskedEq
  std::vector<Expr> values;  // one, or the `in` list
};

struct SysRule {
  Span span;
  SysAction action;
  std::vector<SysTarget> targets;
  std::vector<Condition> conditions;  // all must hold (`and`)
};

struct SyscallsSection {
  Span span;
  std::vector<Name> arches;  // empty: the default (x86_64)
  std::optional<SysAction> default_action;
  std::vector<SysRule> rules;
};

// ---- process, limits, targets -------------------------------------------

struct ProcessSection {
  Span span;
  std::optional<Span> no_new_privileges;
  struct Caps {
    Span span;
    bool drop = true;         // `drop` or `keep`
    std::vector<Value> raw;   // `all`, or capability names
    std::vector<Name> names;  // checked: CAP_* names (empty with `drop all`)
    bool all = false;         // checked: `drop all`
  };
  std::vector<Caps> capabilities;
  struct User {
    Span span;
    std::string text;
    uint32_t uid = 0, gid = 0;  // checked
  };
  std::optional<User> user;
  struct Env {
    Span span;
    std::vector<Value> raw;
    std::vector<Atom> names;  // checked
  };
  std::vector<Env> env;
};

enum class LimitKind { kCpus, kMemory, kPids, kOpenFiles, kDisk, kCpuTime, kTimeout };

struct Limit {
  Span span;
  Name key;
  Value raw;
  // checked
  LimitKind kind = LimitKind::kCpus;
  uint64_t value = 0;  // bytes, count, milli-CPUs or milliseconds
};

struct LimitsSection {
  Span span;
  std::vector<Limit> limits;
};

// One raw token of a target block (the grammar keeps them flat).
struct TargetToken {
  enum Kind { kWord, kString, kList, kBlock } kind = kWord;
  Value value;                                // kWord, kString, kList
  std::vector<std::pair<Name, Value>> block;  // kBlock: `{ k = "v" }`
  Span span;
};

struct TargetEntry {
  Name key;
  Span span;
  Atom value;                                 // a scalar setting
  std::map<std::string, std::string> labels;  // a `{ k = "v" }` setting
  std::vector<Name> flags;                    // words after the value
};

struct TargetSection {
  Span span;
  Name name;
  std::vector<TargetToken> tokens;
  std::vector<TargetEntry> entries;  // checked
};

struct Label {
  Name key;
  std::string value;
  Span value_span;
};

// ---- policies and files -------------------------------------------------

struct Policy {
  FileId file = kNoFile;
  Span span;
  Name name;
  bool is_abstract = false;
  std::vector<Name> extends;
  std::optional<std::pair<std::string, Span>> description;
  std::vector<Label> labels;
  std::optional<FilesystemSection> filesystem;
  std::optional<NetworkSection> network;
  std::optional<SyscallsSection> syscalls;
  std::optional<ProcessSection> process;
  std::optional<LimitsSection> limits;
  std::vector<TargetSection> targets;
  // checked: the bases, as (file index in Program::files, policy index)
  std::vector<std::pair<size_t, size_t>> bases;
};

struct Import {
  Span span;
  std::string path;  // as written
  Span path_span;
  FileId resolved = kNoFile;  // the imported file, when it loaded
};

struct Let {
  Span span;
  Name name;
  std::vector<Value> values;  // `let x = a, b` is a list of two
};

struct Group {
  Span span;
  Name name;  // with its `@`
  std::vector<SysTarget> members;
};

struct File {
  FileId id = kNoFile;
  std::optional<Name> version;
  std::vector<Import> imports;
  std::vector<Let> lets;
  std::vector<Group> groups;
  std::vector<Policy> policies;
  bool is_std = false;  // loaded from the standard library
};

}  // namespace ward::ast
