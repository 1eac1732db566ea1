#include "compiler/fs_names.h"

namespace ward::ir {

const char* FsRightName(FsRight right) {
  switch (right) {
    case FsRight::kRead:
      return "read";
    case FsRight::kWrite:
      return "write";
    case FsRight::kExec:
      return "exec";
  }
  return "read";
}

}  // namespace ward::ir
