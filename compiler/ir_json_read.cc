// Reads `ward ir` JSON back into an ir::Policy: the agent receives the IR in
// a bundle. Lossless for the canonical form (FromJson(ToJson(p)) == p);
// provenance is not carried back (spans need the sources). The input is
// untrusted: every field is type-checked, every structural invariant the
// backends rely on (sorted disjoint address pieces, disjoint covering
// syscall regions, masks within width) is verified, and anything else is an
// error naming the field.
#include <algorithm>
#include <charconv>

#include "compiler/fs_names.h"
#include "compiler/ir_json.h"

namespace ward::ir {
namespace {

using nlohmann::json;

struct Bad {
  std::string what;
};

const json& Field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw Bad{where + "." + key + ": missing"};
  return j.at(key);
}

std::string String(const json& j, const std::string& where) {
  if (!j.is_string()) throw Bad{where + ": not a string"};
  return j.get<std::string>();
}

bool Bool(const json& j, const std::string& where) {
  if (!j.is_boolean()) throw Bad{where + ": not a boolean"};
  return j.get<bool>();
}

uint64_t Unsigned(const json& j, const std::string& where) {
  if (!j.is_number_unsigned()) throw Bad{where + ": not an unsigned integer"};
  return j.get<uint64_t>();
}

const json& Object(const json& j, const std::string& where) {
  if (!j.is_object()) throw Bad{where + ": not an object"};
  return j;
}

const json& Array(const json& j, const std::string& where) {
  if (!j.is_array()) throw Bad{where + ": not an array"};
  return j;
}

std::map<std::string, std::string> StringMap(const json& j, const std::string& where) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : Object(j, where).items()) out[k] = String(v, where + "." + k);
  return out;
}

uint64_t Hex(const json& j, const std::string& where) {
  std::string s = String(j, where);
  uint64_t v = 0;
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x')
    throw Bad{where + ": not 0x hex"};
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) throw Bad{where + ": not 0x hex"};
  return v;
}

PortSet Ports(const json& j, const std::string& where) {
  std::string s = String(j, where);
  std::vector<std::pair<uint16_t, uint16_t>> ranges;
  size_t pos = 0;
  while (!s.empty() && pos <= s.size()) {
    size_t comma = std::min(s.find(',', pos), s.size());
    std::string error;
    std::optional<PortRange> r = ParsePortRange(s.substr(pos, comma - pos), &error);
    if (!r) throw Bad{where + ": " + error};
    ranges.emplace_back(r->lo, r->hi);
    pos = comma + 1;
  }
  return PortSet(std::move(ranges));
}

NetDecision Decision(const json& j, const std::string& where) {
  NetDecision d;
  d.tcp = Ports(Field(j, "tcp", where), where + ".tcp");
  d.udp = Ports(Field(j, "udp", where), where + ".udp");
  d.icmp = Bool(Field(j, "icmp", where), where + ".icmp");
  return d;
}

template <typename A>
A Address(const json& j, bool v6, const std::string& where) {
  std::string error;
  std::optional<IpPrefix> p = ParseIpOrCidr(String(j, where), &error);
  if (!p || p->v6 != v6 || p->length != (v6 ? 128 : 32)) {
    throw Bad{where + ": not an IPv" + std::string(v6 ? "6" : "4") + " address"};
  }
  if constexpr (sizeof(A) == sizeof(V4)) {
    return V4Range(*p).lo;
  } else {
    return V6Range(*p).lo;
  }
}

// The listed pieces plus the default pieces between them (ToJson leaves
// those out), adjacent equal pieces merged: the partition of the whole space.
template <typename A>
std::vector<Piece<A>> Pieces(const json& j, bool v6, const std::string& where) {
  std::vector<Piece<A>> listed;
  size_t i = 0;
  for (const json& e : Array(j, where)) {
    std::string w = where + "[" + std::to_string(i++) + "]";
    Piece<A> p;
    p.range.lo = Address<A>(Field(e, "from", w), v6, w + ".from");
    p.range.hi = Address<A>(Field(e, "to", w), v6, w + ".to");
    p.decision = Decision(Field(e, "allow", w), w + ".allow");
    if (e.contains("denied")) p.denied = Decision(e.at("denied"), w + ".denied");
    if (p.range.hi < p.range.lo) throw Bad{w + ": from is after to"};
    if (!listed.empty() && p.range.lo <= listed.back().range.hi) {
      throw Bad{w + ": pieces overlap or are not in address order"};
    }
    listed.push_back(std::move(p));
  }
  std::vector<Piece<A>> out;
  auto add = [&out](Piece<A> p) {
    if (!out.empty() && out.back().decision == p.decision && out.back().denied == p.denied) {
      out.back().range.hi = p.range.hi;
    } else {
      out.push_back(std::move(p));
    }
  };
  A next = 0;
  bool done = false;  // `next` wrapped past the top of the space
  for (Piece<A>& p : listed) {
    if (p.range.lo > next) add(Piece<A>{{next, static_cast<A>(p.range.lo - 1)}, {}, {}});
    next = static_cast<A>(p.range.hi + 1);
    done = next == 0;
    add(std::move(p));
  }
  if (!done) add(Piece<A>{{next, static_cast<A>(~A{0})}, {}, {}});
  return out;
}

Partition ReadDirection(const json& j, std::map<std::string, DomainEntry>* domains,
                        const std::string& where) {
  Partition p;
  p.v4 = Pieces<V4>(Field(j, "v4", where), false, where + ".v4");
  p.v6 = Pieces<V6>(Field(j, "v6", where), true, where + ".v6");
  for (const auto& [name, e] : Object(Field(j, "domains", where), where + ".domains").items()) {
    std::string w = where + ".domains." + name;
    if (NormaliseDomain(name) != name && name.rfind("*.", 0) != 0)
      throw Bad{w + ": not normalised"};
    (*domains)[name] = {Decision(Field(e, "allow", w), w + ".allow"),
                        Decision(Field(e, "deny", w), w + ".deny")};
  }
  return p;
}

std::set<std::string> StringSet(const json& j, const std::string& where) {
  std::set<std::string> out;
  for (const json& e : Array(j, where)) out.insert(String(e, where));
  return out;
}

SysAction Action(const json& j, const std::string& where) {
  std::string name = String(Field(j, "action", where), where + ".action");
  for (auto kind : {SysAction::Kind::kAllow, SysAction::Kind::kLog, SysAction::Kind::kNotify,
                    SysAction::Kind::kErrno, SysAction::Kind::kTrap, SysAction::Kind::kKillThread,
                    SysAction::Kind::kKill}) {
    if (KindName(kind) != name) continue;
    SysAction a;
    a.kind = kind;
    if (kind == SysAction::Kind::kErrno) {
      uint64_t e = Unsigned(Field(j, "errno", where), where + ".errno");
      if (e < 1 || e > 4095) throw Bad{where + ".errno: out of range"};
      a.errno_value = static_cast<int>(e);
    }
    return a;
  }
  throw Bad{where + ".action: unknown action '" + name + "'"};
}

// Pairwise disjoint, and their volumes add up to the whole input space.
void CheckCover(const std::vector<Region>& regions, const std::string& where) {
  // Most syscalls: one region, no test, the whole space.
  if (regions.size() == 1 && regions[0].tests.empty()) return;
  for (size_t a = 0; a < regions.size(); ++a) {
    for (size_t b = a + 1; b < regions.size(); ++b) {
      bool disjoint = false;
      for (const ArgTest& x : regions[a].tests) {
        for (const ArgTest& y : regions[b].tests) {
          if (x.arg == y.arg && ((x.value ^ y.value) & x.mask & y.mask) != 0) disjoint = true;
        }
      }
      if (!disjoint)
        throw Bad{where + ": regions " + std::to_string(a) + " and " + std::to_string(b) +
                  " overlap"};
    }
  }
  // Volume 2^(384 - fixed bits) per region, summed in base 2 with carries.
  std::map<int, uint64_t> counts;
  for (const Region& r : regions) {
    int fixed = 0;
    for (const ArgTest& t : r.tests) fixed += __builtin_popcountll(t.mask);
    ++counts[384 - fixed];
  }
  for (int e = 0; e < 384; ++e) {
    if (counts.count(e) == 0) continue;
    if (counts[e] % 2 != 0) throw Bad{where + ": regions do not cover every input"};
    counts[e + 1] += counts[e] / 2;
    counts.erase(e);
  }
  if (counts.size() != 1 || counts[384] != 1)
    throw Bad{where + ": regions do not cover every input"};
}

SyscallRules Syscalls(const json& j, const std::string& where) {
  SyscallRules s;
  for (const json& a : Array(Field(j, "arches", where), where + ".arches")) {
    std::optional<Arch> arch = ParseArch(String(a, where + ".arches"));
    if (!arch) throw Bad{where + ".arches: unknown architecture"};
    if (std::find(s.arches.begin(), s.arches.end(), *arch) != s.arches.end()) {
      throw Bad{where + ".arches: listed twice"};
    }
    s.arches.push_back(*arch);
  }
  s.default_action = Action(Field(j, "default", where), where + ".default");
  for (const auto& [arch_name, calls] :
       Object(Field(j, "by_arch", where), where + ".by_arch").items()) {
    std::string wa = where + ".by_arch." + arch_name;
    std::optional<Arch> arch = ParseArch(arch_name);
    if (!arch) throw Bad{wa + ": unknown architecture"};
    for (const auto& [name, regions] : Object(calls, wa).items()) {
      std::string w = wa + "." + name;
      if (!SyscallNumber(*arch, name)) throw Bad{w + ": no such syscall on " + arch_name};
      std::vector<Region>& out = s.syscalls[*arch][name];
      size_t i = 0;
      for (const json& r : Array(regions, w)) {
        std::string wr = w + "[" + std::to_string(i++) + "]";
        Region region;
        region.action = Action(r, wr);
        int last = -1;
        for (const json& t : Array(Field(r, "when", wr), wr + ".when")) {
          ArgTest test;
          uint64_t arg = Unsigned(Field(t, "arg", wr), wr + ".arg");
          if (arg > 5 || static_cast<int>(arg) <= last) {
            throw Bad{wr + ".when: args must be 0-5, ascending, once each"};
          }
          test.arg = last = static_cast<int>(arg);
          test.mask = Hex(Field(t, "mask", wr), wr + ".mask");
          test.value = Hex(Field(t, "value", wr), wr + ".value");
          if (test.mask == 0 || (test.value & ~test.mask) != 0 ||
              (ArchBits(*arch) == 32 && (test.mask >> 32) != 0)) {
            throw Bad{wr + ".when: bad mask or value"};
          }
          region.tests.push_back(test);
        }
        out.push_back(std::move(region));
      }
      if (out.empty() || out.size() > kMaxRegions) throw Bad{w + ": bad number of regions"};
      CheckCover(out, w);
    }
  }
  return s;
}

}  // namespace

std::optional<Policy> FromJson(const nlohmann::json& j, std::string* error) {
  return FromJson(j, error, /*syscalls=*/true);
}

std::optional<NetDecision> DecisionFromJson(const nlohmann::json& j, std::string* error) {
  try {
    return Decision(j, "decision");
  } catch (const Bad& bad) {
    *error = bad.what;
  } catch (const nlohmann::json::exception& e) {
    *error = e.what();
  }
  return std::nullopt;
}

std::optional<Policy> FromJson(const nlohmann::json& j, std::string* error, bool syscalls) {
  try {
    const std::string w = "ir";
    if (Unsigned(Field(j, "version", w), "version") != kIrJsonVersion) {
      *error = "version: this ward reads version " + std::to_string(kIrJsonVersion);
      return std::nullopt;
    }
    Policy p;
    p.name = String(Field(j, "policy", w), "policy");
    p.metadata.description = String(Field(j, "description", w), "description");
    p.metadata.labels = StringMap(Field(j, "labels", w), "labels");

    const json& fs = Object(Field(j, "filesystem", w), "filesystem");
    for (FsRight right : kFsRights) {
      const size_t r = static_cast<size_t>(right);
      std::string wr = std::string("filesystem.") + FsRightName(right);
      for (const json& e : Array(Field(fs, FsRightName(right), "filesystem"), wr)) {
        std::string pattern = String(Field(e, "pattern", wr), wr + ".pattern");
        std::string verdict = String(Field(e, "verdict", wr), wr + ".verdict");
        if (pattern.empty() || (pattern[0] != '/' && pattern[0] != '~')) {
          throw Bad{wr + ".pattern: not an absolute or ~ pattern"};
        }
        if (verdict != "allow" && verdict != "deny") throw Bad{wr + ".verdict: allow or deny"};
        p.filesystem.rules[r][pattern].allow = verdict == "allow";
      }
    }
    p.filesystem.BuildIndex();

    const json& net = Object(Field(j, "network", w), "network");
    p.network.egress =
        ReadDirection(Field(net, "egress", "network"), &p.network.egress_domains, "network.egress");
    p.network.ingress = ReadDirection(Field(net, "ingress", "network"), &p.network.ingress_domains,
                                      "network.ingress");
    const json& unix = Field(net, "unix", "network");
    p.network.unix_paths = StringSet(Field(unix, "paths", "network.unix"), "network.unix.paths");
    p.network.unix_abstract =
        StringSet(Field(unix, "abstract", "network.unix"), "network.unix.abstract");
    // Absent (an IR written before netlink grants): nothing granted.
    if (net.contains("netlink")) {
      p.network.netlink = StringSet(net.at("netlink"), "network.netlink");
      for (const std::string& protocol : p.network.netlink) {
        if (protocol != "route") throw Bad{"network.netlink: only \"route\" can be granted"};
      }
    }
    p.network.BuildIndex();

    if (syscalls) {
      p.syscalls = Syscalls(Field(j, "syscalls", w), "syscalls");
    } else if (j.contains("syscalls")) {
      throw Bad{"syscalls: not expected here"};
    }

    const json& proc = Object(Field(j, "process", w), "process");
    p.process.no_new_privileges =
        Bool(Field(proc, "no_new_privileges", "process"), "process.no_new_privileges");
    p.process.capabilities_kept =
        StringSet(Field(proc, "capabilities_kept", "process"), "process.capabilities_kept");
    const json& user = Field(proc, "user", "process");
    if (!user.is_null()) {
      uint64_t uid = Unsigned(Field(user, "uid", "process.user"), "process.user.uid");
      uint64_t gid = Unsigned(Field(user, "gid", "process.user"), "process.user.gid");
      if (uid > UINT32_MAX || gid > UINT32_MAX) throw Bad{"process.user: out of range"};
      p.process.user = {static_cast<uint32_t>(uid), static_cast<uint32_t>(gid)};
    }
    p.process.env_allowed = StringSet(Field(proc, "env_allowed", "process"), "process.env_allowed");

    for (const auto& [key, v] : Object(Field(j, "limits", w), "limits").items()) {
      p.limits[key].value = Unsigned(v, "limits." + key);
    }
    for (const auto& [name, settings] : Object(Field(j, "targets", w), "targets").items()) {
      auto& target = p.targets[name];
      for (const auto& [key, s] : Object(settings, "targets." + name).items()) {
        std::string ws = "targets." + name + "." + key;
        TargetSetting& t = target[key];
        if (s.contains("labels")) {
          t.labels = StringMap(s.at("labels"), ws + ".labels");
        } else {
          t.value = String(Field(s, "value", ws), ws + ".value");
        }
        if (s.contains("flags")) {
          for (const json& f : Array(s.at("flags"), ws + ".flags")) {
            t.flags.push_back(String(f, ws + ".flags"));
          }
        }
      }
    }
    return p;
  } catch (const Bad& b) {
    *error = b.what;
  } catch (const nlohmann::json::exception& e) {
    *error = e.what();
  }
  return std::nullopt;
}

}  // namespace ward::ir
