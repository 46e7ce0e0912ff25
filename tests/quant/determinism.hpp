#pragma once
// Helpers for "the same bits whatever the thread count or chunking" checks.
#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "quant/stats.hpp"

namespace altgrad::quant_test {

// Sets the OpenMP thread count for one scope and restores the previous one, so a test that pins
// the count cannot leak it into the next test.
class OmpThreads {
 public:
  explicit OmpThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

// Bitwise equality (NaN payloads and the sign of zero included), naming the first difference.
inline ::testing::AssertionResult bit_identical(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      return ::testing::AssertionFailure() << "first difference at index " << i << ": " << a[i]
                                           << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

inline void expect_stats_bit_identical(const quant::QuantStats& a, const quant::QuantStats& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.overflow, b.overflow);
  EXPECT_EQ(a.underflow, b.underflow);
  EXPECT_EQ(a.nan_inputs, b.nan_inputs);
  EXPECT_EQ(a.inf_inputs, b.inf_inputs);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(a.amax), std::bit_cast<std::uint32_t>(b.amax));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.sum_sq_error), std::bit_cast<std::uint64_t>(b.sum_sq_error));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.sum_sq_input), std::bit_cast<std::uint64_t>(b.sum_sq_input));
}

}  // namespace altgrad::quant_test
