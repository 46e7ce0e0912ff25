// squared_l2_norm and snr_db against closed forms and a long double brute force.
#include "diag/gradient_stats.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/thread_count.hpp"

namespace altgrad::diag_test {
namespace {

using diag::snr_db;
using diag::squared_l2_norm;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> normal_vector(std::size_t n, std::uint64_t seed, float sigma = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

long double brute_squared_norm(const std::vector<float>& x) {
  long double sum = 0;
  for (const float v : x) sum += static_cast<long double>(v) * v;
  return sum;
}

TEST(SquaredL2Norm, SmallExactCases) {
  EXPECT_EQ(squared_l2_norm(std::vector<float>{3.0f, -4.0f}), 25.0);
  EXPECT_EQ(squared_l2_norm({}), 0.0);
  // A float's square is exact in double, however small or large.
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(squared_l2_norm(std::vector<float>{tiny}), std::ldexp(1.0, -298));
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(squared_l2_norm(std::vector<float>{big, -big}), 2.0 * static_cast<double>(big) * big);
}

TEST(SquaredL2Norm, MatchesBruteForce) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{16385}, std::size_t{1'000'001}}) {
    const std::vector<float> x = normal_vector(n, n, 3.0f);
    const long double expected = brute_squared_norm(x);
    EXPECT_NEAR(squared_l2_norm(x), static_cast<double>(expected), 1e-13 * static_cast<double>(expected));
  }
}

TEST(SquaredL2Norm, NonFinite) {
  std::vector<float> x(40000, 1.0f);
  x[20000] = -kInf;
  EXPECT_EQ(squared_l2_norm(x), std::numeric_limits<double>::infinity());
  x[30000] = kNaN;
  EXPECT_TRUE(std::isnan(squared_l2_norm(x)));
}

// g·(1 + 2^-10) is exact in float for g of at most 13 significant bits, so the noise is exactly
// 2^-10·g and the SNR is exactly −20·log10(2^-10) up to the final rounding.
TEST(SnrDb, RelativeErrorEpsilonGivesMinusTwentyLogEpsilon) {
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int> ints(-4096, 4096);
  const float epsilon = std::ldexp(1.0f, -10);
  std::vector<float> g(100000), q(100000);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = std::ldexp(static_cast<float>(ints(rng)), static_cast<int>(i % 20) - 10);
    q[i] = g[i] * (1.0f + epsilon);
    ASSERT_EQ(static_cast<double>(q[i]) - g[i], static_cast<double>(g[i]) * epsilon);
  }
  EXPECT_NEAR(snr_db(q, g), -20.0 * std::log10(static_cast<double>(epsilon)), 1e-10);

  // A decimal epsilon: q is rounded to float, which moves the noise by about 2^-24 / 10^-2 relative.
  const std::vector<float> r = normal_vector(100000, 5);
  std::vector<float> rq(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) rq[i] = r[i] * 1.01f;
  EXPECT_NEAR(snr_db(rq, r), 40.0, 1e-3);
}

TEST(SnrDb, MatchesBruteForce) {
  const std::vector<float> g = normal_vector(300001, 6);
  const std::vector<float> noise = normal_vector(300001, 7, 0.05f);
  std::vector<float> q(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) q[i] = g[i] + noise[i];
  long double signal = 0, error = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const long double d = static_cast<long double>(q[i]) - g[i];
    signal += static_cast<long double>(g[i]) * g[i];
    error += d * d;
  }
  EXPECT_NEAR(snr_db(q, g), static_cast<double>(10 * std::log10(signal / error)), 1e-10);
}

TEST(SnrDb, SpecialCases) {
  const std::vector<float> g = {1.0f, -2.0f, 0.0f, 0.5f};
  EXPECT_EQ(snr_db(g, g), std::numeric_limits<double>::infinity());
  EXPECT_EQ(snr_db(std::vector<float>{-0.0f, 0.0f}, std::vector<float>{0.0f, -0.0f}),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(snr_db({}, {}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(snr_db(std::vector<float>{0.0f, 1e-30f}, std::vector<float>{0.0f, 0.0f}),
            -std::numeric_limits<double>::infinity());
  for (const float bad : {kNaN, kInf, -kInf}) {
    std::vector<float> q = g;
    q[1] = bad;
    EXPECT_TRUE(std::isnan(snr_db(q, g))) << bad;
    EXPECT_TRUE(std::isnan(snr_db(g, q))) << bad;
    EXPECT_TRUE(std::isnan(snr_db(q, q))) << bad;
  }
  EXPECT_THROW(snr_db(g, std::vector<float>{1.0f}), std::invalid_argument);
}

TEST(GradientStats, SameBitsWithOneAndTwoThreads) {
  const std::vector<float> g = normal_vector(2'000'003, 8);
  const std::vector<float> q = normal_vector(2'000'003, 9);
  const auto norm_one = test_support::with_threads(1, [&] { return squared_l2_norm(g); });
  const auto norm_two = test_support::with_threads(2, [&] { return squared_l2_norm(g); });
  EXPECT_EQ(std::bit_cast<std::uint64_t>(norm_one), std::bit_cast<std::uint64_t>(norm_two));
  const auto snr_one = test_support::with_threads(1, [&] { return snr_db(q, g); });
  const auto snr_two = test_support::with_threads(2, [&] { return snr_db(q, g); });
  EXPECT_EQ(std::bit_cast<std::uint64_t>(snr_one), std::bit_cast<std::uint64_t>(snr_two));
}

}  // namespace
}  // namespace altgrad::diag_test
