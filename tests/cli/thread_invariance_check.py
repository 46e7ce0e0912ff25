#!/usr/bin/env python3
"""Same bits on any thread count (docs/determinism.md), end to end.

Trains every model variant, plus a recipe with stochastic rounding and an MX recipe, for a few steps
at 1, 2, 3 and 4 OpenMP threads, and requires byte-identical checkpoints (model, optimizer, quant
state, state.json, configs, recipe), identical metrics.jsonl lines with the wall-clock fields taken
out, and identical events.jsonl lines with the run directory taken out. The model is just large
enough that every kernel splits its work between threads (ops/cpu/parallel.hpp's threshold); its
GEMMs are single tiles, so OpenBLAS's own threading would show here, and the GEMMs cut into many
tiles are held to the same bits by ops_tests (Gemm.BitsDoNotDependOnThreadCount).

Before it trusts a comparison, it checks that the comparison sees a one-bit change in a saved
parameter and a last-digit change in a logged metric.

Usage: thread_invariance_check.py PATH_TO_ALTGRAD
"""
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

THREAD_COUNTS = (1, 2, 3, 4)
WALL_CLOCK_KEYS = ("tokens_per_s",)

BASE = """
n_layer = 2
n_head = 2
n_embd = 64
block_size = 64
batch_size = 4
gradient_accumulation_steps = 2
max_iters = 3
warmup_iters = 1
lr_decay_iters = 3
eval_interval = 3
eval_iters = 2
log_interval = 1
diag_interval = 1
checkpoint_interval = 2
keep_checkpoints = 0
"""

MODEL_VARIANTS = {
    f"{norm}-{mlp}-{'bias' if bias else 'nobias'}": f'norm = "{norm}"\nmlp = "{mlp}"\nbias = {str(bias).lower()}\n'
    for norm in ("layernorm", "rmsnorm")
    for mlp in ("gelu", "swiglu")
    for bias in (False, True)
}

RECIPES = {
    "fp8-hybrid-stochastic": '[quant]\npreset = "fp8-hybrid"\n[quant.grad]\nrounding = "stochastic"\n'
    '[[quant.override]]\nmatch = "h.*.attn.probs"\nformat = "e4m3"\n',
    "mx8": 'bias = true\n[quant]\npreset = "mx8"\n',
}


def write_corpus(path):
    words = ["the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within", "article"]
    r = random.Random(7)
    path.write_text(" ".join(r.choice(words) for _ in range(30000)))


def train(altgrad, config, run_dir, threads):
    # Passive waiting: four spinning threads on a two-core machine would take turns for seconds.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE")
    done = subprocess.run([altgrad, "train", str(config), "--out", str(run_dir)], env=env, capture_output=True,
                          text=True, errors="replace")
    if done.returncode != 0:
        sys.exit(f"FAIL {run_dir.name}: altgrad train exited {done.returncode}:\n{done.stderr}")


def checkpoint_files(run_dir):
    root = run_dir / "checkpoints"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# What the machine decides, not the run: wall-clock seconds and the process's peak memory, at any
# depth of an event (the checkpoint events' train_seconds, the end event's cost, the target event).
MACHINE_KEYS = ("seconds", "train_seconds", "peak_rss_bytes")


def without(record, keys):
    if isinstance(record, dict):
        return {k: without(v, keys) for k, v in record.items() if k not in keys}
    return record


def json_lines(path, run_dir, drop_keys=()):
    return [without(json.loads(line.replace(str(run_dir), "RUN")), drop_keys)
            for line in path.read_text().splitlines()]


def outputs(run_dir):
    """Everything a run produced that must not depend on the thread count."""
    return {
        "checkpoints": checkpoint_files(run_dir),
        "metrics": json_lines(run_dir / "metrics.jsonl", run_dir, WALL_CLOCK_KEYS),
        "events": json_lines(run_dir / "events.jsonl", run_dir, MACHINE_KEYS),
    }


def differences(a, b):
    """Names of what differs between two runs' outputs, empty when they agree bit for bit."""
    found = []
    for name in sorted(set(a["checkpoints"]) | set(b["checkpoints"])):
        if a["checkpoints"].get(name) != b["checkpoints"].get(name):
            found.append(f"checkpoints/{name}")
    for kind in ("metrics", "events"):
        # repr keeps every digit of a float: json.loads gives back the exact double that was written.
        if [repr(x) for x in a[kind]] != [repr(x) for x in b[kind]]:
            found.append(f"{kind}.jsonl")
    return found


def check_comparison_sees_small_changes(reference):
    flipped = dict(reference, checkpoints=dict(reference["checkpoints"]))
    name = next(n for n in flipped["checkpoints"] if n.endswith("model.safetensors"))
    data = bytearray(flipped["checkpoints"][name])
    data[-1] ^= 1  # lowest bit of the last parameter's last byte
    flipped["checkpoints"][name] = bytes(data)
    nudged = dict(reference, metrics=[dict(m) for m in reference["metrics"]])
    nudged["metrics"][-1]["loss"] = nudged["metrics"][-1]["loss"] * (1 + 2**-52)
    return differences(reference, flipped) == [f"checkpoints/{name}"] and differences(reference, nudged) == [
        "metrics.jsonl"
    ]


def main():
    altgrad = sys.argv[1]
    failed = passed = 0
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        corpus = scratch / "corpus.txt"
        write_corpus(corpus)
        cases = {**MODEL_VARIANTS, **RECIPES}
        for name, extra in cases.items():
            # Top-level keys must come before the [quant] tables a recipe opens.
            config = scratch / f"{name}.toml"
            config.write_text(f'data = "{corpus}"\n' + BASE + extra)
            runs = {}
            for threads in THREAD_COUNTS:
                run_dir = scratch / f"{name}.t{threads}"
                train(altgrad, config, run_dir, threads)
                runs[threads] = outputs(run_dir)
            if name == "layernorm-gelu-nobias" and not check_comparison_sees_small_changes(runs[1]):
                sys.exit("FAIL the comparison does not see a one-bit change")
            for threads in THREAD_COUNTS[1:]:
                found = differences(runs[1], runs[threads])
                if found:
                    failed += 1
                    print(f"FAIL {name}: {threads} threads differ from 1 thread in {', '.join(found)}")
                else:
                    passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
