// Per-tensor scales: s = max_finite / (amax · 2^margin) rounded once to FP32 and clamped to FLT_MAX;
// a zero or non-finite amax keeps the previous scale; current scaling takes amax from the tensor.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/special_floats.hpp"
#include "determinism.hpp"
#include "quant/scaling.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using test_support::kInf;
using test_support::kNan;

constexpr float kFloatMax = std::numeric_limits<float>::max();

// r is the round-to-nearest-even float of num/den iff num/den lies between the midpoints that
// separate r from its float neighbours (a midpoint itself only when r's significand is even).
// Every product here has at most 25 + 24 significant bits, so it is exact in long double.
::testing::AssertionResult is_rounded_quotient(float r, long double num, long double den) {
  if (!(r >= 0.0f) || r > kFloatMax) return ::testing::AssertionFailure() << "result " << r;
  const long double below = std::nextafter(r, 0.0f), above = std::nextafter(r, kInf);
  const long double low_mid = (static_cast<long double>(r) + below) / 2;
  const long double high_mid = (static_cast<long double>(r) + above) / 2;
  const bool even = (std::bit_cast<std::uint32_t>(r) & 1u) == 0;
  const bool above_low = r == 0.0f || num > low_mid * den || (num == low_mid * den && even);
  const bool below_high = num < high_mid * den || (num == high_mid * den && even);
  if (above_low && below_high) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hexfloat << r << " is not the rounded quotient of " << num
                                       << " / " << den;
}

TEST(ScaleFromAmax, IsTheCorrectlyRoundedQuotientClampedToFloatMax) {
  TensorRng rng(21);
  std::vector<float> amaxes;
  for (int e = -149; e <= 127; ++e) amaxes.push_back(std::ldexp(1.0f, e));
  for (int i = 0; i < 3000; ++i) amaxes.push_back(std::fabs(rng.log_uniform(-149, 127)));
  amaxes.push_back(kFloatMax);
  for (const RefGrid& g : {kE4m3, kE5m2, kE2m1, kE3m2, kBf16}) {
    const format::Format f = load(g);
    for (int margin : {-3, 0, 1, 4}) {
      for (float amax : amaxes) {
        const float s = quant::scale_from_amax(f, amax, margin);
        const long double den = std::ldexp(static_cast<long double>(amax), margin);
        if (g.max_finite / den >= kFloatMax) {
          EXPECT_EQ(s, kFloatMax) << g.name << " amax " << amax << " margin " << margin;
        } else {
          EXPECT_TRUE(is_rounded_quotient(s, g.max_finite, den)) << g.name << " margin " << margin;
        }
        // And the plain long double reference agrees wherever its double rounding is innocuous.
        if (s >= std::numeric_limits<float>::min()) {
          EXPECT_EQ(s, reference_scale(g.max_finite, amax, margin));
        }
      }
    }
  }
}

TEST(ScaleFromAmax, HandWorkedValues) {
  const format::Format e4m3 = load(kE4m3);
  EXPECT_EQ(quant::scale_from_amax(e4m3, 448.0f, 0), 1.0f);
  EXPECT_EQ(quant::scale_from_amax(e4m3, 1.0f, 0), 448.0f);
  EXPECT_EQ(quant::scale_from_amax(e4m3, 7.0f, 2), 16.0f);   // 448 / (7 · 4)
  EXPECT_EQ(quant::scale_from_amax(e4m3, 7.0f, -1), 128.0f); // 448 / (7 / 2)
  EXPECT_EQ(quant::scale_from_amax(load(kE2m1), 0.75f, 1), 4.0f);  // 6 / 1.5
}

TEST(ScaleFromAmax, ZeroNanOrInfAmaxKeepsThePreviousScale) {
  const format::Format f = load(kE4m3);
  for (float amax : {0.0f, -0.0f, kNan, kInf}) {
    EXPECT_EQ(quant::scale_from_amax(f, amax, 0, 0.37f), 0.37f) << amax;
    EXPECT_EQ(quant::scale_from_amax(f, amax, 3), 1.0f) << amax;  // the default previous scale
  }
}

TEST(ScaleFromAmax, ScaleBeyondFloatRangeClampsToFloatMax) {
  const float smallest_subnormal = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(quant::scale_from_amax(load(kE4m3), smallest_subnormal, 0), kFloatMax);
  EXPECT_EQ(quant::scale_from_amax(load(kBf16), 1e-30f, 0), kFloatMax);
  EXPECT_EQ(quant::scale_from_amax(load(kE4m3), 1e-35f, -10), kFloatMax);
}

// max |x| over non-NaN elements, Inf included: a scalar loop, written as the spec states it.
float reference_amax(const std::vector<float>& x) {
  float amax = 0.0f;
  for (float v : x) {
    if (!std::isnan(v) && std::fabs(v) > amax) amax = std::fabs(v);
  }
  return amax;
}

TEST(AmaxOf, SkipsNanAndIncludesInfAtAnyPosition) {
  // 70'001 elements is past the size at which amax_of goes parallel; the planted values sit at
  // the ends and around the thread split points.
  const std::size_t n = 70'001;
  for (std::size_t position : {std::size_t{0}, std::size_t{35'000}, std::size_t{65'535}, std::size_t{65'536}, n - 1}) {
    for (int threads : {1, 2}) {
      ScopedThreadCount pin(threads);
      auto x = log_uniform_tensor(n, 22, -20, 5);
      x[position] = -1e6f;
      x[n / 3] = kNan;
      EXPECT_EQ(quant::amax_of(x), 1e6f) << "position " << position << " threads " << threads;
      x[position] = -kInf;
      EXPECT_EQ(quant::amax_of(x), kInf) << "position " << position << " threads " << threads;
    }
  }
  EXPECT_EQ(quant::amax_of(std::vector<float>{kNan, kNan}), 0.0f);
  EXPECT_EQ(quant::amax_of(std::vector<float>{}), 0.0f);
}

TEST(CurrentScale, UsesTheAmaxOfTheTensor) {
  for (std::size_t n : {1, 1000, 70'000, 200'003}) {
    auto x = log_uniform_tensor(n, static_cast<std::uint32_t>(n), -30, 30);
    x[n / 2] = kNan;  // for n = 1 the only element: then amax is 0 and the scale stays 1
    for (int margin : {0, 2}) {
      for (const RefGrid& g : {kE4m3, kE5m2}) {
        EXPECT_EQ(quant::current_scale(load(g), x, margin), reference_scale(g.max_finite, reference_amax(x), margin))
            << g.name << " n " << n << " margin " << margin;
      }
    }
  }
}

TEST(CurrentScale, TensorWithInfNanOrOnlyZerosKeepsScaleOne) {
  const format::Format f = load(kE4m3);
  EXPECT_EQ(quant::current_scale(f, std::vector<float>{}, 0), 1.0f);
  EXPECT_EQ(quant::current_scale(f, std::vector<float>{0.0f, -0.0f}, 0), 1.0f);
  EXPECT_EQ(quant::current_scale(f, std::vector<float>{kNan, kNan}, 0), 1.0f);
  EXPECT_EQ(quant::current_scale(f, std::vector<float>{3.0f, -kInf, 1.0f}, 0), 1.0f);
}

}  // namespace
}  // namespace altgrad::quant_test
