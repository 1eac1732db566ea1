// `ward explain`: one decision of a policy and the rules behind it. A
// library over the IR so that the agent can answer the same questions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/policy.h"

namespace ward::ir {

// What one enforcer (or a family of them) decides for the same flow, when
// they answer differently from the IR's reading of the question (explain
// --connect with --resolve: a domain grant and the address).
struct EnforcerAnswer {
  std::string enforcers;  // "nftables, ebpf, firecracker"
  std::string decision;   // "allow", "deny", or "allow under ward run, deny alone"
  std::string why;
};

// For a denied question, the allow rule that came closest (explain.cc says
// what "closest" is for paths, flows and syscalls) and why it did not apply.
struct NearestRule {
  Span span;
  std::string why;  // "/workspace2 is not under /workspace"
};

struct Explanation {
  std::string decision;     // "allow", "deny", or a syscall action
  std::string query;        // the question, restated: "egress tcp 10.0.0.1 port 443"
  std::vector<Span> rules;  // the deciding rules; empty when by default
  std::vector<std::string> notes;
  // The implicit rules that decided (compiler/agent_guard.h): why each is
  // there ("wardd listens on tcp://127.0.0.1:7443").
  std::vector<std::string> implicit;
  std::vector<EnforcerAnswer> enforcers;  // --connect with --resolve: per enforcer
  std::string path;                       // --path: the normalised path that was decided
  int errno_value = 0;                    // the errno a syscall `errno` decision returns
  Span default_rule;                      // syscalls: the `default` that decided (when by default)
  std::optional<NearestRule> nearest;     // denied: the allow rule that almost matched
  bool by_default() const { return rules.empty() && implicit.empty(); }
};

struct FlowQuery {
  Direction direction = Direction::kEgress;
  Protocol protocol = Protocol::kTcp;
  std::string host;  // a name, an IPv4 address, or an IPv6 address (no brackets)
  uint16_t port = 0;
  std::map<std::string, std::string> resolve;  // name -> address (--resolve)
};

// Errors in the query (a bad address) come back in *error.
std::optional<Explanation> ExplainFlow(const Policy& policy, const FlowQuery& query,
                                       std::string* error);
Explanation ExplainUnix(const Policy& policy, const std::string& target);
// Opening a netlink socket of `protocol` ("route", "sock_diag", "generic",
// ...) under ward run; an unknown name is an error.
std::optional<Explanation> ExplainNetlink(const Policy& policy, const std::string& protocol,
                                          std::string* error);
// The path a `--path` question is decided for: `//`, `.` and a trailing
// `/` normalised away; relative paths and `..` refused (*error, with a
// *hint), as the language refuses them in rules: the kernel resolves `..`
// after following symlinks, so a lexical answer could differ from the run's.
std::optional<std::string> NormaliseQueryPath(const std::string& path, std::string* error,
                                              std::string* hint);
// `home` is required when the policy has `~` rules (*error says so). The
// path is normalised first (NormaliseQueryPath); Explanation::path holds it.
std::optional<Explanation> ExplainPath(const Policy& policy, const std::string& path, FsRight right,
                                       const std::optional<std::string>& home, std::string* error,
                                       std::string* hint = nullptr);

struct SyscallQuery {
  std::string name;
  std::optional<std::string> arch;  // default: the policy's first architecture
  std::map<int, uint64_t> args;     // argument index (0-5) -> raw register value; others 0
};

// The action for one call: decision is the action's name ("allow", "errno",
// "kill", ...), errno_value set for errno. A syscall unknown on the
// architecture is an error; an architecture the policy does not name kills.
std::optional<Explanation> ExplainSyscall(const Policy& policy, const SyscallQuery& query,
                                          std::string* error);

}  // namespace ward::ir
