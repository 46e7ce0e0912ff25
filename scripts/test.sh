#!/usr/bin/env bash
# Installs what is missing (packages, ECharts for the report, chromium for its browser test, Slurm
# for the one-node test cluster), then builds and runs the whole test suite three times: an
# optimised build for this CPU (with AVX-512, the quantizer's vector kernel), a portable optimised
# build (the portable kernel everywhere), and a build for this CPU under AddressSanitizer +
# UndefinedBehaviorSanitizer; then every fuzz target for 10 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Each stage's wall time, so that the suite's budget (CI: under 45 minutes on two cores) stays visible.
stage_start=$SECONDS
stage_done() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s" >&2
  stage_start=$SECONDS
}

"$root/scripts/setup.sh"
"$root/scripts/setup_echarts.sh"
"$root/scripts/setup_browser.sh"
"$root/scripts/setup_slurm.sh"
stage_done "set-up"

"$root/scripts/build.sh" build -DALTGRAD_TESTS=ON
stage_done "the native build"
(cd "$root/build" && ctest --output-on-failure)
stage_done "the native build's tests"

"$root/scripts/build.sh" build-portable -DALTGRAD_TESTS=ON -DALTGRAD_NATIVE=OFF
stage_done "the portable build"
(cd "$root/build-portable" && ctest --output-on-failure)
stage_done "the portable build's tests"

"$root/scripts/build.sh" build-sanitize -DALTGRAD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug -DALTGRAD_SANITIZE=ON
stage_done "the sanitizer build"
(cd "$root/build-sanitize" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure)
stage_done "the sanitizer build's tests"

# Every libFuzzer target (fuzz/) for 10 s on its seed corpus plus fresh inputs, in a clang build of
# the targets and the libraries they read with (no tests, no CLI, no benchmarks).
"$root/scripts/fuzz.sh" all 10
stage_done "the fuzz stage (build and 10 s per target)"
