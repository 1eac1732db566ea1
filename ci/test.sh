#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite.
#
# One sanitizer build (gcc, ASan+UBSan) runs every CTest test; a clang build
# makes only the libFuzzer target, whose bounded run goes in parallel. Fails
# when any test fails, when no test ran, or, with CI=true, when any test was
# skipped (a skipped root test is a hole in CI, not a pass).
set -euo pipefail
cd "$(dirname "$0")/.."

ci/setup.sh
jobs=$(nproc)

cmake --preset asan >/dev/null
cmake --build build/asan -j"$jobs"
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"$jobs" --target ward_fuzz_frontend ward_fuzz_import ward_fuzz_bundle ward_fuzz_srt \
  ward_fuzz_kafel ward_fuzz_networkpolicy ward_fuzz_firejail

logs=$(mktemp -d)
status=0
# A quarter of the rounds of the randomized property loops (tests/property_rounds.h).
# Under ASan+UBSan, at full rounds, those loops made the slowest tests of the
# suite (language_format_test 112 s, backend_seatbelt_test 81 s,
# importers_round_trip_test 72 s, compiler_ir_json_test 53 s, ...); at a quarter
# each of them takes 20-30 s. Every run draws new seeds (printed, replayable with
# WARD_SEED), so the cases covered still add up run after run. A run without the
# variable (ctest by hand) does every round.
export WARD_PROPERTY_SCALE=0.25
# The fuzz runs are tests in their own tree, one after another on one core
# while the suite uses the rest: fuzz_frontend_60s, fuzz_import_300s,
# fuzz_bundle_30s, fuzz_srt_30s and fuzz_kafel_30s, 7.5 minutes in all. The import fuzzer needs seconds to a
# minute from its seeds to reach the class of its W1043 finding, and byte
# mutations alone did not in ten minutes (tests/fuzz/README.md): 300 s leaves
# it room for the next such class.
(cd build/fuzz && ctest -R '^fuzz_' --output-on-failure >"$logs/fuzz.log" 2>&1) &
fuzz_pid=$!
(cd build/asan && ctest -j"$jobs" --output-on-failure -E '^fuzz_' >"$logs/suite.log" 2>&1) ||
  status=1
wait "$fuzz_pid" || status=1

cat "$logs/suite.log" "$logs/fuzz.log"

summary() {
  grep -E '^[0-9]+% tests passed' "$1" || true
}
for log in "$logs/suite.log" "$logs/fuzz.log"; do
  if grep -q "No tests were found" "$log" || [ -z "$(summary "$log")" ]; then
    echo "ci/test.sh: no tests ran ($(basename "$log"))" >&2
    status=1
  fi
  if [ "${CI:-}" = "true" ] && grep -q '(Skipped)' "$log"; then
    echo "ci/test.sh: tests were skipped under CI=true:" >&2
    grep '(Skipped)' "$log" >&2
    status=1
  fi
done

passed=$(cat "$logs"/*.log | sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests failed out of ([0-9]+)/\2 \1/p' |
  awk '{total += $1; failed += $2} END {print total - failed, failed}')
skipped=$(cat "$logs"/*.log | grep -c '(Skipped)' || true)
read -r npass nfail <<<"$passed"
echo "ci/test.sh: ${npass} passed, ${nfail} failed, ${skipped} skipped"
exit "$status"
