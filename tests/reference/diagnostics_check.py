"""End to end: the diagnostics a run logs equal the same diagnostics recomputed from the run's
checkpoint and batch in float64 PyTorch (diagnostics_reference.py), by docs/quantization.md's
definitions.

The run: a tiny GELU model with biases, gradients quantized to E5M2 without scaling (so many
underflow and the gradient SNR is finite), probs unquantized. It trains 3 steps; then the
checkpoint of step 3 is edited so that the diagnostics have something to find (6 of block 0's MLP
units dead: c_fc bias -20; an outlier channel in block 0's ln_2; block 1's queries and keys 30x
larger, so its attention is sharper), and the run resumes for step 4, a diagnostic step, dumping
its batch with --dump-batch 4. Step 4's diagnostics use the weights of checkpoint step_3.

Usage: diagnostics_check.py PATH_TO_ALTGRAD
Exit status 0 when every diagnostic agrees within its tolerance, 77 (skipped) without PyTorch.
"""
import importlib.util
import math
import os
import random
import subprocess
import sys
import tempfile

if importlib.util.find_spec("torch") is None:
    print("skipped: PyTorch not found (scripts/setup.sh installs python3-torch)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diagnostics_reference as ref  # noqa: E402

DEAD_UNITS_MADE = 6

CONFIG = """
n_layer = 2
n_head = 2
n_embd = 32
block_size = 32
batch_size = 4
bias = true
learning_rate = 0.003
warmup_iters = 1
lr_decay_iters = 4
max_iters = 3
eval_interval = 100
eval_iters = 1
log_interval = 1
checkpoint_interval = 0
keep_checkpoints = 0
diag_interval = 4

[quant.grad]
format = "e5m2"
scaling = "none"
"""

# Float32 engine against a float64 reference on the same float32 weights and tokens.
TOLERANCES = {
    "loss": ("relative", 1e-5),
    "kurtosis": ("relative", 1e-4),
    "attention_entropy": ("absolute", 1e-5),  # nats
    "dead_units": ("absolute", 1e-12),  # a count over H units: must match exactly
    "grad_norm": ("relative", 1e-4),
    "grad_linf": ("relative", 1e-4),
    "grad_layer_ratio": ("relative", 1e-4),
    "grad_snr_db": ("absolute", 0.02),  # dB
    "code_usage": ("absolute", 0.5 / 250),  # the same codes: E5M2 has 250 non-NaN ones
    "weight_log2": ("absolute", 0),  # counts of float32 weights: exact
    # Value profiles of the matmul inputs (float32 engine values against float64 ones): moments,
    # percentiles as 1/8-binade bucket edges (at most one bucket apart), the range fit of E1M6 in
    # percent (a few of 4,096 values may sit on the other side of a threshold).
    "profile_moments": ("absolute", 1e-4),
    "profile_percentiles": ("log2", 0.126),
    "range_fit": ("absolute", 0.25),
    # Exact zeros of dY before and after quantization at each :grad point, in percent of its values
    # (thousands each; a value on the flush threshold may round the other way in float32).
    "grad_zeros": ("absolute", 0.05),
}


def altgrad(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True, errors="replace")
    if result.returncode != 0:
        print(f"FAIL altgrad {' '.join(args)}: exit status {result.returncode}\n{result.stderr}")
        sys.exit(1)


def flatten(prefix, value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from flatten(f"{prefix}.{key}" if prefix else key, inner)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from flatten(f"{prefix}[{i}]", inner)
    else:
        yield prefix, value


def as_number(value):
    return math.inf if value == "inf" else (math.nan if value is None else float(value))


def compare(diagnostic, want, got):
    kind, tolerance = TOLERANCES[diagnostic]
    failures, rows = 0, 0
    want_flat = dict(flatten("", want))
    # The histogram's bucket range (lo, hi) is layout, not a measurement; its counts are compared.
    got_flat = {k: v for k, v in flatten("", got) if not k.endswith((".lo", ".hi"))}
    if set(want_flat) != set(got_flat):
        print(f"FAIL {diagnostic}: names differ: reference {sorted(want_flat)}, run {sorted(got_flat)}")
        return 1
    for name in sorted(want_flat):
        w, g = as_number(want_flat[name]), as_number(got_flat[name])
        if math.isinf(w) or math.isinf(g):
            error = 0.0 if w == g else math.inf
        elif kind == "log2":
            error = 0.0 if w == g else (abs(math.log2(g / w)) if w > 0 and g > 0 else math.inf)
        else:
            error = abs(g - w) / (abs(w) if kind == "relative" and w != 0 else 1.0)
        ok = error <= tolerance
        failures += not ok
        rows += 1
        if ok and diagnostic == "weight_log2":
            continue  # 36 counts per tensor: only a summary below
        print(f"{'ok' if ok else 'MISMATCH':8s} {diagnostic}.{name:40s} run {g:.8g}  reference {w:.8g}  "
              f"{kind} error {error:.2e} (tolerance {tolerance:.0e})")
    if diagnostic == "weight_log2":
        print(f"{'ok' if failures == 0 else 'MISMATCH':8s} weight_log2: {rows - failures} of {rows} counts agree")
    return failures


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as scratch:
        r = random.Random(1)
        words = ["law", "court", "article", "shall", "apply", "member", "state"]
        with open(os.path.join(scratch, "corpus.txt"), "w") as f:
            f.write(" ".join(r.choice(words) for _ in range(8000)))
        with open(os.path.join(scratch, "run.toml"), "w") as f:
            f.write(f'data = "{scratch}/corpus.txt"\n' + CONFIG)
        run = os.path.join(scratch, "run")
        altgrad(binary, "train", os.path.join(scratch, "run.toml"), "--out", run)

        # Give the diagnostics something to find: dead units, an outlier channel, sharp attention.
        model = os.path.join(run, "checkpoints", "step_3", "model.safetensors")
        state, _ = ref.read_safetensors(model)
        bias = state["transformer.h.0.mlp.c_fc.bias"].clone()
        bias[:DEAD_UNITS_MADE] = -20.0
        ref.write_tensor(model, "transformer.h.0.mlp.c_fc.bias", bias)
        gain = state["transformer.h.0.ln_2.weight"].clone()
        gain[0] *= 30.0
        ref.write_tensor(model, "transformer.h.0.ln_2.weight", gain)
        c_attn = state["transformer.h.1.attn.c_attn.weight"].clone()
        c_attn[: 2 * c_attn.shape[1]] *= 30.0  # the query and key rows
        ref.write_tensor(model, "transformer.h.1.attn.c_attn.weight", c_attn)
        altgrad(binary, "train", "--resume", run, "--set", "max_iters=4", "--dump-batch", "4")

        want = ref.recompute(run, 4)
        got = ref.logged(run, 4)
        failures = 0
        for diagnostic in TOLERANCES:
            failures += compare(diagnostic, want[diagnostic], got[diagnostic])

        # The run must exercise what it checks: made-dead units, lossy but not silent gradients.
        hidden = len(bias)
        checks = [
            ("block 0 has at least the units made dead", want["dead_units"]["h.0.mlp"] >= DEAD_UNITS_MADE / hidden),
            ("the outlier channel shows in kurtosis", want["kurtosis"]["h.0.mlp.c_fc:act"] > 10),
            ("block 1's sharpened attention has lower entropy than block 0's",
             want["attention_entropy"]["h.1.attn"]["mean"] < want["attention_entropy"]["h.0.attn"]["mean"] - 0.2),
            ("some gradient SNR is finite and positive",
             any(0 < v < math.inf for v in want["grad_snr_db"].values())),
            ("some gradient point uses several codes", max(want["code_usage"].values()) > 10 / 250),
            ("the dead units' gradients are exact zeros before quantization",
             want["grad_zeros"]["h.0.mlp.c_fc:grad"]["zero_in_pct"] > 0),
            ("quantization flushes more gradients to zero",
             all(v["zero_out_pct"] > v["zero_in_pct"] for v in want["grad_zeros"].values())),
            ("the outlier channel makes E1M6 flush more of block 0's MLP input than of block 1's",
             want["range_fit"]["h.0.mlp.c_fc:act"]["flush_pct"] > want["range_fit"]["h.1.mlp.c_fc:act"]["flush_pct"] + 1),
        ]
        for what, ok in checks:
            failures += not ok
            print(f"{'ok' if ok else 'FAIL':8s} {what}")
        print(f"{failures} mismatches")
        return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
