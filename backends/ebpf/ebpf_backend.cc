#include "backends/ebpf/ebpf_backend.h"

#include "backends/ebpf/maps.h"

namespace ward::backend {
namespace {

class Ebpf final : public Backend {
 public:
  std::string_view name() const override { return "ebpf"; }
  std::string_view description() const override {
    return "cgroup BPF programs (connect, sendmsg, bind, socket, egress and ingress packets) "
           "and their maps: network egress and ingress by address and port, unix sockets by "
           "name";
  }
  std::vector<Section> covers() const override { return {Section::kNetwork}; }

  Result Compile(const ir::Policy& policy, const Options&, DiagnosticSink& sink) const override {
    Result result;
    ebpf::MapContents maps;
    if (!ebpf::BuildMaps(policy.network, &maps, sink)) return result;
    Warn(policy.network, sink);
    result.artifacts.push_back({policy.name + ".ebpf.json", ebpf::MapsToJson(policy.name, maps)});
    result.enforced.push_back(Section::kNetwork);
    result.ok = true;
    return result;
  }

 private:
  // What the program set leaves to other targets, at the rules concerned.
  static void Warn(const ir::NetRules& net, DiagnosticSink& sink) {
    for (const ir::FlatRule& f : net.rules) {
      const bool domain =
          f.peer.kind == ast::PeerKind::kDomain || f.peer.kind == ast::PeerKind::kWildcardDomain;
      if (f.allow && domain && f.direction == ir::Direction::kIngress) {
        sink.Warning(Code::kCannotExpress, f.span,
                     "ebpf does not resolve the names of ingress rules: connections from them "
                     "are denied",
                     "allow the addresses instead, or add -t nftables");
      } else if (f.allow && f.peer.kind == ast::PeerKind::kWildcardDomain) {
        sink.Warning(Code::kCannotExpress, f.span,
                     "ebpf resolves names at apply time and cannot resolve a wildcard: flows "
                     "to its names are denied");
      }
    }
    // Always: the loss concerns every policy, granting unix sockets or not.
    sink.Warning(Code::kCannotExpress,
                 net.unix_rules.empty() ? Span{} : net.unix_rules.front().span,
                 "ebpf decides unix sockets by name only (it sees no bind): a socket the "
                 "workload binds itself is refused like any other unless a rule grants it "
                 "(lost: connecting to its own sockets)",
                 "grant them by name, as `allow unix \"/path\"` or `allow unix \"@name\"`");
  }
};

}  // namespace

const Backend& EbpfBackend() {
  static const Ebpf backend;
  return backend;
}

}  // namespace ward::backend
