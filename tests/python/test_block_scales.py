"""Block scaling's scale rules and scale formats through altgrad.quantize (the engine's path) against
numpy references written from the published definitions (docs/formats.md, "Block scaling"): torchao's
FLOOR/RCEIL/CEIL/EVEN exponents, Tseng et al.'s three-quarters pre-scale, TE's FP32 and power-of-two block multipliers, and NVFP4's two-level
E4M3 + FP32 scales step by step in float32 (TE cast/nvfp4, NVFP4 report arXiv 2509.25149). Values come
from bit fields here, rounding is nearest-even by search over them."""
import numpy as np
import pytest

import altgrad

F32 = np.float32
FLT_MAX = np.finfo(np.float32).max


def positives(E, M, bias, top_excluded):
    """The format's non-negative values in code order (so a code is even when its index is)."""
    out = []
    for e in range(1 << E):
        for m in range(1 << M):
            if top_excluded and e == (1 << E) - 1 and m == (1 << M) - 1:
                continue
            out.append((m / 2 ** M) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** M) * 2.0 ** (e - bias))
    return np.array(out)


E2M1 = positives(2, 1, 1, False)  # 0 .5 1 1.5 2 3 4 6
E4M3 = positives(4, 3, 7, True)   # fn: max 448
GRIDS = {"e2m1": (E2M1, 1), "e4m3": (E4M3, 3)}  # values, mantissa bits


def rne(a, values):
    """Nearest-even of a >= 0 (float64) over `values`, saturating at the largest."""
    i = np.clip(np.searchsorted(values, a), 1, len(values) - 1)
    lo, hi = values[i - 1], values[i]
    pick_hi = (a - lo > hi - a) | ((a - lo == hi - a) & (i % 2 == 0))
    return np.minimum(np.where(pick_hi, hi, lo), values[-1])


def signed_rne(y, values):
    y = np.asarray(y, dtype=np.float64)
    return np.copysign(rne(np.abs(y), values), y)


# ---- scale rules (E8M0) ------------------------------------------------------------------------

def reference_k(a, rule, values, m):
    """k of one block amax a > 0 (a float32), clamped to E8M0's [-127, 127]."""
    M = values[-1]
    emax = int(np.floor(np.log2(M)))
    a64 = float(a)
    if rule == "floor":
        k = np.frexp(a64)[1] - 1 - emax
    elif rule == "round_up":  # the smallest k with a·2^-k <= max finite
        k = -300
        while np.ldexp(a64, -k) > M:
            k += 1
    elif rule == "ceil":  # ceil(log2 a) - emax
        j = -300
        while np.ldexp(1.0, j) < a64:
            j += 1
        k = j - emax
    else:  # even: torchao's bit formulation
        bits = int(np.array([a], dtype=F32).view(np.uint32)[0]) + (1 << (22 - m))
        k = (bits >> 23) - 127 - emax
    return max(-127, min(127, k))


def boundary_amaxes(m):
    out = []
    even = 2.0 - 2.0 ** -(m + 1)
    for j in range(-20, 21, 3):
        for v in (1.0, 1.75, 1.9375, even, 1.5, 448 / 256, 6 / 4):
            base = F32(np.ldexp(v, j))
            out += [base, np.nextafter(base, F32(0)), np.nextafter(base, F32(np.inf))]
    return np.array(out, dtype=F32)


@pytest.mark.parametrize("fmt", ["e2m1", "e4m3"])
@pytest.mark.parametrize("rule", ["floor", "round_up", "ceil", "even"])
def test_every_scale_rule_matches_its_definition(fmt, rule):
    values, m = GRIDS[fmt]
    amaxes = boundary_amaxes(m)
    # Blocks of 4: the amax, two smaller elements of both signs, and a zero; one zero block at the end.
    x = np.stack([amaxes, -amaxes / F32(3), amaxes / F32(7), np.zeros_like(amaxes)], axis=1).astype(F32)
    x = np.concatenate([x, np.zeros((1, 4), F32)])
    y, stats = altgrad.quantize(x, fmt, scaling="block", block=4, scale_rule=rule)
    k = np.array([reference_k(a, rule, values, m) for a in amaxes] + [0], dtype=np.float64)[:, None]
    want = signed_rne(x.astype(np.float64) * np.exp2(-k), values) * np.exp2(k)
    assert np.array_equal(y.astype(np.float64), want)
    assert stats["blocks"] == len(amaxes) + 1


# ---- FP32 and FP32 power-of-two block multipliers ----------------------------------------------

def fp32_reference(x, fmt, block, pow2):
    values, _ = GRIDS[fmt]
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        for b in range(0, x.shape[1], block):
            blk = x[r, b:b + block]
            amax = np.max(np.abs(blk))
            s = F32(1) if amax == 0 else F32(min(np.float64(values[-1]) / np.float64(amax), FLT_MAX))
            if pow2:
                s = F32(np.ldexp(1.0, np.frexp(np.float64(s))[1] - 1))
            q = signed_rne(blk * s, values).astype(F32)  # blk * s: the float32 product
            out[r, b:b + block] = q / s
    return out


@pytest.mark.parametrize("fmt", ["e2m1", "e4m3"])
@pytest.mark.parametrize("scale_format", ["fp32", "fp32_pow2"])
def test_fp32_block_multipliers_with_a_ragged_last_block(fmt, scale_format):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 70)) * np.exp2(rng.uniform(-20, 20, (6, 1)))).astype(F32)
    x[2, 32:64] = 0.0  # a zero block: s = 1
    y, stats = altgrad.quantize(x, fmt, scaling="block", block=32, scale_format=scale_format)
    assert np.array_equal(y, fp32_reference(x, fmt, 32, scale_format == "fp32_pow2"))
    assert stats["blocks"] == 6 * 3 and stats["clipped_blocks"] == 0


@pytest.mark.parametrize("scale_format", ["fp32", "fp32_pow2"])
def test_block_axis_is_one_block_per_row_however_long(scale_format):
    # torchao's axiswise scaling: rows of 1500, longer than the MX kernels' blocks.
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((4, 1500)) * np.exp2(rng.uniform(-20, 20, (4, 1)))).astype(F32)
    x[1] = 0.0
    y, stats = altgrad.quantize(x, "e4m3", scaling="block", block="axis", scale_format=scale_format)
    assert np.array_equal(y, fp32_reference(x, "e4m3", 1500, scale_format == "fp32_pow2"))
    assert stats["blocks"] == 4
    with pytest.raises(ValueError, match="E4M3 block scales take blocks of 1..1024"):
        altgrad.quantize(x, "e2m1", scaling="block", block="axis", scale_format="e4m3")
    with pytest.raises(ValueError, match="block must be an integer or 'axis'"):
        altgrad.quantize(x, "e4m3", scaling="block", block="rows")


def test_a_power_of_two_tensor_scale_is_the_fp32_scale_rounded_down():
    # torchao's tensorwise cast under round_scales_to_power_of_2: s = 448 / amax (in double, then
    # float32), its mantissa cleared.
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((8, 40)) * 37.0).astype(F32)
    s = F32(448.0 / float(np.max(np.abs(x))))
    s = F32(np.ldexp(1.0, np.frexp(np.float64(s))[1] - 1))
    y, _ = altgrad.quantize(x, "e4m3", scaling="tensor", scale_format="fp32_pow2")
    assert np.array_equal(y, (signed_rne(x * s, E4M3).astype(F32) / s))
    plain, _ = altgrad.quantize(x, "e4m3", scaling="tensor")
    assert not np.array_equal(y, plain)


# ---- three_quarters (Tseng et al. 2025) ---------------------------------------------------------

@pytest.mark.parametrize("fmt", ["e2m1", "e4m3"])
def test_three_quarters_scales_the_floor_blocks_by_a_further_three_quarters(fmt):
    values, m = GRIDS[fmt]
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((6, 70)) * np.exp2(rng.uniform(-20, 20, (6, 1)))).astype(F32)
    y, stats = altgrad.quantize(x, fmt, scaling="block", block=32, scale_rule="three_quarters")
    want = np.empty_like(x)
    for r in range(x.shape[0]):
        for b in range(0, x.shape[1], 32):
            blk = x[r, b:b + 32]
            s = F32(np.ldexp(0.75, -reference_k(F32(np.max(np.abs(blk))), "floor", values, m)))
            q = signed_rne(blk * s, values)  # blk * s: the float32 product
            want[r, b:b + 32] = (q / np.float64(s)).astype(F32)
    assert np.array_equal(y, want)
    assert stats["blocks"] == 6 * 3


# ---- NVFP4 -------------------------------------------------------------------------------------

def nvfp4_reference(x):
    """Steps 1-6 of the NVFP4 scheme in float32, blocks of 16 along the last axis."""
    with np.errstate(divide="ignore", over="ignore"):
        a = F32(np.max(np.abs(x)))
        s_enc = F32(1) if a == 0 else min(F32(2688) / a, FLT_MAX)
        s_dec = F32(1) / s_enc
        per_amax = s_enc * (F32(1) / F32(6))
        blocks = x.reshape(-1, 16)
        u = np.minimum(np.max(np.abs(blocks), axis=1) * per_amax, FLT_MAX)
        s_b = rne(u.astype(np.float64), E4M3)
        d = s_b.astype(F32) * s_dec
        e = np.where(d > 0, np.minimum(F32(1) / d, FLT_MAX), FLT_MAX).astype(F32)
        y = np.clip(blocks * e[:, None], -FLT_MAX, FLT_MAX)
    q = signed_rne(y, E2M1)
    return (q * s_b[:, None] * np.float64(a) / 2688.0).astype(F32).reshape(x.shape), s_b


def nvfp4_tensor():
    """Outliers, a zero block, subnormal-scale and flushed blocks, all-equal blocks, the report's tie."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((12, 64)) * np.exp2(rng.uniform(-14, 0, (12, 4)).repeat(16, axis=1))).astype(F32)
    x[0, 3] = 10.5       # the tensor amax: S_enc = 256 exactly
    x[1, 0:16] = 0.0     # zero block
    x[2, 0:16] = F32(51 / 512) * np.sign(rng.standard_normal(16)).astype(F32)  # u = 4.25 ties to 4: clips
    x[2, 16:32] = F32(0.3)                      # all equal
    x[3, 0:16] = (rng.standard_normal(16) * 1e-4).astype(F32)   # subnormal E4M3 scales
    x[3, 16:32] = (rng.standard_normal(16) * 1e-7).astype(F32)  # flushed: s_b = 0
    x[4, 5] = -9.75      # an outlier a block below the max
    return x


def test_nvfp4_two_level_scales_match_the_report_step_by_step():
    x = nvfp4_tensor()
    y, stats = altgrad.quantize(x, "e2m1", scaling="block", block=16, scale_format="e4m3")
    want, s_b = nvfp4_reference(x)
    assert np.array_equal(y, want)
    # The cases the tensor was built to hold are there.
    assert np.any(s_b == 0) and np.any((s_b > 0) & (s_b < 2.0 ** -6)) and s_b[2 * 4] == 4.0
    assert np.all(np.abs(y[2, 0:16]) == F32(0.09375))
    assert np.all(y[3, 16:32] == 0) and stats["underflow"] >= 16
    assert stats["blocks"] == x.size // 16


def test_nvfp4_of_a_zero_tensor_is_zero():
    y, _ = altgrad.quantize(np.zeros((2, 32), F32), "e2m1", scaling="block", block=16, scale_format="e4m3")
    assert not np.any(y)


def test_fake_quant_takes_the_scale_format():
    torch = pytest.importorskip("torch")
    from altgrad.torch import fake_quant
    x = nvfp4_tensor()
    y = fake_quant(torch.from_numpy(x.copy()), "e2m1", scaling="block", block=16, scale_format="e4m3")
    assert np.array_equal(y.numpy(), nvfp4_reference(x)[0])


def test_scale_options_are_checked_as_the_recipe_checks_them():
    x = np.ones((2, 32), F32)
    with pytest.raises(ValueError, match="scale_rule = ceil does not apply to scale_format = e4m3"):
        altgrad.quantize(x, "e2m1", scaling="block", block=16, scale_format="e4m3", scale_rule="ceil")
    with pytest.raises(ValueError, match="unknown scale_format 'ue8m0'"):
        altgrad.quantize(x, "e2m1", scaling="block", scale_format="ue8m0")
    with pytest.raises(ValueError, match="apply to scaling='block'"):
        altgrad.quantize(x, "e4m3", scaling="tensor", scale_format="fp32")
    with pytest.raises(ValueError, match="apply to scaling='block'"):
        altgrad.quantize(x, "e4m3", scaling="none", scale_format="fp32_pow2")


@pytest.mark.parametrize("scale_format, element", [("e8m0", "e4m3"), ("fp32_pow2", "e4m3"), ("fp32", "e4m3")])
def test_tiles_are_one_block_each_and_shared_by_the_transpose(scale_format, element):
    # 40 x 72 in 16 x 16 tiles: ragged at both edges. Each tile equals its elements quantized as one
    # 1-D block (the engine's 1-D path, tested above against the definitions), and the transpose gets
    # the transposed copy.
    w = (np.random.default_rng(8).standard_normal((40, 72)) * np.exp2(np.arange(40) % 9 - 4)[:, None]).astype(F32)
    y, stats = altgrad.quantize(w, element, scaling="block", block=16, tile=True, scale_format=scale_format)
    for r in range(0, 40, 16):
        for c in range(0, 72, 16):
            tile = np.ascontiguousarray(w[r:r + 16, c:c + 16])
            one, _ = altgrad.quantize(tile.reshape(1, -1), element, scaling="block", block=tile.size,
                                      scale_format=scale_format)
            assert np.array_equal(y[r:r + 16, c:c + 16], one.reshape(tile.shape)), (r, c)
    assert stats["blocks"] == 3 * 5
    yt, _ = altgrad.quantize(np.ascontiguousarray(w.T), element, scaling="block", block=16, tile=True,
                             scale_format=scale_format)
    assert np.array_equal(y.T, yt)
    with pytest.raises(ValueError, match="tile=True needs a matrix"):
        altgrad.quantize(w[0], element, scaling="block", block=16, tile=True)
    with pytest.raises(ValueError, match="apply to scaling='block'"):
        altgrad.quantize(w, element, scaling="tensor", tile=True)
