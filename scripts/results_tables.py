#!/usr/bin/env python3
"""Prints the tables of docs/results.md from a finished `altgrad sweep configs/optimizers.toml`.

Usage: scripts/results_tables.py SWEEP_DIR        (e.g. sweeps/optimizers)

Reads each run's config.toml, metrics.jsonl and events.jsonl; nothing else. Groups are run names
without their seed part; every number is a mean over the group's seeds unless a column names a seed.
Geometry metrics are means over the matmul weight tensors (the 16 c_attn, c_proj, c_fc weights).
"""
import json
import pathlib
import re
import statistics
import sys

GEOMETRY_STEPS = (100, 1500)
GEOMETRY = (("update_underflow", "underflow"), ("update_success", "success"), ("misalignment", "misalign."),
            ("capacity", "capacity"), ("alignment", "cos(Δw, −g)"))


def lines(path):
    return [json.loads(l) for l in open(path)] if path.exists() else []


def learning_rate(run):
    text = (run / "config.toml").read_text()
    return float(re.search(r"^learning_rate = (\S+)", text, re.M).group(1))


def load(sweep):
    # Groups in the sweep file's order; a run not started yet has no directory.
    order = re.findall(r'^name = "(.*)"', (sweep / "sweep.toml").read_text(), re.M)
    groups = {name: {} for name in order}
    for run in sorted((sweep / "runs").iterdir()):
        group, seed = re.match(r"(.*)\.seed(\d+)$", run.name).groups()
        metrics = lines(run / "metrics.jsonl")
        events = lines(run / "events.jsonl")
        end = [e for e in events if e["event"] == "end"]
        groups.setdefault(group, {})[int(seed)] = {
            "lr": learning_rate(run), "metrics": metrics, "end": end[-1] if end else None,
            "warnings": [e["kind"] for e in events if e["event"] == "warning"],
            "val": {m["step"]: m["val_loss"] for m in metrics if "val_loss" in m}}
    return {name: runs for name, runs in groups.items() if runs}


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def fmt(value, digits=4):
    return "—" if value is None else f"{value:.{digits}f}"


def final_val(run):
    return max(run["val"].items())[1] if run["val"] else None


def final_losses(groups):
    reference = mean(final_val(r) for r in groups.get("fp32.adamw", {}).values())
    seeds = sorted({s for g in groups.values() for s in g})
    print("| run | learning_rate | " + " | ".join(f"seed {s}" for s in seeds) + " | mean | vs fp32 adamw |")
    print("|---|---|" + "---|" * len(seeds) + "---|---|")
    for name, runs in groups.items():
        finals = [final_val(runs[s]) if s in runs else None for s in seeds]
        m = mean(finals)
        lr = next(iter(runs.values()))["lr"]
        versus = "—" if m is None or reference is None else f"{100 * (m / reference - 1):+.2f}%"
        print(f"| {name} | {lr:g} | " + " | ".join(fmt(f) for f in finals) + f" | {fmt(m)} | {versus} |")


def loss_curves(groups):
    steps = sorted({s for g in groups.values() for r in g.values() for s in r["val"]})
    print("| run | " + " | ".join(str(s) for s in steps) + " |")
    print("|---|" + "---|" * len(steps))
    for name, runs in groups.items():
        print(f"| {name} | " + " | ".join(fmt(mean(r["val"].get(s) for r in runs.values()), 3) for s in steps) + " |")


def geometry_at(run, step, key):
    for m in run["metrics"]:
        if m["step"] == step and "diag" in m:
            tensors = m["diag"]["geometry"]
            return statistics.fmean(v[key] for v in tensors.values())
    return None


def geometry(groups):
    header = [f"{label} @{s}" for key, label in GEOMETRY for s in GEOMETRY_STEPS]
    print("| run | " + " | ".join(header) + " |")
    print("|---|" + "---|" * len(header))
    for name, runs in groups.items():
        cells = [fmt(mean(geometry_at(r, s, key) for r in runs.values()), 3) for key, _ in GEOMETRY for s in GEOMETRY_STEPS]
        print(f"| {name} | " + " | ".join(cells) + " |")


def hessian(groups):
    steps = sorted({m["step"] for g in groups.values() for r in g.values() for m in r["metrics"]
                    if "hessian" in m.get("diag", {})})
    print("| run | " + " | ".join(f"λ_max @{s}" for s in steps) + " |")
    print("|---|" + "---|" * len(steps))
    for name, runs in groups.items():
        cells = []
        for s in steps:
            values = [m["diag"]["hessian"]["top_eigenvalue"] for r in runs.values() for m in r["metrics"]
                      if m["step"] == s and "hessian" in m.get("diag", {})]
            cells.append(fmt(mean(values), 2))
        print(f"| {name} | " + " | ".join(cells) + " |")


def memory(groups):
    # Speed is left to `altgrad bench train` (docs/optimizers.md): runs sharing a machine time nothing.
    print("| run | weight bytes | optimizer state bytes | total | parameters kept as codes |")
    print("|---|---|---|---|---|")
    for name, runs in groups.items():
        m = runs[min(runs)]["end"]["memory"] if runs[min(runs)]["end"] else {}
        print(f"| {name} | {m.get('weight_bytes', 0):,} | {m.get('optimizer_state_bytes', 0):,} | "
              f"{m.get('total_bytes', 0):,} | {m.get('code_weights', 0):,} |")


def warnings(groups):
    kinds = sorted({k for g in groups.values() for r in g.values() for k in r["warnings"]})
    print("| run | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for name, runs in groups.items():
        print(f"| {name} | " + " | ".join(str(sum(r["warnings"].count(k) for r in runs.values())) for k in kinds) + " |")


def main():
    sweep = pathlib.Path(sys.argv[1])
    groups = load(sweep)
    for title, table in (("Final validation loss", final_losses), ("Validation loss by step (mean of seeds)", loss_curves),
                         ("Geometry of the matmul weights (mean over tensors and seeds)", geometry),
                         ("Top Hessian eigenvalue of the unquantized loss (mean of seeds)", hessian),
                         ("Warnings raised (sum over seeds)", warnings), ("Memory: weights and optimizer state", memory)):
        print(f"\n### {title}\n")
        table(groups)


if __name__ == "__main__":
    main()
