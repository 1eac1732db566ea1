#include "language/codes.h"

#include <array>

namespace ward {
namespace {

struct CodeInfo {
  std::string_view code;
  std::string_view title;
};

constexpr std::array<CodeInfo, static_cast<size_t>(Code::kCount)> kCodes = {{
    {"W0001", "syntax-error"},        {"W0002", "unexpected-character"},
    {"W0003", "unterminated-string"}, {"W0004", "unterminated-comment"},
    {"W0005", "invalid-utf8"},        {"W0006", "nesting-too-deep"},
    {"W0007", "file-too-large"},      {"W0008", "invalid-escape"},
    {"W0009", "unsupported-version"}, {"W0010", "too-many-errors"},
    {"W1001", "cannot-read"},         {"W1002", "import-cycle"},
    {"W1003", "duplicate-name"},      {"W1004", "unknown-policy"},
    {"W1005", "extends-cycle"},       {"W1006", "undefined-name"},
    {"W1007", "shadowed-name"},       {"W1008", "type-mismatch"},
    {"W1009", "invalid-literal"},     {"W1010", "unknown-syscall"},
    {"W1011", "syscall-not-on-arch"}, {"W1012", "unknown-arch"},
    {"W1013", "unknown-errno"},       {"W1014", "unknown-constant"},
    {"W1015", "pointer-argument"},    {"W1016", "no-such-argument"},
    {"W1017", "mask-never-holds"},    {"W1018", "value-out-of-range"},
    {"W1019", "port-out-of-range"},   {"W1020", "host-bits-set"},
    {"W1021", "wrong-direction"},     {"W1022", "port-with-icmp"},
    {"W1023", "missing-peer"},        {"W1024", "unknown-group"},
    {"W1025", "group-cycle"},         {"W1026", "reserved-group-name"},
    {"W1027", "duplicate-section"},   {"W1028", "invalid-path"},
    {"W1029", "unknown-limit"},       {"W1030", "unknown-target"},
    {"W1031", "bad-interpolation"},   {"W1032", "std-not-found"},
    {"W1033", "invalid-name"},        {"W1034", "duplicate-entry"},
    {"W1035", "invalid-unix-socket"}, {"W1036", "invalid-domain"},
    {"W1037", "unknown-signature"},   {"W1038", "unknown-capability"},
    {"W1039", "invalid-env-name"},    {"W1040", "invalid-user"},
    {"W1041", "split-argument"},      {"W1042", "empty-list"},
    {"W1043", "syscall-conflict"},    {"W1044", "arg-order-differs"},
    {"W1045", "unknown-netlink"},     {"W1046", "literal-glob"},
    {"B3001", "unenforced-section"},  {"B3002", "cannot-express"},
    {"B3003", "bypass-reopened"},     {"B3004", "kills-every-syscall"},
}};

}  // namespace

std::string_view CodeString(Code code) { return kCodes[static_cast<size_t>(code)].code; }
std::string_view CodeTitle(Code code) { return kCodes[static_cast<size_t>(code)].title; }

}  // namespace ward
