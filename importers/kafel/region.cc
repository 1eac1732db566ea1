#include "importers/kafel/region.h"

namespace ward::importers::kafel {
namespace {

void Push(Region* r, Box b) {
  if (r->size() >= kMaxBoxes) throw TooComplex();
  r->push_back(b);
}

std::optional<Box> Intersect(const Box& a, const Box& b) {
  Box out;
  for (size_t i = 0; i < 6; ++i) {
    auto c = Intersect(a.args[i], b.args[i]);
    if (!c) return std::nullopt;
    out.args[i] = *c;
  }
  return out;
}

// a minus b, as disjoint boxes.
void Subtract(const Box& a, const Box& b, Region* out) {
  if (!Intersect(a, b)) {
    Push(out, a);
    return;
  }
  Box rest = a;
  for (size_t i = 0; i < 6; ++i) {
    if (b.args[i].mask == 0) continue;
    for (const Cube& k : Complement(b.args[i])) {
      if (auto c = Intersect(rest.args[i], k)) {
        Box piece = rest;
        piece.args[i] = *c;
        Push(out, piece);
      }
    }
    rest.args[i] = *Intersect(rest.args[i], b.args[i]);
  }
  // What is left lies inside b.
}

}  // namespace

bool Box::Universal() const {
  for (const Cube& c : args) {
    if (c.mask != 0) return false;
  }
  return true;
}

Region Universe() { return {Box{}}; }

std::optional<Cube> Intersect(const Cube& a, const Cube& b) {
  if ((a.value ^ b.value) & a.mask & b.mask) return std::nullopt;
  return Cube{a.mask | b.mask, a.value | b.value};
}

std::vector<Cube> Complement(const Cube& c) {
  std::vector<Cube> out;
  uint64_t above = 0;  // the mask's bits already fixed to c's values
  for (int bit = 63; bit >= 0; --bit) {
    const uint64_t b = uint64_t{1} << bit;
    if (!(c.mask & b)) continue;
    out.push_back({above | b, (c.value & above) | (~c.value & b)});
    above |= b;
  }
  return out;
}

Region And(const Region& a, const Region& b) {
  Region out;
  for (const Box& x : a) {
    for (const Box& y : b) {
      if (auto z = Intersect(x, y)) Push(&out, *z);
    }
  }
  return out;
}

Region Minus(const Region& a, const Region& b) {
  Region current = a;
  for (const Box& y : b) {
    Region next;
    for (const Box& x : current) Subtract(x, y, &next);
    current.swap(next);
    if (current.empty()) break;
  }
  return current;
}

Region Or(const Region& a, const Region& b) {
  Region out = a;
  for (const Box& x : Minus(b, a)) Push(&out, x);
  return out;
}

Region Not(const Region& a) { return Minus(Universe(), a); }

bool Covers(const Region& a) { return Minus(Universe(), a).empty(); }

}  // namespace ward::importers::kafel
