#include "cli/command_tree.h"

#include <algorithm>
#include <string_view>

namespace ward::cli {
namespace {

// "TEXT:{text,json}" (CLI::IsMember's description) -> text, json.
std::vector<std::string> ValueSet(const std::string& type_name) {
  const size_t open = type_name.find('{');
  const size_t close = type_name.find('}', open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string_view set(type_name.data() + open + 1, close - open - 1);
  while (!set.empty()) {
    const size_t comma = set.find(',');
    out.emplace_back(set.substr(0, comma));
    if (comma == std::string_view::npos) break;
    set.remove_prefix(comma + 1);
  }
  return out;
}

OptionNode DescribeOption(const CLI::Option& opt) {
  OptionNode o;
  for (const std::string& s : opt.get_snames()) o.names.push_back("-" + s);
  for (const std::string& l : opt.get_lnames()) o.names.push_back("--" + l);
  o.description = opt.get_description();
  o.takes_value = opt.get_expected_max() != 0;
  o.list = opt.get_delimiter() == ',';
  if (o.takes_value) o.values = ValueSet(opt.get_type_name());
  return o;
}

std::string Undashed(std::string_view word) {
  while (!word.empty() && word.front() == '-') word.remove_prefix(1);
  return std::string(word.substr(0, word.find('=')));
}

struct Unknown {
  size_t position;
  bool option;
  std::string line;
};

}  // namespace

CommandNode DescribeApp(const CLI::App& app) {
  CommandNode node;
  node.name = app.get_name();
  node.description = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;
    if (opt->get_positional() && !opt->nonpositional()) {
      if (node.positionals.empty()) node.positional_values = ValueSet(opt->get_type_name());
      node.positionals.push_back(opt->get_name());
    } else {
      node.options.push_back(DescribeOption(*opt));
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    node.commands.push_back(DescribeApp(*sub));
  }
  return node;
}

void MergeTree(CommandNode* base, const CommandNode& extra) {
  for (const OptionNode& o : extra.options) {
    const bool known = std::any_of(base->options.begin(), base->options.end(),
                                   [&](const OptionNode& b) { return b.names == o.names; });
    if (!known) base->options.push_back(o);
  }
  for (const std::string& p : extra.positionals) {
    if (std::find(base->positionals.begin(), base->positionals.end(), p) == base->positionals.end())
      base->positionals.push_back(p);
  }
  for (const CommandNode& c : extra.commands) {
    auto it = std::find_if(base->commands.begin(), base->commands.end(),
                           [&](const CommandNode& b) { return b.name == c.name; });
    if (it == base->commands.end()) {
      base->commands.push_back(c);
    } else {
      MergeTree(&*it, c);
    }
  }
}

const CommandNode* FindCommand(const CommandNode& node, const std::string& name) {
  for (const CommandNode& c : node.commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::vector<std::string> Nearest(const std::string& word,
                                 const std::vector<std::string>& candidates) {
  // One letter is as near to every other letter as to nothing.
  if (word.size() < 2) return {};
  const size_t limit = std::clamp<size_t>((word.size() + 2) / 3, 1, 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    if (c == word) continue;
    const bool prefix = word.size() >= 2 && c.size() > word.size() && c.rfind(word, 0) == 0;
    const size_t d = prefix ? 0 : EditDistance(word, c);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (d != scored.front().first) break;
    out.push_back(c);
  }
  return out;
}

std::string DidYouMean(const std::vector<std::string>& nearest) {
  if (nearest.empty()) return "";
  std::string text = "did you mean ";
  for (size_t i = 0; i < nearest.size(); ++i) {
    if (i > 0) text += i + 1 == nearest.size() ? " or " : ", ";
    text += "'" + nearest[i] + "'";
  }
  return text + "?";
}

int ReportUnknownWords(const CLI::App& app, const CommandNode& tree, int argc, char** argv,
                       std::ostream& err) {
  // Words are matched back to argv in order, so that they print as typed.
  size_t end = static_cast<size_t>(argc);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      end = static_cast<size_t>(i);
      break;
    }
  }
  std::vector<bool> used(end, false);
  auto position_of = [&](const std::string& word) {
    for (size_t i = 1; i < end; ++i) {
      if (!used[i] && word == argv[i]) {
        used[i] = true;
        return i;
      }
    }
    return end;
  };
  std::vector<Unknown> unknown;
  const CLI::App* cur = &app;
  const CommandNode* node = &tree;
  std::string path = app.get_name();
  std::string help_path = "ward help";
  while (cur && node) {
    std::vector<Unknown> here;
    bool any_option = false;
    bool any_command = false;
    for (const std::string& word : cur->remaining(false)) {
      Unknown u{position_of(word), false, ""};
      // After `--`: the words of the command ward runs, nobody's typo.
      if (u.position == end) continue;
      if (word.size() > 1 && word[0] == '-') {
        u.option = any_option = true;
        std::vector<std::string> names;
        for (const OptionNode& o : node->options) {
          for (const std::string& n : o.names) names.push_back(Undashed(n));
        }
        std::vector<std::string> near = Nearest(Undashed(word), names);
        for (std::string& n : near) n = (n.size() == 1 ? "-" : "--") + n;
        const std::string typed = word.substr(0, word.find('='));
        u.line =
            path + ": unknown option '" + typed + "'" +
            (near.empty() ? " (" + help_path + " lists its options)" : ": " + DidYouMean(near));
      } else if (!node->commands.empty()) {
        // The first word is the command; the rest were meant for it.
        if (any_command) continue;
        any_command = true;
        std::vector<std::string> names;
        for (const CommandNode& c : node->commands) names.push_back(c.name);
        const std::vector<std::string> near = Nearest(word, names);
        u.line =
            path + ": unknown command '" + word + "'" +
            (near.empty() ? " (" + help_path + " lists the commands)" : ": " + DidYouMean(near));
      } else {
        u.line = path + ": unexpected argument '" + word + "'";
      }
      here.push_back(u);
    }
    // A word after an unknown option is most likely its value: the option
    // is the mistake to name.
    for (const Unknown& u : here) {
      if (u.option || !any_option) unknown.push_back(u);
    }
    const std::vector<CLI::App*> parsed = cur->get_subcommands();
    if (parsed.empty()) break;
    cur = parsed.front();
    node = FindCommand(*node, cur->get_name());
    path += " " + cur->get_name();
    help_path += " " + cur->get_name();
  }
  std::stable_sort(unknown.begin(), unknown.end(),
                   [](const Unknown& a, const Unknown& b) { return a.position < b.position; });
  for (const Unknown& u : unknown) err << u.line << "\n";
  return static_cast<int>(unknown.size());
}

int ReportBadValues(const CLI::App& app, const CommandNode& tree, int argc, char** argv,
                    std::ostream& err) {
  const CLI::App* cur = &app;
  const CommandNode* node = &tree;
  std::string path = app.get_name();
  int printed = 0;
  while (cur && node) {
    for (const OptionNode& o : node->options) {
      if (o.values.empty()) continue;
      for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") break;
        std::string value;
        bool given = false;
        for (const std::string& n : o.names) {
          if (arg == n && i + 1 < argc) {
            value = argv[i + 1];
            given = true;
          } else if (arg.size() > n.size() + 1 && arg.rfind(n + "=", 0) == 0) {
            value = std::string(arg.substr(n.size() + 1));
            given = true;
          }
        }
        if (!given || std::find(o.values.begin(), o.values.end(), value) != o.values.end())
          continue;
        std::string list;
        for (const std::string& v : o.values) list += (list.empty() ? "" : ", ") + v;
        const std::string hint = DidYouMean(Nearest(value, o.values));
        err << path << ": " << o.names.back() << " '" << value << "' is not one of " << list
            << (hint.empty() ? "" : ": " + hint) << "\n";
        ++printed;
      }
    }
    const std::vector<CLI::App*> parsed = cur->get_subcommands();
    if (parsed.empty()) break;
    cur = parsed.front();
    node = FindCommand(*node, cur->get_name());
    path += " " + cur->get_name();
  }
  return printed;
}

}  // namespace ward::cli
