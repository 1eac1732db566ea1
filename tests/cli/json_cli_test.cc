// `ward compile --format json` as a program reads it (cli/README.md): every
// field of the document against the files really written, the coverage as
// the manifest has it, the diagnostics in check's shape, the same bytes twice;
// and a policy with errors: its diagnostics as JSON, exit 1, nothing written.
#include <openssl/sha.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

using nlohmann::json;

const char* kPolicy = R"(import "std/linux.ward"

policy agent extends linux-base {
  filesystem {
    allow read write "/workspace"
  }
  network {
    allow tcp to 10.0.0.0/8 port 443
  }
  limits { memory 1GiB  pids 64 }
}
)";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace

TEST_CASE("compile --format json: artifacts, manifest, coverage and diagnostics") {
  const std::string file = WriteTemp("agent.ward", kPolicy);
  const std::string out = ScratchDir() + "/json-compile";
  std::filesystem::remove_all(out);
  Run r = Ward("compile " + file + " -t seccomp,nftables -o " + out + " --format json", kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());  // the diagnostics are in the document
  const json j = json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["policy"] == "agent");
  CHECK(j["output"] == out);
  CHECK(j["targets"] == json::array({"seccomp", "nftables"}));
  CHECK(j["written"] == true);

  const json manifest = json::parse(Slurp(out + "/manifest.json"));
  CHECK(j["ir_sha256"] == manifest["ir_sha256"]);
  CHECK(j["coverage"] == manifest["coverage"]);
  CHECK(j["fields"] == manifest["fields"]);
  CHECK(j["coverage"]["syscalls"] == json::array({"seccomp"}));
  CHECK(j["coverage"]["network"] == json::array({"nftables"}));
  CHECK(j["coverage"]["filesystem"] == "unenforced");
  CHECK(j["fields"]["limits.memory"] == "unenforced");
  CHECK(j["manifest"]["path"] == out + "/manifest.json");
  CHECK(j["manifest"]["bytes"] == Slurp(out + "/manifest.json").size());
  CHECK(j["manifest"]["sha256"] == Sha256Hex(Slurp(out + "/manifest.json")));

  // Each artifact is a file written, with its size and hash, in the
  // manifest's order.
  REQUIRE(j["artifacts"].size() == manifest["artifacts"].size());
  REQUIRE(j["artifacts"].size() == 4);
  for (size_t i = 0; i < j["artifacts"].size(); ++i) {
    const json& a = j["artifacts"][i];
    const std::string path = a["path"];
    CHECK(path == out + "/" + manifest["artifacts"][i]["path"].get<std::string>());
    CHECK(a["target"] == manifest["artifacts"][i]["target"]);
    CHECK(a["sha256"] == manifest["artifacts"][i]["sha256"]);
    const std::string bytes = Slurp(path);
    CHECK(a["bytes"] == bytes.size());
    CHECK(a["sha256"] == Sha256Hex(bytes));
  }
  CHECK(j["artifacts"][0]["path"] == out + "/agent.nft");
  CHECK(j["artifacts"][0]["target"] == "nftables");
  CHECK(j["artifacts"][2]["path"] == out + "/agent.x86_64.bpf");
  CHECK(j["artifacts"][2]["target"] == "seccomp");

  // The diagnostics in check's shape: one warning, the unenforced sections.
  CHECK(j["error"] == nullptr);
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0] ==
        json({{"code", "B3001"},
              {"severity", "warning"},
              {"message", "not enforced by the chosen targets: filesystem, process, limits"}}));
  CHECK(j["errors"] == 0);
  CHECK(j["warnings"] == 1);
  // The keys in a stable order.
  std::vector<std::string> keys;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(r.out);
  for (const auto& [k, v] : ordered.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"version", "policy", "output", "targets", "written",
                                         "ir_sha256", "artifacts", "manifest", "coverage", "fields",
                                         "error", "diagnostics", "errors", "warnings"});

  // Same input, same bytes.
  Run again =
      Ward("compile " + file + " -t seccomp,nftables -o " + out + " --format json", kStdEnv);
  CHECK(again.status == 0);
  CHECK(again.out == r.out);

  // Positive control: text prints the paths written, the warning on stderr.
  Run text = Ward("compile " + file + " -t seccomp,nftables -o " + out, kStdEnv);
  CHECK(text.status == 0);
  CHECK(text.out == out + "/agent.nft\n" + out + "/agent.nft.json\n" + out + "/agent.x86_64.bpf\n" +
                        out + "/agent.x86_64.pfc\n" + out + "/manifest.json\n");
}

TEST_CASE("compile --format json: a policy with errors gives JSON diagnostics, exit 1, no file") {
  const std::string bad = WriteTemp(
      "bad.ward", "policy bad {\n  network {\n    allow tcp to 10.0.0.0/8 port 99999\n  }\n}\n");
  const std::string out = ScratchDir() + "/json-bad";
  std::filesystem::remove_all(out);
  Run r = Ward("compile " + bad + " -t nftables -o " + out + " --format json", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err.empty());
  CHECK_FALSE(std::filesystem::exists(out));
  const json j = json::parse(r.out);
  CHECK(j["version"] == 1);
  CHECK(j["policy"] == nullptr);
  CHECK(j["targets"] == json::array({"nftables"}));
  CHECK(j["written"] == false);
  CHECK(j["artifacts"] == json::array());
  CHECK(j["manifest"] == nullptr);
  CHECK(j["coverage"] == nullptr);
  CHECK(j["error"] == nullptr);
  CHECK(j["errors"] == 1);
  // Exactly what `ward check --format json` says of the file.
  Run check = Ward("check " + bad + " --format json", kStdEnv);
  CHECK(check.status == 1);
  const json c = json::parse(check.out);
  CHECK(j["diagnostics"] == c["diagnostics"]);
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0]["severity"] == "error");
  CHECK(j["diagnostics"][0]["file"] == bad);
  CHECK(j["diagnostics"][0]["line"] == 3);

  // A policy that loads but that a backend refuses (a deny by domain):
  // its name, B3002 and still nothing written.
  const std::string refused =
      WriteTemp("refused.ward", "policy d { network { deny to \"evil.example.com\" } }\n");
  r = Ward("compile " + refused + " -t nftables -o " + out + " --format json", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.err == "ward compile: nothing written\n");
  CHECK_FALSE(std::filesystem::exists(out));
  const json d = json::parse(r.out);
  CHECK(d["policy"] == "d");
  CHECK(d["written"] == false);
  REQUIRE(d["errors"] >= 1);
  bool b3002 = false;
  for (const json& diag : d["diagnostics"]) {
    b3002 = b3002 || (diag["code"] == "B3002" && diag["severity"] == "error");
  }
  CHECK(b3002);

  // A folder that cannot be written: an operational failure (2), in
  // "error", and the file in the way untouched.
  const std::string in_the_way = WriteTemp("in-the-way", "x\n");
  const std::string good =
      WriteTemp("good.ward", "policy good { network { allow tcp to 10.0.0.1 port 1 } }\n");
  r = Ward("compile " + good + " -t nftables -o " + in_the_way + " --format json", kStdEnv);
  CHECK(r.status == 2);
  const json w = json::parse(r.out);
  CHECK(w["policy"] == "good");
  CHECK(w["written"] == false);
  CHECK(w["artifacts"] == json::array());
  CHECK(w["error"] == "cannot write " + in_the_way + "/good.nft: Not a directory");
  CHECK(r.err == "ward compile: cannot write " + in_the_way +
                     "/good.nft: Not a directory; nothing written\n");
  CHECK(Slurp(in_the_way) == "x\n");

  // A missing file is a usage error (2): said on stderr, no document.
  r = Ward("compile " + out + "/absent.ward -t nftables -o " + out + " --format json", kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(r.err.empty());
}

}  // namespace ward::test
