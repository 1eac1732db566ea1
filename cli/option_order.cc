#include "cli/option_order.h"

namespace ward::cli {

void OneValuePerOption(CLI::App& app, const std::set<std::string>& except) {
  for (CLI::Option* option : app.get_options()) {
    if (option->nonpositional() && option->get_items_expected_max() > 1) {
      option->allow_extra_args(false);
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!except.count(sub->get_name())) OneValuePerOption(*sub, except);
  }
}

}  // namespace ward::cli
