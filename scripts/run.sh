#!/usr/bin/env bash
# The main job: install what is missing (packages and the default legal corpus), build, and train
# the default config (configs/default.toml, about 6 minutes on two idle cores; scripts/docs_numbers.sh
# --only default measures it) in a new run directory.
# It ends by printing the run directory, the final validation loss and a short generated sample.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/setup_corpus.sh"
"$root/scripts/build.sh" build -DALTGRAD_TESTS=OFF
run_dir="$root/runs/default-$(date +%Y%m%d-%H%M%S)"
"$root/build/altgrad" train "$root/configs/default.toml" --out "$run_dir"
