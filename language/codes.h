// The catalogue of front-end diagnostic codes (language.md § Errors):
// W0xxx syntax, W1xxx semantics. Lint (L2xxx) and backends (B3xxx) add their
// own. The table in codes.cc gives each a stable string and a short title,
// which the SARIF output and language/README.md use.
#pragma once

#include <string_view>

namespace ward {

enum class Code {
  // W0xxx: the text does not parse.
  kSyntaxError,          // W0001
  kUnexpectedCharacter,  // W0002
  kUnterminatedString,   // W0003
  kUnterminatedComment,  // W0004
  kInvalidUtf8,          // W0005
  kNestingTooDeep,       // W0006
  kFileTooLarge,         // W0007
  kInvalidEscape,        // W0008
  kUnsupportedVersion,   // W0009
  kTooManyErrors,        // W0010
  // W1xxx: the text parses but does not mean anything valid.
  kCannotRead,         // W1001
  kImportCycle,        // W1002
  kDuplicateName,      // W1003
  kUnknownPolicy,      // W1004
  kExtendsCycle,       // W1005
  kUndefinedName,      // W1006
  kShadowedName,       // W1007
  kTypeMismatch,       // W1008
  kInvalidLiteral,     // W1009
  kUnknownSyscall,     // W1010
  kSyscallNotOnArch,   // W1011
  kUnknownArch,        // W1012
  kUnknownErrno,       // W1013
  kUnknownConstant,    // W1014
  kPointerArgument,    // W1015
  kNoSuchArgument,     // W1016
  kMaskNeverHolds,     // W1017
  kValueOutOfRange,    // W1018
  kPortOutOfRange,     // W1019
  kHostBitsSet,        // W1020
  kWrongDirection,     // W1021
  kPortWithIcmp,       // W1022
  kMissingPeer,        // W1023
  kUnknownGroup,       // W1024
  kGroupCycle,         // W1025
  kReservedGroupName,  // W1026
  kDuplicateSection,   // W1027
  kInvalidPath,        // W1028
  kUnknownLimit,       // W1029
  kUnknownTarget,      // W1030
  kBadInterpolation,   // W1031
  kStdNotFound,        // W1032
  kInvalidName,        // W1033
  kDuplicateEntry,     // W1034
  kInvalidUnixSocket,  // W1035
  kInvalidDomain,      // W1036
  kUnknownSignature,   // W1037
  kUnknownCapability,  // W1038
  kInvalidEnvName,     // W1039
  kInvalidUser,        // W1040
  kSplitArgument,      // W1041
  kEmptyList,          // W1042
  kSyscallConflict,    // W1043 (found while lowering to the IR)
  kArgOrderDiffers,    // W1044
  kUnknownNetlink,     // W1045
  kLiteralGlob,        // W1046 (a warning: `?`, `[` or `{` in a path)
  // B3xxx: a backend cannot compile the policy as asked.
  kUnenforcedSection,  // B3001 (a section no chosen target enforces)
  kCannotExpress,      // B3002 (the target cannot express a rule exactly)
  kBypassReopened,     // B3003 (the policy re-opens a closed bypass class)
  kKillsEverySyscall,  // B3004 (a warning: no syscall rules, for a target that filters syscalls)
  kCount,
};

std::string_view CodeString(Code code);  // "W0001"
std::string_view CodeTitle(Code code);   // "syntax-error"

}  // namespace ward
