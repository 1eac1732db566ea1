// libFuzzer target for what wardd reads from a caller before it touches
// anything (enforcers/agent/service.cc, ParseBundle): one input is read as
// a bundle's IR (ir::FromJson), as its manifest (backend::ReadManifest),
// and as an agent's endpoints file (ir::EndpointsFromJson). Beyond the
// sanitizers: an IR that is accepted writes back to JSON that reads back
// equal, the agent guard applies to it, and the two network backends wardd
// renders with (nftables, ebpf) compile it or refuse it with a message;
// an accepted endpoints file reads back equal.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "compiler/agent_guard.h"
#include "compiler/ir_json.h"

namespace {

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ward_fuzz_bundle: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void CheckIr(const std::string& input, const nlohmann::json& j) {
  std::string error;
  std::optional<ward::ir::Policy> ir = ward::ir::FromJson(j, &error);
  if (!ir) {
    if (error.empty()) Fail("an IR refused without a reason", input);
    return;
  }
  ward::SourceManager sources;
  const std::string again = ward::ir::ToJson(*ir, sources).dump();
  std::optional<ward::ir::Policy> back = ward::ir::FromJson(nlohmann::json::parse(again), &error);
  if (!back) Fail("an accepted IR does not read back", input + "\n" + again + "\n" + error);
  if (!(*back == *ir)) Fail("an accepted IR reads back different", input + "\n" + again);
  ward::ir::AgentEndpoints endpoints = ward::ir::DefaultAgentEndpoints();
  endpoints.tcp.push_back({"0.0.0.0", 7443});
  if (!ward::ir::GuardAgentEndpoints(&*ir, endpoints, &error)) Fail("the guard refused", input);
  for (const char* name : {"nftables", "ebpf"}) {
    const ward::backend::Backend* b = ward::backend::FindBackend(name);
    if (!b) continue;
    ward::DiagnosticSink sink;
    ward::backend::Result r = b->Compile(*ir, {}, sink);
    if (!r.ok && !sink.has_errors()) Fail("a backend failed without an error", input);
    for (const ward::Diagnostic& d : sink.diagnostics()) {
      if (d.message.empty()) Fail("a diagnostic without a message", input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) CheckIr(input, j);
  std::string error;
  (void)ward::backend::ReadManifest(input, &error);
  if (auto e = ward::ir::EndpointsFromJson(input, &error)) {
    auto back = ward::ir::EndpointsFromJson(ward::ir::EndpointsToJson(*e), &error);
    if (!back || !(*back == *e)) Fail("an endpoints file reads back different", input);
  }
  return 0;
}
