// `ward explain FILE (--connect ... | --listen ... --from ... | --unix ... | --netlink P |
// --path ... --access ... | --syscall NAME [--arch A] [--arg N=V]...)`: one
// decision and the rule behind it.
#include <charconv>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/load.h"
#include "compiler/agent_guard.h"
#include "compiler/explain.h"
#include "compiler/ir_json.h"
#include "language/constants.h"

namespace ward::cli {
namespace {

struct ExplainFlags {
  std::string file;
  std::optional<std::string> policy;
  std::string std_dir;
  OutputFlags output;
  std::optional<std::string> connect, listen, from, unix_target, netlink, path, access, home;
  std::vector<std::string> resolve;
  std::optional<std::string> syscall, arch;
  std::vector<std::string> args;
  std::string fail_on;
};

bool ParsePort(const std::string& s, uint16_t* port) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 1 || v > 65535) return false;
  *port = static_cast<uint16_t>(v);
  return true;
}

// A syscall argument: decimal, 0x hex, or a negative decimal (two's
// complement in 64 bits, as a register holds it).
bool ParseValue(const std::string& s, uint64_t* value) {
  if (s.empty()) return false;
  bool negative = s[0] == '-';
  std::string digits = negative ? s.substr(1) : s;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits = digits.substr(2);
    base = 16;
  }
  if (digits.empty()) return false;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || p != digits.data() + digits.size()) return false;
  if (negative && (base != 10 || v > (uint64_t{1} << 63))) return false;
  *value = negative ? ~v + 1 : v;
  return true;
}

// "PORT[/tcp|udp]" or, with allow_icmp, "/icmp" after the host.
bool SplitProtocol(std::string* s, ir::Protocol* proto, bool allow_icmp) {
  size_t slash = s->rfind('/');
  if (slash == std::string::npos) return true;
  std::string p = s->substr(slash + 1);
  *s = s->substr(0, slash);
  if (p == "tcp")
    *proto = ir::Protocol::kTcp;
  else if (p == "udp")
    *proto = ir::Protocol::kUdp;
  else if (p == "icmp" && allow_icmp)
    *proto = ir::Protocol::kIcmp;
  else
    return false;
  return true;
}

// HOST:PORT[/tcp|udp] or HOST/icmp; HOST a name, IPv4 or [IPv6].
bool ParseConnect(std::string s, ir::FlowQuery* q, std::string* error) {
  *error = "--connect takes HOST:PORT[/tcp|udp] or HOST/icmp (IPv6 as [addr])";
  if (!SplitProtocol(&s, &q->protocol, true)) return false;
  if (q->protocol == ir::Protocol::kIcmp) {
    q->host = s.size() > 2 && s.front() == '[' && s.back() == ']' ? s.substr(1, s.size() - 2) : s;
    return !q->host.empty();
  }
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || !ParsePort(s.substr(colon + 1), &q->port)) return false;
  std::string host = s.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return false;
  }
  q->host = host;
  return !host.empty();
}

// An --arg value: numbers (ParseValue) and the language's constants
// (AF_PACKET, CLONE_NEWUSER, EPERM, CAP_SYS_ADMIN, ...), or-ed with `|` as in
// a policy's conditions. On an unknown constant, *error and *hint (a "did you
// mean") say so.
bool ParseArgValue(const std::string& s, Arch arch, uint64_t* value, std::string* error,
                   std::string* hint) {
  *value = 0;
  size_t begin = 0;
  while (true) {
    size_t bar = s.find('|', begin);
    std::string term = s.substr(begin, bar == std::string::npos ? std::string::npos : bar - begin);
    uint64_t v = 0;
    if (ParseValue(term, &v)) {
      if (term[0] == '-' && s.find('|') != std::string::npos) {
        *error = "negative numbers cannot be or-ed";
        return false;
      }
    } else if (auto c = LookupConstant(term, arch)) {
      v = *c;
    } else if (auto e = LookupErrno(term)) {
      v = static_cast<uint64_t>(*e);
    } else if (auto cap = LookupCapability(term)) {
      v = static_cast<uint64_t>(*cap);
    } else {
      *error = term.empty() ? "an empty value" : "unknown constant '" + term + "'";
      std::vector<std::string> names = ConstantNames();
      for (std::vector<std::string> more : {ErrnoNames(), CapabilityNames()}) {
        names.insert(names.end(), more.begin(), more.end());
      }
      *hint = term.empty() ? "" : DidYouMean(ClosestMatches(term, names));
      if (hint->empty()) {
        *hint =
            "a number (decimal, 0x hex, or negative) or a constant such as AF_INET, or "
            "several or-ed with |";
      }
      return false;
    }
    *value |= v;
    if (bar == std::string::npos) return true;
    begin = bar + 1;
  }
}

std::string ErrnoName(int value) {
  const char* name = strerrorname_np(value);
  return name ? name : std::to_string(value);
}

void Print(const ir::Explanation& e, const LoadedPolicy& loaded, const OutputFlags& output) {
  if (output.format == "json") {
    nlohmann::ordered_json j;
    j["version"] = 1;
    j["decision"] = e.decision;
    if (e.decision == "errno") {
      j["errno"] = e.errno_value;
      j["errno_name"] = ErrnoName(e.errno_value);
    }
    j["query"] = e.query;
    if (!e.path.empty()) j["path"] = e.path;
    j["by_default"] = e.by_default();
    if (e.default_rule.valid()) j["default_rule"] = ir::Where(loaded.sources, e.default_rule);
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (Span s : e.rules) {
      rules.push_back({{"location", ir::Where(loaded.sources, s)},
                       {"text", std::string(loaded.sources.Text(s))}});
    }
    j["rules"] = std::move(rules);
    if (e.nearest) {
      j["nearest"] = {{"location", ir::Where(loaded.sources, e.nearest->span)},
                      {"text", std::string(loaded.sources.Text(e.nearest->span))},
                      {"why", e.nearest->why}};
    }
    j["notes"] = e.notes;
    if (!e.implicit.empty()) j["implicit"] = e.implicit;
    if (!e.enforcers.empty()) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const ir::EnforcerAnswer& a : e.enforcers) {
        list.push_back({{"enforcers", a.enforcers}, {"decision", a.decision}, {"why", a.why}});
      }
      j["enforcers"] = std::move(list);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << e.decision;
  if (e.decision == "errno") std::cout << " " << ErrnoName(e.errno_value);
  std::cout << " " << e.query << "\n";
  if (e.by_default() && e.default_rule.valid()) {
    std::cout << "  no rule matched: the default, " << ir::Where(loaded.sources, e.default_rule)
              << ": " << loaded.sources.Text(e.default_rule) << "\n";
  } else if (e.by_default() && e.query.rfind("syscall ", 0) == 0) {
    std::cout << "  no rule matched\n";
  } else if (e.by_default()) {
    std::cout << "  no rule matched: denied by default\n";
  }
  for (Span s : e.rules) {
    std::string text(loaded.sources.Text(s));
    size_t nl = text.find('\n');
    if (nl != std::string::npos) text = text.substr(0, nl) + " ...";
    std::cout << "  " << ir::Where(loaded.sources, s) << ": " << text << "\n";
  }
  if (e.nearest) {
    std::string text(loaded.sources.Text(e.nearest->span));
    size_t nl = text.find('\n');
    if (nl != std::string::npos) text = text.substr(0, nl) + " ...";
    std::cout << "  nearest rule: " << ir::Where(loaded.sources, e.nearest->span) << ": " << text
              << " (does not match: " << e.nearest->why << ")\n";
  }
  for (const std::string& i : e.implicit) {
    std::cout << "  implicit rule: " << i << " (no policy may reach the agent)\n";
  }
  for (const std::string& n : e.notes) std::cout << "  note: " << n << "\n";
  if (!e.enforcers.empty()) {
    std::cout << "  per enforcer:\n";
    for (const ir::EnforcerAnswer& a : e.enforcers) {
      std::cout << "    " << a.enforcers << ": " << a.decision << ": " << a.why << "\n";
    }
  }
}

int RunExplain(const ExplainFlags& f) {
  int questions = f.connect.has_value() + f.listen.has_value() + f.unix_target.has_value() +
                  f.netlink.has_value() + f.path.has_value() + f.syscall.has_value();
  if (questions != 1) {
    std::cerr << "ward explain: give exactly one of --connect, --listen, --unix, --netlink, "
                 "--path, --syscall\n";
    return kUsage;
  }
  if (!f.syscall && (f.arch || !f.args.empty())) {
    std::cerr << "ward explain: --arch and --arg go with --syscall\n";
    return kUsage;
  }
  ir::SyscallQuery sq;
  if (f.syscall) {
    sq.name = *f.syscall;
    sq.arch = f.arch;
    // The constants are those whose values are the same on every
    // architecture (language/constants.h): any one reads them.
    Arch arch = f.arch && ParseArch(*f.arch) ? *ParseArch(*f.arch) : kDefaultArch;
    for (const std::string& a : f.args) {
      size_t eq = a.find('=');
      unsigned index = 0;
      uint64_t value = 0;
      bool ok = eq != std::string::npos;
      if (ok) {
        auto [p, ec] = std::from_chars(a.data(), a.data() + eq, index);
        ok = ec == std::errc() && p == a.data() + eq && index <= 5 && !sq.args.count(index);
      }
      if (!ok) {
        std::cerr << "ward explain: --arg takes N=VALUE, N from 0 to 5 once each, VALUE a "
                     "number (decimal, 0x hex, or negative) or constants or-ed with |\n";
        return kUsage;
      }
      std::string error, hint;
      if (!ParseArgValue(a.substr(eq + 1), arch, &value, &error, &hint)) {
        std::cerr << "ward explain: --arg " << a << ": " << error << "\n";
        if (!hint.empty()) std::cerr << "  = hint: " << hint << "\n";
        return kUsage;
      }
      sq.args[static_cast<int>(index)] = value;
    }
  }
  if (f.listen.has_value() != f.from.has_value()) {
    std::cerr << "ward explain: --listen needs --from ADDR (and --from needs --listen)\n";
    return kUsage;
  }
  if (f.path.has_value() != f.access.has_value()) {
    std::cerr << "ward explain: --path needs --access read|write|exec\n";
    return kUsage;
  }
  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  std::string error, hint;
  std::optional<ir::Explanation> e;
  // As the enforcers decide on this host: no policy reaches wardd
  // (compiler/agent_guard.h); explain names those implicit rules.
  if ((f.connect || f.listen || f.unix_target) &&
      !ir::GuardAgentEndpoints(&loaded->ir, ir::HostAgentEndpoints(), &error)) {
    std::cerr << "ward explain: " << error << "\n";
    return kUsage;
  }
  if (f.connect || f.listen) {
    ir::FlowQuery q;
    for (const std::string& r : f.resolve) {
      size_t eq = r.find('=');
      if (eq == std::string::npos) {
        std::cerr << "ward explain: --resolve takes NAME=IP\n";
        return kUsage;
      }
      q.resolve[ir::NormaliseDomain(r.substr(0, eq))] = r.substr(eq + 1);
    }
    if (f.connect && !ParseConnect(*f.connect, &q, &error)) {
      std::cerr << "ward explain: " << error << "\n";
      return kUsage;
    }
    if (f.listen) {
      std::string s = *f.listen;
      q.direction = ir::Direction::kIngress;
      if (!SplitProtocol(&s, &q.protocol, false) || !ParsePort(s, &q.port)) {
        std::cerr << "ward explain: --listen takes PORT[/tcp|udp]\n";
        return kUsage;
      }
      q.host = *f.from;
    }
    e = ir::ExplainFlow(loaded->ir, q, &error);
  } else if (f.unix_target) {
    e = ir::ExplainUnix(loaded->ir, *f.unix_target);
  } else if (f.netlink) {
    e = ir::ExplainNetlink(loaded->ir, *f.netlink, &error);
  } else if (f.syscall) {
    e = ir::ExplainSyscall(loaded->ir, sq, &error);
  } else {
    ir::FsRight right = *f.access == "read"    ? ir::FsRight::kRead
                        : *f.access == "write" ? ir::FsRight::kWrite
                                               : ir::FsRight::kExec;
    e = ir::ExplainPath(loaded->ir, *f.path, right, f.home, &error, &hint);
  }
  if (!e) {
    std::cerr << "ward explain: " << error << "\n";
    if (!hint.empty()) std::cerr << "  = hint: " << hint << "\n";
    return kUsage;
  }
  Print(*e, *loaded, f.output);
  const bool permitted = e->decision == "allow" || e->decision == "log";
  return f.fail_on == "deny" && !permitted ? kFound : kOk;
}

}  // namespace

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand("explain", "Show one decision and the rule behind it");
  cmd->add_option("file", f->file, "policy file")->required();
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->add_option("--connect", f->connect, "HOST:PORT[/tcp|udp] or HOST/icmp (egress)");
  cmd->add_option("--listen", f->listen, "PORT[/tcp|udp] (ingress; with --from)");
  cmd->add_option("--from", f->from, "the remote address of an ingress connection");
  // One value per occurrence (repeat the option): otherwise a vector option
  // takes every word that follows, FILE included.
  cmd->add_option("--resolve", f->resolve, "NAME=IP: the address a name resolves to (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--unix", f->unix_target, "a unix socket path or @abstract name");
  cmd->add_option("--netlink", f->netlink, "a netlink protocol: route, sock_diag, generic, ...");
  cmd->add_option("--path", f->path, "an absolute path");
  cmd->add_option("--access", f->access, "read, write or exec")
      ->check(CLI::IsMember({"read", "write", "exec"}));
  cmd->add_option("--syscall", f->syscall, "a syscall name");
  cmd->add_option("--arch", f->arch, "the syscall's architecture (default: the policy's first)");
  cmd->add_option("--arg", f->args,
                  "N=VALUE: argument N (0-5) of the syscall, a number or constants or-ed with | "
                  "(AF_PACKET, CLONE_NEWUSER|CLONE_NEWNS); others are 0 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--home", f->home, "the home directory that ~ stands for");
  cmd->add_option("--fail-on", f->fail_on, "exit 1 when the decision is not allow")
      ->check(CLI::IsMember({"deny"}));
  cmd->add_option("--format", f->output.format, "output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([f, exit_code] { *exit_code = RunExplain(*f); });
}

}  // namespace ward::cli
