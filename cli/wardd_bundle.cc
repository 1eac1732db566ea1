// ward-bundle: `ward compile FILE -t wardd-bundle`, which ward-cli hands
// here unchanged (cli/main.cc), so that protobuf stays out of ward-cli:
//   ward compile FILE -t wardd-bundle --sign-key KEY (--cgroup P|--uid U|--interface I)
//       [--enforcer nftables|ebpf] [--sequence N] [--valid-for D | --not-after T]
//       [--namespace NS] [--policy NAME] [--std DIR] -o DIR
// writes DIR/NAME.wardd-bundle.json, the signed bundle that `wardd
// --bundle-dir` applies (enforcers/agent/bundle_file.h), and
// DIR/NAME.configmap.yaml, a ConfigMap `ward-bundle-NAME` that holds it
// (packaging/kubernetes/README.md). Same input, --sequence and --not-after:
// same bytes.
#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <yaml-cpp/yaml.h>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "backends/signing.h"
#include "cli/bundle_message.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/scope_flags.h"
#include "enforcers/agent/bundle_file.h"
#include "enforcers/linux/files.h"

namespace ward::cli {
namespace {

namespace fs = std::filesystem;

// What the API server takes in a ConfigMap's data, all keys together.
constexpr size_t kConfigMapLimit = 1u << 20;

struct BundleFlags {
  std::string file, target, out_dir, sign_key, std_dir;
  std::optional<std::string> policy, valid_for, not_after;
  std::string enforcer = "nftables";
  std::string ns = "ward-system";
  std::optional<uint64_t> sequence;
  ScopeFlags scope;
  OutputFlags output;
};

// "2026-12-09T00:00:00Z" as Unix milliseconds.
std::optional<int64_t> ParseUtc(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

// The ConfigMap's name: the policy in lower case, `_` as `-`, which must
// then be a DNS subdomain (RFC 1123) of at most 253 characters.
std::optional<std::string> ConfigMapName(const std::string& policy) {
  std::string name = "ward-bundle-";
  for (char c : policy) name += c == '_' ? '-' : static_cast<char>(std::tolower(c));
  if (name.size() > 253 || !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return std::nullopt;
  }
  for (char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) &&
        c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  return name;
}

std::string ConfigMapYaml(const std::string& name, const std::string& ns, const std::string& key,
                          const std::string& bundle_file, const v1::Bundle& b) {
  YAML::Emitter out;
  out << YAML::Comment("ward compile -t wardd-bundle: policy " + b.policy() + ", sha256 " +
                       b.sha256() + ", sequence " + std::to_string(b.signature().sequence()) +
                       ", key " + b.signature().key_id());
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "ConfigMap";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "namespace" << YAML::Value << ns;
  out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "app.kubernetes.io/part-of" << YAML::Value << "ward";
  out << YAML::Key << "app.kubernetes.io/component" << YAML::Value << "wardd-bundle";
  out << YAML::EndMap << YAML::EndMap;
  out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << key << YAML::Value << YAML::Literal << bundle_file;
  out << YAML::EndMap << YAML::EndMap;
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

int Fail(const std::string& message, int code = kUsage) {
  std::cerr << "ward compile: " << message << "\n";
  return code;
}

int RunBundle(const BundleFlags& f) {
  if (f.target != "wardd-bundle") {
    return Fail("-t wardd-bundle is a target of its own: compile other targets separately");
  }
  if (f.file.empty() || f.out_dir.empty()) return Fail("FILE and -o DIR are required");
  if (f.sign_key.empty()) {
    return Fail("-t wardd-bundle needs --sign-key KEY: wardd --bundle-dir applies signed bundles only");
  }
  if (!CheckScopeFlags("compile", f.scope)) return kUsage;
  if (f.enforcer != "nftables" && f.enforcer != "ebpf") {
    return Fail("unknown enforcer '" + f.enforcer + "'; known: nftables ebpf");
  }
  const backend::Backend* backend = backend::FindBackend(f.enforcer);
  if (!backend) return Fail("the " + f.enforcer + " backend is not built in this ward");
  if (f.valid_for && f.not_after) return Fail("give --valid-for or --not-after, not both");
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  int64_t not_after_ms = 0;
  if (f.not_after) {
    auto t = ParseUtc(*f.not_after);
    if (!t) return Fail("--not-after: '" + *f.not_after + "' is not a UTC time such as 2026-12-09T00:00:00Z");
    not_after_ms = *t;
  } else {
    auto d = trust::ParseDuration(f.valid_for.value_or("7d"));
    if (!d) return Fail("--valid-for: '" + *f.valid_for + "' is not a duration (such as 12h, 7d)");
    not_after_ms = now_ms + *d;
  }
  std::string error;
  auto key = trust::PrivateKey::Load(f.sign_key, &error);
  if (!key) return Fail("--sign-key: " + error);

  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  // As `ward push` does: the enforcer's artifacts travel with the IR; the
  // other sections are not wardd's, so only errors are shown.
  backend::Bundle bundle;
  DiagnosticSink sink;
  const bool compiled =
      backend::CompileBundle(loaded->ir, loaded->sources, {backend}, false, {}, sink, &bundle);
  DiagnosticSink shown;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.code != Code::kUnenforcedSection) shown.Report(d);
  }
  if (!shown.diagnostics().empty()) {
    OutputFlags text = f.output;
    text.format = "text";
    PrintDiagnostics(loaded->sources, shown, text);
  }
  if (!compiled) return Fail("nothing written", kFound);

  const std::string key_name = bundle.policy + agent::kBundleFileSuffix;
  if (bundle.policy.find(':') != std::string::npos) {
    return Fail("policy '" + bundle.policy +
                "': a ConfigMap key cannot hold ':' (letters, digits, '-', '_', '.'); nothing written");
  }
  const std::optional<std::string> cm_name = ConfigMapName(bundle.policy);
  if (!cm_name) {
    return Fail("policy '" + bundle.policy +
                "' gives no valid ConfigMap name (lower case, digits, '-', '.'); nothing written");
  }
  v1::Bundle message = BundleMessage(bundle, f.scope, f.enforcer);
  if (!SignBundleMessage(&message, *key, f.sequence.value_or(static_cast<uint64_t>(now_ms)),
                         not_after_ms, &error)) {
    return Fail(error + "; nothing written");
  }
  std::string file;
  if (!agent::WriteBundleFile(message, &file, &error)) return Fail(error + "; nothing written");
  if (file.size() > kConfigMapLimit) {
    return Fail(key_name + " would be " + std::to_string(file.size()) +
                " bytes, and a ConfigMap holds at most 1 MiB (1048576 bytes); nothing written");
  }

  const fs::path out(f.out_dir);
  const std::string bundle_path = (out / key_name).string();
  const std::string yaml_path = (out / (bundle.policy + ".configmap.yaml")).string();
  enforce::StagedFiles staged(/*create_folders=*/true);
  if (!staged.Stage(bundle_path, file, &error) ||
      !staged.Stage(yaml_path, ConfigMapYaml(*cm_name, f.ns, key_name, file, message), &error)) {
    return Fail("cannot write " + error + "; nothing written");
  }
  if (!staged.Commit(&error)) return Fail("cannot write " + error);
  std::cout << bundle_path << "\n" << yaml_path << "\n";
  return kOk;
}

}  // namespace
}  // namespace ward::cli

int main(int argc, char** argv) {
  using namespace ward::cli;
  CLI::App app{"Ward's wardd-bundle target", "ward"};
  app.require_subcommand(1, 1);
  int exit_code = kOk;
  auto f = std::make_shared<BundleFlags>();
  CLI::App* cmd =
      app.add_subcommand("compile", "Compile a policy into a signed bundle for wardd --bundle-dir");
  cmd->add_option("file", f->file, "policy file");
  cmd->add_option("-t,--target", f->target, "wardd-bundle")->required();
  cmd->add_option("-o,--output", f->out_dir, "output folder (created if missing)");
  cmd->add_option("--sign-key", f->sign_key, "Ed25519 private key (PEM) to sign with");
  AddScopeFlags(cmd, &f->scope);
  cmd->add_option("--enforcer", f->enforcer, "the enforcer wardd applies it with: nftables or ebpf")
      ->capture_default_str();
  cmd->add_option("--sequence", f->sequence,
                  "the signature's sequence (default: now, in Unix milliseconds)");
  cmd->add_option("--valid-for", f->valid_for, "how long the signature holds (default 7d)");
  cmd->add_option("--not-after", f->not_after, "or until when, UTC (2026-12-09T00:00:00Z)");
  cmd->add_option("--namespace", f->ns, "the ConfigMap's namespace")->capture_default_str();
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->callback([f, &exit_code] { exit_code = RunBundle(*f); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsage;
  }
  return exit_code;
}
