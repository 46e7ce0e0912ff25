#!/usr/bin/env python3
"""Prints the sweep file of the learning-rate scan behind configs/optimizers.toml (docs/results.md):
each optimizer of the comparison at a grid of learning rates, for E4M3 and E7M0 weights, 300 steps
of the default model at its seed, each run decaying to a tenth of its rate. stiffness_adamw and
madam leave the embeddings, norm gains and biases to AdamW at AdamW's rate (ADAMW_PART): their own
rates are in other units (grid steps, Madam's η) and are scanned alone.

Usage: scripts/results_lr_scan.py PATH/TO/default.toml > lr_scan.toml
"""
import sys

RATES = {
    "adamw": (1e-3, 3e-3, 1e-2),
    "gridwalk": (1e-3, 3e-3, 1e-2),
    "stiffness_adamw": (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0),
    "madam": (0.01, 0.03, 0.1, 0.3),
}
ADAMW_PART = 3e-3  # AdamW's best rate in this scan

print(f'base = "{sys.argv[1]}"')
print("""[set]
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
""")
for optimizer, rates in RATES.items():
    for rate in rates:
        print(f'[[runs]]\nname = "{optimizer}.lr{rate:g}"\noptimizer = "{optimizer}"\n'
              f'learning_rate = {rate!r}\nmin_lr = {rate / 10!r}')
        if optimizer in ("stiffness_adamw", "madam"):
            print(f"adamw_learning_rate = {ADAMW_PART!r}")
        print()
print('[axes]\nrecipe = ["e4m3", "e7m0"]')
