"""Sweep directories written with chosen final losses, in the layout `altgrad sweep` leaves
(docs/experiments.md, "The sweep directory"), for the report's tests that need cases the fixture's
real runs do not have. Imported by statistics_check.py and browser_check.py."""
import json
import os


def write_sweep(root, groups, criteria=(), events=None):
    """groups: {name: (preset, {seed: final val loss, or "diverged"})}; events: {run name: [event
    objects]}, written to that run's events.jsonl before its end or stop event."""
    runs = []
    for group, (preset, seeds) in groups.items():
        for seed, value in seeds.items():
            name = f"{group}.seed{seed}"
            d = os.path.join(root, "runs", name)
            os.makedirs(d)
            with open(os.path.join(d, "config.toml"), "w") as f:
                f.write(f'seed = {seed}\n[quant]\npreset = "{preset}"\n')
            with open(os.path.join(d, "metrics.jsonl"), "w") as f:
                f.write(json.dumps({"step": 10, "loss": 2.5, "val_loss": 2.5}) + "\n")
                if value != "diverged":
                    f.write(json.dumps({"step": 20, "loss": value, "val_loss": value}) + "\n")
            with open(os.path.join(d, "events.jsonl"), "w") as f:
                for event in (events or {}).get(name, []):
                    f.write(json.dumps(event) + "\n")
                end = {"event": "stop", "step": 15, "reason": "non-finite loss"} if value == "diverged" else \
                    {"event": "end", "reason": "completed", "step": 20}
                f.write(json.dumps(end) + "\n")
            runs.append({"name": name, "dir": f"runs/{name}", "group": group, "seed": seed,
                         "settings": {"quant.preset": preset, "seed": seed}})
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"format": "altgrad-sweep/1", "base": "tiny.toml", "runs": runs, "searches": [],
                   "criteria": list(criteria)}, f)
