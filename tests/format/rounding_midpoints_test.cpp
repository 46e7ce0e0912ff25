// Every midpoint between adjacent values of the (extended) grid, the floats just above and below it,
// every grid value and its float neighbours, for every deterministic rounding mode: the places where
// an off-by-one in rounding shows. Includes the overflow threshold (the midpoint between max finite
// and the next value of the extended grid), zero, the subnormal boundaries and subnormals off.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "reference_rounding.hpp"
#include "rounding_check.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format_ref::GridPoint;
using format_ref::ReferenceGrid;

constexpr float kInfF = std::numeric_limits<float>::infinity();

// x and the floats just below and above it, when x is exactly a float.
void add_with_neighbours(long double x, std::vector<float>& out) {
  const float f = static_cast<float>(x);
  if (!std::isfinite(f) || static_cast<long double>(f) != x) return;
  out.push_back(f);
  out.push_back(std::nextafter(f, -kInfF));
  out.push_back(std::nextafter(f, kInfF));
}

std::vector<float> midpoint_inputs(const ReferenceGrid& grid) {
  std::vector<float> inputs;
  const std::vector<GridPoint>& points = grid.rounding_points();
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    add_with_neighbours((points[i].value + points[i + 1].value) / 2, inputs);
  }
  return inputs;
}

std::vector<float> grid_value_inputs(const ReferenceGrid& grid) {
  std::vector<float> inputs;
  for (const GridPoint& p : grid.rounding_points()) add_with_neighbours(p.value, inputs);
  return inputs;
}

// The float32 extremes and zeros, whatever the format's range.
std::vector<float> extreme_inputs() {
  std::vector<float> inputs;
  for (float x : {0.0f, std::numeric_limits<float>::denorm_min(), FLT_MIN, 1.0f, FLT_MAX}) {
    inputs.push_back(x);
    inputs.push_back(-x);
  }
  return inputs;
}

// Overflow threshold: midpoint(max finite, beyond), its neighbours, and beyond itself.
std::vector<float> overflow_inputs(const ReferenceGrid& grid) {
  std::vector<float> inputs;
  add_with_neighbours((grid.max_finite() + grid.beyond_max()) / 2, inputs);
  add_with_neighbours(grid.beyond_max(), inputs);
  add_with_neighbours(grid.max_finite(), inputs);
  const std::size_t positives = inputs.size();
  for (std::size_t i = 0; i < positives; ++i) inputs.push_back(-inputs[i]);
  return inputs;
}

class RoundingMidpointsTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  void check_all_modes(const std::vector<float>& inputs, const std::string& what) {
    MismatchLog log(std::string(GetParam().name) + " " + what);
    for (format::Rounding mode : deterministic_roundings()) {
      for (float x : inputs) {
        check_rounding(format, GetParam().name, mode, x, format_ref::reference_round(grid, mode, x), log);
      }
    }
  }

  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
};

TEST_P(RoundingMidpointsTest, MidpointsAndTheFloatsBesideThem) {
  const std::vector<float> inputs = midpoint_inputs(grid);
  // Every gap of these grids has a float32 midpoint (values have at most 16 significant bits), so no
  // gap goes unchecked, except gaps of 2^-149, float32's own step, where no float lies between.
  const std::vector<GridPoint>& points = grid.rounding_points();
  std::size_t gaps_with_midpoint = 0;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    gaps_with_midpoint += points[i + 1].value - points[i].value > std::ldexp(1.0L, -149) ? 1 : 0;
  }
  EXPECT_EQ(inputs.size(), 3 * gaps_with_midpoint);
  check_all_modes(inputs, "midpoints");
}

TEST_P(RoundingMidpointsTest, GridValuesAndTheFloatsBesideThem) {
  check_all_modes(grid_value_inputs(grid), "grid values");
}

TEST_P(RoundingMidpointsTest, OverflowThresholdBothSigns) {
  check_all_modes(overflow_inputs(grid), "overflow threshold");
}

TEST_P(RoundingMidpointsTest, ZerosAndFloat32Extremes) { check_all_modes(extreme_inputs(), "extremes"); }

// fnu has no sign: every negative nonzero input, midpoints included, is NaN.
class UnsignedRoundingTest : public RoundingMidpointsTest {};

TEST_P(UnsignedRoundingTest, NegativeMidpointsAreNan) {
  std::vector<float> inputs = midpoint_inputs(grid);
  for (float& x : inputs) x = -x;
  check_all_modes(inputs, "negative inputs");
}

INSTANTIATE_TEST_SUITE_P(AllFormats, RoundingMidpointsTest, ::testing::ValuesIn(all_format_cases()),
                         FormatCaseName());
INSTANTIATE_TEST_SUITE_P(UnsignedFormats, UnsignedRoundingTest,
                         ::testing::ValuesIn(format_cases_where([](const format::FormatSpec& s) {
                           return s.policy == format::SpecialPolicy::fnu;
                         })),
                         FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
