// Moves along the grid: next_code_up/next_code_down visit every finite value in order (compared with
// the sorted reference values), step over disabled subnormals, and stop at max finite or +Inf; and
// spacing(x), the step to the next value away from zero, against the reference gaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "format/grid.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format_ref::CodeKind;
using format_ref::RefCode;
using format_ref::ReferenceGrid;

constexpr long double kInfL = std::numeric_limits<long double>::infinity();

// The values a walk from one end to the other must visit, ascending: [-Inf], finite values, [+Inf].
std::vector<long double> ordered_values(const ReferenceGrid& grid) {
  std::vector<long double> values;
  if (grid.has_inf()) values.push_back(-kInfL);
  values.insert(values.end(), grid.finite_values().begin(), grid.finite_values().end());
  if (grid.has_inf()) values.push_back(kInfL);
  return values;
}

class GridWalkTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  std::uint32_t lowest_code() const {
    if (grid.has_inf()) return *grid.inf_code(true);
    return grid.is_signed() ? grid.sign_code() | grid.max_finite_code() : 0u;
  }
  std::uint32_t highest_code() const {
    return grid.has_inf() ? *grid.inf_code(false) : grid.max_finite_code();
  }

  // A code a step may return: a value or Inf, never NaN or a disabled subnormal.
  bool steppable(std::uint32_t code) const {
    const CodeKind kind = grid.codes()[code].kind;
    return kind == CodeKind::number || kind == CodeKind::infinity;
  }

  // The value after `value` going up (or down), or nothing past the end of the walk.
  std::optional<long double> neighbour(long double value, bool up) const {
    if (up) {
      const auto it = std::upper_bound(ordered.begin(), ordered.end(), value);
      return it == ordered.end() ? std::nullopt : std::optional<long double>(*it);
    }
    const auto it = std::lower_bound(ordered.begin(), ordered.end(), value);
    return it == ordered.begin() ? std::nullopt : std::optional<long double>(*(it - 1));
  }

  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
  const std::vector<long double> ordered = ordered_values(grid);
};

TEST_P(GridWalkTest, WalkingUpVisitsEveryValueInOrder) {
  const std::vector<long double>& want = ordered;
  std::vector<long double> got;
  std::optional<std::uint32_t> code = lowest_code();
  while (code && got.size() <= want.size()) {
    ASSERT_LT(*code, grid.codes().size());
    ASSERT_TRUE(steppable(*code)) << "stepped onto " << hex(*code);
    got.push_back(grid.codes()[*code].value);
    if (got.back() == 0) {
      EXPECT_EQ(*code, 0u) << "walking up reaches +0";
    }
    code = format::next_code_up(format, *code);
  }
  EXPECT_EQ(got, want);
}

TEST_P(GridWalkTest, WalkingDownVisitsEveryValueInReverse) {
  std::vector<long double> want = ordered;
  std::reverse(want.begin(), want.end());
  std::vector<long double> got;
  std::optional<std::uint32_t> code = highest_code();
  while (code && got.size() <= want.size()) {
    ASSERT_LT(*code, grid.codes().size());
    ASSERT_TRUE(steppable(*code)) << "stepped onto " << hex(*code);
    got.push_back(grid.codes()[*code].value);
    // next_code_down mirrors next_code_up, so it reaches -0 where the format has one.
    if (got.back() == 0) {
      EXPECT_EQ(*code, grid.code_of_value(0.0L, true)) << "walking down reaches -0";
    }
    code = format::next_code_down(format, *code);
  }
  EXPECT_EQ(got, want);
}

// From every code the format produces (both zeros, -Inf, max finite...), one step lands on the
// adjacent value; NaN codes have no neighbours.
TEST_P(GridWalkTest, EveryCodeStepsToTheAdjacentValue) {
  MismatchLog log(std::string(GetParam().name) + " next_code");
  for (const RefCode& c : grid.codes()) {
    if (c.kind == CodeKind::disabled_subnormal) continue;  // see the test below
    for (bool up : {true, false}) {
      const auto got = up ? format::next_code_up(format, c.code) : format::next_code_down(format, c.code);
      const auto want = c.kind == CodeKind::nan ? std::nullopt : neighbour(c.value, up);
      const bool ok =
          got ? (want && *got < grid.codes().size() && steppable(*got) && grid.codes()[*got].value == *want)
              : !want;
      if (!ok) {
        log.add(std::string(up ? "next_code_up(" : "next_code_down(") + hex(c.code) + ") = " +
                (got ? hex(*got) : "none") + ", expected value " + (want ? describe(*want) : "none"));
      }
    }
  }
}

// A disabled subnormal code reads as ±0 ("Subnormal codes decode as ±0 when met"); stepping from it
// steps over the other disabled subnormals to ±min normal, as from zero.
class DisabledSubnormalWalkTest : public GridWalkTest {};

TEST_P(DisabledSubnormalWalkTest, StepsFromADisabledCodeSkipTheOtherDisabledCodes) {
  MismatchLog log(std::string(GetParam().name) + " next_code from disabled subnormals");
  for (const RefCode& c : grid.codes()) {
    if (c.kind != CodeKind::disabled_subnormal) continue;
    for (bool up : {true, false}) {
      const auto got = up ? format::next_code_up(format, c.code) : format::next_code_down(format, c.code);
      const long double want = up ? grid.min_normal() : -grid.min_normal();
      if (!got || !steppable(*got) || grid.codes()[*got].value != want) {
        log.add(std::string(up ? "next_code_up(" : "next_code_down(") + hex(c.code) +
                ") = " + (got ? hex(*got) : "none") + ", expected the code of " + describe(want));
      }
    }
  }
}

// Width of the reference gap [lo, hi) that holds |x|; the top binade's step from max finite up.
long double reference_spacing(const ReferenceGrid& grid, float x) {
  const float a = std::fabs(x);
  if (a >= grid.max_finite()) return grid.top_step();
  const auto& points = grid.rounding_points();
  const format_ref::Bracket b = format_ref::bracket_by_search(grid, a);
  const std::size_t lo = b.lo;
  return points[lo + 1].value - points[lo].value;
}

TEST_P(GridWalkTest, SpacingAtEveryValueIsTheStepAwayFromZero) {
  MismatchLog log(std::string(GetParam().name) + " spacing at grid values");
  for (const RefCode& c : grid.codes()) {
    if (c.kind != CodeKind::number) continue;
    const auto x = static_cast<float>(c.value);
    const long double want = reference_spacing(grid, x);
    const float got = format::spacing(format, x);
    if (static_cast<long double>(got) != want) {
      log.add("spacing(" + describe(x) + ") = " + describe(got) + ", expected " + describe(want));
    }
  }
}

TEST_P(GridWalkTest, SpacingAnywhereIsTheGapHoldingX) {
  MismatchLog log(std::string(GetParam().name) + " spacing at random floats");
  std::mt19937 rng(12345);
  const int lo_exp = std::max(std::ilogb(static_cast<double>(grid.min_positive())) - 3, -149);
  std::uniform_int_distribution<int> exponent(lo_exp, 127);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::ldexp(1.0f + static_cast<float>(rng() & 0x7F'FFFFu) / 8388608.0f, exponent(rng));
    for (float signed_x : {x, -x}) {
      const long double want = reference_spacing(grid, signed_x);
      const float got = format::spacing(format, signed_x);
      if (static_cast<long double>(got) != want) {
        log.add("spacing(" + describe(signed_x) + ") = " + describe(got) + ", expected " + describe(want));
      }
    }
  }
}

TEST_P(GridWalkTest, SpacingOfNanAndInfIsNan) {
  for (float x : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()}) {
    EXPECT_TRUE(std::isnan(format::spacing(format, x))) << describe(x);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GridWalkTest, ::testing::ValuesIn(all_format_cases()), FormatCaseName());
INSTANTIATE_TEST_SUITE_P(SubnormalsOff, DisabledSubnormalWalkTest,
                         ::testing::ValuesIn(format_cases_where([](const format::FormatSpec& s) {
                           return !s.subnormals && s.mantissa_bits > 0 &&
                                  s.policy != format::SpecialPolicy::fnu;
                         })),
                         FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
