// ward diff, property test for network and filesystem: random pairs of
// policies generated as source text (through the whole front end), checked
// with reference evaluators that share nothing with compiler/ but the AST
// types:
//   (a) every query whose decision differs between OLD and NEW is covered by
//       a line of the diff with the right sign, and
//   (b) every line is witnessed: network lines at sample addresses and ports
//       taken from the line itself, filesystem lines at their example path.
// Filesystem coverage follows the rule in compiler/diff_filesystem.cc: a
// path is covered by a line whose pattern matches it while no pattern of
// either IR (for that right) that matches it is more specific.
#include <arpa/inet.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "tests/compiler/diff_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

// -- reference: network --

struct Addr {
  bool v6 = false;
  std::array<uint8_t, 16> b{};
};

Addr ParseAddr(const std::string& text) {
  Addr a;
  a.v6 = text.find(':') != std::string::npos;
  REQUIRE(inet_pton(a.v6 ? AF_INET6 : AF_INET, text.c_str(), a.b.data()) == 1);
  return a;
}

bool InPrefix(const uint8_t* addr, const uint8_t* net, int length) {
  for (int bit = 0; bit < length; ++bit) {
    int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((addr[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
constexpr uint8_t kCompat[12] = {};

// language.md: an IPv4 rule covers the IPv4-mapped form; an IPv4 deny also
// the NAT64 and IPv4-compatible forms; a mapped address is IPv4.
bool Covers(const IpPrefix& p, const Addr& a, bool deny) {
  if (!p.v6) {
    if (!a.v6) return InPrefix(a.b.data(), p.bytes.data(), p.length);
    bool v4_form = std::memcmp(a.b.data(), kMapped, 12) == 0 ||
                   (deny && (std::memcmp(a.b.data(), kNat64, 12) == 0 ||
                             std::memcmp(a.b.data(), kCompat, 12) == 0));
    return v4_form && InPrefix(a.b.data() + 12, p.bytes.data(), p.length);
  }
  if (a.v6) return InPrefix(a.b.data(), p.bytes.data(), p.length);
  uint8_t mapped[16];
  std::memcpy(mapped, kMapped, 12);
  std::memcpy(mapped + 12, a.b.data(), 4);
  return InPrefix(mapped, p.bytes.data(), p.length);
}

bool PeerCovers(const ast::Peer& peer, const Addr& a, bool deny) {
  switch (peer.kind) {
    case ast::PeerKind::kAny:
      return true;
    case ast::PeerKind::kLoopback: {
      IpPrefix lo4, lo6;
      lo4.bytes[0] = 127;
      lo4.length = 8;
      lo6.v6 = true;
      lo6.bytes[15] = 1;
      lo6.length = 128;
      return Covers(lo4, a, deny) || Covers(lo6, a, deny);
    }
    case ast::PeerKind::kAddress:
      return Covers(peer.prefix, a, deny);
    case ast::PeerKind::kDomain:
    case ast::PeerKind::kWildcardDomain:
      return false;
  }
  return false;
}

bool PeerNames(const ast::Peer& peer, const std::string& name) {
  if (peer.kind == ast::PeerKind::kDomain) return peer.domain == name;
  if (peer.kind != ast::PeerKind::kWildcardDomain) return false;
  std::string suffix = "." + peer.domain;
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Flow {
  ast::Direction dir = ast::Direction::kEgress;
  ast::Protocol proto = ast::Protocol::kTcp;  // kTcp, kUdp or kIcmp
  uint16_t port = 0;
  const Addr* addr = nullptr;         // the address, or where the name resolved
  const std::string* name = nullptr;  // a name flow
};

bool RuleSpeaks(const ast::NetRule& r, const Flow& f) {
  if (r.is_unix || r.direction != f.dir) return false;
  bool ports = !r.raw_ports.empty();
  if (r.protocol == ast::Protocol::kAll) {
    if (ports && f.proto == ast::Protocol::kIcmp) return false;
  } else if (r.protocol != f.proto) {
    return false;
  }
  if (!ports || f.proto == ast::Protocol::kIcmp) return true;
  return std::any_of(r.ports.begin(), r.ports.end(),
                     [&](const PortRange& p) { return p.lo <= f.port && f.port <= p.hi; });
}

// Some allow matches (the name or the address), no deny does.
bool RefFlow(const std::vector<const ast::Policy*>& sources, const Flow& f) {
  bool allowed = false, denied = false;
  for (const ast::Policy* p : sources) {
    if (!p->network) continue;
    for (const ast::NetRule& r : p->network->rules) {
      if (!RuleSpeaks(r, f)) continue;
      for (const ast::Peer& peer : r.peers) {
        if ((f.addr && PeerCovers(peer, *f.addr, !r.allow)) ||
            (f.name && PeerNames(peer, *f.name))) {
          (r.allow ? allowed : denied) = true;
        }
      }
    }
  }
  return allowed && !denied;
}

bool RefUnix(const std::vector<const ast::Policy*>& sources, const std::string& target) {
  bool allowed = false, denied = false;
  for (const ast::Policy* p : sources) {
    if (!p->network) continue;
    for (const ast::NetRule& r : p->network->rules) {
      if (!r.is_unix) continue;
      for (const ast::UnixSocket& s : r.sockets) {
        if ((s.abstract ? "@" + s.name : s.name) == target) (r.allow ? allowed : denied) = true;
      }
    }
  }
  return allowed && !denied;
}

// The domain patterns of a policy in one direction ("a.b", "*.a.b").
void AddDomainPatterns(const std::vector<const ast::Policy*>& sources, ast::Direction dir,
                       std::set<std::string>* out) {
  for (const ast::Policy* p : sources) {
    if (!p->network) continue;
    for (const ast::NetRule& r : p->network->rules) {
      if (r.direction != dir) continue;
      for (const ast::Peer& peer : r.peers) {
        if (peer.kind == ast::PeerKind::kDomain) out->insert(peer.domain);
        if (peer.kind == ast::PeerKind::kWildcardDomain) out->insert("*." + peer.domain);
      }
    }
  }
}

// The class of a name: itself when a pattern names it exactly, else its
// deepest wildcard pattern; empty when no pattern matches it.
std::string ClassOf(const std::set<std::string>& patterns, const std::string& name) {
  if (patterns.count(name)) return name;
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    if (patterns.count("*" + name.substr(dot))) return "*" + name.substr(dot);
  }
  return "";
}

// -- parsing the diff's lines --

struct Cidr {
  Addr net;
  int length = 0;
};

struct NetLineParsed {
  bool gained = false;
  bool is_unix = false;
  std::string unix_target;
  ast::Direction dir = ast::Direction::kEgress;
  ast::Protocol proto = ast::Protocol::kTcp;
  std::vector<std::string> patterns;  // name classes
  std::vector<Cidr> cidrs;
  std::vector<std::pair<int, int>> ports;  // empty: every port
};

NetLineParsed ParseNetLine(const std::string& line) {
  INFO(line);
  std::vector<std::string> t = Split(line, ' ');
  REQUIRE(t.size() >= 3);
  NetLineParsed l;
  l.gained = t[0] == "+";
  if (t[1] == "unix") {
    l.is_unix = true;
    l.unix_target = t[2];
    return l;
  }
  REQUIRE((t[1] == "egress" || t[1] == "ingress"));
  l.dir = t[1] == "egress" ? ast::Direction::kEgress : ast::Direction::kIngress;
  l.proto = t[2] == "tcp"   ? ast::Protocol::kTcp
            : t[2] == "udp" ? ast::Protocol::kUdp
                            : ast::Protocol::kIcmp;
  size_t i = 3;
  if (i < t.size() && t[i][0] == '"') {
    for (const std::string& q : Split(t[i], ',')) l.patterns.push_back(q.substr(1, q.size() - 2));
    ++i;
    if (i < t.size() && t[i] == "at") ++i;
  }
  if (i < t.size() && t[i] != "ports") {
    for (const std::string& c : Split(t[i], ',')) {
      size_t slash = c.find('/');
      REQUIRE(slash != std::string::npos);
      l.cidrs.push_back({ParseAddr(c.substr(0, slash)), std::stoi(c.substr(slash + 1))});
    }
    ++i;
  }
  if (i < t.size()) {
    REQUIRE(t[i] == "ports");
    REQUIRE(i + 1 < t.size());
    for (const std::string& r : Split(t[i + 1], ',')) {
      size_t dash = r.find('-');
      int lo = std::stoi(r.substr(0, dash));
      l.ports.push_back({lo, dash == std::string::npos ? lo : std::stoi(r.substr(dash + 1))});
    }
  }
  return l;
}

bool InCidrs(const std::vector<Cidr>& cidrs, const Addr& a) {
  for (const Cidr& c : cidrs) {
    if (c.net.v6 == a.v6 && InPrefix(a.b.data(), c.net.b.data(), c.length)) return true;
  }
  return false;
}

bool InPorts(const NetLineParsed& l, uint16_t port) {
  if (l.proto == ast::Protocol::kIcmp || l.ports.empty()) return true;
  return std::any_of(l.ports.begin(), l.ports.end(),
                     [&](auto r) { return r.first <= port && port <= r.second; });
}

// The IR decides an IPv4-mapped address as IPv4 (and so do the lines).
Addr Folded(const Addr& a) {
  if (!a.v6 || std::memcmp(a.b.data(), kMapped, 12) != 0) return a;
  Addr v4;
  std::memcpy(v4.b.data(), a.b.data() + 12, 4);
  return v4;
}

// Addresses inside a CIDR: its first, its last, and one in between.
std::vector<Addr> Samples(const Cidr& c, std::mt19937& rng) {
  int bits = c.net.v6 ? 128 : 32;
  Addr first = c.net, last = c.net, mid = c.net;
  for (int bit = c.length; bit < bits; ++bit) {
    int byte = bit / 8, mask = 0x80 >> (bit % 8);
    first.b[byte] &= ~mask;
    last.b[byte] |= mask;
    if (rng() & 1) {
      mid.b[byte] |= mask;
    } else {
      mid.b[byte] &= ~mask;
    }
  }
  return {first, last, mid};
}

// -- reference: filesystem --

constexpr char kHome[] = "/home/~";

std::string Expanded(const std::string& pattern) {
  return pattern[0] == '~' ? std::string(kHome) + pattern.substr(1) : pattern;
}

std::regex PatternRegex(const std::string& pattern) {
  std::string re = "^";
  for (const std::string& comp : Split(pattern, '/')) {
    if (comp == "**") {
      re += "(/[^/]+)*";
      continue;
    }
    re += "/";
    if (comp == "*") {
      re += "[^/]+";  // never empty
      continue;
    }
    for (char c : comp) {
      if (c == '*') {
        re += "[^/]*";
      } else if (std::strchr(".^$|()[]{}+?\\", c)) {
        re += std::string("\\") + c;
      } else {
        re += c;
      }
    }
  }
  return std::regex(re + "(/.*)?$");
}

bool PatternMatches(const std::string& pattern, const std::string& path) {
  static std::map<std::string, std::regex> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, PatternRegex(Expanded(pattern))).first;
  return std::regex_match(path, it->second);
}

// language.md: more components (`*` one, `**` none) is more specific; then,
// from the root, literal > glob > `**`.
int Specificity(const std::string& a, const std::string& b) {
  auto key = [](const std::string& p) {
    std::vector<std::string> comps = Split(Expanded(p), '/');
    int count = 0;
    std::vector<int> ranks;
    for (const std::string& c : comps) {
      count += c != "**";
      ranks.push_back(c == "**" ? 0 : c.find('*') != std::string::npos ? 1 : 2);
    }
    return std::pair(count, ranks);
  };
  auto ka = key(a), kb = key(b);
  if (ka.first != kb.first) return ka.first < kb.first ? -1 : 1;
  for (size_t i = 0; i < std::min(ka.second.size(), kb.second.size()); ++i) {
    if (ka.second[i] != kb.second[i]) return ka.second[i] < kb.second[i] ? -1 : 1;
  }
  return 0;
}

struct FsRuleRef {
  std::string pattern;
  bool allow;
};

std::vector<FsRuleRef> FsRules(const std::vector<const ast::Policy*>& sources, uint8_t right) {
  std::vector<FsRuleRef> out;
  for (const ast::Policy* p : sources) {
    if (!p->filesystem) continue;
    for (const ast::FsRule& r : p->filesystem->rules) {
      if (!(r.rights & right)) continue;
      for (const ast::Atom& a : r.paths) out.push_back({a.text, r.allow});
    }
  }
  return out;
}

bool RefPath(const std::vector<FsRuleRef>& rules, const std::string& path) {
  const FsRuleRef* best = nullptr;
  bool allow = false;
  for (const FsRuleRef& r : rules) {
    if (!PatternMatches(r.pattern, path)) continue;
    int c = best ? Specificity(r.pattern, best->pattern) : 1;
    if (c > 0) {
      best = &r;
      allow = r.allow;
    } else if (c == 0) {
      allow = allow && r.allow;  // a full tie: deny wins
    }
  }
  return best && allow;
}

// The line's pattern matches the path and no pattern of either IR that
// matches it is more specific.
bool FsCovers(const std::string& line_pattern, const std::vector<FsRuleRef>& both,
              const std::string& path) {
  if (!PatternMatches(line_pattern, path)) return false;
  return std::none_of(both.begin(), both.end(), [&](const FsRuleRef& r) {
    return PatternMatches(r.pattern, path) && Specificity(r.pattern, line_pattern) > 0;
  });
}

// -- generators --

template <size_t N>
const char* Pick(std::mt19937& rng, const char* const (&a)[N]) {
  return a[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

int Coin(std::mt19937& rng, int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

constexpr const char* kV4Nets[] = {
    "10.0.0.0/8",     "10.1.99.0/24", "10.1.99.0/25", "10.1.99.128/25", "10.1.100.0/24",
    "192.168.0.0/16", "0.0.0.0/0",    "10.1.99.7",    "127.0.0.1",      "10.0.0.0/7"};
constexpr const char* kV6Nets[] = {"fd00::/8",     "fd00:1::/32",   "::/0",
                                   "::1",          "2001:db8::/32", "::ffff:10.1.0.0/112",
                                   "64:ff9b::/96", "::ffff:0:0/96"};
constexpr const char* kDomains[] = {"\"example.com\"",     "\"*.example.com\"", "\"a.example.com\"",
                                    "\"*.a.example.com\"", "\"b.org\"",         "\"*.org\"",
                                    "\"EXAMPLE.com.\""};
constexpr const char* kPortLists[] = {"22",     "53",        "443",    "5432, 6379",
                                      "1-1024", "8000-8100", "443, 22"};

std::string RandomNetRule(std::mt19937& rng) {
  std::string r = Coin(rng, 3) == 0 ? "deny" : "allow";
  if (Coin(rng, 12) == 0) {
    static constexpr const char* kSockets[] = {"\"/run/a.sock\"", "\"/run/b.sock\"", "\"@x\"",
                                               "\"@y\""};
    return r + " unix " + Pick(rng, kSockets);
  }
  bool ingress = Coin(rng, 5) == 0;
  if (ingress) r += " ingress";
  int proto = Coin(rng, 4);
  static constexpr const char* kProtos[] = {"", " tcp", " udp", " icmp"};
  r += kProtos[proto];
  r += ingress ? " from " : " to ";
  for (int i = 0, n = 1 + Coin(rng, 2); i < n; ++i) {
    if (i) r += ", ";
    int kind = Coin(rng, 12);
    r += kind == 0   ? "any"
         : kind == 1 ? "loopback"
         : kind < 6  ? Pick(rng, kV4Nets)
         : kind < 9  ? Pick(rng, kV6Nets)
                     : Pick(rng, kDomains);
  }
  if (proto != 3 && Coin(rng, 2) == 0) r += " port " + std::string(Pick(rng, kPortLists));
  return r;
}

constexpr const char* kFsPatterns[] = {
    "/a",     "/a/b", "/a/*",      "/a/**/c",  "/a/b/c", "/*/b",  "/**/c",   "/a/b*",
    "/a/*/c", "/b",   "/**",       "/a/bc",    "/*",     "/a/**", "/a/*b/c", "/a/*c",
    "~",      "~/s",  "/home/*/s", "/a/b/c/d", "/**/b*", "/a/x*c"};
constexpr const char* kFsRights[] = {"read", "write", "exec", "read write", "read exec"};

std::string RandomFsRule(std::mt19937& rng) {
  return std::string(Coin(rng, 3) ? "allow " : "deny ") + Pick(rng, kFsRights) + " \"" +
         Pick(rng, kFsPatterns) + "\"";
}

std::string PolicyText(const std::vector<std::string>& net, const std::vector<std::string>& fs) {
  std::string text = "policy p {\n";
  if (!net.empty()) {
    text += "  network {\n";
    for (const std::string& r : net) text += "    " + r + "\n";
    text += "  }\n";
  }
  if (!fs.empty()) {
    text += "  filesystem {\n";
    for (const std::string& r : fs) text += "    " + r + "\n";
    text += "  }\n";
  }
  return text + "}\n";
}

// NEW from OLD: most rules kept, a few added, the order shuffled; sometimes
// an unrelated policy.
std::vector<std::string> Mutate(const std::vector<std::string>& rules, std::mt19937& rng,
                                std::string (*fresh)(std::mt19937&), int fresh_max) {
  std::vector<std::string> out;
  if (Coin(rng, 5) == 0) {
    for (int i = Coin(rng, fresh_max + 1); i > 0; --i) out.push_back(fresh(rng));
    return out;
  }
  for (const std::string& r : rules) {
    if (Coin(rng, 4) != 0) out.push_back(r);
  }
  for (int i = Coin(rng, 4); i > 0; --i) out.push_back(fresh(rng));
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

constexpr const char* kV4Hosts[] = {"10.1.99.7",   "10.1.99.200", "10.1.100.1", "10.2.0.1",
                                    "192.168.1.1", "127.0.0.1",   "8.8.8.8",    "11.0.0.1"};
constexpr const char* kV6Hosts[] = {"fd00:1::1",        "fd00:2::1",         "::1",
                                    "2001:db8::1",      "64:ff9b::a01:6307", "::a01:6307",
                                    "::ffff:10.1.99.7", "fe80::1",           "::ffff:8.8.8.8"};
constexpr const char* kNames[] = {"example.com",    "a.example.com", "x.a.example.com",
                                  "zz.example.com", "b.org",         "c.org",
                                  "q.b.org",        "other.net"};
constexpr uint16_t kPorts[] = {22, 53, 443, 5432, 6379, 1000, 1024, 1025, 8050};
constexpr const char* kUnixTargets[] = {"/run/a.sock", "/run/b.sock", "@x", "@y"};
constexpr const char* kFsPaths[] = {
    "/",           "/a",          "/a/b",    "/a/b/c", "/a/bc",     "/a/x/c",  "/b/b",
    "/a/b/c/d",    "/c",          "/a/xb/c", "/x/y/c", "/a/b/x",    "/b",      "/zz",
    "/a/zz",       "/zz/b",       "/zz/q/c", "/a/zc",  "/a/b/zz/c", "/home/~", "/home/~/s",
    "/home/bob/s", "/home/~/s/t", "/a/bcd",  "/a/xbc", "/q/b1",     "/a/bzc",  "/a/xc"};

struct Counts {
  long queries = 0;
  long differing = 0;
  long lines = 0;
};

struct Pair {
  const Loaded& before;
  const Loaded& after;
  std::vector<NetLineParsed> net;  // the network lines, parsed
};

bool Differs(const Pair& p, const Flow& f, bool* gained) {
  bool b = RefFlow(p.before.sources, f), a = RefFlow(p.after.sources, f);
  *gained = a;
  return a != b;
}

constexpr ast::Protocol kQueryProtos[] = {ast::Protocol::kTcp, ast::Protocol::kUdp,
                                          ast::Protocol::kIcmp};
constexpr ast::Direction kQueryDirs[] = {ast::Direction::kEgress, ast::Direction::kIngress};

std::vector<Addr> Hosts() {
  std::vector<Addr> out;
  for (const char* h : kV4Hosts) out.push_back(ParseAddr(h));
  for (const char* h : kV6Hosts) out.push_back(ParseAddr(h));
  return out;
}

// (a) for network flows: address, name, and name resolved to an address.
void CheckNetworkCovered(const Pair& p, Counts* counts) {
  static const std::vector<Addr> hosts = Hosts();
  auto covered = [&](const Flow& f, bool gained, bool by_address, const std::string* cls,
                     bool resolved) {
    for (const NetLineParsed& l : p.net) {
      if (l.is_unix || l.gained != gained || l.dir != f.dir || l.proto != f.proto ||
          !InPorts(l, f.port)) {
        continue;
      }
      bool has_addr = !l.cidrs.empty(), has_name = !l.patterns.empty();
      bool in_class =
          cls && std::find(l.patterns.begin(), l.patterns.end(), *cls) != l.patterns.end();
      if (by_address && has_addr && !has_name && InCidrs(l.cidrs, Folded(*f.addr))) return true;
      if (in_class && !has_addr) return true;
      if (resolved && in_class && has_addr && InCidrs(l.cidrs, Folded(*f.addr))) return true;
    }
    return false;
  };
  for (ast::Direction dir : kQueryDirs) {
    // Name classes are per direction, over both policies' patterns.
    std::set<std::string> patterns;
    AddDomainPatterns(p.before.sources, dir, &patterns);
    AddDomainPatterns(p.after.sources, dir, &patterns);
    for (ast::Protocol proto : kQueryProtos) {
      for (uint16_t port : kPorts) {
        if (proto == ast::Protocol::kIcmp && port != kPorts[0]) continue;
        Flow f{dir, proto, port, nullptr, nullptr};
        for (const Addr& a : hosts) {
          f.addr = &a;
          f.name = nullptr;
          bool gained = false;
          ++counts->queries;
          if (!Differs(p, f, &gained)) continue;
          ++counts->differing;
          INFO("address flow " << static_cast<int>(dir) << " " << static_cast<int>(proto)
                               << " port " << port << " host #" << (&a - hosts.data()));
          CHECK(covered(f, gained, true, nullptr, false));
        }
        for (const char* n : kNames) {
          std::string name = n, cls = ClassOf(patterns, name);
          f.addr = nullptr;
          f.name = &name;
          bool gained = false;
          ++counts->queries;
          if (Differs(p, f, &gained)) {
            ++counts->differing;
            INFO("name flow " << name << " " << static_cast<int>(dir) << " "
                              << static_cast<int>(proto) << " port " << port);
            CHECK(covered(f, gained, false, &cls, false));
          }
          for (const Addr& a : hosts) {
            f.addr = &a;
            ++counts->queries;
            if (!Differs(p, f, &gained)) continue;
            ++counts->differing;
            INFO("resolved flow " << name << " host #" << (&a - hosts.data()) << " "
                                  << static_cast<int>(dir) << " " << static_cast<int>(proto)
                                  << " port " << port);
            CHECK(covered(f, gained, true, &cls, true));
          }
          f.addr = nullptr;
        }
      }
    }
  }
  for (const char* t : kUnixTargets) {
    bool b = RefUnix(p.before.sources, t), a = RefUnix(p.after.sources, t);
    ++counts->queries;
    if (a == b) continue;
    ++counts->differing;
    INFO("unix " << t);
    CHECK(std::any_of(p.net.begin(), p.net.end(), [&](const NetLineParsed& l) {
      return l.is_unix && l.unix_target == t && l.gained == a;
    }));
  }
}

// A name of a class for witnesses: the exact name, or a fresh label under a
// wildcard's suffix.
std::string ProbeOf(const std::string& cls) {
  return cls.rfind("*.", 0) == 0 ? "w" + cls.substr(1) : cls;
}

std::vector<uint16_t> PortSamples(const NetLineParsed& l) {
  if (l.proto == ast::Protocol::kIcmp) return {0};
  if (l.ports.empty()) return {1, 443, 65535};
  std::vector<uint16_t> out;
  for (auto [lo, hi] : l.ports) {
    out.push_back(static_cast<uint16_t>(lo));
    out.push_back(static_cast<uint16_t>(hi));
  }
  return out;
}

// (b) every network line holds at every sampled address and port it names.
void CheckNetworkWitnessed(const Pair& p, std::mt19937& rng) {
  for (const NetLineParsed& l : p.net) {
    if (l.is_unix) {
      bool b = RefUnix(p.before.sources, l.unix_target),
           a = RefUnix(p.after.sources, l.unix_target);
      CHECK(b != a);
      CHECK(a == l.gained);
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& cls : l.patterns) names.push_back(ProbeOf(cls));
    if (names.empty()) names.push_back("");  // an address line: no name
    std::vector<Addr> addrs;
    for (const Cidr& c : l.cidrs) {
      for (const Addr& a : Samples(c, rng)) addrs.push_back(a);
    }
    if (addrs.empty()) addrs.push_back(Addr{});  // a name line: no address
    for (const std::string& name : names) {
      for (const Addr& a : addrs) {
        for (uint16_t port : PortSamples(l)) {
          Flow f{l.dir, l.proto, port, l.cidrs.empty() ? nullptr : &a,
                 l.patterns.empty() ? nullptr : &name};
          bool gained = false;
          INFO("witness " << name << " port " << port);
          CHECK(Differs(p, f, &gained));
          CHECK(gained == l.gained);
        }
      }
    }
  }
}

void CheckFilesystem(const Pair& p, const ir::DiffResult& d, Counts* counts) {
  static constexpr std::tuple<const char*, uint8_t, size_t> kRights[] = {
      {"read", ast::kRead, 0}, {"write", ast::kWrite, 1}, {"exec", ast::kExec, 2}};
  for (auto [right_name, bit, index] : kRights) {
    std::vector<FsRuleRef> b = FsRules(p.before.sources, bit), a = FsRules(p.after.sources, bit);
    // The patterns the IRs keep (those that decide something).
    std::vector<FsRuleRef> both;
    for (const Loaded* l : {&p.before, &p.after}) {
      for (const auto& [pattern, verdict] : l->ir.filesystem.rules[index]) {
        both.push_back({pattern, verdict.allow});
      }
    }
    // The lines for this right: (gained, pattern, example).
    std::vector<std::tuple<bool, std::string, std::string>> lines;
    for (const ir::Change& c : d.changes) {
      if (c.section != ir::DiffSection::kFilesystem) continue;
      std::vector<std::string> t = Split(c.line, ' ');
      REQUIRE(t.size() >= 3);
      if (t[1] == right_name) lines.emplace_back(t[0] == "+", t[2], Expanded(c.example));
    }
    for (const char* path : kFsPaths) {
      bool before = RefPath(b, path), after = RefPath(a, path);
      ++counts->queries;
      if (before == after) continue;
      ++counts->differing;
      INFO(right_name << " " << path);
      CHECK(std::any_of(lines.begin(), lines.end(), [&](const auto& l) {
        return std::get<0>(l) == after && FsCovers(std::get<1>(l), both, path);
      }));
    }
    for (const auto& [gained, pattern, example] : lines) {
      INFO(right_name << " " << pattern << " example " << example);
      bool before = RefPath(b, example), after = RefPath(a, example);
      CHECK(before != after);
      CHECK(after == gained);
      CHECK(FsCovers(pattern, both, example));
    }
  }
}

}  // namespace

TEST_CASE("property: the diff covers every changed decision and every line is witnessed") {
  std::random_device rd;
  const uint32_t seed = std::getenv("WARD_SEED") ? std::stoul(std::getenv("WARD_SEED")) : rd();
  std::mt19937 rng(seed);
  INFO("seed " << seed << " (rerun with WARD_SEED=" << seed << ")");
  Counts counts;
  for (int round = 0, rounds = Rounds(300); round < rounds; ++round) {
    std::vector<std::string> net, fs;
    for (int i = Coin(rng, 7); i > 0; --i) net.push_back(RandomNetRule(rng));
    for (int i = Coin(rng, 7); i > 0; --i) fs.push_back(RandomFsRule(rng));
    std::string before_text = PolicyText(net, fs);
    std::string after_text =
        PolicyText(Mutate(net, rng, RandomNetRule, 6), Mutate(fs, rng, RandomFsRule, 6));
    INFO("OLD:\n" << before_text << "NEW:\n" << after_text);
    Loaded before = Load(before_text), after = Load(after_text);
    ir::DiffResult d = ir::Diff(before.ir, after.ir);
    std::string lines;
    for (const ir::Change& c : d.changes) lines += c.line + "\n";
    INFO("diff:\n" << lines);
    if (before.ir == after.ir) CHECK(d.changes.empty());
    Pair p{before, after, {}};
    for (const ir::Change& c : d.changes) {
      if (c.section == ir::DiffSection::kNetwork) p.net.push_back(ParseNetLine(c.line));
    }
    CheckNetworkCovered(p, &counts);
    CheckNetworkWitnessed(p, rng);
    CheckFilesystem(p, d, &counts);
    counts.lines += static_cast<long>(d.changes.size());
  }
  WARN(counts.queries << " queries, " << counts.differing << " differing, " << counts.lines
                      << " lines checked");
}

}  // namespace ward::test
