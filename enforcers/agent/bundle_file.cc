#include "enforcers/agent/bundle_file.h"

#include <google/protobuf/util/json_util.h>

namespace ward::agent {

bool ParseBundleFile(const std::string& bytes, v1::Bundle* out, std::string* error) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  out->Clear();
  const auto status = google::protobuf::util::JsonStringToMessage(bytes, out, options);
  if (!status.ok()) {
    *error = "not a bundle file (the JSON mapping of ward.agent.v1.Bundle): " +
             std::string(status.message());
    return false;
  }
  return true;
}

bool WriteBundleFile(const v1::Bundle& bundle, std::string* out, std::string* error) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  out->clear();
  const auto status = google::protobuf::util::MessageToJsonString(bundle, out, options);
  if (!status.ok()) {
    *error = "cannot write the bundle as JSON: " + std::string(status.message());
    return false;
  }
  if (out->empty() || out->back() != '\n') out->push_back('\n');
  return true;
}

}  // namespace ward::agent
