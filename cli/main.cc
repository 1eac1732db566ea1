// ward-cli: the whole `ward` command line, every subcommand, which the `ward`
// launcher (cli/launcher.cc) hands every command line to but a cached `ward
// run`. Argument parsing and output only; the work is in language/,
// compiler/, backends/ and enforcers/.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>

#include "backends/registry.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/programs.h"

namespace {

std::string VersionText() {
  std::string text = std::string("ward ") + WARD_VERSION + "\nbackends:";
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
  app.set_version_flag("--version", VersionText());
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
  // ward-remote's commands, listed here for `ward --help` (IsRemote hands
  // them over before this parser runs).
  app.add_subcommand("push",
                     "Send a policy to a host's wardd, which enforces it (ward push --help)");

  std::string help_topic;
  CLI::App* help = app.add_subcommand("help", "Show help for ward or one subcommand");
  help->add_option("subcommand", help_topic, "subcommand to describe");
  help->callback([&] {
    if (help_topic.empty()) {
      std::cout << app.help();
      return;
    }
    try {
      std::cout << app.get_subcommand(help_topic)->help();
    } catch (const CLI::OptionNotFound&) {
      std::cerr << "ward help: unknown subcommand '" << help_topic << "'\n";
      exit_code = ward::cli::kUsage;
    }
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // `ward run` passes its command's status through: its own usage errors
    // take 125 (env(1)'s code) so they cannot pass for the command's.
    const bool run = argc > 1 && std::string_view(argv[1]) == "run";
    return rc == 0 ? 0 : run ? 125 : ward::cli::kUsage;
  }
  if (argc == 1) {
    std::cout << app.help();
    return ward::cli::kUsage;
  }
  return exit_code;
}
