#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) in build-fuzz and runs them.
# Usage: scripts/fuzz.sh [TARGET|all] [SECONDS]     (defaults: all, 10 seconds each)
#   TARGET is a name from fuzz/corpus/ (safetensors, checkpoint, config, ...).
#   scripts/fuzz.sh build  only builds them (scripts/test.sh, ahead of the run).
# Each target starts from its committed seeds, fuzz/corpus/<target>/ (never written to), plus what
# earlier runs found, build-fuzz/fuzz-corpus/<target>/; as many targets run at once as there are cores.
# A finding (crash, sanitizer report, broken property, leak, timeout) ends the script with status 1
# once every target has run; its input is kept in
# build-fuzz/fuzz-findings/<target>/ (minimize it with: build-fuzz/fuzz/<target>_fuzzer -minimize_crash=1
# -runs=10000 FILE, then commit it to fuzz/corpus/<target>/ as a regression input).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-all}
seconds=${2:-10}

build="${ALTGRAD_FUZZ_BUILD:-$root/build-fuzz}"  # another tree: ALTGRAD_FUZZ_BUILD=/path
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # Unity batches, as the sanitizer build (scripts/test.sh): 104 s from scratch on the Zen 3 against
  # 146 s file by file.
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Fuzz -DALTGRAD_FUZZ=ON \
        -DALTGRAD_TESTS=OFF -DALTGRAD_PYTHON=OFF -DALTGRAD_CUDA=OFF -DCMAKE_UNITY_BUILD=ON \
        -DALTGRAD_WERROR="${ALTGRAD_WERROR:-OFF}" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzzers >/dev/null
[[ "$target" == build ]] && exit 0

if [[ "$target" == all ]]; then
  targets=()
  for dir in "$root"/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
else
  [[ -d "$root/fuzz/corpus/$target" ]] || { echo "fuzz.sh: no target '$target' (see fuzz/corpus/)" >&2; exit 2; }
  targets=("$target")
fi

# One target: 0 when it ran clean, 1 after printing its finding.
run_target() {
  local t=$1
  local corpus="$build/fuzz-corpus/$t" findings="$build/fuzz-findings/$t" log="$build/fuzz-$t.log"
  # An empty working directory of its own: the targets check that nothing appears in it.
  local workdir="$build/fuzz-workdir/$t"
  mkdir -p "$corpus" "$findings"
  rm -rf "$workdir"
  mkdir -p "$workdir"
  echo "fuzz: $t for ${seconds}s" >&2
  # -rss_limit_mb and -timeout turn runaway memory and hangs into findings, too.
  if ! (cd "$workdir" && "$build/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "$root/fuzz/corpus/$t") >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $t FAILED; input saved in $findings/, log in $log" >&2
    return 1
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 >&2 || true
}

# The targets are single-threaded: one per core at a time. Each leaves its status in a file, read
# once all have ended.
status="$build/fuzz-status"
rm -rf "$status"
mkdir -p "$status"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do sleep 0.2; done
  (if run_target "$t"; then echo 0; else echo 1; fi >"$status/$t") &
done
wait
failed=0
for t in "${targets[@]}"; do [[ "$(cat "$status/$t")" == 0 ]] || failed=1; done
exit "$failed"
