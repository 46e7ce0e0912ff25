#!/usr/bin/env bash
# Training-step speed of two altgrad binaries, measured alternately in one sitting so that both see
# the same machine: `bench train` on the default config (engine rows; the PyTorch rows are ignored), ROUNDS times each, best
# tokens/s per thread count, and the ratio of the second binary to the first.
# Usage: scripts/compare_train_speed.sh BASELINE_ALTGRAD CANDIDATE_ALTGRAD [ROUNDS] [-- bench options]
set -euo pipefail
baseline=$1
candidate=$2
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
[[ "${1:-}" == "--" ]] && shift

best_of() {  # best_of FILE THREADS -> the best tokens/s for that thread count
  awk -v t="$2" '$1 == "altgrad" && $3 == t && $4 > best { best = $4 } END { print best + 0 }' "$1"
}

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
for ((round = 1; round <= rounds; round++)); do
  for which in baseline candidate; do
    "${!which}" bench train "$@" | tee -a "$logs/$which" | sed "s/^/$which round $round: /" >&2
  done
done

threads=$(awk '$1 == "altgrad" { print $3 }' "$logs/baseline" | sort -un)
printf '%-8s %14s %14s %8s\n' threads baseline candidate ratio
for t in $threads; do
  b=$(best_of "$logs/baseline" "$t")
  c=$(best_of "$logs/candidate" "$t")
  awk -v t="$t" -v b="$b" -v c="$c" 'BEGIN { printf "%-8s %14.0f %14.0f %8.3f\n", t, b, c, c / b }'
done
