#!/usr/bin/env python3
"""Prints the sweep file of the learning-rate scan behind configs/studies/stiffness_e7m0.toml (docs/results.md):
each optimizer of the comparison at a grid of learning rates, for E4M3 and E7M0 weights, 300 steps
of the default model at its seed, each run decaying to a tenth of its rate. stiffness_adamw and
madam leave the embeddings, norm gains and biases to AdamW at AdamW's rate (ADAMW_PART): their own
rates are in other units (grid steps, Madam's η) and are scanned alone.

Usage: scripts/results_lr_scan.py PATH/TO/default.toml > lr_scan.toml      the sweep file
       scripts/results_lr_scan.py --table SWEEP_DIR...                        its results, Markdown
"""
import json
import pathlib
import sys

RATES = {
    "adamw": (1e-3, 3e-3, 1e-2),
    "gridwalk": (1e-3, 3e-3, 1e-2),
    "stiffness_adamw": (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    "madam": (0.01, 0.03, 0.1, 0.3),
}
ADAMW_PART = 3e-3  # AdamW's best rate in this scan

HEADER = """[set]
max_iters = 300
lr_decay_iters = 300
warmup_iters = 30
eval_interval = 300
checkpoint_interval = 300
diag_interval = 3000

[recipes.e4m3]
quant.preset = "fp8-hybrid"

[recipes.e7m0]
quant.preset = "fp8-hybrid"
quant.weight.format = "e7m0"
"""


def sweep_file(default_toml):
    print(f'base = "{default_toml}"')
    print(HEADER)
    for optimizer, rates in RATES.items():
        for rate in rates:
            print(f'[[runs]]\nname = "{optimizer}.lr{rate:g}"\noptimizer = "{optimizer}"\n'
                  f'learning_rate = {rate!r}\nmin_lr = {rate / 10!r}')
            if optimizer in ("stiffness_adamw", "madam"):
                print(f"adamw_learning_rate = {ADAMW_PART!r}")
            print()
    print('[axes]\nrecipe = ["e4m3", "e7m0"]')


def final_val_loss(run):
    lines = [json.loads(l) for l in open(run / "metrics.jsonl")] if (run / "metrics.jsonl").exists() else []
    values = [m["val_loss"] for m in lines if "val_loss" in m]
    return values[-1] if values else None


def table(sweep_dirs):
    """Final validation loss per optimizer and rate (rows) and recipe (columns); * marks the best of
    each optimizer and recipe. Runs are found by name, <optimizer>.lr<rate>.<recipe>."""
    loss = {}
    for sweep in sweep_dirs:
        for run in (pathlib.Path(sweep) / "runs").iterdir():
            optimizer, rest = run.name.split(".lr", 1)
            rate, recipe = rest.rsplit(".", 1)
            loss[optimizer, float(rate), recipe] = final_val_loss(run)
    recipes = sorted({r for _, _, r in loss})
    print("| optimizer | learning_rate | " + " | ".join(recipes) + " |")
    print("|---|---|" + "---|" * len(recipes))
    for optimizer, rates in RATES.items():
        best = {r: min((v for (o, _, rr), v in loss.items() if o == optimizer and rr == r and v is not None), default=None)
                for r in recipes}
        for rate in rates:
            cells = []
            for r in recipes:
                v = loss.get((optimizer, rate, r))
                cells.append("—" if v is None else f"{v:.4f}" + (" *" if v == best[r] else ""))
            print(f"| {optimizer} | {rate:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        table(sys.argv[2:])
    else:
        sweep_file(sys.argv[1])
