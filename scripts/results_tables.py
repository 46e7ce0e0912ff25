#!/usr/bin/env python3
"""Prints the tables of docs/results.md from a finished `altgrad sweep configs/studies/stiffness_e7m0.toml`.

Usage: scripts/results_tables.py SWEEP_DIR        (e.g. sweeps/stiffness_e7m0)

Reads each run's config.toml, metrics.jsonl and events.jsonl; nothing else. Groups are run names
without their seed part; every number is a mean over the group's seeds unless a column names a seed.
Geometry metrics are means over the matmul weight tensors (the 16 c_attn, c_proj, c_fc weights).
"""
import array
import json
import pathlib
import re
import statistics
import struct
import sys

from seed_interval import half_width

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
            "dir": run, "lr": learning_rate(run), "metrics": metrics, "end": end[-1] if end else None,
            "warnings": [e["kind"] for e in events if e["event"] == "warning"],
            "val": {m["step"]: m["val_loss"] for m in metrics if "val_loss" in m}}
    return {name: runs for name, runs in groups.items() if runs}


def mean_ci(values, spec):
    """'mean ± half-width' of the 95% Student t interval over seeds; the mean alone for one value."""
    if not values:
        return "—"
    m = statistics.fmean(values)
    if len(values) < 2:
        return format(m, spec)
    return f"{format(m, spec)} ± {half_width(values):.4f}"


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def fmt(value, digits=4):
    return "—" if value is None else f"{value:.{digits}f}"


def final_val(run):
    return max(run["val"].items())[1] if run["val"] else None


def final_losses(groups):
    # Runs that share a seed share initial weights and batches, so the paired difference to the
    # same format's AdamW run, seed by seed, is the cleanest comparison: its mean, 95% interval over
    # seeds, and how many seeds it is negative in.
    reference = mean(final_val(r) for r in groups.get("fp32.adamw", {}).values())
    seeds = sorted({s for g in groups.values() for s in g})
    print("| run | learning_rate | " + " | ".join(f"seed {s}" for s in seeds) +
          " | mean ± 95% CI | vs fp32 adamw | − same format's adamw, paired | seeds lower |")
    print("|---|---|" + "---|" * len(seeds) + "---|---|---|---|")
    for name, runs in groups.items():
        finals = [final_val(runs[s]) if s in runs else None for s in seeds]
        m = mean(finals)
        lr = next(iter(runs.values()))["lr"]
        versus = "—" if m is None or reference is None else f"{100 * (m / reference - 1):+.2f}%"
        baseline = groups.get(name.split(".")[0] + ".adamw", {})
        paired = [f - final_val(baseline[s]) for s, f in zip(seeds, finals)
                  if f is not None and s in baseline and final_val(baseline[s]) is not None]
        if name.endswith(".adamw") or not paired:
            same, lower = "—", "—"
        else:
            same, lower = f"{mean_ci(paired, '+.4f')}", f"{sum(d < 0 for d in paired)} of {len(paired)}"
        print(f"| {name} | {lr:g} | " + " | ".join(fmt(f) for f in finals) +
              f" | {mean_ci([f for f in finals if f is not None], '.4f')} | {versus} | {same} | {lower} |")


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
    # † marks a mean over an estimate that had not converged: residual ‖Hv − λv‖/|λ| above 0.1
    # after its iterations (docs/optimizers.md, "Top Hessian eigenvalue").
    steps = sorted({m["step"] for g in groups.values() for r in g.values() for m in r["metrics"]
                    if "hessian" in m.get("diag", {})})
    print("| run | " + " | ".join(f"λ_max @{s}" for s in steps) + " |")
    print("|---|" + "---|" * len(steps))
    for name, runs in groups.items():
        cells = []
        for s in steps:
            found = [m["diag"]["hessian"] for r in runs.values() for m in r["metrics"]
                     if m["step"] == s and "hessian" in m.get("diag", {})]
            unconverged = any(h["residual"] > 0.1 for h in found)
            cells.append(fmt(mean(h["top_eigenvalue"] for h in found), 2) + (" †" if unconverged else ""))
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


def safetensors_f32(path):
    """The F32 tensors of a safetensors file, as flat arrays."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + size]), raw[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name != "__metadata__" and entry["dtype"] == "F32":
            begin, end = entry["data_offsets"]
            tensors[name] = array.array("f", data[begin:end])
    return tensors


def at_bound(run_dir):
    """Fraction of Madam's weights at their bound ±p_scale·RMS(initial) in the last checkpoint."""
    last = max((run_dir / "checkpoints").glob("step_*"), key=lambda p: int(p.name[5:]))
    weights, state = safetensors_f32(last / "model.safetensors"), safetensors_f32(last / "optimizer.safetensors")
    offset, held, total = 0, 0, 0
    for tensor in json.loads((run_dir / "optimizer.json").read_text())["tensors"]:
        if tensor["optimizer"] == "madam":
            bound = state["weight_bound"][offset:offset + tensor["numel"]]
            held += sum(abs(w) >= b * (1 - 1e-6) for w, b in zip(weights[tensor["name"]], bound))
            total += tensor["numel"]
        offset += tensor["numel"]
    return held / total


def madam_bounds(groups):
    print("| run | seed | weights at the bound, last checkpoint |")
    print("|---|---|---|")
    for name, runs in groups.items():
        for seed, run in runs.items():
            if "madam" in name and run["end"]:
                print(f"| {name} | {seed} | {100 * at_bound(run['dir']):.1f}% |")


def main():
    sweep = pathlib.Path(sys.argv[1])
    groups = load(sweep)
    for title, table in (("Final validation loss", final_losses), ("Validation loss by step (mean of seeds)", loss_curves),
                         ("Geometry of the matmul weights (mean over tensors and seeds)", geometry),
                         ("Top Hessian eigenvalue of the unquantized loss (mean of seeds)", hessian),
                         ("Warnings raised (sum over seeds)", warnings),
                         ("Madam's weight bound", madam_bounds), ("Memory: weights and optimizer state", memory)):
        print(f"\n### {title}\n")
        table(groups)


if __name__ == "__main__":
    main()
