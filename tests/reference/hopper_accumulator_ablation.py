"""The alternatives to hopper_accumulator.py's model, each scored on the recorded Hopper outputs.

Each line changes one choice of the model and prints the fraction of finite outputs it still
matches bit for bit; the model itself matches 100% everywhere (hopper_accumulator_check.py).
Sub-sampled to run in about two minutes on one core: FP8 on the first ROWS rows of A at K = 64,
256 and 1024 (one-block, few-block and many-block sums); split-K at K = 8192 and 16384, the
pieces' order on all rows and other splits on 8; BF16 at K = 256 on all rows.
Usage: python3 hopper_accumulator_ablation.py [data folder of the shared tree]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hopper_accumulator as ha  # noqa: E402

ROWS = 32
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(
    os.path.join(HERE, "..", "..", "..", "shared", "data"))


def cut_at(x, lsb, how):
    """x cut to a multiple of 2^lsb: 'rz' toward zero, 'floor' two's complement, 'rne' nearest."""
    if how == "exact":
        return x
    rounding = {"rz": np.trunc, "floor": np.floor, "rne": np.round}[how]   # np.round: ties even
    return np.ldexp(rounding(np.ldexp(x, -lsb)), lsb)


def make_block_fma(exponent="operands", cut="rz", acc_cut=None, norm="rz"):
    """A block FMA with one choice changed (defaults: the model)."""
    def block_fma(prod, prod_exp, acc, align_bits, acc_bits):
        if exponent == "leading":                          # leading bit of the product instead
            prod_exp = np.frexp(prod)[1] - 1
        acc_exp = np.where(acc != 0, np.frexp(acc)[1] - 1, ha.NO_EXPONENT)
        e_max = np.maximum(np.where(prod != 0, prod_exp, ha.NO_EXPONENT).max(axis=-1), acc_exp)
        lsb = e_max - align_bits
        total = cut_at(prod, lsb[..., None], cut).sum(axis=-1) + cut_at(acc, lsb, acc_cut or cut)
        top = np.frexp(total)[1] - 1
        return cut_at(total, np.where(total != 0, top - (acc_bits - 1), 0), norm)
    return block_fma


def pairwise(parts):
    """FP32 tree sum: neighbours added level by level, an odd one out carried up."""
    while len(parts) > 1:
        parts = [p + q for p, q in zip(parts[::2], parts[1::2])] + parts[len(parts) // 2 * 2:]
    return parts[0]


def fraction(model, recorded):
    finite = np.isfinite(recorded)
    return float(np.mean(model.view(np.uint32)[finite] == recorded.view(np.uint32)[finite]))


def main():
    fp8 = np.load(os.path.join(DATA, "hopper-fp8-gemm", "fp8acc_e4m3_e4m3.npz"))
    model_fma = ha.block_fma
    variants = [
        ("model", {}, {}),
        ("exponent = leading bit of the product", dict(exponent="leading"), {}),
        ("alignment keeps 12 fraction bits", {}, dict(align_bits=12)),
        ("alignment keeps 14 fraction bits", {}, dict(align_bits=14)),
        ("blocks of 16 products", {}, dict(block_k=16)),
        ("blocks of 64 products", {}, dict(block_k=64)),
        ("alignment cut: floor (two's complement)", dict(cut="floor"), {}),
        ("alignment cut: nearest even", dict(cut="rne"), {}),
        ("accumulator not cut (exact addend)", dict(acc_cut="exact"), {}),
        ("accumulator cut: floor", dict(acc_cut="floor"), {}),
        ("accumulator cut: nearest even", dict(acc_cut="rne"), {}),
        ("normalization: nearest even, 14 bits", dict(norm="rne"), {}),
        ("normalization: toward zero, 13 bits", {}, dict(acc_bits=13)),
        ("normalization: toward zero, 15 bits", {}, dict(acc_bits=15)),
        ("no normalization (sum kept exact)", dict(norm="exact"), {}),
        ("promotion every 64 (changes f0 only)", {}, dict(promote_every=64)),
        ("promotion every 256 (changes f0 only)", {}, dict(promote_every=256)),
    ]
    print(f"FP8 E4M3 x E4M3, first {ROWS} rows: fraction of outputs bit-exact")
    print(f"{'variant':42s}" + "".join(f"  K={K:<5d}f{f}" for K in (64, 256, 1024) for f in (0, 1)))
    for name, fma_kw, knobs in variants:
        ha.block_fma = make_block_fma(**fma_kw)
        cells = []
        for K in (64, 256, 1024):
            a, bt = fp8[f"a_{K}"][:ROWS], fp8[f"bt_{K}"]
            for fast in (0, 1):
                out = ha.hopper_fp8_gemm(a, bt, bool(fast), **knobs)
                cells.append(fraction(out, fp8[f"f32_{K}_fast{fast}"][:ROWS]))
        print(f"{name:42s}" + "".join(f"  {c:10.4f}" for c in cells), flush=True)
    ha.block_fma = model_fma

    print("\nSplit-K at large K: the pieces' order on all rows, other splits on the first 8")
    for K, S in ((8192, 3), (16384, 6)):
        for fast in (0, 1):
            a, bt, rec = fp8[f"a_{K}"], fp8[f"bt_{K}"], fp8[f"f32_{K}_fast{fast}"]

            def pieces(bounds, rows):
                return [ha.hopper_fp8_gemm(a[:rows, lo:hi], bt[:, lo:hi], bool(fast), split_k=1)
                        for lo, hi in bounds]
            model = pieces(ha.split_bounds(K, S), 128)
            rows = [(f"model: S={S}, ceil pieces, FP32 in order", sum(model, np.float32(0)), 128),
                    ("pieces added exactly, rounded once",
                     np.sum(model, axis=0, dtype=np.float64).astype(np.float32), 128),
                    ("pieces added in reverse order", sum(model[::-1], np.float32(0)), 128),
                    ("pieces added as a pairwise tree", pairwise(model), 128),
                    ("no split", ha.hopper_fp8_gemm(a[:8], bt, bool(fast), split_k=1), 8)]
            for other in (S - 1, S + 1, 2 * S):
                out = ha.hopper_fp8_gemm(a[:8], bt, bool(fast), split_k=other)
                rows.append((f"S={other}", out, 8))
            per = K // 128 // S                               # S pieces of floor(tiles/S) k-tiles,
            bounds = [(s * per * 128, (s + 1) * per * 128 if s < S - 1 else K) for s in range(S)]
            rows.append((f"S={S}, floor pieces (remainder last)",
                         sum(pieces(bounds, 8), np.float32(0)), 8))
            for name, out, n in rows:
                share = fraction(out, rec[:n])
                print(f"  K={K:5d} fast{fast}  {name:40s} rows<{n:<4d} {share:.4f}", flush=True)

    bf_path = os.path.join(DATA, "hopper-bf16-gemm", "bf16_gemm.npz")
    if os.path.exists(bf_path):
        bf = np.load(bf_path)
        a, b = bf["a_256"].astype(np.float64), bf["bt_256"].astype(np.float64)
        ea, eb = ha.binary_exponent(a, -126), ha.binary_exponent(b, -126)
        print("\nBF16 x BF16, CUBLAS_COMPUTE_32F, K = 256, all rows")
        bf_variants = [
            ("model: 16 products, 25 bits, toward zero", {}, (16, 25, 24)),
            ("blocks of 8", {}, (8, 25, 24)), ("blocks of 32", {}, (32, 25, 24)),
            ("alignment keeps 24 bits", {}, (16, 24, 24)),
            ("alignment keeps 26 bits", {}, (16, 26, 24)),
            ("exponent = leading bit of the product", dict(exponent="leading"), (16, 25, 24)),
            ("alignment cut: floor", dict(cut="floor"), (16, 25, 24)),
            ("accumulator not cut", dict(acc_cut="exact"), (16, 25, 24)),
            ("normalization: nearest even", dict(norm="rne"), (16, 25, 24)),
        ]
        for name, fma_kw, (block, align, acc) in bf_variants:
            ha.block_fma = make_block_fma(**fma_kw)
            out = ha.tensor_core_chain(a, ea, b, eb, block, align, acc)
            print(f"  {name:44s} {fraction(out, bf['f32_256']):.4f}", flush=True)
        ha.block_fma = model_fma
        print(f"  {'PEDANTIC as the tensor-core model':44s} "
              f"{fraction(ha.hopper_bf16_gemm(a, b), bf['f32_256_pedantic']):.4f}")
        exact = (a @ b.T).astype(np.float32)
        print(f"  {'PEDANTIC as the correctly rounded exact sum':44s} "
              f"{fraction(exact, bf['f32_256_pedantic']):.4f}")
        print(f"  {'PEDANTIC as sequential FP32 FMAs (model)':44s} "
              f"{fraction(ha.hopper_bf16_gemm(a, b, pedantic=True), bf['f32_256_pedantic']):.4f}")


if __name__ == "__main__":
    main()
