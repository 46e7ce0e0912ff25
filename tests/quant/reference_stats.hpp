#pragma once
// The "Statistics" table of docs/formats.md as a scalar loop, for nearest-even rounding: counts are
// decided with the independent grid of reference_grid.hpp, sums are taken in long double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "quant/stats.hpp"
#include "reference_grid.hpp"

namespace altgrad::quant_test {

struct ReferenceStats {
  std::uint64_t count = 0;
  std::uint64_t overflow = 0;
  std::uint64_t underflow = 0;
  std::uint64_t nan_inputs = 0;
  std::uint64_t inf_inputs = 0;
  std::uint64_t zero_inputs = 0;
  float amax = 0.0f;
  long double sum_sq_error = 0.0L;
  long double sum_sq_input = 0.0L;

  // One element: x the input, scaled = fl(x·s) (the product rounded to float32 first, as the spec
  // says), y the dequantized output that the reference expects.
  void add(const RefGrid& g, float x, float scaled, float y) {
    ++count;
    if (std::isnan(x)) {
      ++nan_inputs;
      return;
    }
    amax = std::fabs(x) > amax ? std::fabs(x) : amax;
    if (std::isinf(x)) {
      ++inf_inputs;
      return;
    }
    if (x == 0.0f) ++zero_inputs;
    // x is finite: "x·s rounded beyond max finite" / "nonzero x whose x·s rounded below the
    // smallest positive value". A product that already left float32's range counts the same way.
    const long double a = std::fabs(static_cast<long double>(scaled));
    if (std::isinf(scaled) || overflows_nearest_even(g, a)) ++overflow;
    if (x != 0.0f && std::isfinite(scaled) && round_nearest_even(g, a) == 0.0L) ++underflow;
    // A result that is not finite (overflow to Inf or NaN) is an infinite error.
    const long double err = static_cast<long double>(x) - static_cast<long double>(y);
    sum_sq_error += std::isfinite(y) ? err * err : std::numeric_limits<long double>::infinity();
    sum_sq_input += static_cast<long double>(x) * static_cast<long double>(x);
  }
};

// |actual − expected| ≤ rel·|expected|; non-finite expectations must be met exactly in kind.
inline ::testing::AssertionResult close_relative(double actual, long double expected, double rel) {
  if (std::isnan(expected)) {
    if (std::isnan(actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected NaN, got " << actual;
  }
  if (std::isinf(expected)) {
    if (static_cast<long double>(actual) == expected) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << static_cast<double>(expected) << ", got " << actual;
  }
  const long double diff = std::fabs(static_cast<long double>(actual) - expected);
  if (diff <= rel * std::fabs(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << static_cast<double>(expected) << ", got " << actual
                                       << " (relative difference " << static_cast<double>(diff / std::fabs(expected))
                                       << ")";
}

// Counts and amax must match exactly; the sums to a relative 1e-12 (they are summed in a different
// order and precision by the implementation).
inline void expect_stats_match(const quant::QuantStats& got, const ReferenceStats& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.overflow, want.overflow);
  EXPECT_EQ(got.underflow, want.underflow);
  EXPECT_EQ(got.nan_inputs, want.nan_inputs);
  EXPECT_EQ(got.inf_inputs, want.inf_inputs);
  EXPECT_EQ(got.zero_inputs, want.zero_inputs);
  EXPECT_EQ(got.amax, want.amax);
  EXPECT_TRUE(close_relative(got.sum_sq_error, want.sum_sq_error, 1e-12)) << "sum_sq_error";
  EXPECT_TRUE(close_relative(got.sum_sq_input, want.sum_sq_input, 1e-12)) << "sum_sq_input";
}

}  // namespace altgrad::quant_test
