// S(w) = scaled_spacing(f, w, scale) on the effective grid {decode(c) / scale}: at every code of
// every named format, under scale 1, power-of-two scales and arbitrary ones, it equals the distance
// from the code's value to the next code's value away from zero, found by enumerating the codes
// with the codec (decode, next_code_up, next_code_down), divided by the scale.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <optional>
#include <string>

#include "format/codec.hpp"
#include "format/effective_grid.hpp"
#include "format/grid.hpp"
#include "mismatch_log.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

bool is_power_of_two(float x) {
  int e = 0;
  return std::frexp(std::fabs(x), &e) == 0.5f;
}

class EffectiveGridTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  // The next code's value away from zero minus the code's value, by walking the codes; at max
  // finite, where no finite code lies above, the top binade's step 2^(floor(log2 max) − M).
  float step_away_from_zero(std::uint32_t code) const {
    const float value = format::decode(format, code);
    const bool negative = std::signbit(value) && value != 0.0f;
    const auto next = negative ? format::next_code_down(format, code) : format::next_code_up(format, code);
    if (next && !format::is_inf_code(format, *next)) return std::fabs(format::decode(format, *next) - value);
    return std::ldexp(1.0f, std::ilogb(format.max_finite()) - format.spec.mantissa_bits);
  }

  // The step from the value below |value| up to it: the gap that ends at the code.
  float step_toward_zero(std::uint32_t code) const {
    const float value = format::decode(format, code);
    const bool negative = std::signbit(value) && value != 0.0f;
    const auto next = negative ? format::next_code_up(format, code) : format::next_code_down(format, code);
    return next ? std::fabs(value - format::decode(format, *next)) : 0.0f;
  }

  bool finite_code(std::uint32_t code) const {
    return format::is_valid_code(format, code) && !format::is_nan_code(format, code) &&
           !format::is_inf_code(format, code);
  }

  struct Tally {
    std::size_t checked = 0, lower_binade = 0;
  };

  // Checks every code under `scale`. Where the scale is not a power of two, w = decode(c)/scale is
  // rounded, and the one allowed difference is the documented one: at a grid point that is a
  // power of two, w may read as lying in the binade below and get that binade's step.
  Tally check_every_code(float scale) const {
    MismatchLog log(std::string(GetParam().name) + " scaled_spacing, scale " + describe(scale));
    Tally tally;
    const bool exact = is_power_of_two(scale);
    for (std::uint32_t code = 0; code < format.code_count(); ++code) {
      if (!finite_code(code)) continue;
      const float value = format::decode(format, code);
      const float w = value / scale;
      if (!std::isfinite(w) || (w != 0.0f && std::fabs(w) < FLT_MIN)) continue;  // outside FP32's normal range
      ++tally.checked;
      const float want = step_away_from_zero(code) / scale;
      const float got = format::scaled_spacing(format, w, scale);
      if (got == want) continue;
      if (!exact && is_power_of_two(value) && got == step_toward_zero(code) / scale) {
        ++tally.lower_binade;
        continue;
      }
      log.add("S(" + describe(w) + ") at code " + hex(code) + " (" + describe(value) + ") = " + describe(got) +
              ", expected " + describe(want));
    }
    return tally;
  }

  const format::Format format = format::make_format(GetParam().spec);
};

TEST_P(EffectiveGridTest, UnscaledSpacingIsTheStepToTheNextCode) {
  const Tally t = check_every_code(1.0f);
  EXPECT_GT(t.checked, 0u);
  EXPECT_EQ(t.lower_binade, 0u);
}

TEST_P(EffectiveGridTest, PowerOfTwoScalesAreExactAtEveryCode) {
  // MX block scales are 2^k; these span both directions, including ones that push the grid into
  // FP32's subnormal range for the widest formats (those codes are skipped, not approximated).
  for (float scale : {0x1p-20f, 0x1p-5f, 0x1p+3f, 0x1p+12f}) {
    const Tally t = check_every_code(scale);
    EXPECT_GT(t.checked, 0u) << describe(scale);
    EXPECT_EQ(t.lower_binade, 0u) << describe(scale);
  }
}

TEST_P(EffectiveGridTest, ArbitraryScalesDifferOnlyJustBelowPowersOfTwo) {
  // Per-tensor scales are max_finite / amax, rounded once to FP32: anything.
  for (float scale : {0.7f, 3.1e-3f, 1234.567f, 20.3f}) {
    const Tally t = check_every_code(scale);
    EXPECT_GT(t.checked, 0u) << describe(scale);
    // Only grid points at powers of two can fall to the binade below: one per binade at most.
    EXPECT_LE(t.lower_binade, t.checked / (std::size_t{1} << format.spec.mantissa_bits) + 2) << describe(scale);
  }
}

TEST_P(EffectiveGridTest, NanAndInfHaveNoSpacing) {
  for (float w : {NAN, INFINITY, -INFINITY}) EXPECT_TRUE(std::isnan(format::scaled_spacing(format, w, 0.7f)));
}

INSTANTIATE_TEST_SUITE_P(NamedFormats, EffectiveGridTest, ::testing::ValuesIn(named_format_cases()), FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
