// Literals with meaning (language.md § Lexical rules): addresses and CIDRs,
// ports and ranges, sizes, durations, rates and integers. Pure functions on
// the text of one WORD token; the checker turns failures into diagnostics.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "language/source.h"

namespace ward {

struct IpPrefix {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // v4 uses the first four
  uint8_t length = 0;               // prefix length; 32 or 128 for a host
  bool operator==(const IpPrefix&) const = default;
};

struct PortRange {
  uint16_t lo = 0;
  uint16_t hi = 0;
  Span span;
};

// What a WORD looks like, for type checks and "expected X, found Y".
enum class LiteralKind {
  kInteger,    // 42, 0x2a, -1
  kRange,      // 8000-8100
  kDecimal,    // 0.5
  kIpAddress,  // 10.0.0.1, ::1
  kCidr,       // 10.0.0.0/8, fd00::/8
  kSize,       // 4GiB
  kDuration,   // 30s
  kRate,       // 100Mbit, 10MiB/s
  kName,       // identifier-shaped: a let, a constant, a syscall
  kUidGid,     // 1000:1000
  kOther,
};

LiteralKind Classify(std::string_view word);
// A short phrase for messages: "an integer", "a CIDR", ...
std::string_view DescribeKind(LiteralKind kind);
bool IsIdentifier(std::string_view word);

// Each parser returns nullopt and sets *error (a short reason) on bad input.
std::optional<IpPrefix> ParseIpOrCidr(std::string_view text, std::string* error);
// The canonical text of a prefix (`10.0.0.0/8`, `fd00::/8`, a host without /len).
std::string FormatPrefix(const IpPrefix& p);
// True when bits beyond the prefix length are set; *canonical gets the fix.
bool HostBitsSet(const IpPrefix& p, IpPrefix* canonical);

std::optional<PortRange> ParsePortRange(std::string_view text, std::string* error);
std::optional<int64_t> ParseInteger(std::string_view text, std::string* error);
std::optional<uint64_t> ParseSize(std::string_view text, std::string* error);        // bytes
std::optional<uint64_t> ParseDuration(std::string_view text, std::string* error);    // ms
std::optional<uint64_t> ParseRate(std::string_view text, std::string* error);        // bit/s
std::optional<uint64_t> ParseMilliUnits(std::string_view text, std::string* error);  // 1.5 -> 1500

// For a size (kSize) or a duration (kDuration) whose unit is not one the
// language spells that way (`4gb`, `10sec`): the spellings it may have
// meant, as a hint ("did you mean 4GiB (4 x 2^30 bytes) or 4GB (4 x 10^9
// bytes)?"). Never a silent correction: empty when nothing fits.
std::string UnitHint(std::string_view text, LiteralKind kind);

}  // namespace ward
