// What `ward --version` says about the build, fixed when CMake configured
// it (cli/build_info.cc.in).
#pragma once

namespace ward::cli {

struct BuildInfo {
  const char* version;     // the project's version
  const char* commit;      // `git describe --always --dirty` at configure time; "unknown"
  const char* build_type;  // CMAKE_BUILD_TYPE
  const char* nftables;    // libnftables' pkg-config version at build time; "" without it
};

const BuildInfo& GetBuildInfo();

}  // namespace ward::cli
