"""Replays the recorded Hopper GEMMs through a model and counts bit-exact outputs.

The model is the numpy reference (hopper_accumulator.py), or with --engine DIR the C++ engine's
emulated GEMM through altgrad.gemm (DIR: the build's python folder), the parameterized form of each
named model so that --perturb KNOBS (for example "bits=12" or "promote=64") can change one knob:
a perturbed model must fail.

Data: ../shared/data/hopper-fp8-gemm/ (fp8acc_e4m3_e4m3.npz random products, fp8acc_probes.npz
structured sums; outputs FP32 and BF16) and, where present, ../shared/data/hopper-bf16-gemm/
(bf16_gemm.npz: CUBLAS_COMPUTE_32F and _PEDANTIC).
Usage: python3 hopper_accumulator_check.py [--all-rows] [--engine DIR [--perturb KNOBS]] [data folder]

One case per (data set, K, mode, output type). A case passes when every finite recorded output
equals the model's bit for bit (and NaN sits where the model puts it); for the rest the table shows
the largest distance in FP32 units in the last place. To stay near 15 s on one core, K >= 4096 is
checked on the first ROWS_LARGE_K rows of A only (all 128 with --all-rows, about a minute).
Ends with 'N passed, N failed'.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper_accumulator import (RECORDED_SPLIT_K, hopper_bf16_gemm, hopper_fp8_gemm,  # noqa: E402
                                round_to_bf16)

ROWS_LARGE_K = 32
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))


def ordered(x):
    """float32 -> int64 in the order of the values (adjacent floats differ by 1)."""
    i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def compare(model, recorded):
    """-> (bit-exact finite outputs, finite outputs, max ulp distance, NaN placement agrees)."""
    model = np.asarray(model, dtype=np.float32)
    recorded = np.asarray(recorded, dtype=np.float32)
    finite = np.isfinite(recorded)
    same = (model.view(np.uint32) == recorded.view(np.uint32)) & finite
    ulp = np.abs(ordered(model) - ordered(recorded))[finite & ~same]
    nan_ok = bool(np.array_equal(np.isnan(model), np.isnan(recorded)))
    return int(same.sum()), int(finite.sum()), int(ulp.max()) if ulp.size else 0, nan_ok


def engine_models(python_dir, perturb):
    """hopper_fp8_gemm and hopper_bf16_gemm through the engine's altgrad.gemm."""
    sys.path.insert(0, python_dir)
    import altgrad  # noqa: E402
    extra = "," + perturb if perturb else ""

    def fp8(a, bt, fast_accum, split_k=None):
        split = RECORDED_SPLIT_K.get(a.shape[1], 1) if split_k is None else split_k
        knobs = f"aligned,split={split}" + ("" if fast_accum else ",promote=128")
        return altgrad.gemm(a, bt, accumulate=knobs + extra)

    def bf16(a, bt, pedantic=False):
        if pedantic:
            return hopper_bf16_gemm(a, bt, pedantic=True)   # no tensor core: not the engine's model
        return altgrad.gemm(a, bt, accumulate="aligned,group=16,bits=25,acc=24,inputs=bf16" + extra)
    return fp8, bf16


def option(name):
    """The value after --name on the command line, or None."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main():
    valued = {option("--engine"), option("--perturb")}
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a not in valued]
    all_rows = "--all-rows" in sys.argv or option("--engine") is not None   # the engine is fast
    data = args[0] if args else DEFAULT_SHARED
    fp8_gemm, bf16_gemm = hopper_fp8_gemm, hopper_bf16_gemm
    if option("--engine"):
        fp8_gemm, bf16_gemm = engine_models(option("--engine"), option("--perturb"))
    results = []

    def report(name, model, recorded):
        same, finite, ulp, nan_ok = compare(model, recorded)
        ok = same == finite and nan_ok
        results.append(ok)
        note = "" if nan_ok else "  NaN placement differs"
        print(f"{name:34s} {same:6d}/{finite:<6d} bit-exact  {100.0 * same / max(finite, 1):7.3f}%"
              f"  max ulp {ulp:6d}  {'ok' if ok else 'FAIL'}{note}", flush=True)

    fp8 = np.load(os.path.join(data, "hopper-fp8-gemm", "fp8acc_e4m3_e4m3.npz"))
    ks = sorted(int(k[2:]) for k in fp8.files if k.startswith("a_"))
    for K in ks:
        rows = 128 if all_rows or K < 4096 else ROWS_LARGE_K
        a, bt = fp8[f"a_{K}"][:rows], fp8[f"bt_{K}"]
        for fast in (0, 1):
            out = fp8_gemm(a, bt, fast_accum=bool(fast))
            tag = f"e4m3 K={K:5d} fast{fast}" + (f" rows<{rows}" if rows < 128 else "")
            report(tag + " f32", out, fp8[f"f32_{K}_fast{fast}"][:rows])
            report(tag + " bf16", round_to_bf16(out), fp8[f"bf16_{K}_fast{fast}"][:rows])

    probes = np.load(os.path.join(data, "hopper-fp8-gemm", "fp8acc_probes.npz"))
    for K in sorted(int(k[2:]) for k in probes.files if k.startswith("a_")):
        a = probes[f"a_{K}"]
        ones = np.full((1, K), 0x38, dtype=np.uint8)     # B = all ones (E4M3 1.0): column 0
        for fast in (0, 1):
            out = fp8_gemm(a, ones, fast_accum=bool(fast))[:, 0]
            report(f"probe K={K:5d} fast{fast} f32", out, probes[f"f32_{K}_fast{fast}"])

    bf16_path = os.path.join(data, "hopper-bf16-gemm", "bf16_gemm.npz")
    if os.path.exists(bf16_path):
        bf = np.load(bf16_path)
        for K in sorted(int(k[2:]) for k in bf.files if k.startswith("a_")):
            for pedantic in (False, True):
                out = bf16_gemm(bf[f"a_{K}"], bf[f"bt_{K}"], pedantic=pedantic)
                report(f"bf16 K={K:5d} 32F{'_PEDANTIC' if pedantic else ''}", out,
                       bf[f"f32_{K}{'_pedantic' if pedantic else ''}"])

    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
