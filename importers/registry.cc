#include "importers/registry.h"

#include "importers/docker_seccomp/docker_seccomp.h"
#include "importers/firejail/firejail.h"
#include "importers/kafel/kafel.h"
#include "importers/networkpolicy/networkpolicy.h"
#include "importers/spo_seccomp/spo_seccomp.h"
#include "importers/srt/srt.h"

namespace ward::importers {

const std::vector<ImportFormat>& ImportFormats() {
  static const std::vector<ImportFormat> kFormats = {
      {"docker-seccomp", "a Docker/OCI seccomp profile (JSON)", ImportDockerSeccomp, false},
      {"spo-seccomp", "security-profiles-operator SeccompProfile objects (YAML)", ImportSpoSeccomp,
       false},
      {"srt", "srt (@anthropic-ai/sandbox-runtime) settings, as Claude Code's sandbox reads them",
       ImportSrt, true},
      {"kafel", "a kafel policy (nsjail's seccomp policy language), for x86_64", ImportKafel,
       false},
      {"networkpolicy",
       "Kubernetes NetworkPolicies: one pod's effective policy (--cluster SNAPSHOT --pod NS/NAME)",
       ImportNetworkPolicy, false, true},
      {"firejail", "a firejail profile (0.9.72, as Debian 12 ships it) with its includes",
       ImportFirejail, false},
  };
  return kFormats;
}

const ImportFormat* FindImportFormat(std::string_view name) {
  for (const ImportFormat& f : ImportFormats()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

}  // namespace ward::importers
