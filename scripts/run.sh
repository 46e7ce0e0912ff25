#!/usr/bin/env bash
# The main job: install what is missing (packages, the default legal corpus, ECharts for the
# report), build, and run the format ablation of configs/ablation.toml (fp32, bf16, fp8-hybrid,
# e3m4, e1m6 scaled, e7m0; two runs at a time) in a new sweep directory. It prints a line per run as
# it starts and ends, then the path of the report and one line per recipe: final validation loss
# and the gap to bf16. Time on two idle cores: README and docs/experiments.md ("The main job.s timing").
# The single-run default is `build/altgrad train configs/default.toml` (README).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/setup_corpus.sh"
"$root/scripts/setup_echarts.sh"
# The CPU engine alone: the main job runs on it (the CUDA engine: docs/cuda.md).
"$root/scripts/build.sh" build -DALTGRAD_TESTS=OFF -DALTGRAD_CUDA=OFF
sweep_dir="$root/sweeps/ablation-$(date +%Y%m%d-%H%M%S)"
status=0
"$root/build/altgrad" sweep "$root/configs/ablation.toml" --jobs 2 --out "$sweep_dir" || status=$?
# The report is written whatever became of the runs: a diverged format is a result, too.
"$root/build/altgrad" report "$sweep_dir" --summary
echo "Why formats fail, study by study (E7M0 gradients, E1M6 placement, stochastic rounding, E7M0's error, precision schedules): docs/findings.md"
exit "$status"
