#!/usr/bin/env bash
# Do two altgrad binaries give the same runs? Trains a fixed set of small configs with each binary
# and compares what the runs wrote: every checkpoint file byte for byte, metrics.jsonl and
# events.jsonl without what the machine measures (times, speed, resident memory) and the run
# directory's path. TensorBoard files carry
# wall-clock times and are left out; they hold the metrics.jsonl values.
#
# The configs cover every path a refactor or a kernel change can move: fp32; fp8-hybrid with
# stochastic rounding of gradients; mx8; gridwalk with code-only weights; stiffness_adamw on the
# bf16 grid with its own AdamW rate; madam on E7M0 weights.
# Each has a Hessian probe and every diagnostic on; it logs every third step, so that plain, logged,
# diagnostic and evaluated steps all occur.
#
# Usage: scripts/compare_runs.sh BASELINE_ALTGRAD CANDIDATE_ALTGRAD [STEPS]
# Exit status 0 when every run agrees, 1 when any differs (the differing files are named).
set -euo pipefail
baseline=$(realpath "$1")
candidate=$(realpath "$2")
steps=${3:-30}
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Both binaries read the same corpus: this checkout's (scripts/setup_corpus.sh). The shape is big
# enough that the GEMMs are cut into tiles and attention into several blocks of queries.
common="
data = \"$root/data/legal-corpus.txt\"
n_layer = 2
n_head = 4
n_embd = 256
block_size = 160
batch_size = 8
max_iters = $steps
lr_decay_iters = $steps
warmup_iters = 5
eval_interval = 10
eval_iters = 2
log_interval = 3
checkpoint_interval = 10
keep_checkpoints = 0
diag_interval = 5
hessian_interval = 10
hessian_iterations = 3
"

write_config() {  # write_config NAME TEXT: the shared keys, then the config's own
  printf '%s\n%s\n' "$common" "$2" >"$work/$1.toml"
}
write_config fp32 ''
write_config fp8-stochastic-grad '
[quant]
preset = "fp8-hybrid"
[quant.grad]
rounding = "stochastic"'
write_config mx8 '
[quant]
preset = "mx8"'
write_config gridwalk-codes '
optimizer = "gridwalk"
master_weights = false
[quant]
preset = "fp8-hybrid"'
write_config stiffness-bf16-grid '
optimizer = "stiffness_adamw"
adamw_learning_rate = 0.0003'
write_config madam-e7m0 '
optimizer = "madam"
[quant]
preset = "fp8-hybrid"
[quant.weight]
format = "e7m0"'

status=0
for config in "$work"/*.toml; do
  name=$(basename "$config" .toml)
  failed=0
  for which in baseline candidate; do
    if ! "${!which}" train "$config" --out "$work/$which/$name" >"$work/$which-$name.log" 2>&1; then
      echo "$name: the $which binary failed:" >&2
      tail -5 "$work/$which-$name.log" >&2
      failed=1
    fi
  done
  if ((failed)) || ! /usr/bin/python3 "$root/scripts/compare_run_dirs.py" "$work/baseline/$name" "$work/candidate/$name"; then
    status=1
  fi
done
exit $status
