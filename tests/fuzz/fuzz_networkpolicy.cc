// libFuzzer target for the NetworkPolicy importer (importers/networkpolicy/):
// one input is one policy file, imported for pod app/db-0 of a small fixed
// cluster; an input that holds a line `#CLUSTER` brings its own snapshot
// after it (the fixed one then is not used), so that the snapshot reader is
// fuzzed too. Held to the promises of import_promises.h.
#include <cstdint>
#include <string>

#include "importers/networkpolicy/networkpolicy.h"
#include "tests/fuzz/import_promises.h"

namespace {

const char* const kCluster = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"kind": "Namespace", "metadata": {"name": "app", "labels": {"team": "a"}}},
  {"kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "b"}}},
  {"kind": "Pod", "metadata": {"name": "db-0", "namespace": "app", "labels": {"role": "db"}},
   "spec": {"containers": [{"ports": [{"name": "pg", "containerPort": 5432},
                                      {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}]},
   "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]}},
  {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "app", "labels": {"role": "web"}},
   "status": {"phase": "Running", "podIP": "10.0.0.6"}},
  {"kind": "Pod", "metadata": {"name": "client", "namespace": "other", "labels": {"role": "web"}},
   "spec": {"containers": [{"ports": [{"name": "http", "containerPort": 8080}]}]},
   "status": {"phase": "Running", "podIP": "10.0.1.8"}}]})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  ward::importers::ImportOptions options;
  options.name = "fuzzed";
  options.from = "networkpolicy";
  options.path = "np.yaml";
  options.pod = "app/db-0";
  options.cluster = {"cluster.json", kCluster};
  const size_t split = input.find("\n#CLUSTER\n");
  if (split != std::string::npos) {
    options.cluster.text = input.substr(split + 10);
    input.resize(split);
  }
  ward::fuzz::CheckImportPromises("ward_fuzz_networkpolicy", input, options,
                                  ward::importers::ImportNetworkPolicy, WARD_FUZZ_STD_DIR);
  return 0;
}
