"""The Python package against independent references: formats decoded from their bit fields in
Python, round-to-nearest-even by search over the value list, OCP MX blocks in numpy, statistics in
float64 numpy; stochastic rounding against the command line's scalar path (`altgrad quantize`) and
its mean against x.

Usage: python_check.py BUILD_DIR      (BUILD_DIR/python holds the package, BUILD_DIR/altgrad the CLI)
"""
import math
import os
import subprocess
import sys

import numpy as np

build = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(build, "python"))
import altgrad  # noqa: E402

failures = 0


def check(what, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'ok' if ok else 'FAIL':5s} {what}" + (f": {detail}" if detail and not ok else ""))


def reference_values(E, M, bias, policy):
    """Every finite value of a sign + E + M format from its bit fields (fn: all-ones is NaN; ieee: the
    top exponent field is Inf/NaN), zero once, ascending."""
    out = set()
    top = (1 << E) - 1
    for sign in (1, -1):
        for e in range(top + 1):
            for m in range(1 << M):
                if policy == "fn" and e == top and m == (1 << M) - 1:
                    continue
                if policy == "ieee" and e == top:
                    continue
                v = (m / 2 ** M) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** M) * 2.0 ** (e - bias)
                out.add(sign * v if v else 0.0)
    return sorted(out)


def nearest_even(x, values, codes_even):
    """Round-to-nearest, ties to the value whose code is even, saturating, by search."""
    values = np.asarray(values, dtype=np.float64)
    i = np.clip(np.searchsorted(values, x), 1, len(values) - 1)
    lo, hi = values[i - 1], values[i]
    pick_hi = (x - lo > hi - x) | ((x - lo == hi - x) & codes_even(hi))
    return np.clip(np.where(pick_hi, hi, lo), values[0], values[-1])


# Formats: the list, and every named 8-bit format's values from its bits.
listed = subprocess.run([os.path.join(build, "altgrad"), "formats"], capture_output=True, text=True, check=True)
names = [line.split()[0] for line in listed.stdout.splitlines()[1:] if line.strip()]
check("formats() lists what `altgrad formats` lists", altgrad.formats() == names, f"{altgrad.formats()} vs {names}")
for name, E, M, bias, policy in [("e4m3", 4, 3, 7, "fn"), ("e5m2", 5, 2, 15, "ieee"), ("e3m4", 3, 4, 3, "ieee"),
                                 ("e2m5", 2, 5, 1, "fn"), ("e1m6", 1, 6, 0, "fn"), ("e7m0", 7, 0, 63, "fn")]:
    f = altgrad.Format(name)
    want = reference_values(E, M, bias, policy)
    got = f.values().astype(np.float64).tolist()
    check(f"{name}: values() are the values of its bit fields", got == want, f"{len(got)} vs {len(want)} values")
    check(f"{name}: properties", (f.bits, f.exponent_bits, f.mantissa_bits, f.bias, f.max_finite, f.min_subnormal)
          == (1 + E + M, E, M, bias, want[-1], min(v for v in want if v > 0)))
    codes = np.arange(256)
    decoded = f.decode(codes)
    check(f"{name}: encode(decode(c)) == c for every code of a finite value",
          all(f.encode(decoded[c:c + 1])[0] == c for c in codes if np.isfinite(decoded[c]) and decoded[c] != 0))

    # Nearest-even by search over the values: the even code is the one whose mantissa LSB is 0.
    def even(v, f=f):
        return (f.encode(np.abs(v).astype(np.float32)) & 1) == 0
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(20000) * np.exp2(rng.uniform(-8, 8, 20000)) * f.max_finite / 64).astype(np.float32)
    x[:len(want)] = np.array(want, dtype=np.float32)  # every value itself
    mids = (np.array(want[1:]) + np.array(want[:-1])) / 2
    x[len(want):len(want) + len(mids)] = mids.astype(np.float32)  # the ties, where float32 holds them
    y, stats = altgrad.quantize(x, name)
    ref = nearest_even(x.astype(np.float64), want, even)
    check(f"{name}: quantize nearest equals nearest-even by search", np.array_equal(y.astype(np.float64), ref),
          f"{int(np.sum(y != ref))} differ, first at x = {x[np.argmax(y != ref)]!r}")
    # Overflow is decided on the grid extended upward: beyond the midpoint of max finite and the next
    # point up, max finite + S(max finite).
    threshold = want[-1] + float(f.spacing(np.array([want[-1]], dtype=np.float32))[0]) / 2
    beyond = int(np.sum(np.abs(x.astype(np.float64)) > threshold))
    check(f"{name}: overflow counts the values that round past max finite", stats["overflow"] == beyond,
          f"{stats['overflow']} vs {beyond}")
    rel = math.sqrt(np.sum((x.astype(np.float64) - ref) ** 2) / np.sum(x.astype(np.float64) ** 2))
    check(f"{name}: rel_error and amax equal float64 numpy",
          abs(stats["rel_error"] - rel) <= 1e-12 * rel and stats["amax"] == np.max(np.abs(x)))

# Stochastic rounding: the engine's words, element i at counter i, as the command line draws them.
x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
y, _ = altgrad.quantize(x, "e4m3", rounding="stochastic", seed=11)
cli = subprocess.run([os.path.join(build, "altgrad"), "quantize", "--format", "e4m3", "--rounding", "stochastic", "--seed", "11"],
                     input="\n".join(repr(float(v)) for v in x), capture_output=True, text=True, check=True)
want = np.array([float(line.split()[1]) for line in cli.stdout.splitlines()], dtype=np.float32)
check("stochastic rounding gives the command line's bits (same seed, same counters)", np.array_equal(y, want))
f = altgrad.Format("e4m3")
check("encode with stochastic rounding agrees with quantize", np.array_equal(
    f.decode(f.encode(x, rounding="stochastic", seed=11)), y))
v = np.full(200000, 1.1, dtype=np.float32)  # between 1 and 1.125: up with probability 0.8
mean = float(np.mean(altgrad.quantize(v, "e4m3", rounding="stochastic", seed=5)[0]))
check("stochastic rounding is unbiased (mean within 5 standard errors)",
      abs(mean - 1.1) < 5 * 0.125 * math.sqrt(0.8 * 0.2 / len(v)), f"mean {mean}")

# Per-tensor current scaling: s = max_finite / amax (margin 0), rounded once to float32.
x = np.random.default_rng(4).standard_normal(4096).astype(np.float32) * 1e-3
y, stats = altgrad.quantize(x, "e4m3", scaling="tensor")
s = np.float32(448.0 / np.float64(np.max(np.abs(x))))
check("scaling='tensor' uses max_finite / amax", stats["scale"] == s, f"{stats['scale']} vs {s}")
e4m3 = reference_values(4, 3, 7, "fn")
ref = nearest_even((x * s).astype(np.float64), e4m3, lambda v: (f.encode(np.abs(v).astype(np.float32)) & 1) == 0) / s
check("scaling='tensor' output equals nearest-even of x·s, over s", np.array_equal(y, ref.astype(np.float32)))

# OCP MX: blocks of 32 along the last axis, shared exponent floor(log2 amax) - emax (E4M3: 8).
x = (np.random.default_rng(5).standard_normal((8, 96)) * np.exp2(np.random.default_rng(6).uniform(-10, 10, (8, 1))))
x = x.astype(np.float32)
y, stats = altgrad.quantize(x, "e4m3", scaling="block", block=32)
blocks = x.reshape(8, 3, 32).astype(np.float64)
k = np.floor(np.log2(np.max(np.abs(blocks), axis=2, keepdims=True))) - 8
ref = nearest_even(blocks * np.exp2(-k), e4m3, lambda v: (f.encode(np.abs(v).astype(np.float32)) & 1) == 0) * np.exp2(k)
check("scaling='block' equals OCP MX in numpy", np.array_equal(y.astype(np.float64), ref.reshape(8, 96)))
check("scaling='block' counts its blocks", stats["blocks"] == 24)

# Errors name the problem.
for call, kind, text in [
        (lambda: altgrad.Format("e9m9"), ValueError, "unknown format name 'e9m9'"),
        (lambda: altgrad.quantize(np.zeros(3), "e4m3"), TypeError, "got float64"),
        (lambda: altgrad.quantize(np.zeros((4, 4), np.float32)[:, ::2], "e4m3"), TypeError, "C-contiguous"),
        (lambda: altgrad.quantize(np.zeros(3, np.float32), "e4m3", rounding="round"), ValueError, "unknown rounding 'round'"),
        (lambda: altgrad.quantize(np.zeros(3, np.float32), "e4m3", scaling="row"), ValueError, "unknown scaling 'row'"),
        (lambda: f.decode([300]), ValueError, "code 300 at index 0 is not a code of e4m3")]:
    try:
        call()
        check(f"error: {text}", False, "no exception")
    except kind as e:
        check(f"error: {text}", text in str(e), str(e))

print(f"{failures} failures")
sys.exit(1 if failures else 0)
