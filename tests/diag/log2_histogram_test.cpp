// log2_histogram at every power of two and the float just below it, on subnormals, zeros and
// non-finite values, and against frexp on random data.
#include "diag/log2_histogram.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "support/thread_count.hpp"

namespace altgrad::diag_test {
namespace {

using diag::Log2Histogram;
using diag::log2_histogram;

// floor(log2|x|) by frexp in double, where every float (subnormals included) is a normal number:
// frexp gives |x| = m · 2^e with m in [1/2, 1), so floor(log2|x|) = e − 1.
int reference_floor_log2(float x) {
  int e = 0;
  std::frexp(static_cast<double>(x), &e);
  return e - 1;
}

// The expected histogram, element by element from the definition.
Log2Histogram reference_histogram(const std::vector<float>& w, int lo, int hi) {
  Log2Histogram h;
  h.lo = lo;
  h.hi = hi;
  h.buckets.assign(static_cast<std::size_t>(hi - lo), 0);
  for (const float x : w) {
    if (!std::isfinite(x)) {
      ++h.non_finite;
    } else if (x == 0 || std::fabs(x) < std::ldexp(1.0, lo)) {
      ++h.zero_or_below;
    } else if (std::fabs(x) >= std::ldexp(1.0, hi)) {
      ++h.above;
    } else {
      ++h.buckets[static_cast<std::size_t>(reference_floor_log2(x) - lo)];
    }
  }
  return h;
}

void expect_same(const Log2Histogram& actual, const Log2Histogram& expected) {
  EXPECT_EQ(actual.lo, expected.lo);
  EXPECT_EQ(actual.hi, expected.hi);
  EXPECT_EQ(actual.buckets, expected.buckets);
  EXPECT_EQ(actual.zero_or_below, expected.zero_or_below);
  EXPECT_EQ(actual.above, expected.above);
  EXPECT_EQ(actual.non_finite, expected.non_finite);
}

float just_below(float x) { return std::nextafter(x, 0.0f); }

TEST(Log2Histogram, FloorLog2AtEveryPowerOfTwoAndJustBelow) {
  for (int k = diag::kMinLog2Bucket; k < diag::kMaxLog2Bucket; ++k) {
    const float p = std::ldexp(1.0f, k);
    ASSERT_EQ(static_cast<double>(p), std::ldexp(1.0, k));
    EXPECT_EQ(diag::floor_log2(p), k);
    EXPECT_EQ(diag::floor_log2(-p), k);
    if (k > diag::kMinLog2Bucket) {
      EXPECT_EQ(diag::floor_log2(just_below(p)), k - 1) << k;
    }
  }
  EXPECT_EQ(diag::floor_log2(std::numeric_limits<float>::max()), 127);
}

TEST(Log2Histogram, Subnormals) {
  const float tiny = std::numeric_limits<float>::denorm_min();  // 2^-149
  EXPECT_EQ(diag::floor_log2(tiny), -149);
  EXPECT_EQ(diag::floor_log2(2 * tiny), -148);
  EXPECT_EQ(diag::floor_log2(3 * tiny), -148);
  EXPECT_EQ(diag::floor_log2(just_below(std::numeric_limits<float>::min())), -127);  // largest subnormal
  EXPECT_EQ(diag::floor_log2(std::numeric_limits<float>::min()), -126);
  const std::vector<float> w = {tiny, -3 * tiny, just_below(std::numeric_limits<float>::min())};
  const Log2Histogram h = log2_histogram(w, -149, -126);
  EXPECT_EQ(h.buckets[0], 1u);
  EXPECT_EQ(h.buckets[1], 1u);
  EXPECT_EQ(h.buckets[22], 1u);
  EXPECT_EQ(h.zero_or_below + h.above + h.non_finite, 0u);
}

TEST(Log2Histogram, EveryPowerOfTwoLandsInItsBucket) {
  std::vector<float> w;
  for (int k = diag::kMinLog2Bucket; k < diag::kMaxLog2Bucket; ++k) {
    const float p = std::ldexp(1.0f, k);
    w.insert(w.end(), {p, -p, just_below(p)});
  }
  for (const auto& [lo, hi] : {std::pair{-24, 8}, std::pair{-149, 128}, std::pair{-126, 0}, std::pair{5, 6}}) {
    const Log2Histogram h = log2_histogram(w, lo, hi);
    expect_same(h, reference_histogram(w, lo, hi));
    EXPECT_EQ(h.total(), w.size());
  }
  // Bucket k holds 2^k, −2^k and the float just below 2^(k+1).
  const Log2Histogram h = log2_histogram(w, -24, 8);
  for (const std::uint64_t count : h.buckets) EXPECT_EQ(count, 3u);
}

TEST(Log2Histogram, ZerosInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> w = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                -std::numeric_limits<float>::quiet_NaN(), 256.0f, just_below(256.0f),
                                std::ldexp(1.0f, -24), just_below(std::ldexp(1.0f, -24))};
  const Log2Histogram h = log2_histogram(w);
  EXPECT_EQ(h.lo, -24);
  EXPECT_EQ(h.hi, 8);
  EXPECT_EQ(h.zero_or_below, 3u);  // ±0 and the float below 2^-24
  EXPECT_EQ(h.non_finite, 4u);
  EXPECT_EQ(h.above, 1u);          // 256 = 2^8 = 2^hi
  EXPECT_EQ(h.buckets.front(), 1u);
  EXPECT_EQ(h.buckets.back(), 1u);
  EXPECT_EQ(h.total(), w.size());
  // The full float range: only zeros are below it.
  const Log2Histogram full = log2_histogram(w, diag::kMinLog2Bucket, diag::kMaxLog2Bucket);
  EXPECT_EQ(full.zero_or_below, 2u);
  EXPECT_EQ(full.above, 0u);
}

TEST(Log2Histogram, EdgesArePowersOfTwo) {
  const Log2Histogram h = log2_histogram({}, -3, 2);
  const std::vector<double> expected = {0.125, 0.25, 0.5, 1.0, 2.0, 4.0};
  EXPECT_EQ(h.edges(), expected);
  EXPECT_EQ(h.buckets.size(), 5u);
  EXPECT_EQ(log2_histogram({}, -149, 128).edges().front(), std::ldexp(1.0, -149));
}

TEST(Log2Histogram, RejectsBadRanges) {
  EXPECT_THROW(log2_histogram({}, 3, 3), std::invalid_argument);
  EXPECT_THROW(log2_histogram({}, 4, 3), std::invalid_argument);
  EXPECT_THROW(log2_histogram({}, -150, 0), std::invalid_argument);
  EXPECT_THROW(log2_histogram({}, 0, 129), std::invalid_argument);
}

std::vector<float> random_magnitudes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> w(n);
  // Uniform bit patterns: every exponent, subnormals, zeros, Inf and NaN all occur.
  for (float& x : w) x = std::bit_cast<float>(bits(rng));
  return w;
}

TEST(Log2Histogram, RandomBitPatternsMatchReference) {
  const std::vector<float> w = random_magnitudes(200'000, 1);
  expect_same(log2_histogram(w), reference_histogram(w, -24, 8));
  expect_same(log2_histogram(w, -140, 100), reference_histogram(w, -140, 100));
}

TEST(Log2Histogram, SameCountsWithOneAndTwoThreads) {
  const std::vector<float> w = random_magnitudes(1'000'003, 2);
  const Log2Histogram one = test_support::with_threads(1, [&] { return log2_histogram(w); });
  const Log2Histogram two = test_support::with_threads(2, [&] { return log2_histogram(w); });
  expect_same(one, two);
}

}  // namespace
}  // namespace altgrad::diag_test
