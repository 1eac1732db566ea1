// ward-bundle: `ward compile FILE -t wardd-bundle`, which ward-cli hands
// here unchanged (cli/main.cc), so that protobuf stays out of ward-cli:
//   ward compile FILE -t wardd-bundle --sign-key KEY (--cgroup P|--uid U|--interface I)
//       [--enforcer nftables|ebpf] [--sequence N] [--valid-for D | --not-after T]
//       [--namespace NS] [--policy NAME] [--std DIR] [--remove] -o DIR
// writes DIR/NAME.wardd-bundle.json, the signed bundle that `wardd
// --bundle-dir` applies (enforcers/agent/bundle_file.h), and
// DIR/NAME.configmap.yaml, a ConfigMap `ward-bundle-NAME` that holds it
// (packaging/kubernetes/README.md). With --remove: DIR/NAME.wardd-remove.json,
// the policy's signed tombstone, and the same ConfigMap holding it instead.
// Same input, --sequence and --not-after: same bytes.
#include <yaml-cpp/yaml.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "backends/bundle.h"
#include "backends/registry.h"
#include "backends/signing.h"
#include "cli/bundle_message.h"
#include "cli/command_tree.h"
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
  bool remove = false;
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
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  return name;
}

std::string ConfigMapYaml(const std::string& name, const std::string& ns, const std::string& key,
                          const std::string& bundle_file, const std::string& comment) {
  YAML::Emitter out;
  out << YAML::Comment(comment);
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

// False after saying why when `policy` cannot name a ConfigMap's key and name.
bool NameFits(const std::string& policy) {
  if (policy.find(':') != std::string::npos) {
    Fail("policy '" + policy +
         "': a ConfigMap key cannot hold ':' (letters, digits, '-', '_', '.'); nothing written");
    return false;
  }
  if (!ConfigMapName(policy)) {
    Fail("policy '" + policy +
         "' gives no valid ConfigMap name (lower case, digits, '-', '.'); nothing written");
    return false;
  }
  return true;
}

// DIR/POLICY<suffix> and DIR/POLICY.configmap.yaml, both or neither.
int WriteFiles(const BundleFlags& f, const std::string& policy, const char* suffix,
               const std::string& file, const std::string& comment) {
  const std::string key_name = policy + suffix;
  if (file.size() > kConfigMapLimit) {
    return Fail(key_name + " would be " + std::to_string(file.size()) +
                " bytes, and a ConfigMap holds at most 1 MiB (1048576 bytes); nothing written");
  }
  const fs::path out(f.out_dir);
  const std::string file_path = (out / key_name).string();
  const std::string yaml_path = (out / (policy + ".configmap.yaml")).string();
  enforce::StagedFiles staged(/*create_folders=*/true);
  std::string error;
  if (!staged.Stage(file_path, file, &error) ||
      !staged.Stage(yaml_path, ConfigMapYaml(*ConfigMapName(policy), f.ns, key_name, file, comment),
                    &error)) {
    return Fail("cannot write " + error + "; nothing written");
  }
  if (!staged.Commit(&error)) return Fail("cannot write " + error);
  std::cout << file_path << "\n" << yaml_path << "\n";
  return kOk;
}

// --remove: the policy's signed tombstone, in a ConfigMap of the same name
// as its bundle's, so that applying it replaces the bundle.
int WriteTombstone(const BundleFlags& f, const trust::PrivateKey& key, uint64_t sequence,
                   int64_t not_after_ms) {
  std::string policy;
  if (f.file.empty()) {
    policy = *f.policy;
  } else {
    int exit_code = kOk;
    auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
    if (!loaded) return exit_code;
    policy = loaded->ir.name;
  }
  if (!NameFits(policy)) return kUsage;
  v1::RemoveRequest request;
  std::string error, file;
  request.set_policy(policy);
  *request.mutable_scope() = ScopeMessage(f.scope);
  if (!SignRemoveRequest(&request, key, sequence, not_after_ms, &error) ||
      !agent::WriteRemoveFile(request, &file, &error)) {
    return Fail(error + "; nothing written");
  }
  return WriteFiles(f, policy, agent::kRemoveFileSuffix, file,
                    "ward compile -t wardd-bundle --remove: policy " + policy + ", sequence " +
                        std::to_string(sequence) + ", key " + key.id());
}

int RunBundle(const BundleFlags& f) {
  if (f.target != "wardd-bundle") {
    return Fail("-t wardd-bundle is a target of its own: compile other targets separately");
  }
  if ((f.file.empty() && !(f.remove && f.policy)) || f.out_dir.empty()) {
    return Fail(f.remove ? "FILE or --policy NAME, and -o DIR, are required"
                         : "FILE and -o DIR are required");
  }
  if (f.sign_key.empty()) {
    return Fail(
        "-t wardd-bundle needs --sign-key KEY: wardd --bundle-dir applies signed bundles only");
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
    if (!t)
      return Fail("--not-after: '" + *f.not_after +
                  "' is not a UTC time such as 2026-12-09T00:00:00Z");
    not_after_ms = *t;
  } else {
    auto d = trust::ParseDuration(f.valid_for.value_or("7d"));
    if (!d) return Fail("--valid-for: '" + *f.valid_for + "' is not a duration (such as 12h, 7d)");
    not_after_ms = now_ms + *d;
  }
  std::string error;
  auto key = trust::PrivateKey::Load(f.sign_key, &error);
  if (!key) return Fail("--sign-key: " + error);

  const uint64_t sequence = f.sequence.value_or(static_cast<uint64_t>(now_ms));
  if (f.remove) return WriteTombstone(f, *key, sequence, not_after_ms);

  int exit_code = kOk;
  auto loaded = LoadPolicy(f.file, f.policy, f.std_dir, f.output, &exit_code);
  if (!loaded) return exit_code;
  backend::Bundle bundle;
  const bool compiled = CompileForAgent(*loaded, backend, f.output, &bundle);
  if (!compiled) return Fail("nothing written", kFound);

  if (!NameFits(bundle.policy)) return kUsage;
  v1::Bundle message = BundleMessage(bundle, f.scope, f.enforcer);
  if (!SignBundleMessage(&message, *key, sequence, not_after_ms, &error)) {
    return Fail(error + "; nothing written");
  }
  std::string file;
  if (!agent::WriteBundleFile(message, &file, &error)) return Fail(error + "; nothing written");
  return WriteFiles(f, bundle.policy, agent::kBundleFileSuffix, file,
                    "ward compile -t wardd-bundle: policy " + message.policy() + ", sha256 " +
                        message.sha256() + ", sequence " + std::to_string(sequence) + ", key " +
                        key->id());
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
  cmd->add_flag("--remove", f->remove,
                "a signed tombstone that removes the policy (FILE's, or --policy NAME) instead");
  cmd->add_option("--namespace", f->ns, "the ConfigMap's namespace")->capture_default_str();
  cmd->add_option("--policy", f->policy, "the policy, when the file holds several");
  cmd->add_option("--std", f->std_dir, "standard library folder");
  cmd->callback([f, &exit_code] { exit_code = RunBundle(*f); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      const CommandNode tree = DescribeApp(app);
      if (ReportUnknownWords(app, tree, argc, argv, std::cerr) > 0 ||
          ReportBadValues(app, tree, argc, argv, std::cerr) > 0) {
        return kUsage;
      }
    }
    return app.exit(e) == 0 ? 0 : kUsage;
  }
  return exit_code;
}
