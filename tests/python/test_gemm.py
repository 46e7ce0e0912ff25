"""altgrad.gemm (the engine's emulated tensor-core GEMM) against the numpy reference model of
tests/reference/hopper_accumulator.py, an implementation of its own, on random shapes and codes;
the scales as cuBLASLt applies them; and its errors."""
import pathlib
import sys

import numpy as np
import pytest

import altgrad

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from hopper_accumulator import hopper_bf16_gemm, hopper_fp8_gemm, round_to_bf16  # noqa: E402


def random_codes(rng, shape):
    """E4M3 codes without the two NaN codes."""
    codes = rng.integers(0, 256, size=shape, dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0x38
    return codes


@pytest.mark.parametrize("seed", range(6))
def test_fp8_models_match_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    m, n = (int(x) for x in rng.integers(1, 40, size=2))
    k = int(rng.integers(1, 700))
    a, bt = random_codes(rng, (m, k)), random_codes(rng, (n, k))
    for fast, name in ((False, "hopper"), (True, "hopper_fast")):
        expected = hopper_fp8_gemm(a, bt, fast_accum=fast, split_k=1)
        got = altgrad.gemm(a, bt, accumulate=name)
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32)), (name, m, n, k)
        got_bf16 = altgrad.gemm(a, bt, accumulate=name, out_dtype="bfloat16")
        assert np.array_equal(got_bf16.view(np.uint32), round_to_bf16(expected).view(np.uint32))


def test_bf16_model_matches_the_numpy_reference():
    rng = np.random.default_rng(7)
    a = round_to_bf16(rng.standard_normal((9, 200)).astype(np.float32))
    bt = round_to_bf16(rng.standard_normal((11, 200)).astype(np.float32))
    expected = hopper_bf16_gemm(a, bt)
    assert np.array_equal(altgrad.gemm(a, bt, accumulate="hopper_bf16").view(np.uint32), expected.view(np.uint32))


def test_scales_multiply_the_sum_once():
    rng = np.random.default_rng(8)
    a, bt = random_codes(rng, (4, 300)), random_codes(rng, (5, 300))
    unit = altgrad.gemm(a, bt)
    alpha = np.float32(np.float32(0.3) * np.float32(7.1))
    assert np.array_equal(altgrad.gemm(a, bt, scale_a=0.3, scale_b=7.1), alpha * unit)


def test_nan_codes_reach_their_row_only():
    rng = np.random.default_rng(9)
    a, bt = random_codes(rng, (3, 64)), random_codes(rng, (4, 64))
    a[1, 10] = 0x7F
    out = altgrad.gemm(a, bt)
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()


def test_a_knob_changes_the_result():
    rng = np.random.default_rng(10)
    a, bt = random_codes(rng, (8, 1024)), random_codes(rng, (8, 1024))
    assert not np.array_equal(altgrad.gemm(a, bt), altgrad.gemm(a, bt, accumulate="aligned,bits=12,promote=128"))


def test_errors_name_the_problem():
    codes = np.zeros((2, 8), dtype=np.uint8)
    with pytest.raises(ValueError, match="unknown knob \"bitz\""):
        altgrad.gemm(codes, codes, accumulate="aligned,bitz=3")
    with pytest.raises(ValueError, match="K differs"):
        altgrad.gemm(codes, np.zeros((2, 9), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"a\[0, 1\] = .* is not a value of e4m3"):
        altgrad.gemm(np.array([[1.0, 1.1]], dtype=np.float32), np.ones((1, 2), np.float32), a_format="e4m3",
                     b_format="e4m3")
    with pytest.raises(ValueError, match="fp32"):
        altgrad.gemm(codes, codes, accumulate="fp32")
    with pytest.raises(ValueError, match="out_dtype"):
        altgrad.gemm(codes, codes, out_dtype="float16")
