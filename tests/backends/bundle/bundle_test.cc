// backend::Bundle: what `ward compile` writes and `ward push` sends, the
// manifest read back and cross-checked, and the content hash wardd compares.
#include <openssl/evp.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "compiler/ir_json.h"
#include "compiler/load.h"

namespace ward::test {
namespace {

std::unique_ptr<ir::LoadedPolicy> LoadDefault() {
  ir::LoadStatus status;
  std::string error;
  auto loaded = ir::LoadPolicyFile(std::string(WARD_SOURCE_DIR) + "/policies/coding-agent.ward",
                                   std::nullopt, "", &status, &error);
  REQUIRE(status == ir::LoadStatus::kOk);
  return loaded;
}

backend::Bundle Compile(const ir::LoadedPolicy& loaded, std::vector<std::string> targets) {
  std::vector<const backend::Backend*> chosen;
  for (const backend::Backend* b : backend::AllBackends()) {
    for (const std::string& t : targets) {
      if (b->name() == t) chosen.push_back(b);
    }
  }
  REQUIRE(chosen.size() == targets.size());
  DiagnosticSink sink;
  backend::Bundle bundle;
  REQUIRE(backend::CompileBundle(loaded.ir, loaded.sources, chosen, false, {}, sink, &bundle));
  return bundle;
}

// The hash as bundle.h describes it, computed here field by field.
std::string ExpectedHash(const backend::Bundle& b, const std::string& kind,
                         const std::string& value, const std::string& enforcer) {
  std::string buf;
  auto field = [&](const std::string& f) {
    for (int i = 0; i < 8; ++i) buf += static_cast<char>((uint64_t{f.size()} >> (8 * i)) & 0xff);
    buf += f;
  };
  field("ward-bundle-v1");
  field(b.policy);
  field(b.ir_json);
  field(b.manifest);
  field(std::to_string(b.artifacts.size()));
  for (const auto& a : b.artifacts) {
    field(a.path);
    field(a.target);
    field(a.bytes);
  }
  field(kind);
  field(value);
  field(enforcer);
  return backend::Sha256(buf);
}

TEST_CASE("a compiled bundle's manifest lists its artifacts and cross-checks") {
  auto loaded = LoadDefault();
  backend::Bundle bundle = Compile(*loaded, {"nftables", "ebpf"});
  CHECK(bundle.policy == loaded->ir.name);
  CHECK(bundle.ir_json == ir::ToJson(loaded->ir, loaded->sources).dump());
  REQUIRE(bundle.artifacts.size() >= 2);
  for (size_t i = 1; i < bundle.artifacts.size(); ++i)
    CHECK(bundle.artifacts[i - 1].path < bundle.artifacts[i].path);
  std::string error;
  auto manifest = backend::ReadManifest(bundle.manifest, &error);
  REQUIRE(manifest);
  CHECK(manifest->policy == bundle.policy);
  CHECK(manifest->targets == std::vector<std::string>{"nftables", "ebpf"});
  CHECK(manifest->coverage["network"] == std::vector<std::string>{"nftables", "ebpf"});
  CHECK(manifest->coverage["syscalls"].empty());
  CHECK(backend::CrossCheck(bundle, &error));

  // Same policy, same bytes.
  backend::Bundle again = Compile(*loaded, {"nftables", "ebpf"});
  CHECK(again.manifest == bundle.manifest);
  CHECK(again.ir_json == bundle.ir_json);

  SECTION("an artifact changed") {
    bundle.artifacts[0].bytes += " ";
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error == "artifact " + bundle.artifacts[0].path + ": its SHA-256 is not the manifest's");
  }
  SECTION("an artifact added") {
    bundle.artifacts.push_back({"extra.txt", "nftables", "x"});
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error.find("manifest: lists") == 0);
  }
  SECTION("an artifact renamed") {
    bundle.artifacts[0].path = "other.nft";
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error == "artifact other.nft: not in the manifest");
  }
  SECTION("the IR changed") {
    bundle.ir_json[bundle.ir_json.size() - 1] = ' ';
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error == "manifest: ir_sha256 is not the SHA-256 of the IR");
  }
  SECTION("another policy's name") {
    bundle.policy = "other";
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error.find("manifest: policy ") == 0);
  }
  SECTION("not a manifest") {
    bundle.manifest = "[1]";
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error == "manifest: not valid JSON");
    bundle.manifest = R"({"version": 2})";
    CHECK_FALSE(backend::CrossCheck(bundle, &error));
    CHECK(error == "manifest: \"version\" is not 1");
  }
}

TEST_CASE("the bundle hash covers every field, the scope and the enforcer") {
  auto loaded = LoadDefault();
  backend::Bundle bundle = Compile(*loaded, {"nftables"});
  const std::string h = backend::BundleHash(bundle, "cgroup", "ward/a", "nftables");
  CHECK(h.size() == 64);
  CHECK(h == ExpectedHash(bundle, "cgroup", "ward/a", "nftables"));
  CHECK(h == backend::BundleHash(bundle, "cgroup", "ward/a", "nftables"));
  CHECK(h != backend::BundleHash(bundle, "cgroup", "ward/b", "nftables"));
  CHECK(h != backend::BundleHash(bundle, "uid", "ward/a", "nftables"));
  CHECK(h != backend::BundleHash(bundle, "cgroup", "ward/a", "ebpf"));
  // Length prefixes: moving a byte from one field to the next changes it.
  backend::Bundle moved = bundle;
  moved.policy += moved.ir_json.substr(0, 1);
  moved.ir_json = moved.ir_json.substr(1);
  CHECK(backend::BundleHash(moved, "cgroup", "ward/a", "nftables") != h);
  backend::Bundle edited = bundle;
  edited.artifacts[0].bytes += "\n";
  CHECK(backend::BundleHash(edited, "cgroup", "ward/a", "nftables") != h);
}

TEST_CASE("SHA-256 of a known input") {
  CHECK(backend::Sha256("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace ward::test
