// Who may call what on wardd: the exact method paths it serves, the least
// role each needs, and the identities of the roles file (`--roles FILE`).
// No gRPC here: server.cc asks these before it calls the service.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "enforcers/agent/service.h"

namespace ward::agent {

inline constexpr std::string_view kApplyMethod = "/ward.agent.v1.Agent/Apply";
inline constexpr std::string_view kRemoveMethod = "/ward.agent.v1.Agent/Remove";
inline constexpr std::string_view kListMethod = "/ward.agent.v1.Agent/List";
inline constexpr std::string_view kGetMethod = "/ward.agent.v1.Agent/Get";
inline constexpr std::string_view kCheckMethod = "/ward.agent.v1.Agent/Check";
inline constexpr std::string_view kWatchMethod = "/ward.agent.v1.Agent/Watch";

// The least role `path` needs, compared byte for byte with the table (no
// normalisation: "//", case changes, a trailing "/", "/./" and
// percent-encoding are other paths); kNone when the path is not in it,
// which nobody may call.
Role RequiredRole(std::string_view path);

// Whether `role` may call `path` (default deny).
bool Allowed(Role role, std::string_view path);

// "operator", "reader", "none".
const char* RoleName(Role role);

// The identities of `--roles FILE`, a YAML mapping with the keys `operator`
// and `reader`, each a list of identities (a certificate's URI SAN, else
// its CN). An identity in both lists is an operator.
struct Roles {
  std::set<std::string> operators;
  std::set<std::string> readers;
  Role Of(const std::string& identity) const;
};

// Reads the roles file; false with *error ("FILE: ...") on a YAML error,
// another top-level key, a value that is not a list of non-empty strings.
bool LoadRoles(const std::string& path, Roles* roles, std::string* error);

// `text` with every byte outside printable ASCII (and `\`) written as \xHH,
// for identities and names that go into logs and status messages.
std::string Printable(std::string_view text);

}  // namespace ward::agent
