#!/usr/bin/env bash
# Installs what is missing (packages, ECharts for the report, chromium for its browser test, Slurm
# for the one-node test cluster), then builds and runs the whole test suite twice: an optimised build
# for this CPU (its vector kernels; quant_tests_portable runs the same quantizer tests on a twin of
# the quantizer built without the CPU tuning, float_gemm_tests_portable does the same for the float
# GEMM, and on an AVX-512 CPU the *_avx2 twins test the AVX2 kernels), and
# a build for this CPU at -Og -g1 under AddressSanitizer + UndefinedBehaviorSanitizer, which leaves the
# orchestration tests (processes, signals, Slurm, the browser) to the first; then every fuzz target
# for 8 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Each stage's wall time, so that the suite's budget (under 15 minutes on two cores, set-up aside) stays visible.
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

# Warnings are errors here, in both compilers' builds (GCC's, and clang's fuzz build below), so
# that a new warning shows up in CI before it reaches a user's newer compiler.
export ALTGRAD_WERROR=ON
# Without the CUDA engine: its sources compile in a tree of their own below, in the background.
"$root/scripts/build.sh" build -DALTGRAD_TESTS=ON -DALTGRAD_WERROR=ON -DALTGRAD_CUDA=OFF
stage_done "the native build"

# The fuzz targets' clang build (scripts/fuzz.sh) from here on in the background, at the lowest
# priority: it takes the core time the stages below leave idle (the Slurm tests wait on daemons,
# the sanitizer stage ends on its longest test) and yields to everything else.
fuzz_build_log=$(mktemp)
nice -n 19 "$root/scripts/fuzz.sh" build >"$fuzz_build_log" 2>&1 &
fuzz_build=$!
# The CUDA engine's sources (src/ops/cuda/, src/quant/cuda/), compile only, where CUDA's compiler is:
# no machine of the project has a GPU (docs/cuda.md; scripts/gpu_check.sh runs them on one). Like
# the fuzz build, in the background at the lowest priority; about 90 s of core time on the Zen 3.
cuda_build_log=$(mktemp)
cuda_build=""
if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nice -n 19 bash -c 'cmake -S "$1" -B "$1/build-cuda" -DALTGRAD_CUDA=ON -DALTGRAD_TESTS=OFF -DALTGRAD_PYTHON=OFF \
    -DALTGRAD_WERROR=ON >/dev/null && cmake --build "$1/build-cuda" -j "$(nproc)" --target altgrad_ops_cuda altgrad_quant_cuda' \
    _ "$root" >"$cuda_build_log" 2>&1 &
  cuda_build=$!
fi
trap 'kill "$fuzz_build" $cuda_build 2>/dev/null || true; rm -f "$fuzz_build_log" "$cuda_build_log"' EXIT
# None of the tests depends on timing. OMP_WAIT_POLICY=passive: an OpenMP thread that waits sleeps
# instead of spinning, or two multithreaded tests side by side slow each other down tenfold (the
# sanitizer stage took 148 s spinning, 55 s passive, 97 s one at a time). Twice as many tests as
# cores here: the orchestration tests spend most of their time waiting on Slurm, processes and a
# browser (slurm_smoke: 32 s wall for 11 s of CPU), and a waiting test should not hold a core.
export OMP_WAIT_POLICY=passive
(cd "$root/build" && ctest --output-on-failure -j "$((2 * $(nproc)))")
stage_done "the native build's tests"

# -Og with line tables only (-g1): sanitizer reports keep file and line, and the build takes about
# half the time of -O1 -g (measured 305 s against 599 s on two cores) for about the same test time.
# Every target in unity batches of eight files (CMake's unity build, which the test binaries use
# in both builds): each batch parses its shared headers once (on the Zen 3, 336 s from scratch
# against 537-544 s file by file). The native build keeps the kernels a training step runs file
# by file, as a developer rebuilds them (src/CMakeLists.txt batches the other libraries in both).
"$root/scripts/build.sh" build-sanitize -DALTGRAD_TESTS=ON -DALTGRAD_SANITIZE=ON -DALTGRAD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1" -DCMAKE_UNITY_BUILD=ON
stage_done "the sanitizer build"
(cd "$root/build-sanitize" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$(nproc)" -LE "orchestration|bits")
stage_done "the sanitizer build's tests"

# Every libFuzzer target (fuzz/) for 8 s on its seed corpus plus fresh inputs, in a clang build of
# the targets and the libraries they read with (no tests, no CLI, no benchmarks), started above.
if [[ -n "$cuda_build" ]] && ! wait "$cuda_build"; then
  cat "$cuda_build_log" >&2
  echo "test.sh: the CUDA engine's build failed" >&2
  exit 1
fi
if ! wait "$fuzz_build"; then
  cat "$fuzz_build_log" >&2
  echo "test.sh: the fuzz targets' build failed" >&2
  exit 1
fi
"$root/scripts/fuzz.sh" all 8
stage_done "the fuzz stage (the rest of its build, then 8 s per target)"
