// Value profiles against brute force: moments in long double over the finite values, min and max,
// nearest-rank percentiles of |x| from the sorted values (the profile gives the lower edge of the
// 1/8-binade bucket holding each), and binade counts from frexp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "diag/value_profile.hpp"

namespace altgrad::diag {
namespace {

std::vector<float> spread_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.1f, 1.0f);
  std::uniform_int_distribution<int> binade(-140, 30);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = normal(rng) * std::ldexp(1.0f, binade(rng) / 4);
  for (std::size_t i = 0; i < n; i += 37) x[i] = 0.0f;
  for (std::size_t i = 5; i < n; i += 101) x[i] = -0.0f;
  for (std::size_t i = 7; i < n; i += 211) x[i] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 9; i < n; i += 307) x[i] = (i % 2 ? 1 : -1) * std::numeric_limits<float>::infinity();
  for (std::size_t i = 11; i < n; i += 401) x[i] = std::numeric_limits<float>::denorm_min() * static_cast<float>(i);
  return x;
}

TEST(ValueProfile, EqualsBruteForceOverTwoCalls) {
  const std::vector<float> a = spread_values(5000, 1), b = spread_values(3001, 2);
  ValueProfile p;
  p.add(a);
  p.add(b);
  std::vector<float> finite;
  for (const auto* part : {&a, &b}) {
    for (const float v : *part) {
      if (std::isfinite(v)) finite.push_back(v);
    }
  }
  EXPECT_EQ(p.count(), a.size() + b.size());
  EXPECT_EQ(p.finite(), finite.size());
  long double sum = 0;
  for (const float v : finite) sum += v;
  const long double mean = sum / finite.size();
  long double m2 = 0;
  for (const float v : finite) m2 += (v - mean) * (v - mean);
  EXPECT_NEAR(p.mean(), static_cast<double>(mean), 1e-12 * std::fabs(static_cast<double>(mean)) + 1e-300);
  EXPECT_NEAR(p.stddev(), std::sqrt(static_cast<double>(m2 / finite.size())), 1e-12 * p.stddev());
  EXPECT_EQ(p.min(), *std::min_element(finite.begin(), finite.end()));
  EXPECT_EQ(p.max(), *std::max_element(finite.begin(), finite.end()));

  std::vector<float> magnitudes;
  for (const float v : finite) magnitudes.push_back(std::fabs(v));
  std::sort(magnitudes.begin(), magnitudes.end());
  for (const double q : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * magnitudes.size()));
    const float exact = magnitudes[std::max<std::size_t>(rank, 1) - 1];
    const float edge = std::bit_cast<float>(std::bit_cast<std::uint32_t>(exact) & 0xFFF00000u);
    EXPECT_EQ(p.abs_percentile(q), edge) << "p" << q;
    EXPECT_LE(p.abs_percentile(q), exact);
    EXPECT_TRUE(exact == 0 || exact < p.abs_percentile(q) * std::pow(2.0, 1.0 / 8) || exact < 1e-38f) << "p" << q;
  }

  const Log2Histogram binades = p.log2_histogram(-40, 4);
  std::vector<std::uint64_t> counts(44, 0);
  std::uint64_t below = 0, above = 0;
  for (const float m : magnitudes) {
    int e = 0;
    std::frexp(m, &e);  // m = f·2^e, f in [0.5, 1): floor(log2 m) = e − 1
    if (m < std::numeric_limits<float>::min() || e - 1 < -40) {
      ++below;
    } else if (e - 1 >= 4) {
      ++above;
    } else {
      ++counts[static_cast<std::size_t>(e - 1 + 40)];
    }
  }
  EXPECT_EQ(binades.lo, -40);
  EXPECT_EQ(binades.hi, 4);
  EXPECT_EQ(binades.buckets, counts);
  EXPECT_EQ(binades.non_finite, p.non_finite());
  EXPECT_EQ(binades.zero_or_below, below);
  EXPECT_EQ(binades.above, above);
  EXPECT_GT(above, 0u);
}

TEST(ValueProfile, NoFiniteValuesGiveNaNs) {
  ValueProfile p;
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  p.add(x);
  EXPECT_EQ(p.count(), 2u);
  EXPECT_EQ(p.non_finite(), 2u);
  EXPECT_TRUE(std::isnan(p.mean()));
  EXPECT_TRUE(std::isnan(p.abs_percentile(50)));
  EXPECT_EQ(p.log2_histogram().zero_or_below + p.log2_histogram().above, 0u);
}

}  // namespace
}  // namespace altgrad::diag
