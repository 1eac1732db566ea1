// Random syscalls sections for the property and differential tests, written
// as Ward source: two policies, `base` and `p extends base`, over 1-4
// architectures, with rules of every action (allow, log, notify, errno
// EPERM/EACCES/4095, trap, kill-thread, kill) on plain names, groups and
// conditions (==, !=, <, <=, >, >=, masks, in, not in, and negatives of
// signed parameters) at the edges of 32 and 64 bits, and, in half the
// programs, a group rule beside a rule naming one of its members directly,
// in one policy or across `extends`, either one first.
//
// Names come from a list of syscalls with scalar parameters and from
// AllSyscallNames(), so that the generator picks up every name the syscall
// tables gain. Each test asks the IR and its enforcer in its own way; the
// seccomp property test (tests/backends/seccomp) and the OCI differential
// test (tests/backends/oci) share this generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "language/syscall_facts.h"

namespace ward::test::sys {

// Every architecture Ward compiles for.
const std::vector<Arch>& AllArches();

class Generator {
 public:
  explicit Generator(std::mt19937& rng) : rng_(rng) {}

  // A program of two policies, `abstract policy base` and `policy p extends
  // base`; compile the last one.
  std::string Program();

  // Argument values worth calling with: those the conditions name, their
  // neighbours, their forms with bit 32 set and cleared, and the edges.
  const std::vector<uint64_t>& values() const { return values_; }

 private:
  int Coin(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Coin(static_cast<int>(v.size()))];
  }
  std::string PlainName();
  std::vector<std::string> GroupAndDirect();
  std::string Rule();
  std::string Condition(const std::string& name);
  std::string Value(int bits, bool is_signed);
  void Remember(uint64_t v);

  std::mt19937& rng_;
  std::vector<Arch> arches_;
  std::vector<uint64_t> values_ = {0,
                                   1,
                                   2,
                                   3,
                                   17,
                                   0x7fffffff,
                                   0x80000000,
                                   0xffffffff,
                                   uint64_t{1} << 32,
                                   ~uint64_t{0},
                                   0xffffffff80000000};
};

}  // namespace ward::test::sys
