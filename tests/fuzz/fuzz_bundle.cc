// libFuzzer target for what wardd reads from a caller before it touches
// anything (enforcers/agent/service.cc, ParseBundle): one input is read as
// a bundle's IR (ir::FromJson), as its manifest (backend::ReadManifest),
// and as an agent's endpoints file (ir::EndpointsFromJson). Beyond the
// sanitizers: an IR that is accepted writes back to JSON that reads back
// equal, the agent guard applies to it, and the two network backends wardd
// renders with (nftables, ebpf) compile it or refuse it with a message;
// an accepted endpoints file reads back equal. The same input is read as
// an audit log, line by line, by the record layout `ward audit verify`
// reads (audit_record.h: every field it finds lies inside its line), and as
// pull mode's bundle and tombstone files (bundle_file.h: an accepted file
// writes back to bytes that read back equal).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include <google/protobuf/util/message_differencer.h>

#include <string_view>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "compiler/agent_guard.h"
#include "compiler/ir_json.h"
#include "enforcers/agent/audit_record.h"
#include "enforcers/agent/bundle_file.h"

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

bool Inside(std::string_view part, std::string_view line) {
  return part.empty() ||
         (part.data() >= line.data() && part.data() + part.size() <= line.data() + line.size());
}

void CheckAuditLines(const std::string& input) {
  static ward::audit::LineHasher hasher;
  size_t at = 0;
  while (at < input.size()) {
    size_t end = input.find('\n', at);
    if (end == std::string::npos) end = input.size();
    const std::string_view line(input.data() + at, end - at);
    at = end + 1;
    ward::audit::RecordView v;
    std::string error;
    const ward::audit::ParseResult r = ward::audit::ParseRecord(line, &v, &error);
    if (r != ward::audit::ParseResult::kOk) {
      if (error.empty()) Fail("a line refused without a reason", std::string(line));
      continue;
    }
    for (std::string_view part : {v.time, v.prev, v.hash, v.head, v.key_id, v.sig}) {
      if (!Inside(part, line)) Fail("a record field outside its line", std::string(line));
    }
    if (line.size() > ward::audit::kHashSuffixSize && hasher.Hash(line).size() != 64) {
      Fail("a record's hash not computed", std::string(line));
    }
  }
}

template <typename Message, typename Parse, typename Write>
void CheckPullFile(const std::string& input, Parse parse, Write write, const char* what) {
  Message m, back;
  std::string error, bytes;
  if (!parse(input, &m, &error)) {
    if (error.empty()) Fail("a pulled file refused without a reason", input);
    return;
  }
  if (!write(m, &bytes, &error)) Fail("an accepted pulled file does not write back", input);
  if (!parse(bytes, &back, &error) ||
      !google::protobuf::util::MessageDifferencer::Equals(m, back)) {
    Fail(what, input + "\n" + bytes);
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
  CheckAuditLines(input);
  namespace agent = ward::agent;
  CheckPullFile<agent::v1::Bundle>(input, agent::ParseBundleFile, agent::WriteBundleFile,
                                   "a bundle file reads back different");
  CheckPullFile<agent::v1::RemoveRequest>(input, agent::ParseRemoveFile, agent::WriteRemoveFile,
                                          "a tombstone file reads back different");
  return 0;
}
