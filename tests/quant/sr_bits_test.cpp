// Stochastic rounding with `bits` random bits per element (quant/random_bits.hpp; a point's
// sr_bits): a value a fraction f of a step above a grid point rounds up for exactly floor(2^bits · f)
// of the 2^bits equally likely random values, as hardware that adds `bits` random bits below the
// kept mantissa and truncates does. Checked against that definition on the rounding function, then
// element by element on every quantizer path (per tensor, MX rows and columns, E4M3 block scales)
// against each element's own Philox word with the bits below its top `bits` set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/random_bits.hpp"

namespace altgrad::quant {
namespace {

format::Format e4m3() { return format::make_format(format::parse_format("e4m3")); }

// The 2^bits words that keep `bits` random bits, r = 0 .. 2^bits − 1, each with the rest set.
std::vector<std::uint32_t> every_word(int bits) {
  std::vector<std::uint32_t> words;
  for (std::uint64_t r = 0; r < (std::uint64_t{1} << bits); ++r) {
    words.push_back(static_cast<std::uint32_t>(r << (32 - bits)) | random_bits_mask(bits));
  }
  return words;
}

TEST(SrBits, RoundsUpForFloorOfTwoToTheBitsTimesTheFraction) {
  const format::Format f = e4m3();
  // Between 1 and 1.125 (E4M3's step at 1 is 1/8): fractions from a tiny one to nearly a step,
  // among them exact multiples of 1/256 and values just below and above them.
  for (const int bits : {1, 3, 8, 12}) {
    const std::vector<std::uint32_t> words = every_word(bits);
    for (const double f_step : {1.0 / 4096, 1.0 / 512, 1.0 / 256, 3.0 / 256, 0.3, 0.5, 127.0 / 256, 0.99}) {
      const float x = static_cast<float>(1.0 + f_step / 8.0);
      const double fraction = (static_cast<double>(x) - 1.0) * 8.0;  // as float32 holds it
      std::uint64_t ups = 0;
      for (const std::uint32_t word : words) ups += format::round_value(f, format::Rounding::stochastic, x, word) > 1.0f;
      const auto expected = static_cast<std::uint64_t>(std::floor(std::ldexp(fraction, bits)));
      EXPECT_EQ(ups, expected) << bits << " bits, fraction " << fraction;
    }
  }
  EXPECT_EQ(random_bits_mask(32), 0u);
  EXPECT_EQ(random_bits_mask(8), 0x00FFFFFFu);
}

// Each element's result against round_value with its own Philox word, masked.
void expect_words_masked(const std::vector<float>& in, const std::vector<float>& out, float scale, int bits,
                         std::uint64_t seed, std::uint64_t stream) {
  const format::Format f = e4m3();
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t word = format::philox_word(seed, stream, i) | random_bits_mask(bits);
    const float expected = format::round_value(f, format::Rounding::stochastic, in[i] * scale, word) / scale;
    ASSERT_EQ(out[i], expected) << "element " << i << ", " << bits << " bits";
  }
}

std::vector<float> values(std::size_t n) {
  std::vector<float> x(n);
  std::uint32_t state = 7;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<std::int32_t>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 19);
  }
  return x;
}

TEST(SrBits, PerTensorQuantizerUsesTheMaskedWords) {
  const std::vector<float> x = values(5000);
  for (const int bits : {2, 8, 32}) {
    std::vector<float> y(x.size());
    QuantizeOptions o;
    o.rounding = format::Rounding::stochastic;
    o.scale = 3.0f;
    o.seed = 11;
    o.stream = 5;
    o.random_bits = bits;
    (void)quantize(e4m3(), x, y, o);
    expect_words_masked(x, y, 3.0f, bits, 11, 5);
  }
}

// A fraction below 1/256 of a step never rounds up with 8 bits, and does about that often with 32,
// on MX rows and MX columns alike.
TEST(SrBits, EightBitsNeverRoundUpBelowOneIn256OnMxRowsAndColumns) {
  const std::size_t rows = 64, cols = 64;
  // 1 + 2^−12 everywhere: the block's scale 2^8 makes it 256.0625 where E4M3's step is 32, a
  // fraction 2^−9 of a step.
  const std::vector<float> x(rows * cols, 1.0f + 1.0f / 4096.0f);
  for (const bool columns : {false, true}) {
    for (const int bits : {8, 32}) {
      MxOptions o;
      o.rounding = format::Rounding::stochastic;
      o.seed = 3;
      o.stream = 9;
      o.random_bits = bits;
      std::vector<float> y(x.size());
      if (columns) {
        (void)quantize_mx_columns(e4m3(), x, y, cols, rows, o);
      } else {
        (void)quantize_mx(e4m3(), x, y, cols, o);
      }
      std::size_t ups = 0;
      for (const float v : y) ups += v > x[0] ? 1 : 0;
      if (bits == 8) {
        EXPECT_EQ(ups, 0u) << (columns ? "columns" : "rows");
      } else {
        EXPECT_GT(ups, 0u) << (columns ? "columns" : "rows");  // about 4096 / 512 = 8; none has odds e^−8
      }
    }
  }
}

}  // namespace
}  // namespace altgrad::quant
