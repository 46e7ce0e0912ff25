"""altgrad.hadamard against numpy's product with the explicit matrix D·H/√n (H[i, j] =
(−1)^popcount(i & j)), written here from the definition, and against what the transform is for:
both operands of a GEMM transformed along its reduction axis keep the product."""
import numpy as np
import pytest

import altgrad


def matrix(n, signs):
    h = np.array([[(-1) ** bin(i & j).count("1") for j in range(n)] for i in range(n)], dtype=np.float64)
    return np.diag(signs) @ h / np.sqrt(n)


def te_signs():
    return np.array([-1.0 if (0xD7E8 >> i) & 1 else 1.0 for i in range(16)])


@pytest.mark.parametrize("n", [16, 32, 64, 128])
def test_rows_and_columns_match_the_explicit_matrix(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, 2 * n)).astype(np.float32)
    ones = np.ones(n)
    q = matrix(n, ones)
    want_rows = (x.astype(np.float64).reshape(3, 2, n) @ q).reshape(3, 2 * n)
    np.testing.assert_allclose(altgrad.hadamard(x, n, signs="none"), want_rows, rtol=2e-7, atol=1e-30)
    xt = np.ascontiguousarray(x.T)  # (2n, 3): groups run down the columns
    np.testing.assert_array_equal(altgrad.hadamard(xt, n, axis=0, signs="none"), altgrad.hadamard(x, n, signs="none").T)


def test_transformer_engine_signs():
    x = np.ones((1, 16), dtype=np.float32)
    want = x.astype(np.float64) @ matrix(16, te_signs())
    np.testing.assert_array_equal(altgrad.hadamard(x, 16, signs="te"), want.astype(np.float32))
    assert altgrad.hadamard(x, 16, signs="te").tolist() == [[-1, 0, 1, 0, 1, 0, -1, 0, 1, 2, 1, 0, 1, 0, 1, -2]]


def test_random_signs_keep_a_gemm_and_a_wrong_sign_does_not():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 128)).astype(np.float32)
    b = rng.standard_normal((4, 128)).astype(np.float32)
    plain = a.astype(np.float64) @ b.T.astype(np.float64)
    ta = altgrad.hadamard(a, 32, signs="random", seed=9, stream=1).astype(np.float64)
    tb = altgrad.hadamard(b, 32, signs="random", seed=9, stream=1).astype(np.float64)
    assert np.abs(ta @ tb.T - plain).max() < 1e-4
    other = altgrad.hadamard(b, 32, signs="random", seed=9, stream=2).astype(np.float64)
    assert np.abs(ta @ other.T - plain).max() > 0.1


def test_errors_name_the_problem():
    x = np.zeros((2, 48), dtype=np.float32)
    with pytest.raises(ValueError, match="does not divide the reduction axis"):
        altgrad.hadamard(x, 32)
    with pytest.raises(ValueError, match="not one of 16, 32, 64, 128"):
        altgrad.hadamard(x, 24)
    with pytest.raises(ValueError, match="Transformer Engine's 16-point vector"):
        altgrad.hadamard(np.zeros((1, 32), dtype=np.float32), 32, signs="te")
    with pytest.raises(ValueError, match="signs must be"):
        altgrad.hadamard(x, 16, signs="fixed")


def test_quantize_takes_the_hadamard_option():
    # quantize(x, hadamard=...) is the quantized transform, as the engine's copy of a transformed
    # GEMM's operand: the same bits as quantizing altgrad.hadamard(x) by hand.
    x = np.random.default_rng(21).standard_normal((8, 64)).astype(np.float32)
    by_hand, _ = altgrad.quantize(altgrad.hadamard(x, 16, signs="te"), "e2m1", scaling="block", block=16,
                                  scale_format="e4m3")
    y, _ = altgrad.quantize(x, "e2m1", scaling="block", block=16, scale_format="e4m3",
                            hadamard={"size": 16, "signs": "te"})
    assert np.array_equal(y, by_hand)
    assert not np.array_equal(y, altgrad.quantize(x, "e2m1", scaling="block", block=16, scale_format="e4m3")[0])
    with pytest.raises(ValueError, match="unknown option 'sign'"):
        altgrad.quantize(x, "e4m3", hadamard={"size": 16, "sign": "te"})
