// The grid constants the quantizer tests rely on were transcribed from the documented table; this
// checks the transcription against the formats the library builds, so a typo in a test reference
// shows up here rather than as a mysterious statistics mismatch elsewhere.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_grid.hpp"

namespace altgrad::quant_test {
namespace {

TEST(ReferenceGrid, TranscribedConstantsMatchTheDocumentedFormats) {
  for (const RefGrid& g : {kE4m3, kE4m3Inf, kE4m3fnuz, kE5m2, kE5m2Inf, kE5m2NoSubnormals, kE3m2, kE2m3,
                           kE2m1, kBf16}) {
    const format::Format f = load(g);
    EXPECT_EQ(static_cast<long double>(f.max_finite()), g.max_finite) << g.name;
    EXPECT_EQ(static_cast<long double>(f.min_positive()), min_positive(g)) << g.name;
    EXPECT_EQ(static_cast<long double>(f.min_normal()), std::ldexp(1.0L, g.min_normal_exp)) << g.name;
  }
}

// The reference rounding itself, on hand-worked E4M3 cases from the spec's rules.
TEST(ReferenceGrid, NearestEvenHandWorkedCases) {
  EXPECT_EQ(round_nearest_even(kE4m3, 464.0L), 448.0L);       // tie above max: 448's code is even
  EXPECT_EQ(round_nearest_even(kE4m3, 465.0L), 480.0L);       // extended grid, beyond max finite
  EXPECT_EQ(round_nearest_even(kE5m2, 61440.0L), 65536.0L);   // tie above max: 57344's code is odd
  EXPECT_EQ(round_nearest_even(kE4m3, 0x1p-10L), 0.0L);       // half the smallest subnormal: to zero
  EXPECT_EQ(round_nearest_even(kE4m3, 0x1.8p-9L), 0x1p-8L);   // 1.5 subnormal steps: to even 2
  EXPECT_EQ(round_nearest_even(kE5m2NoSubnormals, 0x1p-15L), 0.0L);  // tie below min normal → 0
  EXPECT_EQ(round_nearest_even(kE2m1, 5.0L), 4.0L);           // 4, 6: tie to 4 (even mantissa)
  EXPECT_EQ(round_nearest_even(kE2m1, 7.0L), 8.0L);           // 6, 8: tie to 8
}

}  // namespace
}  // namespace altgrad::quant_test
