// Every document of a YAML stream, read with yaml-cpp, without yaml-cpp
// 0.7's endless loop: on some malformed streams (a `,` where a node should
// start) its LoadAll makes empty documents forever, each one holding memory,
// never consuming input (jbeder/yaml-cpp#1040, fixed upstream by #1319 in
// 0.8.0; Debian 12 ships 0.7.0). The stream is first walked with an event
// handler that keeps nothing and stops when a document starts where the one
// before it started; only a stream that passes is built into nodes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace ward::importers {

// As YAML::LoadAll; throws YAML::ParserException (with the place) for the
// streams LoadAll would not return from, as for other malformed input.
std::vector<YAML::Node> LoadYamlDocuments(const std::string& text);

}  // namespace ward::importers
