#!/usr/bin/env bash
# The CUDA engine's check, on a machine with an NVIDIA GPU (docs/cuda.md): builds the engine for the
# GPU it finds, runs every test labelled gpu and the CPU engine's golden runs, prints the speed table
# (the engine's training steps beside PyTorch's on this GPU), and ends with one summary line. Within 5 minutes on an
# H100, the build included (16 cores).
# Usage: scripts/gpu_check.sh [DEB_DIR]
#   DEB_DIR: Debian packages to unpack into / first (dpkg -x), for a machine without network that
#   lacks some of AltGrad's build dependencies (toml++, OpenBLAS's development files); see the
#   README (the command on a GPU). The machine needs CUDA's toolkit (nvcc, cuBLASLt), CMake, GCC,
#   GoogleTest, CLI11, nlohmann-json and protobuf; PyTorch with CUDA for the speed table's anchor.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${ALTGRAD_GPU_BUILD:-$root/build-gpu}"
started=$SECONDS

fail() {
  echo "gpu_check: FAIL: $*" >&2
  exit 1
}

if (($# > 0)); then
  [[ -d "$1" ]] || fail "no folder $1 (Debian packages to unpack)"
  for deb in "$1"/*.deb; do
    [[ -e "$deb" ]] || fail "no .deb files in $1"
    dpkg -x "$deb" /
  done
fi

command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: this machine has no NVIDIA driver"
gpu=$(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -n 1) ||
  fail "nvidia-smi sees no GPU"
# compute_cap "9.0" -> CMake's architecture "90".
arch=$(awk -F', ' '{gsub(/\./, "", $3); print $3}' <<<"$gpu")
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x "$nvcc" ]] || fail "nvcc not found (CUDA's toolkit)"
echo "gpu_check: $gpu; $("$nvcc" --version | tail -n 1); building for sm_$arch" >&2

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DALTGRAD_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DALTGRAD_TESTS=ON -DALTGRAD_PYTHON=OFF >/dev/null ||
  fail "cmake could not configure the build (a dependency missing? see the README, the command on a GPU)"
cmake --build "$build" -j "$(nproc)" >/dev/null || fail "the build failed; rerun: cmake --build $build"
built=$((SECONDS - started))

# The gpu tests (training on the GPU against the CPU engine among them), then the CPU engine's
# bits on this machine (the golden runs). A gpu test that finds no device fails here instead of
# skipping.
export ALTGRAD_REQUIRE_GPU=1
status=0
(cd "$build" && ctest --output-on-failure -L gpu) || status=1
(cd "$build" && ctest --output-on-failure -R '^golden_runs$') || status=1
# The speed table: the engine's training steps, recipe by recipe, beside PyTorch's on this GPU,
# within ALTGRAD_SPEED_SECONDS (default 150, so that the check stays near 5 minutes; the whole
# table takes longer, torch.compile most of it: set 600 for it); rows printed by then
# stay, and a cut table says so without failing the check.
speed_seconds=${ALTGRAD_SPEED_SECONDS:-150}
echo "gpu_check: speed (tokens/s of training steps; bench/gpu_speed_table.py, at most ${speed_seconds} s)" >&2
speed_status=0
timeout "$speed_seconds" python3 "$root/bench/gpu_speed_table.py" "$build/altgrad" || speed_status=$?
case $speed_status in
  0) ;;
  124) echo "gpu_check: the speed table was cut at ${speed_seconds} s (ALTGRAD_SPEED_SECONDS sets the limit)" >&2 ;;
  *) status=1 ;;
esac
summary="$gpu, sm_$arch: build ${built} s, all $((SECONDS - started)) s"
if ((status == 0)); then
  echo "gpu_check: PASS ($summary)"
else
  echo "gpu_check: FAIL ($summary); the failures are above"
fi
exit "$status"
