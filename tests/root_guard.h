// Root tests that configure Catch2 themselves: a listener that skips the
// whole program (exit 77, which CTest reports as skipped, never as passed)
// when it does not run as root. Define CATCH_CONFIG_EXTERNAL_INTERFACES and
// include <catch2/catch.hpp> first; then, once per test program, at
// namespace scope: WARD_SKIP_UNLESS_ROOT("the ebpf enforcement tests").
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#define WARD_SKIP_UNLESS_ROOT(what)                                         \
  struct RootGuard : Catch::TestEventListenerBase {                         \
    using TestEventListenerBase::TestEventListenerBase;                     \
    void testRunStarting(const Catch::TestRunInfo&) override {              \
      if (geteuid() == 0) return;                                           \
      std::cout << "skipped: " << (what) << ": needs root\n" << std::flush; \
      std::_Exit(77);                                                       \
    }                                                                       \
  };                                                                        \
  CATCH_REGISTER_LISTENER(RootGuard)
