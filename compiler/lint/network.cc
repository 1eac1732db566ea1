// Network rules (L22xx), on the IR's partition and provenance; L2203 on
// how names were written.
#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "compiler/lint/context.h"

namespace ward::lint {
namespace {

using ir::Direction;
using ir::Protocol;

IpPrefix Addr(const char* text) {
  std::string error;
  return *ParseIpOrCidr(text, &error);
}

std::string PatternOf(const ast::Peer& p) {
  return p.kind == ast::PeerKind::kWildcardDomain ? "*." + p.domain : p.domain;
}

bool IsDomain(const ast::Peer& p) {
  return p.kind == ast::PeerKind::kDomain || p.kind == ast::PeerKind::kWildcardDomain;
}

// A finding at a rule's peer; a suppression above the rule applies too.
Finding& AddPeer(Findings& out, std::string_view id, const ir::FlatRule& r, std::string message) {
  Finding& f = out.Add(id, r.peer.span, std::move(message));
  f.anchor = r.span;
  return f;
}

// The allow rules that let a flow to `addr` through.
std::vector<const ir::FlatRule*> Allowing(const ir::NetRules& net, Protocol proto,
                                          const IpPrefix& addr, uint16_t port) {
  std::vector<const ir::FlatRule*> out;
  for (const ir::FlatRule* r : net.Matching(Direction::kEgress, proto, &addr, nullptr, port)) {
    if (r->allow) out.push_back(r);
  }
  return out;
}

bool DnsAllowed(const ir::NetDecision& d) { return d.udp.Contains(53) || d.tcp.Contains(53); }

// IPv4 blocks that are not the public internet.
constexpr std::array<std::pair<ir::V4, ir::V4>, 6> kPrivateV4 = {{
    {0x0A000000, 0x0AFFFFFF},  // 10/8
    {0x64400000, 0x647FFFFF},  // 100.64/10
    {0x7F000000, 0x7FFFFFFF},  // 127/8
    {0xA9FE0000, 0xA9FEFFFF},  // 169.254/16
    {0xAC100000, 0xAC1FFFFF},  // 172.16/12
    {0xC0A80000, 0xC0A8FFFF},  // 192.168/16
}};

// The first public address in [lo, hi], if any.
std::optional<ir::V4> FirstPublic(ir::V4 lo, ir::V4 hi) {
  uint64_t cur = lo;
  for (auto [plo, phi] : kPrivateV4) {
    if (phi < cur) continue;
    if (plo > cur) break;
    cur = uint64_t{phi} + 1;
  }
  if (cur > hi) return std::nullopt;
  return static_cast<ir::V4>(cur);
}

IpPrefix V4Host(ir::V4 a) {
  IpPrefix p;
  p.length = 32;
  for (int i = 0; i < 4; ++i) p.bytes[i] = static_cast<uint8_t>(a >> (24 - 8 * i));
  return p;
}

// L2201 and L2202: domains need DNS; DNS to the public internet is a channel.
void Dns(const PolicyContext& ctx, Findings& out) {
  const ir::NetRules& net = ctx.ir.network;
  bool any_dns = false;
  for (const auto& piece : net.egress.v4) any_dns |= DnsAllowed(piece.decision);
  for (const auto& piece : net.egress.v6) any_dns |= DnsAllowed(piece.decision);
  if (!any_dns) {
    for (const ir::FlatRule& r : net.rules) {
      if (r.direction != Direction::kEgress || !r.allow || !IsDomain(r.peer)) continue;
      AddPeer(out, "L2201", r,
              "'" + PatternOf(r.peer) +
                  "' is allowed by name, but no DNS egress (port 53) is: the name cannot resolve");
      break;
    }
    return;
  }
  std::optional<IpPrefix> open;
  for (const auto& piece : net.egress.v4) {
    if (!DnsAllowed(piece.decision)) continue;
    if (auto a = FirstPublic(piece.range.lo, piece.range.hi)) {
      open = V4Host(*a);
      break;
    }
  }
  for (const char* probe : {"2001:4860:4860::8888", "2606:4700:4700::1111"}) {
    if (open) break;
    IpPrefix p = Addr(probe);
    if (net.Decide(Direction::kEgress, Protocol::kUdp, p, 53) ||
        net.Decide(Direction::kEgress, Protocol::kTcp, p, 53)) {
      open = p;
    }
  }
  if (!open) return;
  std::vector<const ir::FlatRule*> rules = Allowing(net, Protocol::kUdp, *open, 53);
  if (rules.empty()) rules = Allowing(net, Protocol::kTcp, *open, 53);
  if (rules.empty()) return;
  out.Add("L2202", rules.back()->peer.span,
          "DNS (port 53) is allowed to public addresses such as " + FormatPrefix(*open) +
              ": any resolver answers any name, a channel out of the sandbox");
}

// L2203: a name written otherwise than it is matched.
void DomainNotNormalised(const PolicyContext& ctx, Findings& out) {
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    if (!IsDomain(r.peer)) continue;
    std::string_view text = ctx.sources.Text(r.peer.span);
    if (text.size() < 2 || text.front() != '"' || text.back() != '"') continue;
    std::string written(text.substr(1, text.size() - 2));
    if (std::any_of(written.begin(), written.end(), [](char c) { return c & 0x80; })) continue;
    std::string canonical = PatternOf(r.peer);
    if (written == canonical) continue;
    Finding& f = AddPeer(out, "L2203", r, "'" + written + "' is matched as '" + canonical + "'");
    f.fix = Fix{"write the name as it is matched", r.peer.span, "\"" + canonical + "\""};
  }
}

// L2204: `*.x` allowed without `x`.
void WildcardExcludesApex(const PolicyContext& ctx, Findings& out) {
  const auto& domains = ctx.ir.network.egress_domains;
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    if (!r.allow || r.direction != Direction::kEgress ||
        r.peer.kind != ast::PeerKind::kWildcardDomain) {
      continue;
    }
    auto apex = domains.find(r.peer.domain);
    if (apex != domains.end() && !apex->second.allow.empty()) continue;
    AddPeer(out, "L2204", r,
            "'*." + r.peer.domain + "' matches subdomains only, not '" + r.peer.domain +
                "' itself, which no rule allows");
  }
}

// L2205: `any` or a huge public block.
void BroadDestination(const PolicyContext& ctx, Findings& out) {
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    if (!r.allow || r.direction != Direction::kEgress) continue;
    std::string what;
    if (r.peer.kind == ast::PeerKind::kAny) {
      what = "any";
    } else if (r.peer.kind == ast::PeerKind::kAddress) {
      const IpPrefix& p = r.peer.prefix;
      if (!p.v6 && p.length <= 8 && FirstPublic(ir::V4Range(p).lo, ir::V4Range(p).hi)) {
        what = FormatPrefix(p);
      } else if (p.v6 && p.length < 16 && !(p.length >= 7 && (p.bytes[0] & 0xFE) == 0xFC)) {
        what = FormatPrefix(p);
      }
    }
    if (what.empty()) continue;
    AddPeer(out, "L2205", r,
            "egress to " + what + " reaches every host in it, and any exfiltration sink");
  }
}

// L2206: shared-tenant and user-content domains.
void SharedTenantDomain(const PolicyContext& ctx, Findings& out) {
  static const char* const kShared[] = {"raw.githubusercontent.com",
                                        "gist.githubusercontent.com",
                                        "objects.githubusercontent.com",
                                        "x.github.io",
                                        "s3.amazonaws.com",
                                        "x.s3.amazonaws.com",
                                        "x.cloudfront.net",
                                        "x.blob.core.windows.net",
                                        "x.azurewebsites.net",
                                        "storage.googleapis.com",
                                        "x.appspot.com",
                                        "x.firebaseapp.com",
                                        "x.web.app",
                                        "x.herokuapp.com",
                                        "x.workers.dev",
                                        "x.pages.dev",
                                        "x.vercel.app",
                                        "x.netlify.app",
                                        "x.ngrok.io",
                                        "x.ngrok-free.app",
                                        "pastebin.com",
                                        "transfer.sh",
                                        "hooks.slack.com",
                                        "discord.com"};
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    if (!r.allow || r.direction != Direction::kEgress || !IsDomain(r.peer)) continue;
    const std::string pattern = PatternOf(r.peer);
    for (const char* shared : kShared) {
      if (!ir::DomainMatches(pattern, shared)) continue;
      std::string example = shared;
      if (example.rfind("x.", 0) == 0) example = "*" + example.substr(1);
      AddPeer(out, "L2206", r,
              "'" + pattern + "' reaches " + example +
                  ", a shared-tenant domain where anyone can publish or receive data");
      break;
    }
  }
}

// The network section of the linted policy: where a fix inserts a line.
std::optional<Fix> InsertInNetwork(const PolicyContext& ctx, const std::string& line,
                                   const std::string& description) {
  if (!ctx.policy.network) return std::nullopt;
  Span s = ctx.policy.network->span;
  std::string_view text = ctx.sources.Text(s);
  size_t brace = text.find('{');
  if (brace == std::string_view::npos) return std::nullopt;
  uint32_t at = s.begin + static_cast<uint32_t>(brace) + 1;
  return Fix{description, {s.file, at, at}, "\n    " + line};
}

// The first (protocol, port) the egress partition allows to `addr`, if any
// (ICMP as port 0).
template <typename A>
std::optional<std::pair<Protocol, uint16_t>> FirstAllowedIn(const std::vector<ir::Piece<A>>& pieces,
                                                            A a) {
  for (const ir::Piece<A>& piece : pieces) {
    if (a < piece.range.lo || a > piece.range.hi) continue;
    const ir::NetDecision& d = piece.decision;
    if (!d.tcp.empty()) return std::pair{Protocol::kTcp, d.tcp.ranges().front().first};
    if (!d.udp.empty()) return std::pair{Protocol::kUdp, d.udp.ranges().front().first};
    if (d.icmp) return std::pair{Protocol::kIcmp, uint16_t{0}};
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::pair<Protocol, uint16_t>> FirstAllowed(const ir::NetRules& net,
                                                          const IpPrefix& addr) {
  if (addr.v6) return FirstAllowedIn(net.egress.v6, ir::V6Range(addr).lo);
  return FirstAllowedIn(net.egress.v4, ir::V4Range(addr).lo);
}

// L2207 and L2208: metadata and link-local addresses reachable.
void LinkLocal(const PolicyContext& ctx, Findings& out) {
  struct Probe {
    const char* rule;
    const char* addr;
    const char* what;
  };
  static const Probe kProbes[] = {
      {"L2207", "169.254.169.254", "the cloud metadata service 169.254.169.254"},
      {"L2207", "fd00:ec2::254", "the cloud metadata service fd00:ec2::254"},
      {"L2208", "169.254.1.1", "the link-local range 169.254.0.0/16"},
      {"L2208", "fe80::1", "the link-local range fe80::/10"},
  };
  for (const Probe& probe : kProbes) {
    IpPrefix addr = Addr(probe.addr);
    // Reachable on any protocol and port counts (`allow tcp to any port 443`
    // reaches the metadata service on 443): the first one the partition
    // allows is the witness.
    std::optional<std::pair<Protocol, uint16_t>> witness = FirstAllowed(ctx.ir.network, addr);
    if (!witness) continue;
    std::vector<const ir::FlatRule*> rules =
        Allowing(ctx.ir.network, witness->first, addr, witness->second);
    if (rules.empty()) continue;
    Finding& f = out.Add(
        probe.rule, rules.back()->peer.span,
        std::string(probe.what) + " is reachable: this allow covers it and no deny refuses it");
    f.fix = std::string(probe.rule) == "L2207"
                ? InsertInNetwork(ctx, "deny to 169.254.169.254, fd00:ec2::254",
                                  "deny the metadata service")
                : InsertInNetwork(ctx, "deny to 169.254.0.0/16, fe80::/10", "deny link-local");
  }
}

// L2209: raw or packet sockets: a capability that grants them and a socket
// rule that lets them be created.
void RawSockets(const PolicyContext& ctx, Findings& out) {
  const auto& kept = ctx.ir.process.capabilities_kept;
  std::string cap = kept.count("CAP_NET_RAW")     ? "CAP_NET_RAW"
                    : kept.count("CAP_NET_ADMIN") ? "CAP_NET_ADMIN"
                                                  : "";
  if (cap.empty()) return;
  const ir::SyscallRules& s = ctx.ir.syscalls;
  std::string family;
  for (Arch arch : s.arches) {
    auto ok = [&](uint64_t af, uint64_t type) {
      ir::SysAction a = s.Decide(arch, "socket", {af, type, 0, 0, 0, 0});
      return a.kind == ir::SysAction::Kind::kAllow || a.kind == ir::SysAction::Kind::kLog;
    };
    if (ok(17, 3))
      family = "AF_PACKET";
    else if (ok(2, 3) || ok(10, 3))
      family = "SOCK_RAW";
    if (!family.empty()) break;
  }
  if (family.empty()) return;
  for (const ast::Policy* p : ctx.order) {
    if (!p->process) continue;
    for (const auto& caps : p->process->capabilities) {
      for (const ast::Name& n : caps.names) {
        if (n.text != cap) continue;
        out.Add("L2209", n.span,
                cap + " is kept and socket() allows " + family +
                    ": raw and packet sockets bypass every address and port rule");
        return;
      }
    }
  }
}

// L2212: socket families outside IP and unix that socket() lets through.
// No network rule decides them and no address-based layer sees them: vsock
// reaches the hypervisor's host from a VM (and is not namespaced, so from
// every container on it), TIPC, RDS, CAN or Bluetooth their own peers.
// Only where a syscalls section decides socket() (without one, B3001 says
// the syscalls are not enforced at all).
void NonIpSocketFamily(const PolicyContext& ctx, Findings& out) {
  const ir::SyscallRules& s = ctx.ir.syscalls;
  static constexpr std::pair<uint64_t, const char*> kFamilies[] = {
      {40, "AF_VSOCK"},     {30, "AF_TIPC"},       {21, "AF_RDS"},      {29, "AF_CAN"},
      {31, "AF_BLUETOOTH"}, {43, "AF_SMC"},        {42, "AF_QIPCRTR"},  {45, "AF_MCTP"},
      {9, "AF_X25"},        {3, "AF_AX25"},        {5, "AF_APPLETALK"}, {4, "AF_IPX"},
      {26, "AF_LLC"},       {36, "AF_IEEE802154"}, {35, "AF_PHONET"},   {39, "AF_NFC"}};
  for (Arch arch : s.arches) {
    std::vector<std::string> names;
    Span span;
    for (const auto& [af, name] : kFamilies) {
      bool allowed = false;
      const ir::Region* deciding = nullptr;
      for (const uint64_t type : {1, 2, 5}) {  // stream, datagram, seqpacket
        const std::array<uint64_t, 6> args = {af, type, 0, 0, 0, 0};
        const ir::SysAction a = s.Decide(arch, "socket", args);
        if (a.kind == ir::SysAction::Kind::kAllow || a.kind == ir::SysAction::Kind::kLog) {
          allowed = true;
          deciding = s.Find(arch, "socket", args);
          break;
        }
      }
      if (!allowed) continue;
      names.push_back(name);
      if (!span.valid()) {
        span = deciding && !deciding->rules.empty() ? deciding->rules.back() : s.default_span;
      }
    }
    if (names.empty() || !span.valid()) continue;
    std::string list = names[0];
    for (size_t i = 1; i < names.size() && i < 3; ++i) list += ", " + names[i];
    if (names.size() > 3) list += " and " + std::to_string(names.size() - 3) + " more";
    out.Add("L2212", span,
            "socket() allows " + list + " (on " + std::string(ArchName(arch)) +
                "): families outside IP and unix reach peers no network rule decides");
    return;
  }
}

// L2213: /proc/PID/net readable. A ward run workload shares the host's
// network namespace, and /proc/net (a link to /proc/self/net) shows the
// host's sockets, interfaces and routes, which ward run's guard hides from
// netlink and ioctls (`allow netlink route` or not: the sockets are never
// granted). No mount can cover every process's net directory; Landlock
// decides by the grant.
void ProcNetReadable(const PolicyContext& ctx, Findings& out) {
  for (const char* path : {"/proc/self/net/tcp", "/proc/1/net/tcp"}) {
    const ir::FsDecision d = ctx.ir.filesystem.Decide(path, ir::FsRight::kRead, std::nullopt);
    if (!d.allow || d.rules.empty()) continue;
    out.Add("L2213", d.rules.back(),
            "'" + d.pattern +
                "' lets the workload read /proc/net: under ward run it lists this host's sockets "
                "(tcp, udp, unix), interfaces (dev) and routes (route)");
    return;
  }
}

// L2214: `allow netlink route` under a syscalls section that refuses
// netlink sockets (std linux-base does, and a child's allow cannot reopen
// what a base refuses: the most restrictive rule wins): the grant then
// opens the interface ioctls only.
void NetlinkSocketRefused(const PolicyContext& ctx, Findings& out) {
  if (!ctx.ir.network.netlink.count("route")) return;
  bool has_syscalls = false;
  for (const ast::Policy* p : ctx.order) has_syscalls |= p->syscalls.has_value();
  if (!has_syscalls) return;
  const ir::SyscallRules& s = ctx.ir.syscalls;
  for (Arch arch : s.arches) {
    const std::array<uint64_t, 6> args = {16, 3, 0, 0, 0, 0};  // AF_NETLINK, SOCK_RAW, ROUTE
    const ir::SysAction a = s.Decide(arch, "socket", args);
    if (a.kind == ir::SysAction::Kind::kAllow || a.kind == ir::SysAction::Kind::kLog) continue;
    for (const ir::NetlinkRule& r : ctx.ir.network.netlink_rules) {
      if (!r.allow) continue;
      Finding& f = out.Add("L2214", r.span,
                           "socket() refuses AF_NETLINK (on " + std::string(ArchName(arch)) +
                               "): the grant opens the interface ioctls only; getifaddrs and "
                               "if_nameindex still fail");
      const ir::Region* deciding = s.Find(arch, "socket", args);
      if (deciding && !deciding->rules.empty()) {
        AddRelated(f, deciding->rules.back(), "the rule that refuses it");
      }
      return;
    }
  }
}

// L2210: unix sockets of host daemons.
std::string HostDaemon(const ir::UnixRule& r) {
  const std::string& n = r.name;
  auto ends = [&](std::string_view s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  if (ends("docker.sock")) return "the Docker daemon";
  if (has("containerd") || ends("crio.sock")) return "the container runtime";
  if (has("podman")) return "Podman";
  if (has("libvirt")) return "libvirt";
  if (has("system_bus_socket") || (n.rfind("/run/user/", 0) == 0 && ends("/bus"))) return "D-Bus";
  if (has("ssh-agent") || has("/ssh-") || has("gpg-agent") || has("agent.sock")) {
    return "an SSH or GPG agent";
  }
  if (has(".X11-unix")) return "the X server";
  if (has("tmux-")) return "tmux";
  if (has("systemd/private") || has("systemd/notify")) return "systemd";
  return "";
}

void HostDaemonSocket(const PolicyContext& ctx, Findings& out) {
  for (const ir::UnixRule& r : ctx.ir.network.unix_rules) {
    if (!r.allow) continue;
    std::string daemon = HostDaemon(r);
    if (daemon.empty()) continue;
    out.Add("L2210", r.span,
            "'" + std::string(r.abstract ? "@" : "") + r.name + "' is the socket of " + daemon +
                ": whoever connects controls it, and through it the host");
  }
}

// L2211: deny by name.
void DenyByDomain(const PolicyContext& ctx, Findings& out) {
  for (const ir::FlatRule& r : ctx.ir.network.rules) {
    if (r.allow || !IsDomain(r.peer)) continue;
    AddPeer(out, "L2211", r,
            "the deny of '" + PatternOf(r.peer) +
                "' cannot be enforced by address: the name's other addresses get through");
  }
}

}  // namespace

void LintNetwork(const PolicyContext& ctx, Findings& out) {
  Dns(ctx, out);
  DomainNotNormalised(ctx, out);
  WildcardExcludesApex(ctx, out);
  BroadDestination(ctx, out);
  SharedTenantDomain(ctx, out);
  LinkLocal(ctx, out);
  RawSockets(ctx, out);
  NonIpSocketFamily(ctx, out);
  ProcNetReadable(ctx, out);
  NetlinkSocketRefused(ctx, out);
  HostDaemonSocket(ctx, out);
  DenyByDomain(ctx, out);
}

}  // namespace ward::lint
