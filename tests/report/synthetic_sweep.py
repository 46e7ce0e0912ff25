#!/usr/bin/env python3
"""Writes a synthetic sweep in the sweep layout (docs/experiments.md) to measure the report's size and
load time at scale: GROUPS groups x SEEDS seeds of STEPS steps each, every metrics line shaped like
a real run's (the keys of tests/report/fixture/runs/fp8-hybrid.seed1, with random-walk values):
quantization statistics every step, diagnostics and val_loss every 100 steps.
usage: synthetic_sweep.py OUT_DIR [--groups 25] [--seeds 2] [--steps 1000]
"""
import argparse
import json
import pathlib
import random

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixture" / "runs" / "fp8-hybrid.seed1"


def templates():
    lines = [json.loads(l) for l in open(FIXTURE / "metrics.jsonl") if l.strip()]
    return next(l for l in lines if "quant" in l and "diag" not in l), next(l for l in lines if "diag" in l)


def jitter(value, rng, scale):
    if isinstance(value, dict):
        return {k: jitter(v, rng, scale) for k, v in value.items()}
    if isinstance(value, list):
        return [jitter(v, rng, scale) for v in value]
    if isinstance(value, float):
        return value * scale * (1 + 0.05 * rng.uniform(-1, 1))
    return value


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--groups", type=int, default=25)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--steps", type=int, default=1000)
    a = p.parse_args()
    out = pathlib.Path(a.out)
    step_line, diag_line = templates()
    runs = []
    for g in range(a.groups):
        for seed in range(1, a.seeds + 1):
            name = f"recipe{g}.seed{seed}"
            rng = random.Random(g * 1000 + seed)
            d = out / "runs" / name
            d.mkdir(parents=True, exist_ok=True)
            with open(d / "metrics.jsonl", "w") as f:
                for step in range(1, a.steps + 1):
                    scale = 1.0 / (1 + step / a.steps)
                    line = jitter(diag_line if step % 100 == 0 else step_line, rng, scale)
                    line["step"] = step
                    line["loss"] = 5.5 * scale + 0.1 * rng.random()
                    if step % 100 == 0:
                        line["val_loss"] = 5.5 * scale + 0.05 * rng.random()
                    f.write(json.dumps(line) + "\n")
            with open(d / "events.jsonl", "w") as f:
                f.write(json.dumps({"event": "end", "step": a.steps, "reason": "completed"}) + "\n")
            runs.append({"name": name, "dir": f"runs/{name}", "group": f"recipe{g}", "seed": seed,
                         "settings": {"seed": seed}})
    index = {"format": "altgrad-sweep/1", "base": "synthetic", "runs": runs, "searches": []}
    (out / "index.json").write_text(json.dumps(index, indent=1))


if __name__ == "__main__":
    main()
