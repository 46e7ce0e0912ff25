#!/usr/bin/env python3
"""The same runs give the same bits as when tests/cli/golden_runs.json was recorded.

Trains two model variants, a recipe with stochastic rounding and an MX recipe (the cases of
thread_invariance_check.py) for a few steps at one thread, and compares a SHA-256 digest of each
checkpoint's safetensors files (model, optimizer, quantization state) and of the trajectory in
metrics.jsonl (step, losses, learning rate, gradient norms) with the recorded ones. A refactor that must not change a bit (the backend seam,
ops/backend.hpp) is held to that here; a change that means to alter the numbers re-records the file
and says why in its commit. docs/determinism.md says the engine gives these bits on every x86-64
CPU it supports, so the digests do not depend on the machine; the quantizer's logged statistics
are left out, since its error sums may differ between builds (docs/determinism.md).

The recipes run a second time logging only their last step, so that the steps before it skip the
error sums behind rel_error (docs/quantization.md, "Which steps gather what"): their checkpoints
must still have the digests recorded for the run that logs every step.

Before it trusts a comparison, it checks that a one-bit change in a saved parameter changes the digest.

Usage: golden_run_check.py PATH_TO_ALTGRAD [--record]
"""
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from thread_invariance_check import BASE, MODEL_VARIANTS, RECIPES, outputs, train, write_corpus

GOLDEN = Path(__file__).with_name("golden_runs.json")
TRAJECTORY_KEYS = ("step", "loss", "val_loss", "val_perplexity", "lr", "grad_norm", "grad")
CASES = {name: MODEL_VARIANTS[name] for name in ("layernorm-gelu-nobias", "rmsnorm-swiglu-bias")} | RECIPES
# BASE with a metrics line at the last step only (no diagnostic step before it).
LAST_STEP_LOGGED = BASE.replace("log_interval = 1\n", "log_interval = 3\n").replace("diag_interval = 1\n",
                                                                                  "diag_interval = 100\n")
assert "\nlog_interval = 3\n" in LAST_STEP_LOGGED and "\ndiag_interval = 100\n" in LAST_STEP_LOGGED


def digests(run):
    """name -> SHA-256 of each safetensors file and of the metrics."""
    found = {name: hashlib.sha256(data).hexdigest()
             for name, data in run["checkpoints"].items() if name.endswith(".safetensors")}
    trajectory = [{k: v for k, v in line.items() if k in TRAJECTORY_KEYS} for line in run["metrics"]]
    metrics = "\n".join(repr(line) for line in trajectory).encode()
    found["metrics.jsonl"] = hashlib.sha256(metrics).hexdigest()
    return found


def check_digest_sees_one_bit(run):
    name = next(n for n in run["checkpoints"] if n.endswith("model.safetensors"))
    data = bytearray(run["checkpoints"][name])
    data[-1] ^= 1
    flipped = dict(run, checkpoints=dict(run["checkpoints"], **{name: bytes(data)}))
    return digests(flipped)[name] != digests(run)[name]


def train_digests(altgrad, scratch, corpus, name, base, extra):
    config = scratch / f"{name}.toml"
    config.write_text(f'data = "{corpus}"\n' + base + extra)
    train(altgrad, config, scratch / name, 1)
    run = outputs(scratch / name)
    if not check_digest_sees_one_bit(run):
        sys.exit("FAIL the digest does not see a one-bit change")
    return digests(run)


def main():
    altgrad, record = sys.argv[1], "--record" in sys.argv[2:]
    found, last_step_logged = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        corpus = scratch / "corpus.txt"
        write_corpus(corpus)
        for name, extra in CASES.items():
            found[name] = train_digests(altgrad, scratch, corpus, name, BASE, extra)
        for name, extra in ({} if record else RECIPES).items():
            last_step_logged[name] = train_digests(altgrad, scratch, corpus, f"{name}-last-step-logged",
                                                   LAST_STEP_LOGGED, extra)
    if record:
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"recorded {GOLDEN}")
        return 0
    golden = json.loads(GOLDEN.read_text())
    failed = passed = 0
    for name in CASES:
        differing = sorted(f for f in set(golden[name]) | set(found[name]) if golden[name].get(f) != found[name].get(f))
        if differing:
            failed += 1
            print(f"FAIL {name}: differs from {GOLDEN.name} in {', '.join(differing)}")
        else:
            passed += 1
    for name, digest in last_step_logged.items():
        checkpoints = sorted(set(golden[name]) - {"metrics.jsonl"})
        differing = [f for f in checkpoints if golden[name][f] != digest.get(f)]
        if differing or not checkpoints:
            failed += 1
            print(f"FAIL {name}, logged at its last step only: differs from {GOLDEN.name} in {', '.join(differing)}")
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
