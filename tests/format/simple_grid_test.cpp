// round_nearest_even_simple() and round_stochastic_simple() are faster formulations of
// round_to_grid<nearest_even>() and round_to_grid<stochastic>() that the quantizer uses where
// has_simple_grid() holds. Each pair must agree on every input and random word, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"

namespace {

using namespace altgrad::format;

// Formats with a simple grid: the named ones that qualify, plus generic shapes and biases.
std::vector<std::string> simple_grid_formats() {
  std::vector<std::string> names = {"e3m3", "e5m3fn", "e6m1fnuz", "e4m3,bias=9", "e2m2fn",
                                    "e4m3,overflow=inf", "e5m2,overflow=inf", "e6m0fn,bias=20"};
  for (const auto& named : named_formats()) {
    if (has_simple_grid(make_format(named.spec))) names.emplace_back(named.name);
  }
  return names;
}

// Every code's value, the midpoints around it, and their float neighbours, both signs.
std::vector<std::uint32_t> boundary_inputs(const Format& f) {
  std::vector<std::uint32_t> inputs;
  const auto add_with_neighbours = [&](float v) {
    for (float x : {v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)}) {
      inputs.push_back(float_bits(x));
      inputs.push_back(float_bits(-x));
    }
  };
  for (std::uint32_t c = 0; c <= f.max_magnitude; ++c) {
    const float v = decode(f, c);
    const float next = c < f.max_magnitude ? decode(f, c + 1) : 2 * v;
    add_with_neighbours(v);
    add_with_neighbours(static_cast<float>((static_cast<double>(v) + next) / 2));
  }
  return inputs;
}

bool same(const Rounded& a, const Rounded& b) {
  return a.bits == b.bits && a.overflow == b.overflow && a.underflow == b.underflow;
}

// A cheap scrambler for random words that vary with the input (splitmix32-style finalizer).
std::uint32_t word_for(std::uint32_t x, std::uint32_t salt) {
  std::uint32_t h = x * 0x9E37'79B9u + salt;
  h ^= h >> 16;
  h *= 0x85EB'CA6Bu;
  h ^= h >> 13;
  return h;
}

// Messages are built only on failure: this runs tens of millions of times.
void expect_same(const Format& f, std::uint32_t x, const std::string& name) {
  const Rounded nearest = round_to_grid<Rounding::nearest_even>(f, x, 0);
  if (!same(round_nearest_even_simple(f, x), nearest)) {
    ADD_FAILURE() << name << " nearest-even, input bits 0x" << std::hex << x;
  }
  // Stochastic: random words that hit both sides of every remainder, and the extremes.
  for (std::uint32_t word : {0u, 1u, 0x8000'0000u, 0xFFFF'FFFFu, word_for(x, 1), word_for(x, 2)}) {
    if (!same(round_stochastic_simple(f, x, word), round_to_grid<Rounding::stochastic>(f, x, word))) {
      ADD_FAILURE() << name << " stochastic, input bits 0x" << std::hex << x << " word 0x" << word;
    }
  }
}

TEST(SimpleGrid, QualifiesExactlyTheSignedFormatsWithZeroSubnormalsAndFloatNormalMinimum) {
  EXPECT_TRUE(has_simple_grid(make_format(parse_format("e4m3"))));
  EXPECT_TRUE(has_simple_grid(make_format(parse_format("bf16"))));
  EXPECT_TRUE(has_simple_grid(make_format(parse_format("e7m0"))));
  EXPECT_FALSE(has_simple_grid(make_format(parse_format("e8m0fnu"))));
  EXPECT_FALSE(has_simple_grid(make_format(parse_format("e4m3,subnormals=off"))));
}

TEST(SimpleGrid, AgreesWithTheGeneralRoundingAtEveryCodeAndMidpoint) {
  for (const auto& name : simple_grid_formats()) {
    const Format f = make_format(parse_format(name));
    for (std::uint32_t x : boundary_inputs(f)) expect_same(f, x, name);
  }
}

TEST(SimpleGrid, AgreesWithTheGeneralRoundingAcrossAllFloat32BitPatterns) {
  // A stride coprime with every power of two visits every exponent, both signs, NaNs and Infs.
  constexpr std::uint64_t kStride = 16411;
  for (const auto& name : simple_grid_formats()) {
    const Format f = make_format(parse_format(name));
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += kStride) {
      expect_same(f, static_cast<std::uint32_t>(x), name);
    }
  }
}

// The branch-free code of a grid value equals code_of_grid_value at every finite code but −0
// (whose code_of_simple_grid_value is +0's: callers store zero as +0).
TEST(SimpleGrid, CodesOfGridValuesAgreeWithTheGeneralEncoderAtEveryFiniteCode) {
  std::size_t formats = 0;
  for (const auto& name : simple_grid_formats()) {
    const Format f = make_format(parse_format(name));
    if (!has_simple_code(f)) continue;
    ++formats;
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
      const float v = decode(f, c);
      if (!std::isfinite(v) || (v == 0.0f && std::signbit(v))) continue;
      ASSERT_EQ(code_of_simple_grid_value(f, float_bits(v)), code_of_grid_value(f, float_bits(v))) << name << " code " << c;
    }
  }
  EXPECT_GE(formats, 15u);
  EXPECT_FALSE(has_simple_code(make_format(parse_format("bf16"))));  // its subnormal step 2^-133 is not a float normal
}

}  // namespace
