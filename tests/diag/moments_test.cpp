// moments_of against closed forms for known distributions and a long double brute force.
#include "diag/moments.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/thread_count.hpp"

namespace altgrad::diag_test {
namespace {

using diag::Moments;
using diag::moments_of;

struct ReferenceMoments {
  long double mean, variance, kurtosis;
};

// Direct definition in long double: mean, then the centred second and fourth moments.
ReferenceMoments brute_force(const std::vector<float>& x) {
  const auto n = static_cast<long double>(x.size());
  long double sum = 0;
  for (const float v : x) sum += v;
  const long double mean = sum / n;
  long double m2 = 0, m4 = 0;
  for (const float v : x) {
    const long double d = v - mean;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m4 /= n;
  return {mean, m2, m4 / (m2 * m2)};
}

void expect_close(double actual, long double expected, double relative) {
  EXPECT_NEAR(actual, static_cast<double>(expected), relative * std::fabs(static_cast<double>(expected)) + 1e-300);
}

TEST(Moments, TwoPointPlusMinusOneHasKurtosisOne) {
  std::vector<float> x;
  for (int i = 0; i < 1000; ++i) x.push_back(i % 2 == 0 ? 1.0f : -1.0f);
  const Moments m = moments_of(x);
  EXPECT_EQ(m.mean, 0.0);
  EXPECT_EQ(m.variance, 1.0);
  EXPECT_EQ(m.kurtosis, 1.0);
  EXPECT_EQ(m.count, 1000u);
}

// The discrete uniform distribution on 0, 1, …, n−1 has variance (n²−1)/12 and fourth central
// moment (n²−1)(3n²−7)/240, so kurtosis 3(3n²−7) / (5(n²−1)), which tends to 9/5.
TEST(Moments, UniformGridMatchesClosedForm) {
  for (const int n : {2, 3, 10, 1000, 100000}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    const long double nn = static_cast<long double>(n) * n;
    const Moments m = moments_of(x);
    expect_close(m.mean, (n - 1) / 2.0L, 1e-15);
    expect_close(m.variance, (nn - 1) / 12, 1e-12);
    expect_close(m.kurtosis, 3 * (3 * nn - 7) / (5 * (nn - 1)), 1e-12);
  }
  std::vector<float> large(1'000'000);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<float>(i);
  EXPECT_NEAR(moments_of(large).kurtosis, 1.8, 1e-9);
}

TEST(Moments, GaussianSampleHasKurtosisNearThree) {
  std::mt19937_64 rng(12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1'000'000);
  for (float& v : x) v = normal(rng);
  const Moments m = moments_of(x);
  // Standard errors at n = 10^6: mean 0.001, variance 0.0014, kurtosis √(24/n) ≈ 0.005.
  EXPECT_NEAR(m.mean, 0.0, 0.005);
  EXPECT_NEAR(m.variance, 1.0, 0.007);
  EXPECT_NEAR(m.kurtosis, 3.0, 0.025);
}

TEST(Moments, MatchesLongDoubleBruteForce) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<float> heavy(0.0f, 1.5f);
  std::uniform_real_distribution<float> uniform(-3.0f, 5.0f);
  for (const std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{16384}, std::size_t{16385},
                              std::size_t{300001}}) {
    std::vector<float> a(n), b(n);
    for (float& v : a) v = heavy(rng);
    for (float& v : b) v = 1e4f + uniform(rng);  // a large offset: one-pass formulas lose digits here
    for (const auto* x : {&a, &b}) {
      const Moments m = moments_of(*x);
      const ReferenceMoments r = brute_force(*x);
      expect_close(m.mean, r.mean, 1e-13);
      if (n == 1) {
        EXPECT_EQ(m.variance, 0.0);
        EXPECT_EQ(m.kurtosis, 0.0);
        continue;
      }
      expect_close(m.variance, r.variance, 1e-10);
      expect_close(m.kurtosis, r.kurtosis, 1e-10);
    }
  }
}

// y = 4x + 1024 on a dyadic grid is exact in float: the mean moves with it, the variance scales by
// 16, and the kurtosis does not change.
TEST(Moments, ShiftAndScaleInvariance) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> ints(-4096, 4096);
  std::vector<float> x(50000), y(50000);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(ints(rng)) / 64.0f;
    y[i] = 4.0f * x[i] + 1024.0f;
  }
  const Moments mx = moments_of(x), my = moments_of(y);
  EXPECT_NEAR(my.mean, 4 * mx.mean + 1024, 1e-10);
  EXPECT_NEAR(my.variance, 16 * mx.variance, 1e-10 * my.variance);
  EXPECT_NEAR(my.kurtosis, mx.kurtosis, 1e-10);
}

TEST(Moments, ConstantHasZeroVarianceAndZeroKurtosis) {
  const std::vector<float> x(100, 2.5f);
  const Moments m = moments_of(x);
  EXPECT_EQ(m.mean, 2.5);
  EXPECT_EQ(m.variance, 0.0);
  EXPECT_EQ(m.kurtosis, 0.0);
}

TEST(Moments, EmptyOrNonFiniteGivesNaN) {
  const Moments empty = moments_of({});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_TRUE(std::isnan(empty.mean) && std::isnan(empty.variance) && std::isnan(empty.kurtosis));
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    std::vector<float> x(40000, 1.0f);
    x[30000] = bad;
    const Moments m = moments_of(x);
    EXPECT_TRUE(std::isnan(m.mean) && std::isnan(m.variance) && std::isnan(m.kurtosis)) << bad;
    EXPECT_EQ(m.count, 40000u);
  }
}

TEST(Moments, SameBitsWithOneAndTwoThreads) {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  std::vector<float> x(2'000'003);
  for (float& v : x) v = normal(rng);
  const Moments one = test_support::with_threads(1, [&] { return moments_of(x); });
  const Moments two = test_support::with_threads(2, [&] { return moments_of(x); });
  EXPECT_EQ(std::bit_cast<std::uint64_t>(one.mean), std::bit_cast<std::uint64_t>(two.mean));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(one.variance), std::bit_cast<std::uint64_t>(two.variance));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(one.kurtosis), std::bit_cast<std::uint64_t>(two.kurtosis));
}

}  // namespace
}  // namespace altgrad::diag_test
