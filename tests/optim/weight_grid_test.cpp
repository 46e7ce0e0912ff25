// Weight grids under MX block scales: S(w) at every code of each format, placed in blocks whose
// scale 2^j the block's largest element fixes, equals the next code's value away from zero minus
// the code's value (enumerated with the codec) times 2^j; and the quantizer itself leaves such
// weights unchanged, so the blocks the grid assumes are the blocks the quantizer uses.
#include "optim/weight_grid.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/effective_grid.hpp"
#include "format/grid.hpp"
#include "format/parse.hpp"
#include "quant/mx.hpp"

namespace {

using namespace altgrad;

float step_away_from_zero(const format::Format& f, std::uint32_t code) {
  const float value = format::decode(f, code);
  const bool negative = std::signbit(value) && value != 0.0f;
  const auto next = negative ? format::next_code_down(f, code) : format::next_code_up(f, code);
  if (next && !format::is_inf_code(f, *next)) return std::fabs(format::decode(f, *next) - value);
  return std::ldexp(1.0f, std::ilogb(f.max_finite()) - f.spec.mantissa_bits);
}

class MxWeightGridTest : public ::testing::TestWithParam<const char*> {};

TEST_P(MxWeightGridTest, SpacingAtEveryCodeUnderBlockScalesIsTheStepToTheNextCode) {
  const format::Format f = format::make_format(format::parse_format(GetParam()));
  constexpr std::size_t kBlock = 32, kRow = 96;  // three blocks per row
  // Every finite code, 31 to a block after the block's leading max-finite element.
  std::vector<std::uint32_t> codes;
  for (std::uint32_t c = 0; c < f.code_count(); ++c) {
    if (format::is_valid_code(f, c) && !format::is_nan_code(f, c) && !format::is_inf_code(f, c)) codes.push_back(c);
  }
  const std::size_t blocks = (codes.size() + kBlock - 2) / (kBlock - 1);
  const std::size_t rows = (blocks + kRow / kBlock - 1) / (kRow / kBlock);
  std::vector<float> w(rows * kRow, 0.0f), want(w.size(), 0.0f);
  const std::uint32_t max_code = [&] {
    for (std::uint32_t c : codes) if (format::decode(f, c) == f.max_finite()) return c;
    return codes.back();
  }();
  std::size_t next = 0;
  for (std::size_t b = 0; b < rows * kRow / kBlock; ++b) {
    const int j = static_cast<int>(b % 9) - 4;  // block scales 2^-4 .. 2^4
    for (std::size_t e = 0; e < kBlock; ++e) {
      const std::uint32_t code = e == 0 ? max_code : (next < codes.size() ? codes[next++] : max_code);
      w[b * kBlock + e] = std::ldexp(format::decode(f, code), j);
      want[b * kBlock + e] = std::ldexp(step_away_from_zero(f, code), j);
    }
  }
  optim::WeightGrid grid{f, optim::GridScaling::blocks, 1.0f, kBlock, kRow, quant::MxScaleRule::floor};
  std::vector<float> got(w.size());
  optim::grid_spacing(grid, w, got);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (got[i] != want[i] && ++bad <= 5) ADD_FAILURE() << "S(" << w[i] << ") = " << got[i] << ", expected " << want[i];
  }
  EXPECT_EQ(bad, 0u);

  std::vector<float> quantized(w.size());
  quant::quantize_mx(f, w, quantized, kRow, quant::MxOptions{kBlock});
  for (std::size_t i = 0; i < w.size(); ++i) ASSERT_EQ(quantized[i], w[i]) << "element " << i << " is off the MX grid";
}

// The element formats MX and the fp8 recipes use, and a 16-bit one (bf16 times 2^4 would leave FP32).
INSTANTIATE_TEST_SUITE_P(ElementFormats, MxWeightGridTest,
                         ::testing::Values("e4m3", "e5m2", "e3m4", "e2m5", "e1m6", "e7m0", "fp16"));

TEST(WeightGrid, ARowLengthThatDoesNotDivideTheRangeIsRefused) {
  optim::WeightGrid grid = optim::default_weight_grid();
  grid.scaling = optim::GridScaling::blocks;
  grid.row_length = 7;
  EXPECT_THROW((void)optim::span_count(grid, 30), std::invalid_argument);
}

}  // namespace

namespace {

// span_spacing's vectorized exponent arithmetic against format::scaled_spacing, bit for bit, on
// every code's value (and its neighbours one FP32 ulp away) under several scales, plus zeros,
// FP32 subnormals, Inf and NaN.
TEST(SpanSpacing, EqualsScaledSpacingEverywhere) {
  for (const char* name : {"e4m3", "e5m2", "e3m4", "e2m5", "e1m6", "e7m0", "bf16", "fp16", "e4m3,subnormals=off"}) {
    const format::Format f = format::make_format(format::parse_format(name));
    std::vector<float> w = {0.0f, -0.0f, 1e-40f, -3e-42f, INFINITY, -INFINITY, NAN};
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
      const float x = format::decode(f, c);
      if (!std::isfinite(x)) continue;
      w.insert(w.end(), {x, std::nextafter(x, 0.0f), std::nextafter(x, 2 * x + 1)});
    }
    for (const float scale : {1.0f, 0x1p-7f, 0x1p+9f, 0.37f, 1234.5f}) {
      std::vector<float> got(w.size());
      optim::span_spacing(f, w.data(), w.size(), scale, got.data());
      for (std::size_t i = 0; i < w.size(); ++i) {
        const float want = format::scaled_spacing(f, w[i], scale);
        ASSERT_TRUE(got[i] == want || (std::isnan(got[i]) && std::isnan(want)))
            << name << " scale " << scale << " w " << w[i] << ": " << got[i] << " vs " << want;
      }
    }
  }
}

}  // namespace
