#!/usr/bin/env bash
# A short run of the default config per optimizer, for E4M3 weights (preset fp8-hybrid) and E7M0
# weights (fp8-hybrid with [quant.weight] format = "e7m0"), printed as a Markdown table of the final
# validation loss and the wall time. A quick comparison, not results: one seed, few steps.
#
#   scripts/compare_optimizers.sh [STEPS] [OUT_DIR]      (defaults: 200, /tmp/altgrad-optimizers)
#
# Learning rates: the default 1e-3 (AdamW's), Madam's published 0.01 for madam and madam_int, and
# 0.5 grid steps for stiffness_adamw (precondition = "update" makes lr a size in units of S(w)).
# Every run warms up over a tenth of the steps and decays to lr/10 at the last step. Runs go under
# nice; each takes a minute on two idle cores at 200 steps. Uses build/altgrad (or $ALTGRAD).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-200}
out=${2:-/tmp/altgrad-optimizers}
altgrad=${ALTGRAD:-$root/build/altgrad}
mkdir -p "$out"
echo "| weights | optimizer | learning_rate | final val loss | wall s |"
echo "|---|---|---|---|---|"
for weights in e4m3 e7m0; do
  for optimizer in adamw stiffness_adamw gridwalk madam madam_int; do
    case $optimizer in
      madam | madam_int) lr=0.01 ;;
      stiffness_adamw) lr=0.5 ;;
      *) lr=0.001 ;;
    esac
    config="$out/$weights-$optimizer.toml"
    cat "$root/configs/default.toml" > "$config"
    printf 'preset = "fp8-hybrid"\n' >> "$config"  # default.toml ends with its [quant] table
    [ "$weights" = e7m0 ] && printf '[quant.weight]\nformat = "e7m0"\n' >> "$config"
    start=$(date +%s.%N)
    nice -n 19 "$altgrad" train "$config" --set optimizer=$optimizer --set max_iters=$steps \
      --set lr_decay_iters=$steps --set warmup_iters=$((steps / 10)) --set learning_rate=$lr \
      --set min_lr=$(python3 -c "print($lr / 10)") --set eval_interval=$steps --set diag_interval=$((steps * 10)) \
      --set out_dir="$out/runs/$weights-$optimizer" > "$out/$weights-$optimizer.log" 2>&1
    seconds=$(python3 -c "import time; print(round(time.time() - $start))")
    loss=$(sed -n 's/^final val loss: //p' "$out/$weights-$optimizer.log")
    echo "| $weights | $optimizer | $lr | $loss | $seconds |"
  done
done
