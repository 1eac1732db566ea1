// Sets of syscall argument vectors, as the kafel importer computes with
// them: a region is a union of disjoint boxes, a box constrains each of the
// six arguments to one cube (the values x with (x & mask) == value; mask 0:
// any value). Intersection, union, difference and complement stay exact, so
// kafel's first-match order can be turned into rules that decide the same
// calls whatever order they are read in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace ward::importers::kafel {

struct Cube {
  uint64_t mask = 0, value = 0;  // value has no bit outside mask
  bool operator==(const Cube&) const = default;
};

struct Box {
  std::array<Cube, 6> args{};
  bool operator==(const Box&) const = default;
  bool Universal() const;
};

using Region = std::vector<Box>;

// A region grew past kMaxBoxes: the rule is too complex to translate.
struct TooComplex : std::runtime_error {
  TooComplex() : std::runtime_error("too complex") {}
};
inline constexpr size_t kMaxBoxes = 4096;

Region Universe();
std::optional<Cube> Intersect(const Cube& a, const Cube& b);
// The values outside `c`, as disjoint cubes (none for the universal cube).
std::vector<Cube> Complement(const Cube& c);

Region And(const Region& a, const Region& b);
Region Or(const Region& a, const Region& b);
Region Minus(const Region& a, const Region& b);
Region Not(const Region& a);
// True when `a` holds every argument vector.
bool Covers(const Region& a);

}  // namespace ward::importers::kafel
