#include "enforcers/agent/access.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <utility>

namespace ward::agent {

namespace {

struct MethodRole {
  std::string_view path;
  Role role;
};

// Every method wardd serves. Health and reflection are readers' so that a
// reader can probe and discover the agent; anything else is denied.
constexpr std::array<MethodRole, 9> kMethods = {{
    {kApplyMethod, Role::kOperator},
    {kRemoveMethod, Role::kOperator},
    {kListMethod, Role::kReader},
    {kGetMethod, Role::kReader},
    {kCheckMethod, Role::kReader},
    {kWatchMethod, Role::kReader},
    {"/grpc.health.v1.Health/Check", Role::kReader},
    {"/grpc.health.v1.Health/Watch", Role::kReader},
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", Role::kReader},
}};

int Rank(Role role) {
  switch (role) {
    case Role::kNone:
      return 0;
    case Role::kReader:
      return 1;
    case Role::kOperator:
      return 2;
  }
  return 0;
}

bool ReadList(const YAML::Node& node, const std::string& key, std::set<std::string>* out,
              std::string* error) {
  if (node.IsNull()) return true;  // `reader:` with nothing after it
  if (!node.IsSequence()) {
    *error = key + ": expected a list of identities";
    return false;
  }
  for (const auto& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      *error = key + ": expected a list of identities (non-empty strings)";
      return false;
    }
    out->insert(item.Scalar());
  }
  return true;
}

}  // namespace

Role RequiredRole(std::string_view path) {
  for (const auto& m : kMethods) {
    if (m.path == path) return m.role;
  }
  return Role::kNone;
}

bool Allowed(Role role, std::string_view path) {
  Role needed = RequiredRole(path);
  if (needed == Role::kNone) return false;
  return Rank(role) >= Rank(needed);
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kNone:
      return "none";
    case Role::kReader:
      return "reader";
    case Role::kOperator:
      return "operator";
  }
  return "none";
}

Role Roles::Of(const std::string& identity) const {
  if (identity.empty()) return Role::kNone;
  if (operators.count(identity)) return Role::kOperator;
  if (readers.count(identity)) return Role::kReader;
  return Role::kNone;
}

bool LoadRoles(const std::string& path, Roles* roles, std::string* error) {
  Roles out;
  std::string why;
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull()) {
      *roles = std::move(out);
      return true;
    }
    if (!root.IsMap()) {
      *error = path + ": expected a mapping with the keys operator and reader";
      return false;
    }
    for (const auto& kv : root) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      std::set<std::string>* list = nullptr;
      if (key == "operator") list = &out.operators;
      if (key == "reader") list = &out.readers;
      if (list == nullptr) {
        *error = path + ": unknown key '" + Printable(key) + "' (expected operator, reader)";
        return false;
      }
      if (!ReadList(kv.second, key, list, &why)) {
        *error = path + ": " + why;
        return false;
      }
    }
  } catch (const YAML::BadFile&) {
    *error = path + ": cannot read the roles file";
    return false;
  } catch (const YAML::Exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  *roles = std::move(out);
  return true;
}

std::string Printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace ward::agent
