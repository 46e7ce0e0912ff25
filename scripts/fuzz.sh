#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) in build-fuzz and runs them.
# Usage: scripts/fuzz.sh [TARGET|all] [SECONDS]     (defaults: all, 10 seconds each)
#   TARGET is a name from fuzz/corpus/ (safetensors, checkpoint, config, ...).
# Each target starts from its committed seeds, fuzz/corpus/<target>/ (never written to), plus what
# earlier runs found, build-fuzz/fuzz-corpus/<target>/. A finding (crash, sanitizer report, broken
# property, leak, timeout) stops the script with status 1; its input is kept in
# build-fuzz/fuzz-findings/<target>/ (minimize it with: build-fuzz/fuzz/<target>_fuzzer -minimize_crash=1
# -runs=10000 FILE, then commit it to fuzz/corpus/<target>/ as a regression input).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-all}
seconds=${2:-10}

build="${ALTGRAD_FUZZ_BUILD:-$root/build-fuzz}"  # another tree: ALTGRAD_FUZZ_BUILD=/path
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Fuzz -DALTGRAD_FUZZ=ON \
        -DALTGRAD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzzers >/dev/null

if [[ "$target" == all ]]; then
  targets=()
  for dir in "$root"/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
else
  [[ -d "$root/fuzz/corpus/$target" ]] || { echo "fuzz.sh: no target '$target' (see fuzz/corpus/)" >&2; exit 2; }
  targets=("$target")
fi

for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  findings="$build/fuzz-findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$build/fuzz-$t.log"
  # An empty working directory of its own: the targets check that nothing appears in it.
  workdir="$build/fuzz-workdir/$t"
  rm -rf "$workdir"
  mkdir -p "$workdir"
  echo "fuzz: $t for ${seconds}s" >&2
  # -rss_limit_mb and -timeout turn runaway memory and hangs into findings, too.
  if ! (cd "$workdir" && "$build/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "$root/fuzz/corpus/$t") >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $t FAILED; input saved in $findings/, log in $log" >&2
    exit 1
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 >&2 || true
done
