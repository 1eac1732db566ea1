// `ward explain --connect IP --resolve NAME=IP` (compiler/explain.h,
// EnforcerAnswer) against the eBPF enforcer's own computation: for random
// policies of exact and wildcard domain grants and address allows and denies
// around one block, and random answers of the granted names, explain's
// "nftables, ebpf" decision must be what the entry the enforcer writes for
// that address (EntryForResolved, as enforcers/linux/ebpf.cc builds it from
// the answers) allows, or, where no name resolved there, the address
// partition's decision. Each round prints its seed and policy on failure
// (WARD_SEED=N replays it).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <sstream>

#include "backends/ebpf/maps.h"
#include "compiler/explain.h"
#include "tests/backends/compile_fixture.h"
#include "tests/property_rounds.h"

namespace ward::test {
namespace {

bool Allows(const backend::ebpf::MapContents& maps, const backend::ebpf::Entry& e,
            ir::Protocol proto, uint16_t port) {
  if (proto == ir::Protocol::kIcmp) return e.icmp_allow;
  const auto& set = maps.portsets.at(proto == ir::Protocol::kTcp ? e.tcp_set : e.udp_set);
  for (const backend::ebpf::Segment& s : set) {
    if (s.lo <= port && port <= s.hi) return s.allow;
  }
  return false;
}

TEST_CASE("explain's address-based answer is the eBPF enforcer's entry for the answers") {
  const char* env = std::getenv("WARD_SEED");
  const uint64_t first = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  const int rounds = env ? 1 : Rounds(300);
  const std::vector<std::string> names = {"a.example", "b.example", "c.example", "x.wild.example"};
  const std::vector<uint16_t> ports = {22, 443, 8080};
  int allowed_by_name = 0, denied = 0;
  for (int round = 0; round < rounds; ++round) {
    const uint64_t seed = first + static_cast<uint64_t>(round);
    std::mt19937_64 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    std::ostringstream src;
    src << "policy p {\n  network {\n";
    for (size_t i = 0; i < 3; ++i) {
      if (rng() % 2) {
        src << "    allow " << (rng() % 2 ? "tcp " : "") << "to \"" << names[i] << "\" port "
            << ports[pick(ports.size())] << "\n";
      }
    }
    if (rng() % 2) src << "    allow tcp to \"*.wild.example\" port 443\n";
    const int rules = static_cast<int>(pick(4));
    for (int r = 0; r < rules; ++r) {
      src << "    " << (rng() % 2 ? "allow" : "deny") << " tcp to 10.200.0." << pick(4) * 64 << "/"
          << 26 + pick(7) << " port " << ports[pick(ports.size())] << "\n";
    }
    src << "  }\n}\n";
    auto front = CheckSource(src.str());
    INFO("seed " << seed << " (WARD_SEED=" << seed << ")\n" << src.str() << front->text);
    REQUIRE_FALSE(front->sink.has_errors());
    const ast::File* f = front->program.file(front->program.roots.at(0));
    DiagnosticSink sink;
    ir::Policy policy = ir::Lower(front->program, f->policies.back(), sink);
    backend::ebpf::MapContents maps;
    REQUIRE(backend::ebpf::BuildMaps(policy.network, &maps, sink));

    for (int q = 0; q < 8; ++q) {
      const std::string ip = "10.200.0." + std::to_string(pick(256));
      ir::FlowQuery query;
      query.protocol = rng() % 4 ? ir::Protocol::kTcp : ir::Protocol::kUdp;
      query.host = ip;
      query.port = ports[pick(ports.size())];
      ir::NetDecision names_allow;
      bool any_here = false;
      for (const std::string& n : names) {
        if (rng() % 2 == 0) continue;
        const bool here = rng() % 2;
        query.resolve[n] = here ? ip : "10.200.1.1";
        if (!here) continue;
        auto it = policy.network.egress_domains.find(n);
        if (it == policy.network.egress_domains.end()) continue;  // wildcard or not granted
        names_allow = names_allow.Union(it->second.allow);
        any_here = true;
      }
      std::string error;
      auto e = ir::ExplainFlow(policy, query, &error);
      REQUIRE(e);
      auto addr = ParseIpOrCidr(ip, &error);
      REQUIRE(addr);
      bool enforcer =
          policy.network.Decide(ir::Direction::kEgress, query.protocol, *addr, query.port);
      if (any_here) {
        backend::ebpf::Entry entry;
        REQUIRE(backend::ebpf::EntryForResolved(policy.network, *addr, names_allow, &maps, &entry));
        enforcer = Allows(maps, entry, query.protocol, query.port);
      }
      std::string said = "allow";
      bool listed = false;
      for (const ir::EnforcerAnswer& a : e->enforcers) {
        if (a.enforcers.rfind("nftables, ebpf", 0) == 0) {
          said = a.decision;
          listed = true;
        }
      }
      // No name resolved to the address: explain answers by the address
      // rules alone, which is what the enforcer's exact and LPM maps hold.
      if (!listed) said = e->decision;
      INFO("query " << e->query << " resolve-here " << any_here);
      CHECK(said == (enforcer ? "allow" : "deny"));
      allowed_by_name += any_here && enforcer && e->decision == "deny";
      denied += !enforcer;
    }
  }
  // Positive control: the rounds reach both the case item 10 is about (the
  // address rules deny, a name's answer allows) and denials.
  if (rounds >= 100) {
    CHECK(allowed_by_name > 0);
    CHECK(denied > 0);
  }
}

}  // namespace
}  // namespace ward::test
