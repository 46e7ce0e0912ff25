"""Formats and quantize against independent references: values decoded from their bit fields in
Python, round-to-nearest-even by search over the value list (ties included), overflow against the
extended grid, statistics in float64 numpy, current scaling and OCP MX blocks recomputed in numpy;
stochastic rounding against the command line's scalar path and its mean against x."""
import json
import math
import subprocess

import numpy as np
import pytest

import altgrad

# name, E, M, bias, policy (fn: only the all-ones magnitude is NaN; ieee: the top exponent field is
# Inf and NaN), as docs/formats.md defines the named formats.
FORMATS = [("e4m3", 4, 3, 7, "fn"), ("e5m2", 5, 2, 15, "ieee"), ("e3m4", 3, 4, 3, "ieee"),
           ("e2m5", 2, 5, 1, "fn"), ("e1m6", 1, 6, 0, "fn"), ("e7m0", 7, 0, 63, "fn")]


def reference_values(E, M, bias, policy):
    """Every finite value of a sign + E + M format from its bit fields, zero once, ascending."""
    out = set()
    top = (1 << E) - 1
    for sign in (1, -1):
        for e in range(top + 1):
            for m in range(1 << M):
                if (policy == "fn" and e == top and m == (1 << M) - 1) or (policy == "ieee" and e == top):
                    continue
                v = (m / 2 ** M) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** M) * 2.0 ** (e - bias)
                out.add(sign * v if v else 0.0)
    return sorted(out)


def nearest_even(x, values, f):
    """Round-to-nearest by search over `values`, ties to the value whose code is even, saturating."""
    values = np.asarray(values, dtype=np.float64)
    i = np.clip(np.searchsorted(values, x), 1, len(values) - 1)
    lo, hi = values[i - 1], values[i]
    hi_even = (f.encode(np.abs(hi).astype(np.float32)) & 1) == 0
    pick_hi = (x - lo > hi - x) | ((x - lo == hi - x) & hi_even)
    return np.clip(np.where(pick_hi, hi, lo), values[0], values[-1])


def test_formats_lists_what_the_command_line_lists(altgrad_cli):
    listed = subprocess.run([altgrad_cli, "formats"], capture_output=True, text=True, check=True).stdout
    assert altgrad.formats() == [line.split()[0] for line in listed.splitlines()[1:] if line.strip()]


def test_every_formats_facts_are_what_the_command_line_prints(altgrad_cli):
    listed = json.loads(subprocess.run([altgrad_cli, "formats", "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    assert [row["name"] for row in listed] == altgrad.formats()
    for row in listed:
        f = altgrad.Format(row["name"])
        facts = {"E": f.exponent_bits, "M": f.mantissa_bits, "bias": f.bias, "policy": f.policy,
                 "max_finite": f.max_finite, "min_normal": f.min_normal, "min_subnormal": f.min_subnormal,
                 "has_inf": f.has_inf}
        assert facts == {key: row[key] for key in facts}, row["name"]


@pytest.mark.parametrize("name,E,M,bias,policy", FORMATS)
def test_values_and_properties_follow_the_bit_fields(name, E, M, bias, policy):
    f = altgrad.Format(name)
    want = reference_values(E, M, bias, policy)
    assert f.values().astype(np.float64).tolist() == want
    assert (f.bits, f.exponent_bits, f.mantissa_bits, f.bias) == (1 + E + M, E, M, bias)
    smallest_positive = min(v for v in want if v > 0)
    assert (f.max_finite, f.min_subnormal) == (want[-1], smallest_positive if M > 0 else None)
    decoded = f.decode(np.arange(256))
    finite = [c for c in range(256) if np.isfinite(decoded[c]) and decoded[c] != 0]
    assert all(f.encode(decoded[c:c + 1])[0] == c for c in finite)


@pytest.mark.parametrize("name,E,M,bias,policy", FORMATS)
def test_quantize_nearest_rounds_to_nearest_even_and_counts_as_numpy_does(name, E, M, bias, policy):
    f = altgrad.Format(name)
    want = reference_values(E, M, bias, policy)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(20000) * np.exp2(rng.uniform(-8, 8, 20000)) * f.max_finite / 64).astype(np.float32)
    x[:len(want)] = np.array(want, dtype=np.float32)  # every value itself
    mids = (np.array(want[1:]) + np.array(want[:-1])) / 2
    x[len(want):len(want) + len(mids)] = mids.astype(np.float32)  # the ties, where float32 holds them
    y, stats = altgrad.quantize(x, name, codes=True)
    ref = nearest_even(x.astype(np.float64), want, f)
    assert stats["codes_used"] == len(set(f.encode(y).tolist())) and stats["code_histogram"].sum() == x.size
    assert np.array_equal(y.astype(np.float64), ref)
    # Overflow is decided on the grid extended upward: past the midpoint of max finite and the next
    # point up, max finite + S(max finite).
    threshold = want[-1] + float(f.spacing(np.array([want[-1]], dtype=np.float32))[0]) / 2
    assert stats["overflow"] == int(np.sum(np.abs(x.astype(np.float64)) > threshold))
    x64 = x.astype(np.float64)
    assert stats["rel_error"] == pytest.approx(math.sqrt(np.sum((x64 - ref) ** 2) / np.sum(x64 ** 2)), rel=1e-12)
    assert stats["amax"] == np.max(np.abs(x))
    assert stats["count"] == x.size


def test_stochastic_rounding_gives_the_command_lines_bits(altgrad_cli):
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y, _ = altgrad.quantize(x, "e4m3", rounding="stochastic", seed=11)
    cli = subprocess.run([altgrad_cli, "quantize", "--format", "e4m3", "--rounding", "stochastic", "--seed", "11"],
                         input="\n".join(repr(float(v)) for v in x), capture_output=True, text=True, check=True)
    assert np.array_equal(y, np.array([float(line.split()[1]) for line in cli.stdout.splitlines()], dtype=np.float32))
    f = altgrad.Format("e4m3")
    assert np.array_equal(f.decode(f.encode(x, rounding="stochastic", seed=11)), y)


def test_stochastic_rounding_is_unbiased():
    # 1.1 lies between 1 and 1.125 in E4M3: up with probability 0.8. The mean of n draws is off by
    # more than 5 standard errors with probability below 6e-7 (normal tail; n = 200,000).
    v = np.full(200000, 1.1, dtype=np.float32)
    mean = float(np.mean(altgrad.quantize(v, "e4m3", rounding="stochastic", seed=5)[0]))
    assert abs(mean - 1.1) < 5 * 0.125 * math.sqrt(0.8 * 0.2 / v.size)


def test_sr_bits_round_up_with_probability_floor_of_two_to_the_bits_times_the_fraction():
    # 1 + 2^-12 at scale 256 is 256.0625, a fraction 2^-9 of E4M3's step of 32 there: with 8 random
    # bits it rounds up with probability floor(256 * 2^-9) / 256 = 0; with 32, 2^-9 (about 391 of
    # 200,000; none at all has odds below e^-390).
    x = np.full(200000, 1 + 2**-12, dtype=np.float32)
    ups = {bits: int(np.sum(altgrad.quantize(x, "e4m3", rounding="stochastic", scale=256.0, sr_bits=bits, seed=2)[0]
                            > x[0])) for bits in (8, 32)}
    assert ups[8] == 0
    assert 250 < ups[32] < 550
    # 1.1 is 0.8 of a step above 1: with 1 bit, floor(2 * 0.8) / 2 = 1/2.
    halves = altgrad.quantize(np.full(200000, 1.1, dtype=np.float32), "e4m3", rounding="stochastic", sr_bits=1)[0]
    assert abs(float(np.mean(halves > 1.05)) - 0.5) < 5 * math.sqrt(0.25 / halves.size)
    with pytest.raises(ValueError, match="sr_bits applies to rounding='stochastic'"):
        altgrad.quantize(x, "e4m3", sr_bits=8)
    with pytest.raises(ValueError, match="outside"):
        altgrad.quantize(x, "e4m3", rounding="stochastic", sr_bits=0)


def test_tensor_scaling_is_max_finite_over_amax():
    f = altgrad.Format("e4m3")
    x = np.random.default_rng(4).standard_normal(4096).astype(np.float32) * 1e-3
    y, stats = altgrad.quantize(x, "e4m3", scaling="tensor")
    s = np.float32(448.0 / np.float64(np.max(np.abs(x))))
    assert stats["scale"] == s
    assert np.array_equal(y, (nearest_even((x * s).astype(np.float64), f.values().astype(np.float64), f) / s)
                          .astype(np.float32))


def test_block_scaling_is_ocp_mx():
    f = altgrad.Format("e4m3")
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((8, 96)) * np.exp2(rng.uniform(-10, 10, (8, 1)))).astype(np.float32)
    y, stats = altgrad.quantize(x, "e4m3", scaling="block", block=32)
    blocks = x.reshape(8, 3, 32).astype(np.float64)
    k = np.floor(np.log2(np.max(np.abs(blocks), axis=2, keepdims=True))) - 8  # emax(E4M3) = 8
    ref = nearest_even(blocks * np.exp2(-k), f.values().astype(np.float64), f) * np.exp2(k)
    assert np.array_equal(y.astype(np.float64), ref.reshape(8, 96))
    assert stats["blocks"] == 24


def test_quantize_reads_odd_sizes_nan_and_inf():
    x = np.array([np.nan, np.inf, -np.inf, 1000.0, 0.3, -0.0, 1e-9], dtype=np.float32)
    y, stats = altgrad.quantize(x, "e4m3")
    # docs/formats.md: an fn format saturates finite values only; NaN and ±Inf give NaN.
    assert np.isnan(y[:3]).all() and y[3] == 448.0 and np.signbit(y[5]) and y[6] == 0.0
    assert (stats["nan_inputs"], stats["inf_inputs"], stats["zero_inputs"], stats["underflow"]) == (1, 2, 1, 1)
    y, _ = altgrad.quantize(x * np.float32(100), "e5m2", saturate=False)  # ieee: Inf stays Inf; 1e5 overflows to Inf
    assert y[1] == np.inf and y[2] == -np.inf and y[3] == np.inf


@pytest.mark.parametrize("call,kind,text", [
    (lambda: altgrad.Format("e9m9"), ValueError, "unknown format name 'e9m9'"),
    (lambda: altgrad.quantize(np.zeros(3), "e4m3"), TypeError, "got float64"),
    (lambda: altgrad.quantize(np.zeros((4, 4), np.float32)[:, ::2], "e4m3"), TypeError, "C-contiguous"),
    (lambda: altgrad.quantize(np.zeros(3, np.float32), "e4m3", rounding="round"), ValueError, "unknown rounding 'round'"),
    (lambda: altgrad.quantize(np.zeros(3, np.float32), "e4m3", scaling="row"), ValueError, "unknown scaling 'row'"),
    (lambda: altgrad.Format("e4m3").decode([300]), ValueError, "code 300 at index 0 is not a code of e4m3"),
])
def test_errors_name_the_problem(call, kind, text):
    with pytest.raises(kind, match=text.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_the_benchs_numpy_baseline_rounds_as_the_engine_does():
    from altgrad.bench import numpy_e4m3
    x = (np.random.default_rng(9).standard_normal(100000) * np.exp2(np.random.default_rng(8).uniform(-12, 9, 100000)))
    x = x.astype(np.float32)
    assert np.array_equal(numpy_e4m3(x), altgrad.quantize(x, "e4m3")[0])


def test_out_is_written_in_place_without_a_new_array():
    x = np.random.default_rng(10).standard_normal(1000).astype(np.float32)
    out = np.empty_like(x)
    y, _ = altgrad.quantize(x, "e5m2", out=out)
    assert y is out or np.shares_memory(y, out)
    assert np.array_equal(out, altgrad.quantize(x, "e5m2")[0])
    with pytest.raises(ValueError, match="out has 10 elements, x has 1000"):
        altgrad.quantize(x, "e5m2", out=np.empty(10, np.float32))
