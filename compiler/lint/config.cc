// `.ward-lint.yaml`, read with yaml-cpp; its exceptions stop here
// (conventions.md #7).
#include <yaml-cpp/yaml.h>

#include "compiler/lint/lint.h"

namespace ward::lint {

bool ParseConfig(const std::string& text, Config* config, std::string* error) {
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return true;
    if (!root.IsMap()) {
      *error = "expected a mapping with a 'rules' key";
      return false;
    }
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
      if (key != "rules") {
        *error = "unknown key '" + key + "' (expected 'rules')";
        return false;
      }
      if (entry.second.IsNull()) continue;
      if (!entry.second.IsMap()) {
        *error = "'rules' must map rule ids to levels: {L2101: error, L2502: off}";
        return false;
      }
      for (const auto& rule : entry.second) {
        const std::string id = rule.first.as<std::string>();
        if (!FindRule(id)) {
          *error = "unknown rule '" + id + "'";
          return false;
        }
        const std::string value = rule.second.IsScalar() ? rule.second.as<std::string>() : "";
        std::optional<Level> level = ParseLevel(value);
        if (!level) {
          *error = "rule " + id + ": level must be error, warning, note or off";
          return false;
        }
        config->levels[id] = *level;
      }
    }
    return true;
  } catch (const YAML::Exception& e) {
    *error = e.what();
    return false;
  }
}

}  // namespace ward::lint
