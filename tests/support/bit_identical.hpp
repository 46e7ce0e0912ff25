#pragma once
// Bitwise equality of float or double arrays: NaN payloads and the sign of zero count, and a
// failure names the first index that differs, with both values to the last digit.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <vector>

namespace altgrad::test_support {

template <typename Scalar>
::testing::AssertionResult bit_identical(std::span<const Scalar> a, std::span<const Scalar> b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Scalar)) != 0) {
      std::ostringstream values;
      values.precision(std::numeric_limits<Scalar>::max_digits10);
      values << a[i] << " vs " << b[i];
      return ::testing::AssertionFailure() << "first difference at index " << i << ": " << values.str();
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult bit_identical(std::span<const float> a, std::span<const float> b) {
  return bit_identical<float>(a, b);
}

template <typename Scalar>
::testing::AssertionResult bit_identical(const std::vector<Scalar>& a, const std::vector<Scalar>& b) {
  return bit_identical(std::span<const Scalar>(a), std::span<const Scalar>(b));
}

}  // namespace altgrad::test_support
