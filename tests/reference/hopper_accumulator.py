"""What NVIDIA Hopper (sm_90: H100, H200) tensor-core GEMMs compute, bit for bit.

A numpy reference for the `hopper` and `hopper_fast` GEMM accumulations of DESIGN.md ("GEMM
accumulation"), fitted to real H200 outputs in ../shared/data/hopper-fp8-gemm/ (torch._scaled_mm,
cuBLASLt, CUDA 13.0, unit scales) and ../shared/data/hopper-bf16-gemm/ (cublasGemmEx, BF16 in,
FP32 compute and out). hopper_accumulator_check.py replays both and matches every finite output.

out[i, j] = sum over k of a[i, k] * bt[j, k], with a (M x K) and bt (N x K).

The FP8 model (E4M3 x E4M3, hopper_fp8_gemm)
-------------------------------------------
1. Products are exact. An E4M3 value is sig * 2^(exp - 3), sig a 4-bit integer (1.mmm, or 0.mmm
   for subnormals) and exp its exponent (-6 for subnormals). A product is sig_a * sig_b (in [1, 4)
   after the binary point) times 2^(exp_a + exp_b): its *exponent* is the sum of the operands'
   exponents, not the position of its leading bit.

2. The tensor core adds FP8_BLOCK_K = 32 products (one FP8 wgmma k-step) and the running accumulator
   c in one block fused multiply-add (block_fma):
   - e_max = the largest exponent among the block's nonzero products and c (c's exponent is that
     of its leading bit, floor(log2 |c|));
   - every product and c is cut to a multiple of 2^(e_max - 13), truncating its magnitude (round
     toward zero on sign and magnitude, not a two's-complement floor);
   - the cut terms are added exactly;
   - the sum is normalized to 14 significant bits (1 + 13 fraction bits: an "e8m13" value), again
     truncating toward zero. That is the new c, held in an FP32 register.

3. Fast accumulation (use_fast_accum=True): c runs over the whole of K; the output is c.
   Without it (cuBLAS's default): every PROMOTE_EVERY = 128 elements of K (one k-tile) the
   tensor-core partial c is added to an FP32 register with an ordinary FP32 addition (round to
   nearest even), out = fl32(out + c), and c restarts from 0.

4. Split-K: for large K cuBLAS splits K into S contiguous pieces of ceil(K/128 / S) k-tiles (the
   last one shorter), runs steps 2-3 on each from zero and adds the pieces' FP32 results in order,
   one FP32 addition each. S is cuBLAS's heuristic choice, not arithmetic: for M = N = 128 on the
   H200 it was S = 3 at K = 8192 and S = 6 at K = 16384 (22 k-tiles a piece), S = 1 up to
   K = 4096 (RECORDED_SPLIT_K). Other shapes, GPUs or cuBLAS versions may choose otherwise.

5. A BF16 output is the FP32 output rounded to nearest even. A NaN code (0x7F, 0xFF; E4M3 has no
   infinity) anywhere in row i of A or row j of Bt gives NaN at out[i, j].

The BF16 model (BF16 x BF16, FP32 compute, hopper_bf16_gemm)
------------------------------------------------------------
CUBLAS_COMPUTE_32F: the same block FMA with BF16_BLOCK_K = 16 products (one BF16 wgmma k-step), each
product and c cut to a multiple of 2^(e_max - 25), and the sum normalized to 24 significant bits
(FP32) toward zero; c runs over the whole of K (no promotion, no split-K at K <= 256).
CUBLAS_COMPUTE_32F_PEDANTIC: no tensor core: one FP32 fused multiply-add per k, in k order,
round to nearest even.

Evidence and sources
--------------------
The probes (one large term among K - 1 equal small ones) show a small term 2^13 below the large
one survive and one 2^14 below vanish when both lie in the same 32-long stretch of K, stretches
before the large one survive in the accumulator, and fast0 keeps the 128-long stretches without
the large term. The random products then pinned each choice: hopper_accumulator_ablation.py
changes one at a time and each change loses outputs (FP8 at K = 1024: 0-38% of outputs left
without fast accumulation, 0-94% with it; the split-K choices show at K >= 8192). One FP8 choice
the data cannot settle: the promotion's FP32 addition rounds to nearest or is exact (it is an FP32
register add, so nearest); toward zero loses a few outputs. The BF16 fit is weaker, since the
recorded operands have 4 significant bits: its alternatives lose 0.01-10% of outputs at K = 256.

Published facts it agrees with: DeepSeek-AI, "DeepSeek-V3 Technical Report" (2024), section
3.3.2: Hopper's FP8 GEMM keeps about 14 bits of accumulation precision; promoting to FP32 every
128 elements (4 WGMMAs) restores it. Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of
NVIDIA tensor cores", PeerJ Computer Science 7:e330 (2021): exact products, alignment to the
largest exponent with truncation, normalization with truncation. Khattak and Mikaitis, "Accurate
Models of NVIDIA Tensor Cores", arXiv:2512.07004 (2025): bit-accurate per-GPU models of that
kind, an e8m13 accumulator for H100 FP8. The block sizes, the exponent convention, the
accumulator's treatment and the split-K reduction here were fitted to the recorded data, not
taken from those sources.

Not covered by the data (choices stated, not verified): a zero product takes no part in e_max, and
a subnormal operand counts as exponent emin (no recorded block had its largest term from a
subnormal or zero operand); K not a multiple of the block is taken as zero-padded; E5M2 operands,
FP8 scales other than 1, other shapes' split-K, and FP32 overflow or underflow are not modelled.

Readable over fast: float64 holds every value exactly, the cuts are integer arithmetic on values
scaled by powers of two, vectorized over M x N with one loop over blocks of K.
"""
import numpy as np

FP8_BLOCK_K = 32        # products per tensor-core step, FP8 (wgmma k = 32)
FP8_ALIGN_BITS = 13     # fraction bits kept below the block's largest exponent
FP8_ACC_BITS = 14       # significant bits of the tensor-core result (e8m13)
BF16_BLOCK_K = 16       # products per tensor-core step, BF16 (wgmma k = 16)
BF16_ALIGN_BITS = 25
BF16_ACC_BITS = 24      # FP32
PROMOTE_EVERY = 128     # elements of K between promotions to FP32 without fast accumulation
K_TILE = 128            # cuBLAS's k-tile: split-K pieces are whole k-tiles
RECORDED_SPLIT_K = {8192: 3, 16384: 6}   # cuBLAS's FP8 split-K for M = N = 128 on the H200
NO_EXPONENT = -(1 << 20)                 # the exponent of zero: below every real one

# ----------------------------------------------------------------------------- operands

def e4m3_fields(codes):
    """codes (uint8, any shape) -> (value float64, exponent int64, nan mask).

    value = sign * sig * 2^(exponent - 3); exponent is -6 for subnormals; NaN codes give value 0
    (the caller masks them)."""
    c = np.asarray(codes, dtype=np.int64)
    field = (c >> 3) & 0xF
    mant = c & 0x7
    nan = (field == 0xF) & (mant == 0x7)
    sig = np.where(field == 0, mant, mant | 0x8)
    exponent = np.where(field == 0, -6, field - 7)
    value = np.where(c & 0x80, -1.0, 1.0) * np.ldexp(np.where(nan, 0, sig).astype(np.float64),
                                                      exponent - 3)
    return value, exponent, nan


def e4m3_to_float(codes):
    """Float64 values of E4M3 codes (NaN for the NaN codes)."""
    value, _, nan = e4m3_fields(codes)
    return np.where(nan, np.nan, value)


def binary_exponent(x, emin):
    """floor(log2 |x|), at least emin (subnormals of a format with minimum exponent emin)."""
    return np.maximum(np.frexp(x)[1] - 1, emin)


# ----------------------------------------------------------------------------- the tensor core

def truncate_at(x, lsb):
    """x (float64) cut toward zero to a multiple of 2^lsb: exact (power-of-two scaling, trunc)."""
    return np.ldexp(np.trunc(np.ldexp(x, -lsb)), lsb)


def block_fma(prod, prod_exp, acc, align_bits, acc_bits):
    """One tensor-core step: acc + the block's products, aligned, cut, summed, normalized.

    prod (M,N,B): exact products (float64); prod_exp (M,N,B): their exponents (sum of the
    operands'); acc (M,N): the accumulator. Returns the new accumulator (M,N), acc_bits
    significant bits. Every value is exact in float64: a cut term has at most align_bits + 2
    bits, so a block's sum has at most align_bits + 8 (53 is the limit)."""
    acc_exp = np.where(acc != 0, np.frexp(acc)[1] - 1, NO_EXPONENT)
    e_max = np.maximum(np.where(prod != 0, prod_exp, NO_EXPONENT).max(axis=-1), acc_exp)
    lsb = e_max - align_bits                              # alignment: weight of the last bit kept
    total = truncate_at(prod, lsb[..., None]).sum(axis=-1) + truncate_at(acc, lsb)
    top = np.frexp(total)[1] - 1                          # leading bit of the sum
    return truncate_at(total, np.where(total != 0, top - (acc_bits - 1), 0))  # normalize, to 0


def tensor_core_chain(a, ea, b, eb, block_k, align_bits, acc_bits, promote_every=None):
    """Block FMAs over K from a zero accumulator; FP32 promotion every promote_every if given.

    a (M,K), b (N,K): operand values (float64); ea, eb: their exponents. Returns float32 (M,N)."""
    M, K = a.shape
    acc = np.zeros((M, b.shape[0]))                       # tensor-core accumulator
    out = np.zeros((M, b.shape[0]), dtype=np.float32)     # FP32 register
    for k0 in range(0, K, block_k):
        ks = slice(k0, k0 + block_k)                      # a short last block = zero padding
        prod = a[:, None, ks] * b[None, :, ks]            # (M,N,B), exact
        prod_exp = ea[:, None, ks] + eb[None, :, ks]      # (M,N,B)
        acc = block_fma(prod, prod_exp, acc, align_bits, acc_bits)
        k_done = min(k0 + block_k, K)
        if promote_every and (k_done % promote_every == 0 or k_done == K):
            out = out + acc.astype(np.float32)            # FP32 add, nearest even (exact cast)
            acc = np.zeros_like(acc)
    return out if promote_every else acc.astype(np.float32)


# ----------------------------------------------------------------------------- GEMMs

def split_bounds(K, split_k):
    """cuBLAS's split-K pieces: contiguous runs of ceil(k_tiles / split_k) k-tiles of K_TILE."""
    tiles = -(-K // K_TILE)                               # ceil
    per = -(-tiles // split_k) * K_TILE
    return [(lo, min(lo + per, K)) for lo in range(0, K, per)]


def hopper_fp8_gemm(a_codes, bt_codes, fast_accum, split_k=None, block_k=FP8_BLOCK_K,
                    align_bits=FP8_ALIGN_BITS, acc_bits=FP8_ACC_BITS, promote_every=PROMOTE_EVERY):
    """What cuBLAS on Hopper returns for A (M,K) times B (K,N) given as bt (N,K), E4M3 codes.

    fast_accum: cuBLAS's use_fast_accum (True: no promotion to FP32 every promote_every).
    split_k: pieces of K added in FP32; None = what cuBLAS chose for the recorded M = N = 128.
    The other knobs are for research; their defaults are Hopper's.
    Returns float32 (M,N); NaN where row i of A or row j of Bt holds a NaN code."""
    a, ea, nan_a = e4m3_fields(a_codes)
    b, eb, nan_b = e4m3_fields(bt_codes)
    K = a.shape[1]
    if b.shape[1] != K:
        raise ValueError(f"hopper_fp8_gemm: a is {a.shape}, bt is {b.shape}: K differs")
    if split_k is None:
        split_k = RECORDED_SPLIT_K.get(K, 1)
    out = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
    for lo, hi in split_bounds(K, split_k):               # pieces added in order, FP32
        out = out + tensor_core_chain(a[:, lo:hi], ea[:, lo:hi], b[:, lo:hi], eb[:, lo:hi],
                                      block_k, align_bits, acc_bits,
                                      None if fast_accum else promote_every)
    out[nan_a.any(axis=1)[:, None] | nan_b.any(axis=1)[None, :]] = np.nan
    return out


def hopper_bf16_gemm(a, bt, pedantic=False):
    """cublasGemmEx on Hopper, BF16 A (M,K) and B given as bt (N,K), FP32 compute and output.

    a, bt: float arrays of BF16 values (exactly representable).
    pedantic: CUBLAS_COMPUTE_32F_PEDANTIC (sequential FP32 FMAs) instead of the tensor cores.
    Returns float32 (M,N)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(bt, dtype=np.float64)
    if np.any(np.asarray(a, np.float32).view(np.uint32) & 0xFFFF) or \
       np.any(np.asarray(b, np.float32).view(np.uint32) & 0xFFFF):
        raise ValueError("hopper_bf16_gemm: operands must be BF16 values")
    if pedantic:
        out = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
        for k in range(a.shape[1]):                       # a BF16 product is exact in FP32
            out = out + (a[:, None, k] * b[None, :, k]).astype(np.float32)
        return out
    return tensor_core_chain(a, binary_exponent(a, -126), b, binary_exponent(b, -126),
                             BF16_BLOCK_K, BF16_ALIGN_BITS, BF16_ACC_BITS)


def round_to_bf16(x):
    """float32 -> bfloat16 values (as float32), round to nearest even; NaN stays NaN."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), r)
