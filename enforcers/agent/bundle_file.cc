#include "enforcers/agent/bundle_file.h"

#include <google/protobuf/util/json_util.h>

namespace ward::agent {

bool SignedScopeOf(const v1::Scope& scope, trust::SignedScope* out) {
  switch (scope.kind_case()) {
    case v1::Scope::kCgroup:
      *out = {"cgroup", scope.cgroup()};
      return true;
    case v1::Scope::kUid:
      *out = {"uid", std::to_string(scope.uid())};
      return true;
    case v1::Scope::kInterface:
      *out = {"interface", scope.interface()};
      return true;
    case v1::Scope::KIND_NOT_SET:
      break;
  }
  return false;
}
namespace {

bool Parse(const std::string& bytes, google::protobuf::Message* out, std::string* error) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  out->Clear();
  const auto status = google::protobuf::util::JsonStringToMessage(bytes, out, options);
  if (!status.ok()) {
    *error = "not a " +
             std::string(out->GetDescriptor()->name() == "Bundle" ? "bundle" : "tombstone") +
             " file (the JSON mapping of " + out->GetDescriptor()->full_name() +
             "): " + std::string(status.message());
    return false;
  }
  return true;
}

bool Write(const google::protobuf::Message& message, std::string* out, std::string* error) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  out->clear();
  const auto status = google::protobuf::util::MessageToJsonString(message, out, options);
  if (!status.ok()) {
    *error = "cannot write " + message.GetDescriptor()->full_name() +
             " as JSON: " + std::string(status.message());
    return false;
  }
  if (out->empty() || out->back() != '\n') out->push_back('\n');
  return true;
}

}  // namespace

bool ParseBundleFile(const std::string& bytes, v1::Bundle* out, std::string* error) {
  return Parse(bytes, out, error);
}

bool WriteBundleFile(const v1::Bundle& bundle, std::string* out, std::string* error) {
  return Write(bundle, out, error);
}

bool ParseRemoveFile(const std::string& bytes, v1::RemoveRequest* out, std::string* error) {
  return Parse(bytes, out, error);
}

bool WriteRemoveFile(const v1::RemoveRequest& request, std::string* out, std::string* error) {
  return Write(request, out, error);
}

}  // namespace ward::agent
