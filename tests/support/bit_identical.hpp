#pragma once
// Bitwise equality of float arrays: NaN payloads and the sign of zero count, and a failure names
// the first index that differs.
#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace altgrad::test_support {

inline ::testing::AssertionResult bit_identical(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      return ::testing::AssertionFailure() << "first difference at index " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace altgrad::test_support
