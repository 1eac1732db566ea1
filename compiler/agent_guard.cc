#include "compiler/agent_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ward::ir {
namespace {

// Pushes `p`, merged into the last piece when it decides the same.
template <typename A>
void Push(std::vector<Piece<A>>& out, Piece<A> p) {
  if (!out.empty() && out.back().decision == p.decision && out.back().denied == p.denied &&
      out.back().range.hi + 1 == p.range.lo) {
    out.back().range.hi = p.range.hi;
  } else {
    out.push_back(std::move(p));
  }
}

// Removes `what` from the decisions of the addresses in `r`, as a deny
// rule covering them would (BuildPartition: allow minus deny; `denied` is
// the deny where a domain grant could otherwise allow).
template <typename A>
void Subtract(std::vector<Piece<A>>& pieces, Range<A> r, const NetDecision& what,
              const NetDecision& domain_allows) {
  std::vector<Piece<A>> out;
  for (const Piece<A>& p : pieces) {
    if (p.range.hi < r.lo || p.range.lo > r.hi) {
      Push(out, p);
      continue;
    }
    if (p.range.lo < r.lo) Push(out, Piece<A>{{p.range.lo, r.lo - 1}, p.decision, p.denied});
    const A lo = std::max(p.range.lo, r.lo), hi = std::min(p.range.hi, r.hi);
    Push(out,
         Piece<A>{{lo, hi}, p.decision.Minus(what), p.denied.Union(what.Intersect(domain_allows))});
    if (p.range.hi > r.hi) Push(out, Piece<A>{{r.hi + 1, p.range.hi}, p.decision, p.denied});
  }
  pieces = std::move(out);
}

constexpr Range<V6> kMapped = {V6{0xffff} << 32, (V6{0xffff} << 32) | 0xffffffffu};

// A deny of `what` to `prefix` in one partition, with the v4/v6 aliases a
// deny rule gets (network.cc AddPrefix): an IPv4 deny holds for its NAT64
// and IPv4-compatible forms; the IPv4-mapped part of a v6 deny is decided
// in the v4 partition (the mapped block of v6 stays empty).
void Deny(Partition& p, const IpPrefix& prefix, const NetDecision& what,
          const NetDecision& domain_allows) {
  if (!prefix.v6) {
    const Range<V4> r = V4Range(prefix);
    Subtract(p.v4, r, what, domain_allows);
    Subtract(p.v6, {Nat64V6(r.lo), Nat64V6(r.hi)}, what, domain_allows);
    Subtract(p.v6, {CompatV6(r.lo), CompatV6(r.hi)}, what, domain_allows);
    return;
  }
  const Range<V6> r = V6Range(prefix);
  if (r.lo < kMapped.lo)
    Subtract(p.v6, {r.lo, std::min(r.hi, kMapped.lo - 1)}, what, domain_allows);
  if (r.hi > kMapped.hi)
    Subtract(p.v6, {std::max(r.lo, kMapped.hi + 1), r.hi}, what, domain_allows);
  const V6 lo = std::max(r.lo, kMapped.lo), hi = std::min(r.hi, kMapped.hi);
  if (lo <= hi) Subtract(p.v4, {static_cast<V4>(lo), static_cast<V4>(hi)}, what, domain_allows);
}

bool IsWildcard(const IpPrefix& a) {
  return std::all_of(a.bytes.begin(), a.bytes.begin() + (a.v6 ? 16 : 4),
                     [](uint8_t b) { return b == 0; });
}

std::string Url(const AgentEndpoints::Tcp& t) {
  const bool v6 = t.address.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + t.address + "]" : t.address) + ":" + std::to_string(t.port);
}

}  // namespace

AgentEndpoints DefaultAgentEndpoints() {
  AgentEndpoints e;
  e.unix_paths.push_back(kDefaultAgentSocket);
  return e;
}

std::string EndpointsToJson(const AgentEndpoints& endpoints) {
  nlohmann::ordered_json tcp = nlohmann::ordered_json::array();
  for (const auto& t : endpoints.tcp) tcp.push_back({{"address", t.address}, {"port", t.port}});
  return nlohmann::ordered_json{{"version", 1}, {"unix", endpoints.unix_paths}, {"tcp", tcp}}.dump(
             2) +
         "\n";
}

std::optional<AgentEndpoints> EndpointsFromJson(const std::string& text, std::string* error) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("version") || j["version"] != 1) {
    *error = "not an endpoints file (version 1)";
    return std::nullopt;
  }
  AgentEndpoints e;
  if (j.contains("unix")) {
    if (!j["unix"].is_array()) {
      *error = "\"unix\" is not a list";
      return std::nullopt;
    }
    for (const auto& u : j["unix"]) {
      if (!u.is_string() || u.get<std::string>().empty() || u.get<std::string>()[0] != '/') {
        *error = "\"unix\" holds something that is not an absolute path";
        return std::nullopt;
      }
      e.unix_paths.push_back(u.get<std::string>());
    }
  }
  if (j.contains("tcp")) {
    if (!j["tcp"].is_array()) {
      *error = "\"tcp\" is not a list";
      return std::nullopt;
    }
    for (const auto& t : j["tcp"]) {
      if (!t.is_object() || !t.contains("address") || !t["address"].is_string() ||
          !t.contains("port") || !t["port"].is_number_unsigned() || t["port"] == 0 ||
          t["port"] > 65535) {
        *error = "\"tcp\" holds something that is not {\"address\", \"port\"}";
        return std::nullopt;
      }
      std::string why;
      const std::string address = t["address"].get<std::string>();
      if (!ParseIpOrCidr(address, &why) || address.find('/') != std::string::npos) {
        *error = "\"tcp\": '" + address + "' is not an IP address";
        return std::nullopt;
      }
      e.tcp.push_back({address, t["port"].get<uint16_t>()});
    }
  }
  return e;
}

AgentEndpoints HostAgentEndpoints() {
  AgentEndpoints out = DefaultAgentEndpoints();
  const int fd = open(kAgentEndpointsFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return out;
  struct stat st;
  struct stat dir;
  std::string text;
  const std::string folder(kAgentEndpointsFile, std::string(kAgentEndpointsFile).rfind('/'));
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 022) == 0 &&
      st.st_size < (1 << 20) && lstat(folder.c_str(), &dir) == 0 && S_ISDIR(dir.st_mode) &&
      dir.st_uid == 0 && (dir.st_mode & 022) == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  std::string error;
  if (auto e = EndpointsFromJson(text, &error)) {
    for (const std::string& u : e->unix_paths) {
      if (std::find(out.unix_paths.begin(), out.unix_paths.end(), u) == out.unix_paths.end())
        out.unix_paths.push_back(u);
    }
    out.tcp = e->tcp;
  }
  return out;
}

bool GuardAgentEndpoints(Policy* policy, const AgentEndpoints& endpoints, std::string* error) {
  NetRules& net = policy->network;
  for (const std::string& path : endpoints.unix_paths) {
    const std::string why = "wardd listens on unix://" + path;
    const bool present = std::any_of(net.unix_rules.begin(), net.unix_rules.end(),
                                     [&](const UnixRule& r) { return r.implicit == why; });
    if (present) continue;
    net.unix_paths.erase(path);
    net.unix_rules.push_back({false, false, path, Span{}, why});
  }
  NetDecision domain_allows;
  for (const auto& [name, entry] : net.egress_domains)
    domain_allows = domain_allows.Union(entry.allow);
  bool added = false;
  for (const AgentEndpoints::Tcp& t : endpoints.tcp) {
    std::string why_not;
    std::optional<IpPrefix> address = ParseIpOrCidr(t.address, &why_not);
    if (!address || t.address.find('/') != std::string::npos || t.port == 0) {
      *error = "agent listener " + t.address + ":" + std::to_string(t.port) +
               ": not an IP address and port";
      return false;
    }
    const std::string why = "wardd listens on " + Url(t);
    const bool present = std::any_of(net.rules.begin(), net.rules.end(),
                                     [&](const FlatRule& r) { return r.implicit == why; });
    if (present) continue;
    NetDecision what;
    what.tcp = PortSet({{t.port, t.port}});
    std::vector<ast::Peer> peers;
    if (IsWildcard(*address)) {
      const PeerPrefixes all = AnyPrefixes();
      peers.push_back({ast::PeerKind::kAny, {}, {}, {}});
      Deny(net.egress, all.v4, what, domain_allows);
      Deny(net.egress, all.v6, what, domain_allows);
    } else {
      peers.push_back({ast::PeerKind::kAddress, *address, {}, {}});
      Deny(net.egress, *address, what, domain_allows);
    }
    for (const ast::Peer& peer : peers) {
      net.rules.push_back({Direction::kEgress, false, what, peer, Span{}, why});
    }
    added = true;
  }
  // (Only address rules are indexed: ward run's common case, the default
  // socket alone, costs no rebuild.)
  if (added) net.BuildIndex();
  return true;
}

}  // namespace ward::ir
