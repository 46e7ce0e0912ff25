// The emulated tensor-core GEMM (ops/cpu/emulated_gemm.hpp) against facts that do not come from its
// code: sums recorded on an H200, hand-derived cuts of the model's definition, and an exact integer
// oracle for a model wide enough to drop nothing. (tests/reference/hopper_accumulator_check.py
// --engine replays every recorded output where the project's shared data is present.)
#include "ops/cpu/emulated_gemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "format/accumulator.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "ops/cpu/emulated_gemm_lanes.hpp"
#include "ops/cpu/matmul.hpp"
#include "ops/operands.hpp"
#include "support/thread_count.hpp"

namespace altgrad::ops_test {
namespace {

using format::parse_accumulator;
using ops::cpu::emulated_gemm;
using ops::cpu::EmulatedOperand;

constexpr int kE4m3Emin = -6;
constexpr int kE5m2Emin = -14;

// Row-major (rows, k) operands: A as (m, k), B given as Bᵀ (n, k), as the FP8 GEMM takes them.
std::vector<float> gemm(const std::string& model, std::size_t m, std::size_t n, std::size_t k,
                        const std::vector<float>& a, const std::vector<float>& bt, int emin_a = kE4m3Emin,
                        int emin_b = kE4m3Emin, float alpha = 1.0f) {
  std::vector<float> c(m * n, -7.0f);
  emulated_gemm(parse_accumulator(model), m, n, k, EmulatedOperand{a.data(), k, 1, emin_a},
                EmulatedOperand{bt.data(), 1, k, emin_b}, alpha, false, c.data(), n);
  return c;
}

// Random values of a format: decoded random codes, NaN codes skipped.
std::vector<float> random_grid(const std::string& name, std::size_t count, std::uint32_t seed) {
  const format::Format f = format::make_format(format::parse_format(name));
  std::mt19937 rng(seed);
  std::vector<float> out;
  while (out.size() < count) {
    const float v = format::decode(f, rng() & 0xFFu);
    if (std::isfinite(v)) out.push_back(v);
  }
  return out;
}

// Recorded on an H200 (../shared/data/hopper-fp8-gemm/, the probe of issue 49): 2^8 followed by
// 4095 times 2^-9 (E4M3's least subnormal), times ones. Exact sum 263.998046875.
TEST(EmulatedGemm, RecordedProbeWithAndWithoutPromotion) {
  constexpr std::size_t K = 4096;
  std::vector<float> a(K, std::ldexp(1.0f, -9)), ones(K, 1.0f);
  a[0] = 256.0f;
  EXPECT_EQ(gemm("hopper_fast", 1, 1, K, a, ones)[0], 256.0f);  // every later term below the cut
  EXPECT_EQ(gemm("hopper", 1, 1, K, a, ones)[0], 263.75f);      // later k-tiles promoted apart
}

// The cut at 2^(e_max − 13) within one step of 32: 1 + 2^-13 keeps its small term, 1 + 2^-14 does
// not; in different steps the accumulator's exponent sets the cut the same way.
TEST(EmulatedGemm, AlignmentKeepsThirteenFractionBits) {
  const float tiny = std::ldexp(1.0f, -7);  // a product 2^-14 from two E4M3 normals
  EXPECT_EQ(gemm("hopper_fast", 1, 1, 2, {1.0f, tiny}, {1.0f, tiny})[0], 1.0f);
  EXPECT_EQ(gemm("hopper_fast", 1, 1, 2, {1.0f, 2 * tiny}, {1.0f, tiny})[0], 1.0f + std::ldexp(1.0f, -13));
  std::vector<float> a(64, 0.0f), b(64, 1.0f);
  a[0] = 1.0f;
  a[40] = std::ldexp(1.0f, -9);  // second step: 2^-9 against the accumulator's 2^0, kept
  a[41] = std::ldexp(1.0f, -9);
  EXPECT_EQ(gemm("hopper_fast", 1, 1, 64, a, b)[0], 1.0f + std::ldexp(1.0f, -8));
  // bits=8 cuts the same terms away: a knob, not a constant.
  EXPECT_EQ(gemm("aligned,bits=8", 1, 1, 64, a, b)[0], 1.0f);
}

// Truncation is toward zero on the magnitude: a negative sum loses its cut bits the same way.
TEST(EmulatedGemm, CutsTruncateTowardZeroOrRoundToNearest) {
  const float tiny = std::ldexp(1.0f, -7);
  // -1 - 3·2^-15 (three products of 2^-15 below the cut): truncation gives -1, nearest -1 - 2^-13.
  std::vector<float> a = {-1.0f, -tiny, -tiny, -tiny}, b = {1.0f, tiny / 2, tiny / 2, tiny / 2};
  EXPECT_EQ(gemm("hopper_fast", 1, 1, 4, a, b, kE4m3Emin, -9)[0], -1.0f);
  EXPECT_EQ(gemm("aligned,cut=nearest,bits=13", 1, 1, 4, a, b, kE4m3Emin, -9)[0], -1.0f);  // each term 0.25 ulp
  a = {-1.0f, -2 * tiny, -2 * tiny, -2 * tiny};  // terms of 2^-14: half a unit each, ties to even (0)
  EXPECT_EQ(gemm("aligned,cut=nearest", 1, 1, 4, a, b, kE4m3Emin, -9)[0], -1.0f);
  a = {-1.0f, -3 * tiny, -3 * tiny, -3 * tiny};  // products of 1.5 units: nearest 2 (even), truncated 1
  b = {1.0f, tiny, tiny, tiny};
  EXPECT_EQ(gemm("aligned,cut=nearest", 1, 1, 4, a, b, kE4m3Emin, -9)[0], -1.0f - 3 * std::ldexp(1.0f, -12));
  EXPECT_EQ(gemm("hopper_fast", 1, 1, 4, a, b, kE4m3Emin, -9)[0], -1.0f - 3 * std::ldexp(1.0f, -13));
}

// A model wide enough to drop nothing (one step over all of K, 40 fraction bits, nearest) is the
// exact sum rounded once to FP32: checked against integer arithmetic in units of the least product.
TEST(EmulatedGemm, WideModelIsTheExactSumRoundedOnce) {
  // Pairs whose products span fewer than 40 binades; unit: log2 of the least product.
  for (const auto& [fa, fb, unit] : {std::tuple{"e4m3", "e4m3", -18}, std::tuple{"e2m5", "e4m3", -14}}) {
    const int emin_a = format::make_format(format::parse_format(fa)).min_normal_exp;
    const int emin_b = format::make_format(format::parse_format(fb)).min_normal_exp;
    constexpr std::size_t M = 5, N = 7, K = 256;
    const std::vector<float> a = random_grid(fa, M * K, 1), bt = random_grid(fb, N * K, 2);
    const std::vector<float> c = gemm("aligned,group=256,bits=40,acc=24,cut=nearest", M, N, K, a, bt, emin_a, emin_b);
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t j = 0; j < N; ++j) {
        std::int64_t exact = 0;  // every product is an integer multiple of 2^unit (below 2^44 here)
        for (std::size_t k = 0; k < K; ++k) {
          exact += static_cast<std::int64_t>(std::ldexp(static_cast<double>(a[i * K + k]) * bt[j * K + k], -unit));
        }
        const float expected = std::ldexp(static_cast<float>(exact), unit);  // one rounding, nearest even
        EXPECT_EQ(c[i * N + j], expected) << fa << " x " << fb << " at (" << i << ", " << j << ")";
      }
    }
  }
}

// Each output is computed alone: the same bits on one thread and on two.
TEST(EmulatedGemm, SameBitsOnAnyThreadCount) {
  constexpr std::size_t M = 37, N = 29, K = 700;
  const std::vector<float> a = random_grid("e4m3", M * K, 3), bt = random_grid("e5m2", N * K, 4);
  const auto run = [&] { return gemm("hopper", M, N, K, a, bt, kE4m3Emin, kE5m2Emin); };
  const std::vector<float> one = test_support::with_threads(1, run), two = test_support::with_threads(2, run);
  for (std::size_t i = 0; i < one.size(); ++i) ASSERT_EQ(std::bit_cast<std::uint32_t>(one[i]), std::bit_cast<std::uint32_t>(two[i])) << i;
}

// A NaN or an infinity in a row of A reaches that row's outputs only.
TEST(EmulatedGemm, NonFiniteOperandsReachTheirOutputsOnly) {
  constexpr std::size_t M = 3, N = 4, K = 40;
  std::vector<float> a = random_grid("e4m3", M * K, 5), bt = random_grid("e4m3", N * K, 6);
  a[1 * K + 7] = std::numeric_limits<float>::quiet_NaN();
  bt[2 * K + 3] = std::numeric_limits<float>::infinity();
  for (auto& x : a) x = std::isnan(x) ? x : std::abs(x);
  for (auto& x : bt) x = std::isinf(x) ? x : std::abs(x);
  const std::vector<float> c = gemm("hopper", M, N, K, a, bt);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      const float v = c[i * N + j];
      if (i == 1) {
        EXPECT_TRUE(std::isnan(v)) << i << "," << j;
      } else if (j == 2) {
        EXPECT_EQ(v, std::numeric_limits<float>::infinity()) << i << "," << j;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << i << "," << j;
      }
    }
  }
}

// Scales as cuBLASLt applies them (alpha times the FP32 sum, rounded once), then added to C or not;
// a transposed B read through its strides gives the same bits as a copy laid out as Bᵀ.
TEST(EmulatedGemm, AlphaAddAndStrides) {
  constexpr std::size_t M = 6, N = 10, K = 300;
  const std::vector<float> a = random_grid("e4m3", M * K, 7), bt = random_grid("e4m3", N * K, 8);
  const std::vector<float> plain = gemm("hopper", M, N, K, a, bt);
  const float alpha = 0.37f;
  EXPECT_EQ(gemm("hopper", M, N, K, a, bt, kE4m3Emin, kE4m3Emin, alpha)[9], alpha * plain[9]);
  std::vector<float> b(K * N);  // B itself, (K, N) row-major
  for (std::size_t j = 0; j < N; ++j) {
    for (std::size_t k = 0; k < K; ++k) b[k * N + j] = bt[j * K + k];
  }
  std::vector<float> c(M * N, 1.5f);
  emulated_gemm(parse_accumulator("hopper"), M, N, K, {a.data(), K, 1, kE4m3Emin}, {b.data(), N, 1, kE4m3Emin}, alpha,
                true, c.data(), N);
  for (std::size_t i = 0; i < M * N; ++i) EXPECT_EQ(c[i], 1.5f + alpha * plain[i]) << i;
}

TEST(EmulatedGemm, Bf16InputsRoundTheOperands) {
  // 1 + 2^-9 is not a BF16 value: it enters as 1 (nearest even), as a cast to BF16 would make it.
  const float x = 1.0f + std::ldexp(1.0f, -9);
  EXPECT_EQ(gemm("hopper_bf16", 1, 1, 1, {x}, {1.0f}, -126, -126)[0], 1.0f);
  EXPECT_EQ(gemm("aligned,group=16,bits=25,acc=24", 1, 1, 1, {x}, {1.0f}, -126, -126)[0], x);
}

// The fast path (float lanes, integer sums) against the general one, bit for bit, over models,
// format pairs, scaled copies and shapes that leave partial panels, row pairs and steps.
TEST(EmulatedGemm, FastPathIsTheGeneralPathBitForBit) {
  struct Operands {
    const char *a, *b;
    float scale_a, scale_b;  // 1: the grid values themselves; else copies x̂ = q / s
  };
  const std::vector<std::string> models = {"hopper", "hopper_fast", "aligned,bits=16,acc=17,promote=64",
                                           "aligned,cut=nearest,group=16", "aligned,split=3,promote=128",
                                           "aligned,bits=8,acc=9,cut=nearest,promote=96"};
  const std::vector<Operands> operands = {
      {"e4m3", "e4m3", 1.0f, 1.0f}, {"e5m2", "e4m3", 1.0f, 1.0f}, {"e1m6", "e3m4", 1.0f, 1.0f},
      {"e4m3", "e5m2", 37.5f, 0.0123f}};
  // Odd rows, ragged panels, K past a slice, rows past a task's chunk.
  const std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> shapes = {{5, 37, 300}, {1, 1, 33},
                                                                                   {16, 16, 1000}, {3, 20, 7},
                                                                                   {9, 17, 260}};
  std::uint32_t seed = 100;
  for (const std::string& name : models) {
    const format::AccumulatorModel model = parse_accumulator(name);
#if defined(__AVX2__)
    ASSERT_TRUE(ops::cpu::lanes::covers(model)) << name;
#endif
    for (const Operands& o : operands) {
      const format::Format fa = format::make_format(format::parse_format(o.a));
      const format::Format fb = format::make_format(format::parse_format(o.b));
      for (const auto& [m, n, k] : shapes) {
        std::vector<float> a = random_grid(o.a, m * k, ++seed), bt = random_grid(o.b, n * k, ++seed);
        for (float& x : a) x /= o.scale_a;
        for (float& x : bt) x /= o.scale_b;
        // Both operands in both layouts: A as rows (m, k) or its transpose's view, Bᵀ (n, k) read
        // as B, or B (k, n) itself.
        std::vector<float> at(k * m), b(k * n);
        for (std::size_t i = 0; i < m; ++i) for (std::size_t kk = 0; kk < k; ++kk) at[kk * m + i] = a[i * k + kk];
        for (std::size_t j = 0; j < n; ++j) for (std::size_t kk = 0; kk < k; ++kk) b[kk * n + j] = bt[j * k + kk];
        const EmulatedOperand a_rows{a.data(), k, 1, fa.min_normal_exp, &fa, o.scale_a};
        const EmulatedOperand a_columns{at.data(), 1, m, fa.min_normal_exp, &fa, o.scale_a};
        const EmulatedOperand b_columns{bt.data(), 1, k, fb.min_normal_exp, &fb, o.scale_b};
        const EmulatedOperand b_rows{b.data(), n, 1, fb.min_normal_exp, &fb, o.scale_b};
        // And A read with neither stride 1: every other float of a buffer twice its size.
        std::vector<float> spaced(2 * m * k, std::numeric_limits<float>::quiet_NaN());
        for (std::size_t x = 0; x < m * k; ++x) spaced[2 * x] = a[x];
        const EmulatedOperand a_spaced{spaced.data(), 2 * k, 2, fa.min_normal_exp, &fa, o.scale_a};
        for (const auto& [ea, eb] :
             {std::pair{a_rows, b_columns}, std::pair{a_columns, b_rows}, std::pair{a_spaced, b_rows}}) {
#if defined(__AVX2__)
          ops::cpu::lanes::Packs packs;
          ASSERT_TRUE(ops::cpu::lanes::pack(ea, eb, m, n, k, packs)) << "the fast path declined " << o.a << " x " << o.b;
#endif
          std::vector<float> fast(m * n, 2.0f), general(m * n, 2.0f);
          emulated_gemm(model, m, n, k, ea, eb, 0.75f, true, fast.data(), n);
          ops::cpu::emulated_gemm_general(model, m, n, k, ea, eb, 0.75f, true, general.data(), n);
          for (std::size_t i = 0; i < m * n; ++i) {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(fast[i]), std::bit_cast<std::uint32_t>(general[i]))
                << name << ", " << o.a << " x " << o.b << ", " << m << "x" << n << "x" << k << " at " << i;
          }
        }
      }
    }
  }
}

// The fast path keeps zero's exponent apart from every product's: a zero times E5M2's largest
// value (2^15) takes no part in the step's largest exponent, so the small products below keep
// their bits. Hand-derived: the products 2^-14 · (1 + 2^-2) · 2^-14 (exponent −28) are cut at
// 2^(−28 − 13) and kept whole; 32 of them sum to 32 · 1.25 · 2^-28 = 1.25 · 2^-23.
TEST(EmulatedGemm, ZeroTimesTheLargestValueTakesNoPart) {
  const std::size_t k = 32;
  std::vector<float> a(k, std::ldexp(1.25f, -14)), bt(k, std::ldexp(1.0f, -14));
  a[5] = 0.0f;
  bt[5] = std::ldexp(1.0f, 15);
  a[6] = std::ldexp(1.0f, 15);
  bt[6] = 0.0f;
  const float expected = 30 * std::ldexp(1.25f, -28);
  EXPECT_EQ(gemm("hopper", 1, 1, k, a, bt, kE5m2Emin, kE5m2Emin)[0], expected);
  EXPECT_EQ(gemm("hopper_fast", 1, 1, k, a, bt, kE5m2Emin, kE5m2Emin)[0], expected);
}

// A subnormal operand's exponent counts as its format's emin (docs/accumulation.md, "Limits"):
// E4M3's least subnormal 2^-9 times 1 sets the step's largest exponent to -6, not -9, so the cut
// falls at 2^(-6 - 13) = 2^-19. The second product, 2^-9 · 1.875 · 2^-8 = 0b1.111 · 2^-17, loses its
// last bit (2^-20) there; with -9 it would be kept whole.
TEST(EmulatedGemm, SubnormalsCountAsTheFormatsEmin) {
  const std::size_t k = 16;  // whole groups of eight operands: the packing's vector lanes
  std::vector<float> a(k, 0.0f), bt(k, 0.0f);
  a[0] = a[1] = std::ldexp(1.0f, -9);
  bt[0] = 1.0f;
  bt[1] = std::ldexp(1.875f, -8);
  const float expected = std::ldexp(1.0f, -9) + std::ldexp(1.75f, -17);
  EXPECT_EQ(gemm("hopper", 1, 1, k, a, bt)[0], expected);
  EXPECT_EQ(gemm("hopper", 1, 1, 5, a, bt)[0], expected);  // fewer than eight: one operand at a time
}

// Steps whose products are all zero, with nothing accumulated yet, give +0: the sum of zeros, not
// -0 or a NaN from a scale taken for "no term".
TEST(EmulatedGemm, StepsOfZerosGivePlusZero) {
  const std::size_t m = 2, n = 16, k = 64;
  std::vector<float> a(m * k, 0.0f), bt = random_grid("e4m3", n * k, 7);
  for (const char* model : {"hopper", "hopper_fast", "aligned,cut=nearest,group=16"}) {
    for (const float c : gemm(model, m, n, k, a, bt)) EXPECT_EQ(std::bit_cast<std::uint32_t>(c), 0u) << model;
  }
}

// An accumulator survives a step whose products are all zero: that step's largest exponent is the
// accumulator's (2^-31, two products of E5M2's least subnormal), not "no term".
TEST(EmulatedGemm, ATinyAccumulatorSurvivesAStepOfZeros) {
  const std::size_t k = 64;  // two steps of 32, no promotion between them under hopper_fast
  std::vector<float> a(k, 0.0f), bt(k, 0.0f);
  a[0] = std::ldexp(1.0f, -16);  // E5M2's least subnormal
  bt[0] = std::ldexp(1.0f, -16);
  a[1] = std::ldexp(1.0f, -16);
  bt[1] = std::ldexp(1.0f, -16);
  EXPECT_EQ(gemm("hopper_fast", 1, 1, k, a, bt, kE5m2Emin, kE5m2Emin)[0], std::ldexp(1.0f, -31));
}

TEST(EmulatedGemm, Fp32ModelIsRefused) {
  std::vector<float> c(1);
  const float one = 1.0f;
  EXPECT_THROW(emulated_gemm(parse_accumulator("fp32"), 1, 1, 1, {&one, 1, 1, 0}, {&one, 1, 1, 0}, 1.0f, false,
                             c.data(), 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::ops_test

namespace altgrad::ops_test {
namespace {

// The Linear's three GEMMs under a model wide enough to drop nothing: each equals the exact sum of
// its products rounded once to FP32, computed here from the shapes' definitions (out = X·Wᵀ + b,
// dX += dY·W, dW += dYᵀ·X), so an operand read the wrong way round shows.
TEST(EmulatedMatmul, EachGemmReadsItsOperandsTheRightWayRound) {
  constexpr std::size_t N = 9, C = 20, OC = 12;
  const format::AccumulatorModel wide = parse_accumulator("aligned,group=256,bits=40,acc=24,cut=nearest");
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  const std::vector<float> x = random_grid("e4m3", N * C, 11), w = random_grid("e4m3", OC * C, 12),
                           dy = random_grid("e4m3", N * OC, 13), bias = random_grid("e4m3", OC, 14);
  const ops::GridOperand grid{&e4m3, 1.0f};
  const ops::EmulatedGemm gemm{&wide, grid, grid};
  // Exact in double: at most 20 products of two 4-bit significands within 2^-18 .. 2^18.
  const auto exact = [](auto&& term, std::size_t k) {
    double sum = 0;
    for (std::size_t p = 0; p < k; ++p) sum += term(p);
    return static_cast<float>(sum);
  };
  std::vector<float> out(N * OC);
  ops::cpu::matmul_forward_emulated<float>(out, x, w, bias, N, C, OC, gemm);
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t o = 0; o < OC; ++o) {
      const float sum = exact([&](std::size_t c) { return double{x[i * C + c]} * w[o * C + c]; }, C);
      ASSERT_EQ(out[i * OC + o], sum + bias[o]) << i << "," << o;
    }
  }
  std::vector<float> dx(N * C, 0.5f), dw(OC * C, 0.25f), db(OC, 0.0f);
  ops::cpu::matmul_backward_emulated<float>(dx, dw, db, ops::MatmulBackwardOperands<float>{dy, w, dy, x, dy}, N, C, OC,
                                            gemm, gemm);
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t c = 0; c < C; ++c) {
      const float sum = exact([&](std::size_t o) { return double{dy[i * OC + o]} * w[o * C + c]; }, OC);
      ASSERT_EQ(dx[i * C + c], 0.5f + sum) << i << "," << c;
    }
  }
  for (std::size_t o = 0; o < OC; ++o) {
    for (std::size_t c = 0; c < C; ++c) {
      const float sum = exact([&](std::size_t i) { return double{dy[i * OC + o]} * x[i * C + c]; }, N);
      ASSERT_EQ(dw[o * C + c], 0.25f + sum) << o << "," << c;
    }
  }
}

// A copy made at scale s (x̂ = Q(x·s)/s) enters as its grid values, and 1/s returns on the output:
// the same bits as the unscaled grid values with alpha = fl32(1/s_a · 1/s_b).
TEST(EmulatedMatmul, ScaledCopiesEnterAsTheirGridValues) {
  constexpr std::size_t N = 4, C = 64, OC = 8;
  const format::AccumulatorModel hopper = parse_accumulator("hopper");
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  const std::vector<float> xq = random_grid("e4m3", N * C, 21), wq = random_grid("e4m3", OC * C, 22);
  const float sx = 3.7f, sw = 0.011f;  // not powers of two: x̂ = fl(q / s) is not exact
  std::vector<float> x_hat(xq.size()), w_hat(wq.size());
  for (std::size_t i = 0; i < xq.size(); ++i) x_hat[i] = xq[i] / sx;
  for (std::size_t i = 0; i < wq.size(); ++i) w_hat[i] = wq[i] / sw;
  std::vector<float> scaled(N * OC), plain(N * OC);
  ops::cpu::matmul_forward_emulated<float>(scaled, x_hat, w_hat, {}, N, C, OC,
                                           ops::EmulatedGemm{&hopper, {&e4m3, sx}, {&e4m3, sw}});
  const std::vector<float> unit = gemm("hopper", N, OC, C, xq, wq);
  const float alpha = (1.0f / sx) * (1.0f / sw);
  for (std::size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(scaled[i], alpha * unit[i]) << i;
}

}  // namespace
}  // namespace altgrad::ops_test
