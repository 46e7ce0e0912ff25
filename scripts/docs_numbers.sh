#!/usr/bin/env bash
# Regenerates every measured number the documentation quotes, from real runs, and prints each one
# labelled with where it is quoted, so a reader can check them.
#
#   scripts/docs_numbers.sh [--quick] [--only corpus|default|ablation|failing|results|findings] [--keep DIR]
#
# Sections (all by default):
#   corpus   the default corpus: license count, size, training split    (README, configs/default.toml)
#   default  the single-run default (configs/default.toml): model and speed: parameters, tokens/s, step time, run time, tokens,
#            epochs, evaluations                                     (README, configs/default.toml)
#   ablation the main job, configs/ablation.toml: time (wall and CPU) and the per-recipe summary
#                                                      (README, docs/experiments.md)
#   failing  "Reading a failing run": FP32 against fp8-e4m3 with unscaled gradients, 300 steps of
#            the default model                                          (docs/quantization.md)
#   findings the studies of configs/studies/ that docs/findings.md reports: E7M0 gradients, E1M6
#            placement, stochastic rounding on powers of two, E7M0's error decomposition, precision
#            schedules, the Phase-1 criterion, the FP4 recipes, the MXFP4 backward pass, Hopper's
#            accumulation (two shapes), torchao's recipes, the 3,000-step study and the
#            learning-rate thresholds: about 11 hours on a
#            Zen 3 (docs/findings.md, "Reproduce", times each study); at full size each study's table rows are then checked against
#            docs/findings.md digit for digit (scripts/findings_tables.py --check), and the
#            script exits with status 1 naming the studies whose rows the page does not quote
#                                                                                (docs/findings.md)
#   results  study 3, the bit-space optimizers on E7M0 weights: each optimizer's learning-rate
#            grid at seed 4 (configs/studies/stiffness_rates.toml, 32 runs), then the comparison
#            at the rates it chose (stiffness_e7m0.toml, 27 runs): about 2 hours; at full size
#            the rows are checked against docs/results.md as the findings' are  (docs/results.md)
# Full size takes about 13 hours on two cores of a Zen 3 (findings about 11, results about 2, the
# ablation about 15 minutes, the default run about 6). --quick shortens the runs (default: 100 of 3,000 steps, whose speed is
# representative; failing: 60 steps; results and findings: 40 steps), which checks
# the script, not the numbers: the documentation quotes only full-size results. Timings depend on the
# machine and on what else it runs. --keep DIR keeps the run directories in DIR.
# Uses build/altgrad (or $ALTGRAD), building it first when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
only=""
keep=""
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --only) only=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: $0 [--quick] [--only corpus|default|ablation|failing|results|findings] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
altgrad=${ALTGRAD:-$root/build/altgrad}
if [[ ! -x "$altgrad" ]]; then
  "$root/scripts/build.sh" build -DALTGRAD_TESTS=OFF -DALTGRAD_CUDA=OFF
fi
if [[ -n "$keep" ]]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
corpus="$root/data/legal-corpus.txt"
want() { [[ -z "$only" || "$only" == "$1" ]]; }
status=0  # 1 where a check of the docs' quotes failed
if ((quick)); then echo "QUICK MODE: shortened runs; these are not the numbers the docs quote"; fi

if want corpus; then
  echo "== corpus (README.md, configs/default.toml)"
  python3 - "$corpus" <<'PY'
import sys
size = len(open(sys.argv[1], "rb").read())
val = round(size * 0.1)  # val_fraction in configs/default.toml
print(f"corpus size: {size} bytes = {size / 1e6:.2f} MB")
print(f"training split (the first 90%): {size - val} bytes = {(size - val) / 1e6:.2f} MB")
PY
  # The license count is a fact of the pinned npm package, so it needs npm and the registry.
  if command -v npm >/dev/null && (cd "$work" && npm pack --silent spdx-license-list@6.12.0 >/dev/null 2>&1); then
    tar xzf "$work/spdx-license-list-6.12.0.tgz" -C "$work"
    python3 -c "import json,sys; print('licenses in spdx-license-list@6.12.0:', len(json.load(open(sys.argv[1]))))" \
      "$work/package/spdx-full.json"
  else
    echo "licenses in spdx-license-list@6.12.0: not counted (needs npm and the npm registry)"
  fi
fi

if want default; then
  echo "== the single-run default, configs/default.toml (README.md, configs/default.toml; timings depend on the machine)"
  steps=3000
  ((quick)) && steps=100
  start=$(date +%s.%N)
  "$altgrad" train "$root/configs/default.toml" --set "max_iters=$steps" --out "$work/default" > "$work/default.out" \
    2> "$work/default.err" || { cat "$work/default.err" >&2; exit 1; }
  seconds=$(python3 -c "import sys,time; print(time.time() - float(sys.argv[1]))" "$start")
  python3 - "$work/default" "$seconds" "$steps" "$corpus" <<'PY'
import json, statistics, sys
run, seconds, steps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
size = len(open(sys.argv[4], "rb").read())
start = next(json.loads(l) for l in open(f"{run}/events.jsonl") if json.loads(l)["event"] == "start")
metrics = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
config = {}
for line in open(f"{run}/config.toml"):
    if "=" in line and not line.lstrip().startswith("#"):
        key, value = (s.strip() for s in line.split("#")[0].split("=", 1))
        config[key] = value
tokens_per_step = int(config["batch_size"]) * int(config["block_size"]) * int(config["gradient_accumulation_steps"])
# Steps without an evaluation or diagnostics: the training speed itself.
plain = [m["tokens_per_s"] for m in metrics if "val_loss" not in m and "diag" not in m]
rate = statistics.median(plain)
full = 3000
print(f"parameters: {start['parameters']} = {start['parameters'] / 1e6:.2f}M")
print(f"tokens per step: {tokens_per_step}")
print(f"training speed (median over logged steps): {rate:.0f} tokens/s = {tokens_per_step / rate:.3f} s per step")
print(f"wall time of this run ({steps} steps, evaluations and diagnostics included): {seconds / 60:.1f} min")
print(f"{full} steps at that speed: {full * tokens_per_step / rate / 60:.1f} min")
print(f"tokens in {full} steps: {full * tokens_per_step / 1e6:.2f}M = {full * tokens_per_step / (size - round(size * 0.1)):.2f} epochs of the training split")
evals = sum("val_loss" in m for m in metrics)
print(f"evaluations in this run: {evals} of {config['eval_iters']} validation batches each")
print(f"final val loss of this run: {metrics[-1].get('val_loss', float('nan')):.4f}")
PY
fi

if want ablation; then
  echo "== the main job, configs/ablation.toml (README.md, docs/experiments.md; timings depend on the machine)"
  sweep_file="$work/ablation.toml"
  sed "s|^base = \"default.toml\"|base = \"$root/configs/default.toml\"|" "$root/configs/ablation.toml" >"$sweep_file"
  if ((quick)); then
    sed -i 's/^max_iters = .*/max_iters = 50\nwarmup_iters = 10/; s/^lr_decay_iters = .*/lr_decay_iters = 50/;
            s/^eval_interval = .*/eval_interval = 25/; s/^checkpoint_interval = .*/checkpoint_interval = 25/' "$sweep_file"
  fi
  # CPU time of the sweep and every run it started (children are waited for, so they count).
  /usr/bin/time -f '%e %U %S' -o "$work/ablation.time" "$altgrad" sweep "$sweep_file" --jobs 2 --out "$work/ablation" \
    >"$work/ablation.out" 2>&1 || true
  grep -E '^\[[0-9]+/[0-9]+\] (completed|stopped|failed)' "$work/ablation.out" || cat "$work/ablation.out"
  # The last line: /usr/bin/time puts a line about a non-zero exit status before it.
  read -r wall user sys < <(tail -n 1 "$work/ablation.time")
  python3 -c "import sys; w, u, s = map(float, sys.argv[1:]); print(f'wall time: {w / 60:.1f} min; CPU time: {(u + s) / 60:.1f} min (on two idle cores about {(u + s) / 120:.1f} min of wall time)')" \
    "$wall" "$user" "$sys"
  "$altgrad" report "$work/ablation" --summary | grep -v '^wrote '
fi

# One study of configs/studies/ as a sweep in the work directory (base made absolute), its report,
# its tables and its figure; at full size every table row printed must be a line of DOC
# (scripts/findings_tables.py --check), else the study is named in $unquoted. --quick shortens
# every run to 40 steps with diagnostics, evaluations and checkpoints every 20, and the
# decomposition's evaluations to 50 windows of the validation split.
unquoted=()
run_study() {
  local study=$1 doc=$2
  local sweep_file="$work/$study.toml"
  sed "s|^base = \"../default.toml\"|base = \"$root/configs/default.toml\"|" "$root/configs/studies/$study.toml" >"$sweep_file"
  if ((quick)); then
    # Every max_iters becomes 40; the first (the [set] table's) also gets the warmup and interval.
    sed -i 's/^max_iters = .*/max_iters = 40/; 0,/^max_iters = 40$/s//max_iters = 40\nwarmup_iters = 10\ndiag_interval = 20/;
            s/^lr_decay_iters = .*/lr_decay_iters = 40/;
            s/^eval_interval = .*/eval_interval = 20/; s/^checkpoint_interval = .*/checkpoint_interval = 20/;
            s/^hessian_interval = .*/hessian_interval = 20/; s/^min_steps = .*/min_steps = 40/;
            s/^steps = .*/steps = 40/' "$sweep_file"
  fi
  local start=$SECONDS
  "$altgrad" sweep "$sweep_file" --jobs 2 --out "$work/$study" >"$work/$study.out" 2>&1 || true
  grep -E '^\[[0-9]+/[0-9]+\] (stopped|failed)' "$work/$study.out" || true
  echo "-- $study: $((SECONDS - start)) s on two cores, two runs at a time"
  "$altgrad" report "$work/$study" --summary | grep -v '^wrote '
  local windows=0 check=(--check "$doc")
  ((quick)) && windows=50 && check=()
  FINDINGS_MAX_WINDOWS=$windows python3 "$root/scripts/findings_tables.py" "$study" "$work/$study" "$altgrad" \
    "${check[@]}" || unquoted+=("$study")
  # The figure: the report's loss curves with the 95% band over seeds (docs/figures/ at full size).
  # A threshold search's probes and a rate grid's one seed are no curves to compare: their tables
  # are the finding.
  [[ $study == lr_threshold || $study == stiffness_rates ]] && return
  local figures="$root/docs/figures"
  ((quick)) && figures="$work/figures"
  mkdir -p "$figures"
  python3 "$root/scripts/report_figure.py" "$work/$study" "$figures/$study.png" \
    --charts val_loss,loss --band ci --height 330 --altgrad "$altgrad"
}

if want results; then
  echo "== study 3: the bit-space optimizers against AdamW on E7M0 weights (docs/results.md)"
  run_study stiffness_rates "$root/docs/results.md"
  run_study stiffness_e7m0 "$root/docs/results.md"
fi

if want findings; then
  echo "== the studies of the research notes' open questions, configs/studies/ (docs/findings.md)"
  for study in e7m0_gradients e1m6_placement stochastic_power_of_two e7m0_error_decomposition precision_schedules \
      phase1_criterion fp4_recipes fp4_backward hopper_accumulation hopper_accumulation_wide torchao_rowwise \
      long_training lr_threshold; do
    run_study "$study" "$root/docs/findings.md"
  done
fi
if ((${#unquoted[@]})); then
  echo "the docs do not quote these studies' rows digit for digit (above): ${unquoted[*]}"
  status=1
fi

if want failing; then
  echo "== Reading a failing run (docs/quantization.md)"
  # The configs of docs/quantization.md; --quick shortens them (and the warmup, to fit).
  common="max_iters = 300
lr_decay_iters = 300
eval_interval = 100
log_interval = 50
diag_interval = 100
checkpoint_interval = 0"
  steps=300 interval=100
  if ((quick)); then
    steps=60 interval=20
    common="max_iters = 60
lr_decay_iters = 60
warmup_iters = 10
eval_interval = 20
log_interval = 10
diag_interval = 20
checkpoint_interval = 0"
  fi
  printf '%s\n' "$common" > "$work/fp32.toml"
  printf '%s\n\n[quant]\npreset = "fp8-e4m3"\n\n[quant.grad]\nscaling = "none"\n' "$common" > "$work/unscaled.toml"
  for name in fp32 unscaled; do
    "$altgrad" train "$work/$name.toml" --out "$work/$name" > "$work/$name.out" 2> "$work/$name.err" ||
      { cat "$work/$name.err" >&2; exit 1; }
  done
  python3 - "$work" "$steps" "$interval" <<'PY'
import json, math, sys
work, steps, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def lines(run, file):
    return [json.loads(l) for l in open(f"{work}/{run}/{file}")]
def at(run, step):
    return next(m for m in lines(run, "metrics.jsonl") if m["step"] == step)
for run in ("unscaled", "fp32"):
    print(f"{run}: val loss at step {steps}: {at(run, steps)['val_loss']:.3f}")
warnings = [e for e in lines("unscaled", "events.jsonl") if e["event"] == "warning"]
first = min(e["step"] for e in warnings)
for e in warnings:
    if e["step"] == first and e["kind"] == "underflow" and e["where"].startswith("h.0."):
        print(f"warning at step {e['step']}: {e['where']} {e['kind']} {e['value']:.3g}%")
for e in warnings:
    if e["kind"] == "kurtosis" and e["where"] == "h.3":
        print(f"warning at step {e['step']}: h.3 kurtosis {e['value']:.1f}")
print(f"unscaled: kurtosis h.3 at step {steps - interval}: {at('unscaled', steps - interval)['diag']['kurtosis']['h.3']:.1f}")
last = at("unscaled", steps)
q = last["quant"]["h.0.attn.c_proj:grad"]
print(f"unscaled step {steps}: h.0.attn.c_proj:grad underflow_pct {q['underflow_pct']:.3g}, amax {q['amax']:.2g}, "
      f"scale {q['scale']}, rel_error {q['rel_error']:.3g}")
print(f"unscaled step {steps}: h.3.mlp.c_fc:grad amax {last['quant']['h.3.mlp.c_fc:grad']['amax']:.3g}")
snr = last["diag"]["grad_snr_db"]
blocks = [float(v) for k, v in snr.items() if k.startswith("transformer.h.") and k.endswith(".weight") and v is not None]
print(f"unscaled step {steps}: grad_snr_db of block weights: min {min(blocks):.1f} dB, max {max(blocks):.1f} dB")
print(f"unscaled step {steps}: grad_snr_db transformer.wte.weight: {float(snr['transformer.wte.weight']):.1f} dB")
fp32 = at("fp32", steps)["diag"]["grad_snr_db"]
print(f"fp32 step {steps}: grad_snr_db values: {sorted(set(map(str, fp32.values())))}")
PY
fi
exit $status
