#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite twice: an optimised build,
# and a build under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"

"$root/scripts/build.sh" build -DALTGRAD_TESTS=ON
(cd "$root/build" && ctest --output-on-failure)

"$root/scripts/build.sh" build-sanitize -DALTGRAD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug -DALTGRAD_SANITIZE=ON
(cd "$root/build-sanitize" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure)
