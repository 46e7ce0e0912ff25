// The float GEMM against its contract (ops/cpu/float_gemm.hpp), bit for bit: a scalar loop that
// follows the contract's words is the reference. The same file runs in the native ops tests and,
// compiled without AVX-512, in float_gemm_tests_portable, so both kernels meet one reference.
#include "ops/cpu/float_gemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"
#include "support/thread_count.hpp"

namespace altgrad::ops_test {
namespace {

using ops::cpu::float_gemm;

struct FloatGemmCase {
  std::size_t m, n, k;
  bool ta, tb;
  std::size_t pad;  // extra floats in every stored row
};

struct FloatGemmData {
  std::vector<float> a, b, c;
  std::size_t lda, ldb, ldc;
};

FloatGemmData float_gemm_data(const FloatGemmCase& g, std::uint32_t seed) {
  FloatGemmData d;
  // Stored A is m×k, or k×m where transposed; B likewise k×n or n×k.
  d.lda = (g.ta ? g.m : g.k) + g.pad;
  d.ldb = (g.tb ? g.k : g.n) + g.pad;
  d.ldc = g.n + g.pad;
  d.a = converted<float>(random_values((g.ta ? g.k : g.m) * d.lda, seed));
  d.b = converted<float>(random_values((g.tb ? g.n : g.k) * d.ldb, seed + 1));
  d.c = converted<float>(random_values(g.m * d.ldc, seed + 2));
  return d;
}

// The contract in scalar code: sums over depth blocks of 256 by fused multiply-adds from +0, and
// each block taken into C in order.
std::vector<float> contract(const FloatGemmCase& g, const FloatGemmData& d, float alpha, float beta) {
  constexpr std::size_t kDepth = 256;
  std::vector<float> c = d.c;
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t j = 0; j < g.n; ++j) {
      float& out = c[i * d.ldc + j];
      if (g.k == 0) out = beta == 0.0f ? 0.0f : beta * out;
      for (std::size_t k0 = 0; k0 < g.k; k0 += kDepth) {
        float s = 0.0f;
        for (std::size_t p = k0; p < std::min(g.k, k0 + kDepth); ++p) {
          const float a = g.ta ? d.a[p * d.lda + i] : d.a[i * d.lda + p];
          const float b = g.tb ? d.b[j * d.ldb + p] : d.b[p * d.ldb + j];
          s = std::fma(a, b, s);
        }
        const float scaled = alpha * s;
        if (k0 > 0 || beta == 1.0f) {
          out = out + scaled;
        } else if (beta == 0.0f) {
          out = scaled;
        } else {
          out = beta * out + scaled;
        }
      }
    }
  }
  return c;
}

std::vector<float> run(const FloatGemmCase& g, const FloatGemmData& d, float alpha, float beta) {
  std::vector<float> c = d.c;
  float_gemm(g.ta, g.tb, g.m, g.n, g.k, alpha, d.a.data(), d.lda, d.b.data(), d.ldb, beta, c.data(), d.ldc);
  return c;
}

// Edges of every blocking: tile rows (14 with AVX-512, 6 with AVX2), panel columns (32 or 16, and a
// panel's second vector in part), the chunk of columns (512), the depth block (256); every
// transpose pair, strided views, and all three ways C is updated.
TEST(FloatGemm, FollowsItsContractBitForBit) {
  std::uint32_t seed = 1;
  for (const std::size_t m : {1, 13, 14, 15, 43}) {
    for (const std::size_t n : {1, 16, 25, 33, 70}) {
      for (const std::size_t k : {1, 256, 300}) {
        for (const int t : {0, 1, 2, 3}) {
          const FloatGemmCase g{m, n, k, (t & 1) != 0, (t & 2) != 0, static_cast<std::size_t>(t)};
          const FloatGemmData d = float_gemm_data(g, seed += 3);
          for (const float alpha : {1.0f, 0.17677669f}) {
            for (const float beta : {0.0f, 1.0f, -0.75f}) {
              EXPECT_TRUE(test_support::bit_identical(run(g, d, alpha, beta), contract(g, d, alpha, beta)))
                  << m << "x" << n << "x" << k << " ta=" << g.ta << " tb=" << g.tb << " alpha=" << alpha
                  << " beta=" << beta;
            }
          }
        }
      }
    }
  }
}

// Wide enough for two chunks of columns and several depth blocks, and big enough for a team of
// threads: the parallel path against the contract. Rows 2 KiB apart (512 floats) take AVX-512's
// copied panels of A, rows 4 KiB apart (1,024 floats) AVX2's.
TEST(FloatGemm, FollowsItsContractOnBigShapes) {
  for (const FloatGemmCase& g : {FloatGemmCase{30, 530, 300, false, true, 0}, FloatGemmCase{64, 100, 520, true, false, 5},
                                 FloatGemmCase{40, 100, 600, false, false, 0}, FloatGemmCase{512, 17, 300, true, false, 0},
                                 FloatGemmCase{60, 40, 512, false, true, 0}, FloatGemmCase{20, 40, 1024, false, false, 0}}) {
    const FloatGemmData d = float_gemm_data(g, 99);
    const test_support::ScopedThreadCount threads(3);
    EXPECT_TRUE(test_support::bit_identical(run(g, d, 1.0f, 1.0f), contract(g, d, 1.0f, 1.0f)))
        << g.m << "x" << g.n << "x" << g.k;
  }
}

TEST(FloatGemm, NoDepthLeavesBetaTimesC) {
  const FloatGemmCase g{5, 9, 0, false, false, 2};
  const FloatGemmData d = float_gemm_data(g, 7);
  for (const float beta : {0.0f, 1.0f, 0.5f}) {
    EXPECT_TRUE(test_support::bit_identical(run(g, d, 1.0f, beta), contract(g, d, 1.0f, beta))) << beta;
  }
}

// beta = 0 writes C without reading it: NaN there must not survive.
TEST(FloatGemm, BetaZeroIgnoresWhatCHeld) {
  const FloatGemmCase g{20, 40, 300, false, true, 0};
  FloatGemmData d = float_gemm_data(g, 11);
  const std::vector<float> clean = run(g, d, 1.0f, 0.0f);
  std::fill(d.c.begin(), d.c.end(), std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(test_support::bit_identical(run(g, d, 1.0f, 0.0f), clean));
}

// A stored row's padding is never written.
TEST(FloatGemm, LeavesCsPaddingAlone) {
  const FloatGemmCase g{17, 35, 40, true, true, 3};
  const FloatGemmData d = float_gemm_data(g, 13);
  const std::vector<float> c = run(g, d, 1.0f, 0.0f);
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t j = g.n; j < d.ldc; ++j) EXPECT_EQ(c[i * d.ldc + j], d.c[i * d.ldc + j]) << i << "," << j;
  }
}

TEST(FloatGemm, SameBitsOnAnyThreadCountAndInsideAParallelRegion) {
  const FloatGemmCase g{512, 384, 128, false, true, 0};  // a quarter of the default model's qkv projection
  const FloatGemmData d = float_gemm_data(g, 17);
  const std::vector<float> one = test_support::with_threads(1, [&] { return run(g, d, 1.0f, 1.0f); });
  for (const int threads : {2, 3, 4}) {
    EXPECT_TRUE(test_support::bit_identical(test_support::with_threads(threads, [&] { return run(g, d, 1.0f, 1.0f); }), one))
        << threads << " threads";
  }
  std::vector<std::vector<float>> nested(2);
  const test_support::ScopedThreadCount threads(2);
#pragma omp parallel for
  for (std::size_t t = 0; t < nested.size(); ++t) nested[t] = run(g, d, 1.0f, 1.0f);
  for (const std::vector<float>& c : nested) EXPECT_TRUE(test_support::bit_identical(c, one));
}

#if defined(__SANITIZE_ADDRESS__)
// The vector tiles go unchecked by AddressSanitizer load by load and check their ranges instead:
// an A read in place one float short must still stop the process. (The portable tile's own loads
// are checked, hence its report's words.)
TEST(FloatGemmDeathTest, ATileReadingPastItsOperandStops) {
  const FloatGemmCase g{7, 16, 100, false, false, 0};  // rows 400 bytes apart: A is read in place
  FloatGemmData d = float_gemm_data(g, 23);
  d.a.resize(d.a.size() - 1);
  d.a.shrink_to_fit();
  EXPECT_DEATH(run(g, d, 1.0f, 0.0f), "a tile's A|heap-buffer-overflow");
}
#endif

}  // namespace
}  // namespace altgrad::ops_test
