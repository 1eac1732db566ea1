// What the agent's service tests share (agent_test.cc, signed_test.cc):
// the bundles they send, compiled here with the nftables backend.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "backends/bundle.h"
#include "backends/nftables/nftables_backend.h"
#include "tests/backends/compile_fixture.h"
#include "ward/agent/v1/agent.pb.h"

namespace ward::test {

// The uid scope every test bundle is applied to by default.
inline constexpr uint32_t kUid = 4242;

// `source` compiled with the nftables backend into the bundle `ward push`
// sends, for the uid scope (or the cgroup `cgroup`), applied by `enforcer`.
inline agent::v1::Bundle MakeBundle(const std::string& source, const std::string& cgroup = "",
                                    const std::string& enforcer = "nftables") {
  auto c = CompileWith(backend::NftablesBackend(), source);
  DiagnosticSink sink;
  backend::Bundle b;
  REQUIRE(backend::CompileBundle(c->ir, c->front->sources, {&backend::NftablesBackend()}, false, {},
                                 sink, &b));
  agent::v1::Bundle out;
  out.set_policy(b.policy);
  out.set_ir_json(b.ir_json);
  out.set_manifest(b.manifest);
  for (const backend::BundleArtifact& a : b.artifacts) {
    agent::v1::Artifact* x = out.add_artifacts();
    x->set_path(a.path);
    x->set_target(a.target);
    x->set_bytes(a.bytes);
  }
  if (cgroup.empty()) {
    out.mutable_scope()->set_uid(kUid);
  } else {
    out.mutable_scope()->set_cgroup(cgroup);
  }
  out.set_enforcer(enforcer);
  out.set_sha256(backend::BundleHash(b, cgroup.empty() ? "uid" : "cgroup",
                                     cgroup.empty() ? std::to_string(kUid) : cgroup, enforcer));
  return out;
}

}  // namespace ward::test
