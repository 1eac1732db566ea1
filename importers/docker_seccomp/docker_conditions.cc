#include "importers/docker_seccomp/docker_conditions.h"

namespace ward::importers {

uint64_t WidthMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

std::string Hex(uint64_t v) {
  if (v < 10) return std::to_string(v);
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (; v; v >>= 4) out.insert(out.begin(), kDigits[v & 15]);
  return "0x" + out;
}

namespace {

using Kind = ArgPredicate::Kind;

ArgPredicate Make(Kind kind) { return {kind, 0, 0, 0, 0}; }

ArgPredicate Range(uint64_t lo, uint64_t hi, uint64_t max) {
  if (lo == 0 && hi == max) return Make(Kind::kTrue);
  return {Kind::kRange, lo, hi, 0, 0};
}

// The bounds of one piece of a signed range that does not cross the sign.
std::vector<std::string> SignedPiece(const std::string& a, uint64_t lo, uint64_t hi, int bits) {
  const uint64_t half = uint64_t{1} << (bits - 1);
  auto as_signed = [&](uint64_t v) {
    return bits == 64 ? static_cast<int64_t>(v)
                      : static_cast<int64_t>(v) - (v >= half ? static_cast<int64_t>(half) * 2 : 0);
  };
  if (lo == hi) return {a + " == " + Hex(lo)};
  std::vector<std::string> out;
  if (lo != half) out.push_back(a + " >= " + std::to_string(as_signed(lo)));
  if (hi != half - 1) out.push_back(a + " <= " + std::to_string(as_signed(hi)));
  return out;
}

}  // namespace

std::optional<ArgPredicate> DockerPredicate(const std::string& op, uint64_t value,
                                            uint64_t value_two, int arch_bits, int param_bits) {
  // libseccomp keeps only the low 32 bits of the datum on a 32-bit
  // architecture.
  const uint64_t reg = WidthMask(arch_bits);
  const uint64_t c = value & reg;
  const uint64_t max = WidthMask(param_bits);
  if (op == "SCMP_CMP_EQ") return c > max ? Make(Kind::kFalse) : Range(c, c, max);
  if (op == "SCMP_CMP_NE") {
    return c > max ? Make(Kind::kTrue) : ArgPredicate{Kind::kNotEqual, c, c, 0, 0};
  }
  if (op == "SCMP_CMP_LT") {
    if (c == 0) return Make(Kind::kFalse);
    return c > max ? Make(Kind::kTrue) : Range(0, c - 1, max);
  }
  if (op == "SCMP_CMP_LE") return c >= max ? Make(Kind::kTrue) : Range(0, c, max);
  if (op == "SCMP_CMP_GT") return c >= max ? Make(Kind::kFalse) : Range(c + 1, max, max);
  if (op == "SCMP_CMP_GE") {
    if (c > max) return Make(Kind::kFalse);
    return Range(c, max, max);
  }
  if (op == "SCMP_CMP_MASKED_EQ") {
    const uint64_t mask = c;
    const uint64_t datum = value_two & reg & mask;  // libseccomp masks the datum
    // Bits above the parameter are zero in what the kernel reads.
    if (datum & ~max) return Make(Kind::kFalse);
    if ((mask & max) == 0) return Make(Kind::kTrue);
    if ((mask & max) == max) return Range(datum, datum, max);
    return ArgPredicate{Kind::kMasked, 0, 0, mask & max, datum};
  }
  return std::nullopt;
}

Alternatives WardConditions(const ArgPredicate& p, int arg, const ParamType& type) {
  const std::string a = "arg" + std::to_string(arg);
  const uint64_t max = WidthMask(type.bits);
  switch (p.kind) {
    case Kind::kTrue:
      return {{}};
    case Kind::kFalse:
      return {};
    case Kind::kNotEqual:
      return {{a + " != " + Hex(p.lo)}};
    case Kind::kMasked:
      return {{a + " & " + Hex(p.mask) + " == " + Hex(p.value)}};
    case Kind::kRange:
      break;
  }
  if (!type.is_signed) {
    if (p.lo == p.hi) return {{a + " == " + Hex(p.lo)}};
    if (p.lo == 0) return {{a + " <= " + Hex(p.hi)}};
    if (p.hi == max) return {{a + " >= " + Hex(p.lo)}};
    return {{a + " >= " + Hex(p.lo), a + " <= " + Hex(p.hi)}};
  }
  // Ward compares a signed parameter as signed: the unsigned range splits
  // where the sign bit flips.
  const uint64_t half = uint64_t{1} << (type.bits - 1);
  if (p.hi < half || p.lo >= half) return {SignedPiece(a, p.lo, p.hi, type.bits)};
  return {SignedPiece(a, p.lo, half - 1, type.bits), SignedPiece(a, half, p.hi, type.bits)};
}

std::vector<Cube> Cubes(const ArgPredicate& p, int bits) {
  const uint64_t max = WidthMask(bits);
  switch (p.kind) {
    case Kind::kTrue:
      return {{0, 0}};
    case Kind::kFalse:
      return {};
    case Kind::kMasked:
      return {{p.mask, p.value}};
    case Kind::kNotEqual: {
      std::vector<Cube> out;
      for (int b = 0; b < bits; ++b) {
        const uint64_t mask = max & ~WidthMask(b);
        out.push_back({mask, (p.lo ^ (uint64_t{1} << b)) & mask});
      }
      return out;
    }
    case Kind::kRange:
      break;
  }
  // The aligned blocks of [lo, hi], largest first.
  std::vector<Cube> out;
  uint64_t lo = p.lo;
  while (true) {
    int k = 0;
    while (k < bits && (lo & WidthMask(k + 1)) == 0 && (p.hi - lo) >= WidthMask(k + 1)) ++k;
    out.push_back({max & ~WidthMask(k), lo});
    const uint64_t last = lo + WidthMask(k);
    if (last >= p.hi) break;
    lo = last + 1;
  }
  return out;
}

bool Intersect(const std::vector<Cube>& a, const std::vector<Cube>& b) {
  for (const Cube& x : a) {
    for (const Cube& y : b) {
      if (((x.value ^ y.value) & x.mask & y.mask) == 0) return true;
    }
  }
  return false;
}

}  // namespace ward::importers
