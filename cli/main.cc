// ward-cli: the whole `ward` command line, every subcommand, which the `ward`
// launcher (cli/launcher.cc) hands every command line to but a cached `ward
// run`. Argument parsing and output only; the work is in language/,
// compiler/, backends/ and enforcers/.
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string_view>

#include "backends/registry.h"
#include "cli/build_info.h"
#include "cli/command_tree.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/option_order.h"
#include "cli/output.h"
#include "cli/programs.h"
#include "cli/remote_commands.h"
#include "enforcers/linux/enforcer.h"
#ifdef WARD_HAVE_EBPF
#include <bpf/libbpf.h>
#endif

namespace {

std::string VersionText() {
  const ward::cli::BuildInfo& build = ward::cli::GetBuildInfo();
  std::string text = std::string("ward ") + build.version + "\ncommit: " + build.commit +
                     "\nbuild type: " + build.build_type;
  const scmp_version* seccomp = seccomp_version();
  text += "\nlibseccomp: " + std::to_string(seccomp->major) + "." + std::to_string(seccomp->minor) +
          "." + std::to_string(seccomp->micro);
#ifdef WARD_HAVE_EBPF
  text += "\nlibbpf: " + std::to_string(libbpf_major_version()) + "." +
          std::to_string(libbpf_minor_version());
#else
  text += "\nlibbpf: none (the eBPF enforcer is not built)";
#endif
  // libnftables has no call that returns its version (and is loaded only
  // when a command needs it): the version pkg-config found at build time.
  text += std::string("\nlibnftables: ") +
          (*build.nftables ? std::string(build.nftables) + " (at build time)"
                           : std::string("none (the nftables enforcer is not built)"));
  text += "\nbackends:";
  if (ward::backend::AllBackends().empty()) return text + " none";
  for (const ward::backend::Backend* b : ward::backend::AllBackends()) {
    text += " " + std::string(b->name());
  }
  return text;
}

// `ward push`, and `ward remove|status|diff` with --host, are wardd's
// client: ward-remote, beside this program, runs them (cli/remote.cc).
bool IsRemote(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view command = argv[1];
  if (command == "push") return true;
  if (command != "remove" && command != "status" && command != "diff") return false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--host" || arg.rfind("--host=", 0) == 0) return true;
    if (arg == "--hosts" || arg.rfind("--hosts=", 0) == 0) return true;
  }
  return false;
}

// The fixed values of the options whose values are not a CLI11 set: the
// targets of `compile -t` (the registry's, comma-separated) and the
// enforcers of `apply -t` and `push -t`.
void AddTargetValues(ward::cli::CommandNode* tree) {
  using ward::cli::CommandNode;
  std::vector<std::string> targets;
  // In `ward compile -t help`'s order.
  for (const ward::backend::Backend* b : ward::backend::AllBackends())
    targets.emplace_back(b->name());
  targets.emplace_back("wardd-bundle");
  for (const ward::backend::Profile& p : ward::backend::AllProfiles()) targets.emplace_back(p.name);
  targets.emplace_back("help");
  std::vector<std::string> enforcers;
  for (const ward::enforce::NetworkEnforcer* e : ward::enforce::NetworkEnforcers()) {
    enforcers.emplace_back(e->name());
  }
  if (std::find(enforcers.begin(), enforcers.end(), "ebpf") == enforcers.end()) {
    enforcers.emplace_back("ebpf");
  }
  for (CommandNode& c : tree->commands) {
    for (ward::cli::OptionNode& o : c.options) {
      if (std::find(o.names.begin(), o.names.end(), "--target") == o.names.end()) continue;
      if (c.name == "compile") {
        o.values = targets;
        o.list = true;
      } else if (c.name == "apply" || c.name == "push") {
        o.values = enforcers;
      }
    }
  }
}

// `ward help [COMMAND...]`.
int Help(const CLI::App& app, const CLI::App& remote, const ward::cli::CommandNode& tree,
         const std::vector<std::string>& topic) {
  if (topic.empty()) {
    // (app.help() would describe the command chosen: help itself.)
    std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return ward::cli::kOk;
  }
  const CLI::App* local = &app;
  const CLI::App* other = &remote;
  const ward::cli::CommandNode* node = &tree;
  std::string prefix = "ward";
  for (const std::string& word : topic) {
    const ward::cli::CommandNode* next = ward::cli::FindCommand(*node, word);
    if (!next) {
      std::vector<std::string> names;
      for (const ward::cli::CommandNode& c : node->commands) names.push_back(c.name);
      const std::string hint = ward::cli::DidYouMean(ward::cli::Nearest(word, names));
      std::cerr << "ward help: unknown command '"
                << (prefix == "ward" ? "" : prefix.substr(5) + " ") << word << "'"
                << (hint.empty() ? " (ward help lists the commands)" : ": " + hint) << "\n";
      return ward::cli::kUsage;
    }
    auto child = [&](const CLI::App* parent) -> const CLI::App* {
      if (!parent) return nullptr;
      for (const CLI::App* sub : parent->get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) return sub;
      }
      return nullptr;
    };
    if (node != &tree) prefix += " " + node->name;
    local = child(local);
    other = child(other);
    node = next;
  }
  // push lives in ward-remote only (ward-cli holds a placeholder for the
  // overview); remove, status and diff in both, the --host form there.
  const bool remote_only = topic.size() == 1 && topic[0] == "push";
  if (local && !remote_only) std::cout << local->help(prefix);
  if (other) {
    if (local && !remote_only) {
      std::cout << "With --host or --hosts, ward " << topic[0] << " asks wardd agents:\n";
    }
    std::cout << other->help(prefix);
  }
  return ward::cli::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  const bool bundle = ward::cli::IsWarddBundleCompile(argc, argv);
  if (bundle || IsRemote(argc, argv)) {
    const std::string self = ward::cli::SelfPath();
    const std::string remote =
        self.substr(0, self.rfind('/') + 1) + (bundle ? "ward-bundle" : "ward-remote");
    execv(remote.c_str(), argv);
    std::cerr << "ward: cannot run " << remote << ": " << std::strerror(errno) << "\n";
    return ward::cli::kUsage;
  }
  CLI::App app{"Ward: one policy language for AI-agent sandboxes", "ward"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", VersionText, "Print the version, the build and its libraries");
  int exit_code = ward::cli::kOk;

  // Every subcommand, in one explicit list.
  ward::cli::AddCheckCommand(app, &exit_code);
  ward::cli::AddIrCommand(app, &exit_code);
  ward::cli::AddExplainCommand(app, &exit_code);
  ward::cli::AddCompileCommand(app, &exit_code);
  ward::cli::AddDiffCommand(app, &exit_code);
  ward::cli::AddImportCommand(app, &exit_code);
  ward::cli::AddFmtCommand(app, &exit_code);
  ward::cli::AddLintCommand(app, &exit_code);
  ward::cli::AddApplyCommand(app, &exit_code);
  ward::cli::AddRemoveCommand(app, &exit_code);
  ward::cli::AddStatusCommand(app, &exit_code);
  ward::cli::AddRunCommand(app, &exit_code);
#ifdef WARD_HAVE_LEARN
  ward::cli::AddLearnCommand(app, &exit_code);
#endif
  ward::cli::AddAuditCommand(app, &exit_code);
  ward::cli::AddDoctorCommand(app, &exit_code);
  // ward-remote's commands, listed here for `ward --help` (IsRemote hands
  // them over before this parser runs).
  app.add_subcommand("push",
                     "Send a policy to a host's wardd, which enforces it (ward push --help)");

  ward::cli::OneValuePerOption(app, {"run"});

  // ward-remote's commands as it parses them, described, not run: for
  // help, completion and did-you-mean, so built only for those.
  std::unique_ptr<CLI::App> remote_app;
  int remote_exit = 0;
  auto remote = [&]() -> const CLI::App& {
    if (!remote_app) {
      remote_app = std::make_unique<CLI::App>("Ward's remote commands (wardd)", "ward");
      ward::cli::AddRemoteCommands(*remote_app, nullptr, &remote_exit);
    }
    return *remote_app;
  };
  auto tree = [&] {
    ward::cli::CommandNode t = ward::cli::DescribeApp(app);
    ward::cli::MergeTree(&t, ward::cli::DescribeApp(remote()));
    AddTargetValues(&t);
    return t;
  };

  std::vector<std::string> help_topic;
  CLI::App* help = app.add_subcommand("help", "Show help for ward or one command");
  help->add_option("command", help_topic, "the command (and its subcommand) to describe");
  help->callback([&] { exit_code = Help(app, remote(), tree(), help_topic); });

  std::string shell;
  CLI::App* completion =
      app.add_subcommand("completion", "Print a shell completion script for ward");
  completion->add_option("shell", shell, "the shell")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->footer(
      "Load it with: source <(ward completion bash), source <(ward completion zsh), or\n"
      "ward completion fish | source");
  completion->callback([&] { std::cout << ward::cli::CompletionScript(tree(), shell); });

  // `ward run` passes its command's status through: its own usage errors
  // take 125 (env(1)'s code) so they cannot pass for the command's.
  const bool run = argc > 1 && std::string_view(argv[1]) == "run";
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word nobody took is the likely cause of any error (a required
    // option reported missing because it was misspelt): named first.
    if (e.get_exit_code() != 0) {
      const ward::cli::CommandNode t = tree();
      if (ward::cli::ReportUnknownWords(app, t, argc, argv, std::cerr) > 0 ||
          ward::cli::ReportBadValues(app, t, argc, argv, std::cerr) > 0) {
        return run ? 125 : ward::cli::kUsage;
      }
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : run ? 125 : ward::cli::kUsage;
  }
  if (argc == 1) {
    std::cout << app.help();
    return ward::cli::kUsage;
  }
  return exit_code;
}
