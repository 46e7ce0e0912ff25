// Grid facts (max finite, min normal, min subnormal, value and NaN counts, Inf) against the reference
// enumeration, against counts worked out by hand, and against the published table of
// docs/formats.md ("Named formats").
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string_view>

#include "format/grid.hpp"
#include "format/parse.hpp"
#include "format/spec.hpp"
#include "reference_grid.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format_ref::ReferenceGrid;

class GridFactsTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
};

TEST_P(GridFactsTest, FormatConstantsMatchTheReference) {
  EXPECT_EQ(static_cast<long double>(format.max_finite()), grid.max_finite());
  EXPECT_EQ(static_cast<long double>(format.min_normal()), grid.min_normal());
  EXPECT_EQ(static_cast<long double>(format.min_positive()), grid.min_positive());
  EXPECT_EQ(format.has_inf, grid.has_inf());
  EXPECT_EQ(format.has_nan, grid.has_nan());
  EXPECT_EQ(format.has_zero, grid.has_zero());
  EXPECT_EQ(format.has_negative_zero, grid.has_negative_zero());
  EXPECT_EQ(format.has_sign, grid.is_signed());
  EXPECT_EQ(format.width, grid.width());
  EXPECT_EQ(format.code_count(), grid.codes().size());
}

TEST_P(GridFactsTest, GridFactsMatchTheReferenceEnumeration) {
  const format::GridFacts facts = format::grid_facts(format);
  EXPECT_EQ(static_cast<long double>(facts.max_finite), grid.max_finite());
  EXPECT_EQ(static_cast<long double>(facts.min_normal), grid.min_normal());
  EXPECT_EQ(static_cast<long double>(facts.min_subnormal), grid.min_subnormal());
  EXPECT_EQ(facts.finite_values, grid.finite_values().size());
  EXPECT_EQ(facts.nan_codes, static_cast<std::uint32_t>(grid.nan_code_count()));
  EXPECT_EQ(facts.has_inf, grid.has_inf());
}

// "Every value of every valid format is exactly a float32 (subnormal float32 included)".
TEST_P(GridFactsTest, EveryValueIsExactlyAFloat32) { EXPECT_TRUE(grid.fits_float32()); }

INSTANTIATE_TEST_SUITE_P(AllFormats, GridFactsTest, ::testing::ValuesIn(all_format_cases()),
                         FormatCaseName());

// A row of the "Named formats" table of docs/formats.md.
struct PublishedRow {
  std::string_view name;
  int bias;
  long double max_finite;
  long double smallest_positive;
};

long double p2(int k) { return std::ldexp(1.0L, k); }

const PublishedRow kPublished[] = {
    {"e4m3", 7, 448, p2(-9)},
    {"e4m3fnuz", 8, 240, p2(-10)},
    {"e5m2", 15, 57344, p2(-16)},
    {"e5m2fnuz", 16, 57344, p2(-17)},
    {"e3m4", 3, 15.5L, p2(-6)},
    {"e2m5", 1, 7.75L, p2(-5)},
    {"e1m6", 0, 3.9375L, p2(-5)},
    {"e7m0", 63, p2(63), p2(-62)},
    {"e8m0fnu", 127, p2(127), p2(-127)},
    {"e2m3", 1, 7.5L, p2(-3)},
    {"e3m2", 3, 28, p2(-4)},
    {"e2m1", 1, 6, 0.5L},
    // The table prints bf16's max as 3.39e38; exactly it is (2 - 2^-7) * 2^127.
    {"bf16", 127, (2 - p2(-7)) * p2(127), p2(-133)},
    {"fp16", 15, 65504, p2(-24)},
};

// The reference (from the literal specs) and the implementation (from the name, as the CLI parses
// it) must both reproduce the published numbers.
TEST(PublishedTable, NamedFormatsHaveTheDocumentedBiasMaxAndSmallestPositive) {
  for (const PublishedRow& row : kPublished) {
    SCOPED_TRACE(row.name);
    const ReferenceGrid grid(spec_named(row.name));
    EXPECT_EQ(grid.max_finite(), row.max_finite);
    EXPECT_EQ(grid.min_positive(), row.smallest_positive);
    const format::FormatSpec parsed = format::parse_format(row.name);
    const format::Format f = format::make_format(parsed);
    EXPECT_EQ(parsed.bias, row.bias);
    EXPECT_EQ(static_cast<long double>(f.max_finite()), row.max_finite);
    EXPECT_EQ(static_cast<long double>(f.min_positive()), row.smallest_positive);
  }
  EXPECT_NEAR(static_cast<double>(ReferenceGrid(spec_named("bf16")).max_finite()), 3.39e38, 0.005e38);
}

// Counted by hand: codes minus NaN and Inf codes minus the duplicate zero (and minus disabled
// subnormals). E.g. e5m2: 256 codes - 2 Inf - 6 NaN = 248 numbers, ±0 once -> 247.
struct HandCount {
  std::string_view name;
  std::uint32_t finite_values;
  std::uint32_t nan_codes;
  bool has_inf;
};

const HandCount kHandCounts[] = {
    {"e4m3", 253, 2, false},
    {"e4m3fnuz", 255, 1, false},
    {"e5m2", 247, 6, true},
    {"e5m2fnuz", 255, 1, false},
    {"e3m4", 223, 30, true},
    {"e2m5", 253, 2, false},
    {"e1m6", 253, 2, false},
    {"e7m0", 253, 2, false},
    {"e8m0fnu", 255, 1, false},
    {"e2m3", 63, 0, false},
    {"e3m2", 63, 0, false},
    {"e2m1", 15, 0, false},
    {"bf16", 65279, 254, true},
    {"fp16", 63487, 2046, true},
    {"e5m2,subnormals=off", 241, 6, true},
    {"e4m3fnuz,subnormals=off", 241, 1, false},
};

TEST(HandCountedGrids, ValueAndNanCountsMatchTheReferenceAndGridFacts) {
  for (const HandCount& row : kHandCounts) {
    SCOPED_TRACE(row.name);
    const format::FormatSpec& spec = spec_named(row.name);
    const ReferenceGrid grid(spec);
    EXPECT_EQ(grid.finite_values().size(), row.finite_values);
    EXPECT_EQ(static_cast<std::uint32_t>(grid.nan_code_count()), row.nan_codes);
    const format::GridFacts facts = format::grid_facts(format::make_format(spec));
    EXPECT_EQ(facts.finite_values, row.finite_values);
    EXPECT_EQ(facts.nan_codes, row.nan_codes);
    EXPECT_EQ(facts.has_inf, row.has_inf);
  }
}

// Grids without subnormals report min_subnormal 0 ("none for M = 0, fnu, or subnormals off").
TEST(HandCountedGrids, MinSubnormalIsZeroWhereThereAreNone) {
  for (std::string_view name : {"e7m0", "e8m0fnu", "e6m0fnu", "e5m2,subnormals=off", "e3m2,subnormals=off"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(format::grid_facts(format::make_format(spec_named(name))).min_subnormal, 0.0);
  }
  EXPECT_EQ(format::grid_facts(format::make_format(spec_named("e4m3"))).min_subnormal, std::ldexp(1.0, -9));
}

}  // namespace
}  // namespace altgrad::format_test
