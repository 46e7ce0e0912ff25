// code_usage on hand-filled histograms, with the NaN codes of each format written out by hand.
#include "diag/code_usage.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "format/spec.hpp"

namespace altgrad::diag_test {
namespace {

using diag::CodeUsage;
using diag::code_usage;
using format::FormatSpec;
using format::SpecialPolicy;

const format::Format kE4m3 = format::make_format(FormatSpec{4, 3, 7, SpecialPolicy::fn});
const format::Format kE5m2 = format::make_format(FormatSpec{5, 2, 15, SpecialPolicy::ieee});

std::vector<std::uint64_t> histogram_with(std::size_t size, const std::vector<std::uint32_t>& hit_codes) {
  std::vector<std::uint64_t> h(size, 0);
  for (const std::uint32_t code : hit_codes) h[code] += 3;
  return h;
}

TEST(CodeUsage, E4m3HasTwoNaNCodes) {
  // ±0 are separate codes; 0x7F and 0xFF (NaN) do not count, hit or not.
  const auto h = histogram_with(256, {0x00, 0x80, 0x01, 0x7E, 0xFE, 0x7F, 0xFF});
  const CodeUsage u = code_usage(h, kE4m3);
  EXPECT_EQ(u.total, 254u);
  EXPECT_EQ(u.used, 5u);
  EXPECT_DOUBLE_EQ(u.fraction, 5.0 / 254.0);
}

TEST(CodeUsage, E5m2CountsInfinitiesButNotNaNs) {
  // IEEE: exponent field 11111 with mantissa 00 is ±Inf (0x7C, 0xFC), with mantissa ≠ 0 NaN.
  const auto h = histogram_with(256, {0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x3C});
  const CodeUsage u = code_usage(h, kE5m2);
  EXPECT_EQ(u.total, 250u);
  EXPECT_EQ(u.used, 3u);
  EXPECT_DOUBLE_EQ(u.fraction, 3.0 / 250.0);
}

TEST(CodeUsage, EveryNonNaNCodeHitGivesOne) {
  std::vector<std::uint64_t> h(256, 1);
  for (const format::Format& f : {kE4m3, kE5m2}) {
    const CodeUsage u = code_usage(h, f);
    EXPECT_EQ(u.used, u.total);
    EXPECT_EQ(u.fraction, 1.0);
  }
  const CodeUsage none = code_usage(std::vector<std::uint64_t>(256, 0), kE4m3);
  EXPECT_EQ(none.used, 0u);
  EXPECT_EQ(none.fraction, 0.0);
}

TEST(CodeUsage, OtherSpecialValuePolicies) {
  const std::vector<std::uint64_t> all(256, 1);
  // fnuz: no −0; 0x80 is the only NaN.
  EXPECT_EQ(code_usage(all, format::make_format(FormatSpec{4, 3, 8, SpecialPolicy::fnuz})).total, 255u);
  // e8m0fnu: unsigned, no zero, 0xFF is NaN.
  EXPECT_EQ(code_usage(all, format::make_format(FormatSpec{8, 0, 127, SpecialPolicy::fnu})).total, 255u);
  // e2m3 (OCP MX FP6): 64 codes, all numbers.
  const auto fp6 = format::make_format(FormatSpec{2, 3, 1, SpecialPolicy::finite});
  EXPECT_EQ(code_usage(std::vector<std::uint64_t>(64, 0), fp6).total, 64u);
  // e4m3 without subnormals: the 7 subnormal codes of each sign cannot occur.
  FormatSpec flushed{4, 3, 7, SpecialPolicy::fn};
  flushed.subnormals = false;
  const CodeUsage u = code_usage(all, format::make_format(flushed));
  EXPECT_EQ(u.total, 240u);
  EXPECT_EQ(u.used, 240u);
}

TEST(CodeUsage, RejectsAHistogramOfTheWrongSize) {
  EXPECT_THROW(code_usage(std::vector<std::uint64_t>(255, 0), kE4m3), std::invalid_argument);
  EXPECT_THROW(code_usage(std::vector<std::uint64_t>(512, 0), kE5m2), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::diag_test
