#pragma once
// The non-finite floats the quantizer's edge cases feed it.
#include <limits>

namespace altgrad::test_support {

inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace altgrad::test_support
