#pragma once
// Helpers for "the same bits whatever the thread count or chunking" checks.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "quant/stats.hpp"
#include "support/bit_identical.hpp"
#include "support/thread_count.hpp"

namespace altgrad::quant_test {

using test_support::bit_identical;
using test_support::ScopedThreadCount;

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
