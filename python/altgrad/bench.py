"""`python3 -m altgrad.bench [VALUES]`: altgrad.quantize's throughput against the engine's own
(`altgrad bench quantize`, same case, same machine) and against a plain numpy E4M3 rounding, in one
process. Prints Gvalues/s for each and the ratios; the target is at least 90% of the engine's."""
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

import altgrad

ROUNDS = 3


def best_seconds(call, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def numpy_e4m3(x):
    """Nearest-even E4M3 (max 448, subnormals below 2^-6) in numpy: the fastest plain version."""
    a = np.abs(x)
    exponent = np.floor(np.log2(np.maximum(a, np.float32(2.0 ** -6))))
    step = np.exp2(exponent - 3).astype(np.float32)
    return np.copysign(np.minimum(np.round(a / step) * step, np.float32(448.0)), x)


def engine_rate(values):
    """The engine's e4m3 nearest-even rate (Gvalues/s) from `altgrad bench quantize`, best thread count."""
    cli = pathlib.Path(altgrad.__file__).resolve().parents[2] / "altgrad"
    out = subprocess.run([str(cli), "bench", "quantize", "--values", str(values), "--repeats", "5"],
                         capture_output=True, text=True, check=True).stdout
    rates = [float(m.group(1)) for m in re.finditer(r"^e4m3 nearest-even\s+\d+\s+([0-9.]+)", out, re.M)]
    return max(rates)


def main():
    values = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    # Standard normal values, as `altgrad bench quantize` draws them: the same case on both sides.
    x = np.random.default_rng(1).standard_normal(values).astype(np.float32)
    out = np.empty_like(x)
    # The two sides in alternation, best of each: on a shared host memory bandwidth drifts between
    # runs a minute apart by as much as the gap being measured.
    python_rate = engine = 0.0
    for _ in range(ROUNDS):
        python_rate = max(python_rate, values / best_seconds(lambda: altgrad.quantize(x, "e4m3", out=out)) / 1e9)
        engine = max(engine, engine_rate(values))
    fresh_rate = values / best_seconds(lambda: altgrad.quantize(x, "e4m3")) / 1e9
    numpy_rate = values / best_seconds(lambda: numpy_e4m3(x), repeats=2) / 1e9
    print(f"e4m3 nearest-even, {values} float32 values, best of {ROUNDS} alternating rounds of 5")
    print(f"altgrad.quantize (Python)   {python_rate:7.3f} Gvalues/s  (out= a reused array, as the engine's bench)")
    print(f"  with a new output array   {fresh_rate:7.3f} Gvalues/s  (the first touch of 4 bytes per value)")
    print(f"altgrad bench quantize      {engine:7.3f} Gvalues/s  (the engine, best thread count)")
    print(f"numpy E4M3 rounding         {numpy_rate:7.3f} Gvalues/s")
    print(f"Python / engine: {python_rate / engine:.2f} (target >= 0.90); Python / numpy: {python_rate / numpy_rate:.1f}x")


if __name__ == "__main__":
    main()
