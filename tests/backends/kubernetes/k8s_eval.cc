#include "tests/backends/kubernetes/k8s_eval.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "compiler/ip.h"

namespace ward::test {
namespace {

using nlohmann::json;

json FromYaml(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = FromYaml(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(FromYaml(item));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      static const std::regex integer("^-?[0-9]+$");
      if (std::regex_match(s, integer)) return std::stoll(s);
      return s;
    }
    default:
      return nullptr;
  }
}

// The query's address, IPv4-mapped IPv6 folded to IPv4.
IpPrefix Folded(const IpPrefix& a) {
  if (!a.v6) return a;
  const ir::V6 v = ir::V6Range(a).lo;
  if (!ir::IsMapped(v)) return a;
  IpPrefix p;
  p.v6 = false;
  p.length = 32;
  for (int i = 0; i < 4; ++i) p.bytes[i] = a.bytes[12 + i];
  return p;
}

bool InCidr(const std::string& cidr, const IpPrefix& a) {
  std::string error;
  const auto p = ParseIpOrCidr(cidr, &error);
  REQUIRE(p.has_value());
  if (p->v6 != a.v6) return false;
  if (!a.v6) {
    const auto r = ir::V4Range(*p);
    const ir::V4 x = ir::V4Range(a).lo;
    return r.lo <= x && x <= r.hi;
  }
  const auto r = ir::V6Range(*p);
  const ir::V6 x = ir::V6Range(a).lo;
  return r.lo <= x && x <= r.hi;
}

// cidr minus except (NetworkPolicy ipBlock and Cilium CIDRRule alike).
bool InBlock(const json& block, const IpPrefix& a) {
  REQUIRE(block.contains("cidr"));
  if (!InCidr(block["cidr"].get<std::string>(), a)) return false;
  if (block.contains("except")) {
    for (const json& e : block["except"]) {
      if (InCidr(e.get<std::string>(), a)) return false;
    }
  }
  return true;
}

bool Selects(const json& match_labels, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : match_labels.items()) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v.get<std::string>()) return false;
  }
  return true;
}

const char* ProtoName(ir::Protocol p) {
  return p == ir::Protocol::kTcp ? "TCP" : p == ir::Protocol::kUdp ? "UDP" : "ICMP";
}

int PortNumber(const json& port) {
  if (port.is_number_integer()) return port.get<int>();
  const std::string s = port.get<std::string>();
  REQUIRE(std::regex_match(s, std::regex("^[0-9]+$")));  // named ports are never emitted
  return std::stoi(s);
}

// A port entry (NetworkPolicyPort or Cilium PortProtocol) matching the query.
bool PortMatches(const json& entry, const Query& q, const char* default_protocol) {
  if (q.proto == ir::Protocol::kIcmp) return false;
  const std::string proto =
      entry.contains("protocol") ? entry["protocol"].get<std::string>() : default_protocol;
  if (proto != "ANY" && proto != ProtoName(q.proto)) return false;
  if (!entry.contains("port")) return true;
  const int lo = PortNumber(entry["port"]);
  if (lo == 0 && !entry.contains("endPort")) return true;  // Cilium: port 0 is every port
  const int hi = entry.contains("endPort") ? entry["endPort"].get<int>() : lo;
  return lo <= q.port && q.port <= hi;
}

std::string Address(Rng& rng, int family) {
  std::uniform_int_distribution<int> d(0, 255);
  if (family == 0) {
    return "10.200." + std::to_string(d(rng) % 4) + "." + std::to_string(d(rng));
  }
  if (family == 1) {
    std::ostringstream s;
    s << "fd00:200::" << std::hex << (d(rng) * 4 + d(rng) % 4);
    return s.str();
  }
  // Anywhere else, never loopback (outside any network policy).
  if (family == 2) {
    int first = d(rng);
    if (first == 127 || first == 10) first = 11;
    return std::to_string(first) + "." + std::to_string(d(rng)) + "." + std::to_string(d(rng)) +
           "." + std::to_string(d(rng));
  }
  std::ostringstream s;
  s << std::hex << (0x2000 + d(rng)) << ":" << d(rng) << "::" << d(rng);
  return s.str();
}

const uint16_t kPorts[] = {22, 53, 80, 443, 1000, 1001, 5000, 8080, 65535};

std::string Ports(Rng& rng) {
  std::uniform_int_distribution<int> d(0, static_cast<int>(std::size(kPorts)) - 1);
  std::string out;
  const int n = 1 + d(rng) % 3;
  for (int i = 0; i < n; ++i) {
    const int a = d(rng);
    std::string p = std::to_string(kPorts[a]);
    const int b = d(rng);
    if (b > a && d(rng) % 2 == 0) p += "-" + std::to_string(kPorts[b]);
    out += (i ? ", " : "") + p;
  }
  return out;
}

}  // namespace

std::vector<json> ReadYamlStream(const std::string& text) {
  std::vector<json> out;
  for (const YAML::Node& n : YAML::LoadAll(text)) out.push_back(FromYaml(n));
  return out;
}

std::string Describe(const Query& q) {
  std::string addr;
  if (!q.addr.v6) {
    addr = ir::FormatV4(ir::V4Range(q.addr).lo);
  } else {
    addr = ir::FormatV6(ir::V6Range(q.addr).lo);
  }
  return std::string(q.dir == ir::Direction::kEgress ? "egress " : "ingress ") +
         ir::ProtocolName(q.proto) + " " + addr + " port " + std::to_string(q.port);
}

bool NetworkPolicyAllows(const std::vector<json>& policies,
                         const std::map<std::string, std::string>& pod_labels, const Query& q0) {
  Query q = q0;
  q.addr = Folded(q0.addr);
  const bool egress = q.dir == ir::Direction::kEgress;
  const char* type = egress ? "Egress" : "Ingress";
  const char* rules_key = egress ? "egress" : "ingress";
  const char* peers_key = egress ? "to" : "from";
  bool isolated = false;
  for (const json& np : policies) {
    REQUIRE(np["kind"] == "NetworkPolicy");
    const json& spec = np["spec"];
    REQUIRE_FALSE(spec["podSelector"].contains("matchExpressions"));
    const json labels = spec["podSelector"].value("matchLabels", json::object());
    if (!Selects(labels, pod_labels)) continue;
    json types = spec.value("policyTypes", json::array());
    if (!spec.contains("policyTypes")) {
      types.push_back("Ingress");
      if (spec.contains("egress")) types.push_back("Egress");
    }
    if (std::find(types.begin(), types.end(), type) == types.end()) continue;
    isolated = true;
    if (!spec.contains(rules_key)) continue;
    for (const json& rule : spec[rules_key]) {
      bool peer = !rule.contains(peers_key) || rule[peers_key].empty();
      if (!peer) {
        for (const json& p : rule[peers_key]) {
          REQUIRE(p.contains("ipBlock"));  // pod and namespace selectors are never emitted
          peer = peer || InBlock(p["ipBlock"], q.addr);
        }
      }
      if (!peer) continue;
      if (!rule.contains("ports") || rule["ports"].empty()) return true;
      for (const json& entry : rule["ports"]) {
        if (PortMatches(entry, q, "TCP")) return true;
      }
    }
  }
  return !isolated;
}

namespace {

bool FqdnMatches(const json& selector, const std::string& name) {
  if (selector.contains("matchName")) return selector["matchName"].get<std::string>() == name;
  std::string re;
  for (char ch : selector["matchPattern"].get<std::string>()) {
    if (ch == '*') {
      re += "[-a-zA-Z0-9_]*";
    } else if (ch == '.') {
      re += "\\.";
    } else {
      re += ch;
    }
  }
  return std::regex_match(name, std::regex(re, std::regex::icase));
}

}  // namespace

bool CiliumAllowsName(const json& cnp, const std::map<std::string, std::string>& pod_labels,
                      const Query& q, const std::string& name) {
  REQUIRE(q.dir == ir::Direction::kEgress);
  if (CiliumAllows(cnp, pod_labels, q)) return true;
  const json& spec = cnp["spec"];
  if (!spec.contains("egress") || q.proto == ir::Protocol::kIcmp) return false;
  // Deny rules hold against names too.
  if (spec.contains("egressDeny")) {
    json only_deny = cnp;
    only_deny["spec"].erase("egress");
    only_deny["spec"]["egress"] =
        json::parse(R"([{"toCIDRSet": [{"cidr": "0.0.0.0/0"}, {"cidr": "::/0"}]}])");
    if (!CiliumAllows(only_deny, pod_labels, q)) return false;
  }
  bool looked_up = false, allowed = false;
  for (const json& rule : spec["egress"]) {
    if (rule.contains("toPorts")) {
      for (const json& pr : rule["toPorts"]) {
        if (pr.contains("rules") && pr["rules"].contains("dns")) {
          for (const json& sel : pr["rules"]["dns"])
            looked_up = looked_up || FqdnMatches(sel, name);
        }
      }
    }
    if (!rule.contains("toFQDNs")) continue;
    bool match = false;
    for (const json& sel : rule["toFQDNs"]) match = match || FqdnMatches(sel, name);
    if (!match) continue;
    for (const json& pr : rule["toPorts"]) {
      for (const json& entry : pr["ports"]) allowed = allowed || PortMatches(entry, q, "ANY");
    }
  }
  return allowed && looked_up;
}

bool CiliumAllows(const json& cnp, const std::map<std::string, std::string>& pod_labels,
                  const Query& q0) {
  Query q = q0;
  q.addr = Folded(q0.addr);
  REQUIRE(cnp["kind"] == "CiliumNetworkPolicy");
  const json& spec = cnp["spec"];
  if (!Selects(spec["endpointSelector"].value("matchLabels", json::object()), pod_labels)) {
    return true;
  }
  const bool egress = q.dir == ir::Direction::kEgress;
  const char* cidr_key = egress ? "toCIDRSet" : "fromCIDRSet";
  auto matches = [&](const json& rule) {
    if (!rule.contains(cidr_key)) return false;  // toFQDNs, toEndpoints: not an address match
    bool peer = false;
    for (const json& b : rule[cidr_key]) peer = peer || InBlock(b, q.addr);
    if (!peer) return false;
    if (q.proto == ir::Protocol::kIcmp) return false;  // only `icmps` rules match ICMP
    if (!rule.contains("toPorts")) return true;
    for (const json& pr : rule["toPorts"]) {
      for (const json& entry : pr["ports"]) {
        if (PortMatches(entry, q, "ANY")) return true;
      }
    }
    return false;
  };
  const char* deny_key = egress ? "egressDeny" : "ingressDeny";
  if (spec.contains(deny_key)) {
    for (const json& rule : spec[deny_key]) {
      if (matches(rule)) return false;
    }
  }
  const char* allow_key = egress ? "egress" : "ingress";
  if (spec.contains(allow_key)) {
    for (const json& rule : spec[allow_key]) {
      if (matches(rule)) return true;
    }
  }
  const bool default_deny = spec.contains("enableDefaultDeny")
                                ? spec["enableDefaultDeny"].value(allow_key, false)
                                : spec.contains(allow_key) || spec.contains(deny_key);
  return !default_deny;
}

std::string SchemaDir() { return std::string(WARD_SOURCE_DIR) + "/../shared/schemas"; }

int ValidateAgainst(const std::string& schema, const std::vector<json>& docs, std::string* output) {
  static int counter = 0;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ward-k8s-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::string files;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string path = (dir / (std::to_string(i) + ".json")).string();
    std::ofstream(path) << docs[i].dump(2);
    files += " " + path;
  }
  const std::string cmd = "python3 " + std::string(WARD_SOURCE_DIR) +
                          "/tests/backends/validate_json.py --schema " + schema + files + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (output) *output = out;
  std::filesystem::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string CiliumSchemaPath() {
  static const std::string path = [] {
    const YAML::Node crd =
        YAML::LoadFile(SchemaDir() + "/cilium-v1.16.5-ciliumnetworkpolicies.yaml");
    const json schema = FromYaml(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]);
    const std::string p = (std::filesystem::temp_directory_path() /
                           ("ward-cilium-schema-" + std::to_string(getpid()) + ".json"))
                              .string();
    std::ofstream(p) << schema.dump();
    return p;
  }();
  return path;
}

std::string RandomPolicy(Rng& rng, bool domains) {
  std::uniform_int_distribution<int> d(0, 99);
  std::string s = "policy random {\n  network {\n";
  const int rules = 1 + d(rng) % 9;
  for (int i = 0; i < rules; ++i) {
    const bool allow = d(rng) % 3 != 0;
    const bool ingress = d(rng) % 3 == 0;
    const int peer = d(rng) % 12;
    const bool domain = domains && allow && !ingress && peer >= 10;
    const int proto = d(rng) % 4;
    s += allow ? "    allow" : "    deny";
    if (ingress) s += " ingress";
    s += proto == 0 ? " tcp" : proto == 1 ? " udp" : proto == 2 ? "" : " icmp";
    s += ingress ? " from " : " to ";
    if (domain) {
      s += d(rng) % 2 ? "\"example.com\"" : "\"*.example.org\"";
    } else if (peer == 0) {
      s += "any";
    } else if (peer == 1) {
      s += "::ffff:" + Address(rng, 0) + "/" + std::to_string(118 + d(rng) % 11);
    } else if (peer <= 6) {
      const int len = d(rng) % 6 == 0 ? 16 : 22 + d(rng) % 11;
      s += Address(rng, 0) + "/" + std::to_string(len);
    } else if (peer == 7) {
      s += Address(rng, 2) + "/" + std::to_string(d(rng) % 33);
    } else {
      s += Address(rng, 1) + "/" + std::to_string(118 + d(rng) % 11);
    }
    if (proto != 3 && d(rng) % 3 != 0) s += " ports " + Ports(rng);
    s += "\n";
  }
  return s + "  }\n}\n";
}

Query RandomQuery(Rng& rng) {
  std::uniform_int_distribution<int> d(0, 99);
  Query q;
  q.dir = d(rng) % 3 == 0 ? ir::Direction::kIngress : ir::Direction::kEgress;
  const int proto = d(rng) % 10;
  q.proto = proto < 5 ? ir::Protocol::kTcp : proto < 9 ? ir::Protocol::kUdp : ir::Protocol::kIcmp;
  const int family = d(rng) % 10;
  std::string addr;
  if (family < 4) {
    addr = Address(rng, 0);
  } else if (family < 7) {
    addr = Address(rng, 1);
  } else if (family == 7) {
    addr = "::ffff:" + Address(rng, 0);
  } else if (family == 8) {
    addr = d(rng) % 2 ? Address(rng, 2) : "64:ff9b::" + Address(rng, 0);  // NAT64 form
  } else {
    addr = Address(rng, 3);
  }
  std::string error;
  auto p = ParseIpOrCidr(addr, &error);
  REQUIRE(p.has_value());
  q.addr = *p;
  if (q.proto != ir::Protocol::kIcmp) {
    q.port = d(rng) % 4 == 0 ? static_cast<uint16_t>(1 + (rng() % 65535))
                             : kPorts[d(rng) % std::size(kPorts)];
    if (d(rng) % 5 == 0 && q.port < 65535) ++q.port;  // just past a rule's edge
  }
  return q;
}

uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("WARD_SEED");
    const uint64_t s =
        env ? std::strtoull(env, nullptr, 10)
            : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count() %
                                    1000000007);
    std::cout << "seed " << s << " (WARD_SEED=" << s << " replays it)\n";
    return s;
  }();
  return seed;
}

}  // namespace ward::test
