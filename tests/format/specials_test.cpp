// Special inputs and edge cases written out by hand from docs/formats.md: the special-input table
// (NaN, ±Inf, -0), overflow under saturate and overflow=inf (IEEE 754 §7.4), subnormals off,
// underflow, ties on the exponent-only grids and negative inputs to fnu. Every expected code here is
// worked out on paper, so these cases also check the reference the other tests rely on.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string_view>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format::Rounding;

float p2(int k) { return std::ldexp(1.0f, k); }
float above(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
float below(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

// One hand-worked rounding: the code encode() must give and the flags round_bits() must raise.
struct HandCase {
  std::string_view format;
  Rounding mode;
  float input;
  std::uint32_t code;
  bool overflow;
  bool underflow;
};

void check_hand_cases(std::initializer_list<HandCase> cases) {
  for (const HandCase& c : cases) {
    const format::Format f = format::make_format(spec_named(c.format));
    format::RoundFlags flags;
    format::round_bits(f, c.mode, bits_of(c.input), 0u, flags);
    EXPECT_EQ(format::encode(f, c.mode, c.input), c.code)
        << c.format << " " << rounding_label(c.mode) << " input " << describe(c.input);
    EXPECT_EQ(flags.overflow, c.overflow)
        << c.format << " " << rounding_label(c.mode) << " " << describe(c.input);
    EXPECT_EQ(flags.underflow, c.underflow)
        << c.format << " " << rounding_label(c.mode) << " " << describe(c.input);
  }
}

// The special-input table of docs/formats.md, per named format, in codes.
struct SpecialRow {
  std::string_view format;
  std::uint32_t nan, pos_inf, neg_inf, neg_zero;
};

const SpecialRow kSpecialRows[] = {
    {"e4m3", 0x7F, 0x7F, 0x7F, 0x80},      // fn: NaN 0x7F
    {"e4m3fnuz", 0x80, 0x80, 0x80, 0x00},  // fnuz: NaN 0x80, -0 -> +0
    {"e5m2", 0x7E, 0x7C, 0xFC, 0x80},      // ieee: NaN 0 11111 10
    {"e5m2fnuz", 0x80, 0x80, 0x80, 0x00},
    {"e3m4", 0x78, 0x70, 0xF0, 0x80},  // ieee: NaN 0 111 1000, Inf 0 111 0000
    {"e2m5", 0x7F, 0x7F, 0x7F, 0x80},
    {"e1m6", 0x7F, 0x7F, 0x7F, 0x80},
    {"e7m0", 0x7F, 0x7F, 0x7F, 0x80},
    {"e8m0fnu", 0xFF, 0xFF, 0xFF, 0x00},  // fnu: NaN 0xFF, -0 -> 2^-127 (code 0)
    {"e2m3", 0x1F, 0x1F, 0x3F, 0x20},     // finite: NaN -> +max, ±Inf -> ±max
    {"e3m2", 0x1F, 0x1F, 0x3F, 0x20},
    {"e2m1", 0x7, 0x7, 0xF, 0x8},
    {"bf16", 0x7FC0, 0x7F80, 0xFF80, 0x8000},
    {"fp16", 0x7E00, 0x7C00, 0xFC00, 0x8000},
};

// Quiet, negative, signalling and all-ones NaNs all follow the NaN row.
constexpr std::uint32_t kNanInputs[] = {0x7FC0'0000u, 0xFFC0'0000u, 0x7F80'0001u, 0xFFFF'FFFFu};

void expect_special(const format::Format& f, std::string_view name, std::uint32_t input_bits,
                    std::uint32_t want) {
  for (Rounding mode : format::kAllRoundings) {
    for (std::uint32_t random : {0u, 0x8000'0000u, 0xFFFF'FFFFu}) {
      format::RoundFlags flags;
      const std::uint32_t bits = format::round_bits(f, mode, input_bits, random, flags);
      EXPECT_EQ(format::encode(f, mode, float_of(input_bits), random), want)
          << name << " " << rounding_label(mode) << " input " << hex(input_bits);
      // Non-finite inputs are not overflow; NaN results are the positive quiet NaN.
      EXPECT_FALSE(flags.overflow || flags.underflow)
          << name << " " << rounding_label(mode) << " " << hex(input_bits);
      if (std::isnan(float_of(bits))) {
        EXPECT_EQ(bits, 0x7FC0'0000u) << name << " " << hex(input_bits);
      }
    }
  }
}

TEST(SpecialInputs, NanInfAndNegativeZeroFollowTheSpecTable) {
  for (const SpecialRow& row : kSpecialRows) {
    const format::Format f = format::make_format(spec_named(row.format));
    for (std::uint32_t nan : kNanInputs) expect_special(f, row.format, nan, row.nan);
    expect_special(f, row.format, 0x7F80'0000u, row.pos_inf);
    expect_special(f, row.format, 0xFF80'0000u, row.neg_inf);
    expect_special(f, row.format, 0x8000'0000u, row.neg_zero);
    expect_special(f, row.format, 0x0000'0000u, 0u);  // +0 is code 0 everywhere (2^-127 for fnu)
  }
}

TEST(SpecialInputs, DecodedSpecialsAreNanAndSignedInfinities) {
  const format::Format e5m2 = format::make_format(spec_named("e5m2"));
  EXPECT_TRUE(std::isnan(format::decode(e5m2, 0x7E)));
  EXPECT_EQ(format::decode(e5m2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(format::decode(e5m2, 0xFC), -std::numeric_limits<float>::infinity());
  const format::Format e8m0 = format::make_format(spec_named("e8m0fnu"));
  EXPECT_TRUE(std::isnan(format::decode(e8m0, 0xFF)));
  EXPECT_EQ(format::decode(e8m0, 0x00), p2(-127));  // no zero: code 0 is 2^-127
  EXPECT_EQ(format::decode(e8m0, 0xFE), p2(127));
}

TEST(Overflow, SaturatingFormatsClampToMaxFiniteAndRaiseTheFlag) {
  check_hand_cases({
      // e4m3: 448 = 0x7E, the extended grid's next value is 480 (0x7F); 464 is their midpoint and
      // goes to the even code 0x7E (PyTorch's cast gives NaN here, NVIDIA 448).
      {"e4m3", Rounding::nearest_even, 464.0f, 0x7E, false, false},
      {"e4m3", Rounding::nearest_even, above(464.0f), 0x7E, true, false},
      {"e4m3", Rounding::nearest_away, 464.0f, 0x7E, true, false},
      {"e4m3", Rounding::odd, 449.0f, 0x7E, true, false},  // odd neighbour is 480 (0x7F): overflow
      {"e4m3", Rounding::toward_zero, FLT_MAX, 0x7E, true, false},
      {"e4m3", Rounding::nearest_even, -1e9f, 0xFE, true, false},
      // e5m2: 57344 = 0x7B (odd), next 65536 (0x7C, even): the midpoint 61440 overflows.
      {"e5m2", Rounding::nearest_even, 61440.0f, 0x7B, true, false},
      {"e5m2", Rounding::nearest_even, below(61440.0f), 0x7B, false, false},
      {"e5m2", Rounding::odd, 60000.0f, 0x7B, false, false},
      // e2m1: 6 = 0x7 (odd), next 8: 7 ties to 8 and overflows; 5 ties to 4 (0x6, even).
      {"e2m1", Rounding::nearest_even, 7.0f, 0x7, true, false},
      {"e2m1", Rounding::nearest_even, below(7.0f), 0x7, false, false},
      {"e2m1", Rounding::nearest_even, 5.0f, 0x6, false, false},
      {"e2m1", Rounding::toward_positive, above(6.0f), 0x7, true, false},
      // e8m0fnu: 2^127 = 0xFE (even), next 2^128 (0xFF): the midpoint 1.5*2^127 stays.
      {"e8m0fnu", Rounding::nearest_even, 1.5f * p2(127), 0xFE, false, false},
      {"e8m0fnu", Rounding::nearest_even, above(1.5f * p2(127)), 0xFE, true, false},
      {"e8m0fnu", Rounding::toward_zero, FLT_MAX, 0xFE, false, false},
  });
}

TEST(Overflow, OverflowInfFollowsIeee754Section7_4) {
  check_hand_cases({
      // ieee: Inf for nearest and for the directed mode away from zero; max finite otherwise.
      {"e5m2,overflow=inf", Rounding::nearest_even, 1e9f, 0x7C, true, false},
      {"e5m2,overflow=inf", Rounding::nearest_away, 1e9f, 0x7C, true, false},
      {"e5m2,overflow=inf", Rounding::toward_zero, 1e9f, 0x7B, true, false},
      {"e5m2,overflow=inf", Rounding::toward_positive, 1e9f, 0x7C, true, false},
      {"e5m2,overflow=inf", Rounding::toward_negative, 1e9f, 0x7B, true, false},
      {"e5m2,overflow=inf", Rounding::odd, 1e9f, 0x7B, true, false},
      {"e5m2,overflow=inf", Rounding::nearest_even, -1e9f, 0xFC, true, false},
      {"e5m2,overflow=inf", Rounding::toward_zero, -1e9f, 0xFB, true, false},
      {"e5m2,overflow=inf", Rounding::toward_positive, -1e9f, 0xFB, true, false},
      {"e5m2,overflow=inf", Rounding::toward_negative, -1e9f, 0xFC, true, false},
      {"e5m2,overflow=inf", Rounding::odd, -1e9f, 0xFB, true, false},
      {"e5m2,overflow=inf", Rounding::nearest_even, 61440.0f, 0x7C, true, false},  // tie to even 0x7C
      {"e5m2,overflow=inf", Rounding::toward_zero, 61440.0f, 0x7B, false, false},
      {"e5m2,overflow=inf", Rounding::odd, 61440.0f, 0x7B, false, false},  // 0x7B is the odd neighbour
      // fn has no Inf: NaN (0x7F, positive) instead, for either sign.
      {"e4m3fn,overflow=inf", Rounding::nearest_even, 464.0f, 0x7E, false, false},
      {"e4m3fn,overflow=inf", Rounding::nearest_even, above(464.0f), 0x7F, true, false},
      {"e4m3fn,overflow=inf", Rounding::nearest_even, -1e9f, 0x7F, true, false},
      {"e4m3fn,overflow=inf", Rounding::toward_positive, -1e9f, 0xFE, true, false},
      {"e4m3fn,overflow=inf", Rounding::toward_negative, -1e9f, 0x7F, true, false},
      {"e4m3fn,overflow=inf", Rounding::toward_negative, 1e9f, 0x7E, true, false},
      {"e4m3fn,overflow=inf", Rounding::odd, 1e9f, 0x7E, true, false},
      // fnuz: NaN is 0x80; fnu: 0xFF; exponent-only fn: 0x7F.
      {"e3m4,policy=fnuz,subnormals=off,overflow=inf", Rounding::nearest_even, 1e9f, 0x80, true, false},
      {"e3m4,policy=fnuz,subnormals=off,overflow=inf", Rounding::toward_zero, 1e9f, 0x7F, true, false},
      {"e8m0fnu,overflow=inf", Rounding::nearest_even, above(1.5f * p2(127)), 0xFF, true, false},
      {"e8m0fnu,overflow=inf", Rounding::toward_positive, above(p2(127)), 0xFF, true, false},
      {"e8m0fnu,overflow=inf", Rounding::toward_zero, FLT_MAX, 0xFE, false, false},
      {"e7m0,overflow=inf", Rounding::nearest_even, 1.5f * p2(63), 0x7E, false, false},
      {"e7m0,overflow=inf", Rounding::nearest_even, p2(64), 0x7F, true, false},
      // finite has no NaN: it always saturates.
      {"e2m1,overflow=inf", Rounding::nearest_even, 1e9f, 0x7, true, false},
      {"e2m1,overflow=inf", Rounding::toward_negative, -1e9f, 0xF, true, false},
  });
}

TEST(SubnormalsOff, ValuesBelowMinNormalRoundWithinZeroAndMinNormal) {
  // e5m2 without subnormals: min normal 2^-14 = 0x04, so the set near zero is {0, ±2^-14}.
  check_hand_cases({
      {"e5m2,subnormals=off", Rounding::nearest_even, p2(-15), 0x00, false, true},  // the tie goes to zero
      {"e5m2,subnormals=off", Rounding::nearest_even, above(p2(-15)), 0x04, false, false},
      {"e5m2,subnormals=off", Rounding::nearest_even, below(p2(-15)), 0x00, false, true},
      {"e5m2,subnormals=off", Rounding::nearest_even, p2(-16), 0x00, false, true},  // a subnormal of e5m2
      {"e5m2,subnormals=off", Rounding::nearest_even, -p2(-15), 0x80, false, true},
      {"e5m2,subnormals=off", Rounding::nearest_away, p2(-15), 0x04, false, false},
      {"e5m2,subnormals=off", Rounding::toward_positive, p2(-149), 0x04, false, false},
      {"e5m2,subnormals=off", Rounding::toward_zero, below(p2(-14)), 0x00, false, true},
      {"e5m2,subnormals=off", Rounding::toward_negative, -p2(-149), 0x84, false, false},
      {"e5m2,subnormals=off", Rounding::nearest_even, 1.25f * p2(-14), 0x05, false, false},
      // Round-to-odd between 0 (0x00) and min normal (0x04), two even codes: zero is the even end of
      // the gap (as for the tie above), so an inexact result takes min normal and never zero.
      {"e5m2,subnormals=off", Rounding::odd, p2(-20), 0x04, false, false},
      {"e5m2,subnormals=off", Rounding::odd, -p2(-20), 0x84, false, false},
      // e3m2 (finite, bias 3) without subnormals: min normal 0.25 = 0x04.
      {"e3m2,subnormals=off", Rounding::nearest_even, 0.125f, 0x00, false, true},
      {"e3m2,subnormals=off", Rounding::nearest_even, 0.1875f, 0x04, false, false},
      // fnuz has no -0: a negative value that rounds to zero is +0.
      {"e4m3fnuz,subnormals=off", Rounding::nearest_even, -p2(-9), 0x00, false, true},
  });
}

TEST(SubnormalsOff, SubnormalCodesDecodeAsZero) {
  const format::Format f = format::make_format(spec_named("e5m2,subnormals=off"));
  for (std::uint32_t code : {0x01u, 0x02u, 0x03u}) {
    EXPECT_EQ(format::decode(f, code), 0.0f) << hex(code);
    EXPECT_FALSE(std::signbit(format::decode(f, code))) << hex(code);
    EXPECT_EQ(format::decode(f, code | 0x80u), 0.0f) << hex(code | 0x80u);
    EXPECT_TRUE(std::signbit(format::decode(f, code | 0x80u))) << hex(code | 0x80u);
  }
  EXPECT_EQ(format::decode(f, 0x04), p2(-14));
}

TEST(Underflow, NonzeroInputsRoundingToZeroRaiseTheFlag) {
  check_hand_cases({
      // e4m3: min subnormal 2^-9 = 0x01 (odd); 2^-10 ties to zero.
      {"e4m3", Rounding::nearest_even, p2(-10), 0x00, false, true},
      {"e4m3", Rounding::nearest_even, above(p2(-10)), 0x01, false, false},
      {"e4m3", Rounding::nearest_even, -p2(-10), 0x80, false, true},
      {"e4m3", Rounding::nearest_away, p2(-10), 0x01, false, false},
      {"e4m3", Rounding::toward_negative, -p2(-20), 0x81, false, false},
      {"e4m3", Rounding::toward_zero, below(p2(-9)), 0x00, false, true},
      {"e4m3", Rounding::odd, p2(-20), 0x01, false, false},
      {"e4m3fnuz", Rounding::nearest_even, -p2(-12), 0x00, false, true},  // no -0
      {"e4m3", Rounding::nearest_even, 0.0f, 0x00, false, false},         // zero is not underflow
  });
}

// fnu has no zero: results below 2^-127 clamp to it (code 0), counting as underflow when they
// would have been zero. The tie 2^-128 goes to zero (the even end, as under subnormals off).
TEST(Underflow, UnsignedScaleClampsToItsSmallestValue) {
  check_hand_cases({
      {"e8m0fnu", Rounding::nearest_even, p2(-130), 0x00, false, true},
      {"e8m0fnu", Rounding::nearest_even, p2(-128), 0x00, false, true},
      {"e8m0fnu", Rounding::nearest_even, above(p2(-128)), 0x00, false, false},
      {"e8m0fnu", Rounding::toward_zero, p2(-149), 0x00, false, true},
      {"e8m0fnu", Rounding::toward_positive, p2(-149), 0x00, false, false},
      {"e8m0fnu", Rounding::nearest_even, 0.0f, 0x00, false, false},
  });
}

// "Even code" on the exponent-only grids is an even exponent field, and rounding between two
// powers of two is linear: 1.5*2^k is the midpoint of 2^k and 2^(k+1).
TEST(ExponentOnlyGrids, TiesGoToTheEvenExponentField) {
  check_hand_cases({
      {"e7m0", Rounding::nearest_even, 1.5f, 0x40, false, false},   // 1 (field 63) vs 2 (field 64)
      {"e7m0", Rounding::nearest_even, 3.0f, 0x40, false, false},   // 2 (64) vs 4 (65)
      {"e7m0", Rounding::nearest_even, 6.0f, 0x42, false, false},   // 4 (65) vs 8 (66)
      {"e7m0", Rounding::nearest_even, 0.75f, 0x3E, false, false},  // 0.5 (62) vs 1 (63)
      {"e7m0", Rounding::nearest_even, -1.5f, 0xC0, false, false},
      {"e7m0", Rounding::nearest_even, below(1.5f), 0x3F, false, false},
      {"e7m0", Rounding::nearest_away, 3.0f, 0x41, false, false},
      {"e7m0", Rounding::odd, 2.5f, 0x41, false, false},
      {"e8m0fnu", Rounding::nearest_even, 1.5f, 0x80, false, false},   // 1 (127) vs 2 (128)
      {"e8m0fnu", Rounding::nearest_even, 3.0f, 0x80, false, false},   // 2 (128) vs 4 (129)
      {"e8m0fnu", Rounding::nearest_even, 0.75f, 0x7E, false, false},  // 0.5 (126) vs 1 (127)
      {"e8m0fnu", Rounding::nearest_even, 1.0f, 0x7F, false, false},
      {"e8m0fnu", Rounding::toward_positive, above(1.0f), 0x80, false, false},
  });
}

TEST(UnsignedFormats, NegativeFiniteInputsAreNan) {
  const format::Format f = format::make_format(spec_named("e8m0fnu"));
  for (float x : {-1.0f, -p2(-149), -p2(-127), -FLT_MAX, -1.5f * p2(127)}) {
    for (Rounding mode : format::kAllRoundings) {
      format::RoundFlags flags;
      const std::uint32_t bits = format::round_bits(f, mode, bits_of(x), 0x1234'5678u, flags);
      EXPECT_EQ(format::encode(f, mode, x, 0x1234'5678u), 0xFFu)
          << rounding_label(mode) << " " << describe(x);
      EXPECT_EQ(bits, 0x7FC0'0000u) << rounding_label(mode) << " " << describe(x);
      EXPECT_FALSE(flags.overflow || flags.underflow) << rounding_label(mode) << " " << describe(x);
    }
  }
}

}  // namespace
}  // namespace altgrad::format_test
