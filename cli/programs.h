// Where ward's two executables are (cli/CMakeLists.txt): `ward`, what users
// run, in bin/, and `ward-cli`, the whole command line it hands everything
// but a cached `ward run` to, in libexec/ward/. The same layout in the build
// tree as installed, so each finds the other from its own path.
#pragma once

#include <string>

namespace ward::cli {

// The running executable's path (/proc/self/exe), "" when unknown.
std::string SelfPath();
// ward-cli, as `ward` finds it: <dir of ward>/../libexec/ward/ward-cli.
std::string WardCliPath();
// An identity of the pair of executables (device, inode, size and mtime of
// each), the same from either: a run cache entry written by one build of
// ward-cli is read only by the launcher of that build, and the other way
// round ("?" for one that is missing).
std::string ProgramsIdentity();

}  // namespace ward::cli
