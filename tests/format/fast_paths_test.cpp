// The quantizer's fast paths, round_nearest_even_simple() and round_stochastic_simple(), against the
// independent reference (simple_grid_test.cpp compares them with round_to_grid; this compares them
// with first principles, so a shared mistake cannot hide). They apply where has_simple_grid()
// holds: signed formats with zero and subnormals whose min normal is a normal float32.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "reference_rounding.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format::Rounding;
using format_ref::ReferenceGrid;

TEST(FastPaths, HasSimpleGridHoldsExactlyWhereDocumented) {
  for (const FormatCase& c : all_format_cases()) {
    EXPECT_EQ(format::has_simple_grid(format::make_format(c.spec)), simple_grid_applies(c.spec)) << c.name;
  }
}

// Grid values and midpoints with the floats beside them, both signs, then random floats.
std::vector<float> inputs_for(const ReferenceGrid& grid) {
  std::vector<float> inputs;
  const auto add = [&](long double v) {
    const auto f = static_cast<float>(v);
    if (!std::isfinite(f) || static_cast<long double>(f) != v) return;
    for (float x : {f, std::nextafter(f, -INFINITY), std::nextafter(f, INFINITY)}) inputs.push_back(x);
  };
  const auto& points = grid.rounding_points();
  for (std::size_t i = 0; i < points.size(); ++i) {
    add(points[i].value);
    if (i + 1 < points.size()) add((points[i].value + points[i + 1].value) / 2);
  }
  std::mt19937_64 rng(99);
  const int lo = std::max(std::ilogb(static_cast<double>(grid.min_positive())) - 3, -149);
  const int hi = std::min(std::ilogb(static_cast<double>(grid.beyond_max())) + 2, 127);
  std::uniform_int_distribution<int> exponent(lo, hi);
  for (std::size_t i = 0; i < kRandomInputsPerFormat / 8; ++i) {
    const float magnitude =
        std::ldexp(1.0f + static_cast<float>(rng() & 0x7F'FFFFu) / 8388608.0f, exponent(rng));
    inputs.push_back((rng() & 1u) ? -magnitude : magnitude);
    const auto bits = static_cast<std::uint32_t>(rng());
    if ((bits & 0x7F80'0000u) != 0x7F80'0000u) inputs.push_back(float_of(bits));
  }
  for (float x : {INFINITY, -INFINITY, NAN, 0.0f, -0.0f}) inputs.push_back(x);
  return inputs;
}

class FastPathTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
};

TEST_P(FastPathTest, NearestEvenSimpleMatchesTheReference) {
  MismatchLog log(std::string(GetParam().name) + " round_nearest_even_simple");
  for (float x : inputs_for(grid)) {
    const format_ref::RefResult want = format_ref::reference_round(grid, Rounding::nearest_even, x);
    const format::Rounded got = format::round_nearest_even_simple(format, bits_of(x));
    const std::uint32_t want_bits = format_ref::expected_float_bits(want);
    if (got.bits != want_bits || (got.overflow != 0) != want.overflow ||
        (got.underflow != 0) != want.underflow) {
      log.add("input " + describe(x) + ": expected " + describe(float_of(want_bits)) + " overflow " +
              std::to_string(want.overflow) + " underflow " + std::to_string(want.underflow) + ", got " +
              describe(float_of(got.bits)) + " overflow " + std::to_string(got.overflow) + " underflow " +
              std::to_string(got.underflow));
    }
  }
}

// Stochastic: the result is always the reference's round-down or round-up of x (for random words
// 0, 2^32-1 and random ones), and an exact value never moves.
TEST_P(FastPathTest, StochasticSimpleGivesOneOfTheTwoNeighbours) {
  MismatchLog log(std::string(GetParam().name) + " round_stochastic_simple");
  std::mt19937 rng(5);
  for (float x : inputs_for(grid)) {
    const std::uint32_t down =
        format_ref::expected_float_bits(format_ref::reference_round(grid, Rounding::toward_negative, x));
    const std::uint32_t up =
        format_ref::expected_float_bits(format_ref::reference_round(grid, Rounding::toward_positive, x));
    for (std::uint32_t word : {0u, 0xFFFF'FFFFu, static_cast<std::uint32_t>(rng())}) {
      const std::uint32_t got = format::round_stochastic_simple(format, bits_of(x), word).bits;
      if (got != down && got != up) {
        log.add("input " + describe(x) + " word " + hex(word) + ": got " + describe(float_of(got)) +
                ", expected " + describe(float_of(down)) + " or " + describe(float_of(up)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SimpleGridFormats, FastPathTest,
                         ::testing::ValuesIn(format_cases_where(simple_grid_applies)), FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
