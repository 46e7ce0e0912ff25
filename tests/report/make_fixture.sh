#!/usr/bin/env bash
# Regenerates tests/report/fixture/: a small sweep of real `altgrad train` runs (tiny model, 30
# steps) in the sweep layout (index.json written here by hand, per docs/experiments.md): fp32 and bf16
# baselines, two FP8 recipes with two seeds each, one seed of fp8-e4m3 stopped by an injected NaN,
# and an lr_threshold search with one stable and one diverged probe. Only the three files the report
# reads are kept (checkpoints and TensorBoard events are dropped to keep the fixture small).
#   usage: tests/report/make_fixture.sh build/altgrad
set -euo pipefail
altgrad=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/tests/report/fixture"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out/runs"

config() {  # config PRESET: configs/tiny.toml with a quantization preset
  { cat "$root/configs/tiny.toml"; printf '\n[quant]\npreset = "%s"\n' "$1"; } > "$work/$1.toml"
  echo "$work/$1.toml"
}

train() {  # train NAME PRESET SEED [extra args]
  local name=$1 preset=$2 seed=$3
  shift 3
  nice -n 19 "$altgrad" train "$(config "$preset")" --out "$work/$name" --set "seed=$seed" --set max_iters=30 \
    --set lr_decay_iters=30 --set diag_interval=10 --set checkpoint_interval=1000 \
    --set "data=$root/data/legal-corpus.txt" "$@" > /dev/null 2>&1 || true
  mkdir -p "$out/runs/$name"
  cp "$work/$name"/{config.toml,metrics.jsonl,events.jsonl} "$out/runs/$name/"
}

train fp32.seed1 fp32 1
train bf16.seed1 bf16 1
for seed in 1 2; do
  train "fp8-hybrid.seed$seed" fp8-hybrid "$seed"
done
train fp8-e4m3.seed1 fp8-e4m3 1
train fp8-e4m3.seed2 fp8-e4m3 2 --inject-nan "h.1.mlp.c_fc:act@17"
train fp8-hybrid.lr-probe1 fp8-hybrid 1 --set learning_rate=0.003
train fp8-hybrid.lr-probe2 fp8-hybrid 1 --set learning_rate=30 --set grad_clip=0

cp "$root/tests/report/fixture_index.json" "$out/index.json"
