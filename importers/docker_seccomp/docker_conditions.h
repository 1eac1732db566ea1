// One Docker argument comparison as the kernel sees it, and its Ward form.
//
// libseccomp compares the whole register: 64 bits on a 64-bit architecture
// (the datum cut to 32 bits on a 32-bit one), unsigned, and SCMP_CMP_MASKED_EQ
// holds when (arg & mask) == (datum & mask). The kernel reads a parameter at
// its declared width. On the values it can read (0 to 2^bits - 1, zero
// extended), each comparison is one of the predicates below; Ward, which
// compares at the declared width and signedness, writes it as one or two
// alternatives of conditions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "language/syscall_facts.h"

namespace ward::importers {

// The values of `bits` bits: 2^bits - 1 (all ones for 64).
uint64_t WidthMask(int bits);
// A condition's literal: decimal below 10, else lowercase hex ("0x1f").
std::string Hex(uint64_t v);

struct ArgPredicate {
  enum class Kind { kTrue, kFalse, kRange, kNotEqual, kMasked };
  Kind kind = Kind::kTrue;
  uint64_t lo = 0, hi = 0;       // kRange: lo <= x <= hi (unsigned); kNotEqual: x != lo
  uint64_t mask = 0, value = 0;  // kMasked: (x & mask) == value, value within mask
  bool operator==(const ArgPredicate&) const = default;
};

// The predicate of Docker's `op` with `value`/`valueTwo` on a parameter of
// `param_bits` bits on an architecture of `arch_bits` bits; nullopt for an
// unknown op.
std::optional<ArgPredicate> DockerPredicate(const std::string& op, uint64_t value,
                                            uint64_t value_two, int arch_bits, int param_bits);

// Ward conditions for `argN` of this type: a list of alternatives (their
// union is the predicate), each a list of conditions that must all hold.
// No alternative: never holds; one empty alternative: always holds.
using Alternatives = std::vector<std::vector<std::string>>;
Alternatives WardConditions(const ArgPredicate& p, int arg, const ParamType& type);

// A ternary cube over one parameter: x with (x & mask) == value.
struct Cube {
  uint64_t mask = 0, value = 0;
};
// The predicate as a union of disjoint cubes over `bits` bits.
std::vector<Cube> Cubes(const ArgPredicate& p, int bits);
bool Intersect(const std::vector<Cube>& a, const std::vector<Cube>& b);

}  // namespace ward::importers
