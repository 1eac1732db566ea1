#include "language/literals.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <initializer_list>
#include <limits>

namespace ward {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::optional<uint64_t> ParseUnsigned(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Splits "123unit" into the digits (with an optional fraction) and the unit.
bool SplitNumber(std::string_view text, std::string_view* number, std::string_view* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == 0) return false;
  *number = text.substr(0, i);
  *unit = text.substr(i);
  return true;
}

std::optional<uint64_t> Scale(uint64_t n, uint64_t factor) {
  if (factor != 0 && n > std::numeric_limits<uint64_t>::max() / factor) return std::nullopt;
  return n * factor;
}

struct Unit {
  std::string_view name;
  uint64_t factor;
};

std::optional<uint64_t> ParseWithUnits(std::string_view text, const Unit* units, size_t count,
                                       std::string_view what, std::string* error) {
  std::string_view number, unit;
  if (!SplitNumber(text, &number, &unit) || !AllDigits(number)) {
    *error = "not a " + std::string(what) + " (a whole number with a unit)";
    return std::nullopt;
  }
  for (size_t i = 0; i < count; ++i) {
    if (unit == units[i].name) {
      auto n = ParseUnsigned(number, 10);
      auto v = n ? Scale(*n, units[i].factor) : std::nullopt;
      if (!v) *error = std::string(what) + " too large";
      return v;
    }
  }
  *error = "unknown " + std::string(what) + " unit '" + std::string(unit) + "'";
  return std::nullopt;
}

}  // namespace

bool IsIdentifier(std::string_view w) {
  if (w.empty()) return false;
  unsigned char c0 = static_cast<unsigned char>(w[0]);
  if (!std::isalpha(c0) && c0 != '_') return false;
  for (char c : w) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

LiteralKind Classify(std::string_view w) {
  std::string err;
  if (w.empty()) return LiteralKind::kOther;
  if (ParseInteger(w, &err)) return LiteralKind::kInteger;
  if (w.find('/') != std::string_view::npos && ParseIpOrCidr(w, &err)) return LiteralKind::kCidr;
  if (ParseIpOrCidr(w, &err)) return LiteralKind::kIpAddress;
  size_t dash = w.find('-');
  if (dash != std::string_view::npos && AllDigits(w.substr(0, dash)) &&
      AllDigits(w.substr(dash + 1))) {
    return LiteralKind::kRange;
  }
  size_t colon = w.find(':');
  if (colon != std::string_view::npos && AllDigits(w.substr(0, colon)) &&
      AllDigits(w.substr(colon + 1))) {
    return LiteralKind::kUidGid;
  }
  if (ParseMilliUnits(w, &err)) return LiteralKind::kDecimal;
  if (ParseSize(w, &err)) return LiteralKind::kSize;
  if (ParseDuration(w, &err)) return LiteralKind::kDuration;
  if (ParseRate(w, &err)) return LiteralKind::kRate;
  if (IsIdentifier(w)) return LiteralKind::kName;
  return LiteralKind::kOther;
}

std::string_view DescribeKind(LiteralKind kind) {
  switch (kind) {
    case LiteralKind::kInteger:
      return "an integer";
    case LiteralKind::kRange:
      return "a range";
    case LiteralKind::kDecimal:
      return "a decimal number";
    case LiteralKind::kIpAddress:
      return "an IP address";
    case LiteralKind::kCidr:
      return "a CIDR";
    case LiteralKind::kSize:
      return "a size";
    case LiteralKind::kDuration:
      return "a duration";
    case LiteralKind::kRate:
      return "a rate";
    case LiteralKind::kName:
      return "a name";
    case LiteralKind::kUidGid:
      return "a UID:GID pair";
    case LiteralKind::kOther:
      return "an unrecognised literal";
  }
  return "a literal";
}

std::optional<IpPrefix> ParseIpOrCidr(std::string_view text, std::string* error) {
  IpPrefix p;
  std::string_view addr = text;
  std::optional<uint64_t> length;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    std::string_view len = text.substr(slash + 1);
    length = AllDigits(len) && len.size() <= 3 ? ParseUnsigned(len, 10) : std::nullopt;
    if (!length) {
      *error = "invalid prefix length '" + std::string(len) + "'";
      return std::nullopt;
    }
  }
  std::string a(addr);
  if (a.find(':') != std::string::npos) {
    p.v6 = true;
    if (inet_pton(AF_INET6, a.c_str(), p.bytes.data()) != 1) {
      *error = "not an IPv6 address";
      return std::nullopt;
    }
  } else {
    // inet_pton(AF_INET) accepts only the dotted-quad form, no octal or short forms.
    if (inet_pton(AF_INET, a.c_str(), p.bytes.data()) != 1) {
      *error = "not an IPv4 address";
      return std::nullopt;
    }
  }
  uint8_t max = p.v6 ? 128 : 32;
  if (length && *length > max) {
    *error = "prefix length " + std::to_string(*length) + " is longer than " + std::to_string(max);
    return std::nullopt;
  }
  p.length = length ? static_cast<uint8_t>(*length) : max;
  return p;
}

std::string FormatPrefix(const IpPrefix& p) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(p.v6 ? AF_INET6 : AF_INET, p.bytes.data(), buf, sizeof buf);
  std::string s = buf;
  if (p.length != (p.v6 ? 128 : 32)) s += "/" + std::to_string(p.length);
  return s;
}

bool HostBitsSet(const IpPrefix& p, IpPrefix* canonical) {
  *canonical = p;
  size_t bytes = p.v6 ? 16 : 4;
  bool set = false;
  for (size_t i = 0; i < bytes; ++i) {
    int keep = static_cast<int>(p.length) - static_cast<int>(i * 8);
    uint8_t mask = keep >= 8 ? 0xFF : keep <= 0 ? 0 : static_cast<uint8_t>(0xFF << (8 - keep));
    if (p.bytes[i] & ~mask) set = true;
    canonical->bytes[i] = p.bytes[i] & mask;
  }
  return set;
}

std::optional<PortRange> ParsePortRange(std::string_view text, std::string* error) {
  std::string_view lo = text, hi = text;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    lo = text.substr(0, dash);
    hi = text.substr(dash + 1);
  }
  if (!AllDigits(lo) || !AllDigits(hi) || lo.size() > 6 || hi.size() > 6) {
    *error = "not a port or port range";
    return std::nullopt;
  }
  uint64_t l = *ParseUnsigned(lo, 10), h = *ParseUnsigned(hi, 10);
  if (l < 1 || l > 65535 || h < 1 || h > 65535) {
    *error = "port out of range 1-65535";
    return std::nullopt;
  }
  if (l > h) {
    *error = "empty port range (" + std::to_string(l) + " > " + std::to_string(h) + ")";
    return std::nullopt;
  }
  return PortRange{static_cast<uint16_t>(l), static_cast<uint16_t>(h), {}};
}

std::optional<int64_t> ParseInteger(std::string_view text, std::string* error) {
  bool negative = !text.empty() && text[0] == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  std::optional<uint64_t> v;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    v = ParseUnsigned(digits.substr(2), 16);
  } else if (AllDigits(digits)) {
    v = ParseUnsigned(digits, 10);
  }
  if (!v) {
    *error = "not an integer";
    return std::nullopt;
  }
  if (negative) {
    if (*v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      *error = "integer out of range";
      return std::nullopt;
    }
    return static_cast<int64_t>(0 - *v);
  }
  // Non-negative values up to 2^64-1 are kept as their bit pattern.
  return static_cast<int64_t>(*v);
}

std::optional<uint64_t> ParseSize(std::string_view text, std::string* error) {
  static constexpr Unit kUnits[] = {
      {"B", 1},
      {"K", 1000},
      {"KB", 1000},
      {"KiB", 1ull << 10},
      {"M", 1000 * 1000},
      {"MB", 1000 * 1000},
      {"MiB", 1ull << 20},
      {"G", 1000ull * 1000 * 1000},
      {"GB", 1000ull * 1000 * 1000},
      {"GiB", 1ull << 30},
      {"T", 1000ull * 1000 * 1000 * 1000},
      {"TB", 1000ull * 1000 * 1000 * 1000},
      {"TiB", 1ull << 40},
  };
  return ParseWithUnits(text, kUnits, std::size(kUnits), "size", error);
}

std::optional<uint64_t> ParseDuration(std::string_view text, std::string* error) {
  static constexpr Unit kUnits[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 3600 * 1000}, {"d", 24 * 3600 * 1000}};
  return ParseWithUnits(text, kUnits, std::size(kUnits), "duration", error);
}

std::optional<uint64_t> ParseRate(std::string_view text, std::string* error) {
  static constexpr Unit kUnits[] = {
      {"bit", 1},
      {"Kbit", 1000},
      {"Mbit", 1000 * 1000},
      {"Gbit", 1000ull * 1000 * 1000},
      {"B/s", 8},
      {"KB/s", 8 * 1000},
      {"KiB/s", 8ull << 10},
      {"MB/s", 8ull * 1000 * 1000},
      {"MiB/s", 8ull << 20},
      {"GB/s", 8ull * 1000 * 1000 * 1000},
      {"GiB/s", 8ull << 30},
  };
  return ParseWithUnits(text, kUnits, std::size(kUnits), "rate", error);
}

std::optional<uint64_t> ParseMilliUnits(std::string_view text, std::string* error) {
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (!AllDigits(whole) || whole.size() > 9 ||
      (dot != std::string_view::npos && (!AllDigits(frac) || frac.size() > 3))) {
    *error = "not a number with at most three decimals";
    return std::nullopt;
  }
  uint64_t v = *ParseUnsigned(whole, 10) * 1000;
  uint64_t scale = 100;
  for (char c : frac) {
    v += static_cast<uint64_t>(c - '0') * scale;
    scale /= 10;
  }
  return v;
}

std::string UnitHint(std::string_view text, LiteralKind kind) {
  std::string_view number, unit;
  if (!SplitNumber(text, &number, &unit) || !AllDigits(number) || unit.empty()) return "";
  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string n(number);
  if (kind == LiteralKind::kSize) {
    struct Prefix {
      char letter;
      const char* decimal;
      const char* binary;
    };
    static constexpr Prefix kPrefixes[] = {{'k', "10^3", "2^10"},
                                           {'m', "10^6", "2^20"},
                                           {'g', "10^9", "2^30"},
                                           {'t', "10^12", "2^40"}};
    if (lower == "b" || lower == "byte" || lower == "bytes") return "did you mean " + n + "B?";
    for (const Prefix& p : kPrefixes) {
      if (lower[0] != p.letter) continue;
      std::string upper(1, static_cast<char>(std::toupper(p.letter)));
      std::string binary = n + upper + "iB (" + n + " x " + p.binary + " bytes)";
      std::string decimal = n + upper + "B (" + n + " x " + p.decimal + " bytes)";
      if (lower.size() == 1 || lower.substr(1) == "b") {
        return "did you mean " + binary + " or " + decimal + "?";
      }
      if (lower.substr(1) == "ib") return "did you mean " + binary + "?";
    }
    return "";
  }
  if (kind != LiteralKind::kDuration) return "";
  struct Alias {
    const char* unit;
    std::initializer_list<const char*> spellings;
  };
  static const Alias kAliases[] = {
      {"ms", {"ms", "msec", "msecs", "millis", "millisecond", "milliseconds"}},
      {"s", {"s", "sec", "secs", "second", "seconds"}},
      {"m", {"m", "min", "mins", "minute", "minutes"}},
      {"h", {"h", "hr", "hrs", "hour", "hours"}},
      {"d", {"d", "day", "days"}},
  };
  for (const Alias& a : kAliases) {
    for (const char* spelling : a.spellings) {
      if (lower == spelling) return "did you mean " + n + a.unit + "? (units: ms, s, m, h, d)";
    }
  }
  return "";
}

}  // namespace ward
