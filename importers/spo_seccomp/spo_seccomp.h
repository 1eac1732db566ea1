// `ward import --from spo-seccomp`: security-profiles-operator SeccompProfile
// objects (YAML, apiVersion security-profiles-operator.x-k8s.io/v1 or
// v1beta1, kind SeccompProfile). The operator writes a profile's `spec` to
// the nodes as the JSON runc reads, so the spec is imported as that JSON
// (ImportDockerSeccomp), one policy per SeccompProfile document.
#pragma once

#include <string_view>

#include "importers/docker_seccomp/docker_seccomp.h"

namespace ward::importers {

// Every SeccompProfile document of `yaml`, each a policy named by its
// metadata.name (options.name is ignored). Other documents are skipped
// with a warning; a `baseProfileName` is refused (the base is another
// object in the cluster, which the file does not hold).
ImportResult ImportSpoSeccomp(std::string_view yaml, const DockerImportOptions& options);

// Whether `text` is YAML with a SeccompProfile document (for the hint
// `--from docker-seccomp` gives such a file).
bool LooksLikeSpoSeccomp(std::string_view text);

}  // namespace ward::importers
