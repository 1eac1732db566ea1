// `ward compile -t ebpf`: `<policy>.ebpf.json`, the contents of the maps of
// Ward's BPF program set (bpf/ward.bpf.c) for the policy's egress
// partition. README.md describes the programs, the maps and the artifact.
#pragma once

#include "backends/backend.h"

namespace ward::backend {

const Backend& EbpfBackend();

}  // namespace ward::backend
