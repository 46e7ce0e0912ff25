// decode() of every code against the textbook value, and encode(decode(c)) == c for every code the
// format can produce, for every named format and a sample of grammar formats.
#include <gtest/gtest.h>

#include <cmath>

#include "format/codec.hpp"
#include "format/grid.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format_ref::CodeKind;
using format_ref::RefCode;
using format_ref::ReferenceGrid;

class DecodeTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
};

bool same_value(float got, const RefCode& want) {
  if (std::isnan(want.value)) return std::isnan(got);
  return static_cast<long double>(got) == want.value && std::signbit(got) == std::signbit(want.value);
}

std::string code_context(std::uint32_t code) { return "code " + hex(code); }

TEST_P(DecodeTest, EveryCodeDecodesToItsTextbookValue) {
  MismatchLog log(std::string(GetParam().name) + " decode");
  for (const RefCode& want : grid.codes()) {
    const float got = format::decode(format, want.code);
    if (!same_value(got, want)) {
      log.add(code_context(want.code) + ": expected " + describe(want.value) + ", got " + describe(got));
    }
  }
}

// Exact values are fixed points of every rounding mode, the stochastic ones for any random word.
TEST_P(DecodeTest, EncodingADecodedNumberGivesTheSameCode) {
  MismatchLog log(std::string(GetParam().name) + " encode(decode(c))");
  const std::uint32_t random_words[] = {0u, 0x8000'0000u, 0xFFFF'FFFFu};
  for (const RefCode& c : grid.codes()) {
    if (c.kind != CodeKind::number && c.kind != CodeKind::infinity) continue;
    const float x = format::decode(format, c.code);
    for (format::Rounding mode : format::kAllRoundings) {
      for (std::uint32_t random : random_words) {
        const std::uint32_t got = format::encode(format, mode, x, random);
        if (got != c.code) {
          log.add(code_context(c.code) + " mode " + std::string(rounding_label(mode)) + " random " +
                  hex(random) + ": encode(" + describe(x) + ") = " + hex(got));
        }
      }
    }
  }
}

class NanCodeTest : public DecodeTest {};

TEST_P(NanCodeTest, EveryNanCodeEncodesBackToTheCanonicalNan) {
  MismatchLog log(std::string(GetParam().name) + " NaN codes");
  for (const RefCode& c : grid.codes()) {
    if (c.kind != CodeKind::nan) continue;
    const std::uint32_t got =
        format::encode(format, format::Rounding::nearest_even, format::decode(format, c.code));
    if (got != *grid.canonical_nan_code()) log.add(code_context(c.code) + " re-encodes as " + hex(got));
  }
}

// "Subnormal codes decode as ±0 when met" (docs/formats.md, Subnormals off); re-encoding gives the
// format's zero of that sign.
class DisabledSubnormalTest : public DecodeTest {};

TEST_P(DisabledSubnormalTest, CodesReEncodeAsZeroOfTheirSign) {
  MismatchLog log(std::string(GetParam().name) + " disabled subnormals");
  for (const RefCode& c : grid.codes()) {
    if (c.kind != CodeKind::disabled_subnormal) continue;
    const std::uint32_t want = grid.code_of_value(0.0L, c.negative);
    const std::uint32_t got =
        format::encode(format, format::Rounding::nearest_even, format::decode(format, c.code));
    if (got != want) log.add(code_context(c.code) + " re-encodes as " + hex(got) + ", expected " + hex(want));
  }
}

TEST_P(DecodeTest, CodeClassifiersAgreeWithTheReference) {
  MismatchLog log(std::string(GetParam().name) + " classifiers");
  for (const RefCode& c : grid.codes()) {
    const bool nan = format::is_nan_code(format, c.code), inf = format::is_inf_code(format, c.code);
    const bool disabled = format::is_disabled_subnormal(format, c.code);
    if (nan != (c.kind == CodeKind::nan) || inf != (c.kind == CodeKind::infinity) ||
        disabled != (c.kind == CodeKind::disabled_subnormal)) {
      log.add(code_context(c.code) + ": is_nan " + std::to_string(nan) + " is_inf " + std::to_string(inf) +
              " is_disabled_subnormal " + std::to_string(disabled));
    }
    // Numbers and Inf are codes encode() produces; disabled subnormals are not.
    if (c.kind != CodeKind::nan &&
        format::is_valid_code(format, c.code) != (c.kind != CodeKind::disabled_subnormal)) {
      log.add(code_context(c.code) + ": is_valid_code disagrees");
    }
  }
  EXPECT_FALSE(format::is_valid_code(format, format.code_count()));
}

INSTANTIATE_TEST_SUITE_P(AllFormats, DecodeTest, ::testing::ValuesIn(all_format_cases()), FormatCaseName());
INSTANTIATE_TEST_SUITE_P(FormatsWithNan, NanCodeTest,
                         ::testing::ValuesIn(format_cases_where([](const format::FormatSpec& s) {
                           return s.policy != format::SpecialPolicy::finite;
                         })),
                         FormatCaseName());
INSTANTIATE_TEST_SUITE_P(SubnormalsOff, DisabledSubnormalTest,
                         ::testing::ValuesIn(format_cases_where([](const format::FormatSpec& s) {
                           return !s.subnormals && s.mantissa_bits > 0 &&
                                  s.policy != format::SpecialPolicy::fnu;
                         })),
                         FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
